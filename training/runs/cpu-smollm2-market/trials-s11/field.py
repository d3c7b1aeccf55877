"""The market's scripted field on the first N held-out single_trade seeds: mean reward on N and on the first 12.

    python training/runs/cpu-smollm2-market/trials-s11/field.py 48 training/runs/cpu-smollm2-market/trials-s11/field48.json
"""
import json, sys, statistics as st
from bazaarbatna.agents import rollout_batch
from bazaarbatna.arenas import list_policies, make_policy
from bazaarbatna.evaluate import EVAL_SEEDS
n = int(sys.argv[1]); out = {}
for name in list_policies("market"):
    recs = rollout_batch("market", "single_trade", list(EVAL_SEEDS[:n]), lambda name=name: make_policy("market", name), progress=False)
    out[name] = [round(r["reward"], 4) for r in recs]
    print(name, round(st.mean(out[name]), 3), round(st.mean(out[name][:12]), 3))
json.dump({"seeds": list(EVAL_SEEDS[:n]), "rewards": out}, open(sys.argv[2], "w"))
