"evaltoy policies: accept at once, wait k rounds, and a prose-only one."
class Waiter:
    def __init__(self, k=0): self.k, self.name = k, f"wait{k}"
    def reset(self, seed): pass
    def act(self, obs): return {"action": "accept" if obs["round"] >= self.k else "wait"}

class Junk:
    name = "junk"
    def reset(self, seed): pass
    def act(self, obs): return "I would like to buy it please"

POLICIES = {"eager": lambda: Waiter(0), "expert": lambda: Waiter(2), "patient": lambda: Waiter(4), "junk": Junk}
POLICY_DOCS = {"eager": "accepts at once", "expert": "waits two rounds", "patient": "waits four rounds", "junk": "prose, never JSON"}
