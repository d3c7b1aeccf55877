"A throwaway arena for the evaluation tests (tests/test_evaluate_*.py): keeps the Env contract, nothing more."
import os, sys
from pathlib import Path

def register(name: str = "evaltoy") -> str:
    "Register this package in the arena registry under `name` (forked workers inherit it)."
    from bazaarbatna import arenas
    here = str(Path(__file__).resolve().parent.parent)
    if here not in sys.path: sys.path.insert(0, here)
    arenas.ARENAS[name] = "evaltoy"
    return name
