"""The Bazaar arena: bilateral haggling over a listing with personas, hard rules, tells and memory."""
