"""Why does episode GRPO drift to finishing early? Play groups of the SFT model at the GRPO temperature on training seeds
and keep, per episode, its return, its decisions, its refused replies and when it finished.
usage: finish_probe.py ADAPTER OUT.json T SEED..."""
import sys, json, time
from bazaarbatna.agents import LLMPolicy
from bazaarbatna.train.grpo import play_groups
from bazaarbatna.core import INVALID_ACTION_PENALTY
adapter, out, T, *seeds = sys.argv[1:]
tasks = ["single_trade", "market_round", "coalition_market", "shock_storm"]
rows = [{"task": t, "seed": int(s)} for s in seeds for t in tasks]
pol = LLMPolicy("market", model=adapter, temperature=float(T), max_new_tokens=72, name="sft", compact=True)
pol.restart_sampling(int(seeds[0]))
t0 = time.time()
groups = play_groups("market", rows, pol, 4)
res = []
for row, g in zip(rows, groups):
    for e in g:
        st = e["steps"]
        fin = next((k for k, s in enumerate(st) if s.get("error") is None and '"finish"' in s["reply"]), None)
        res.append({"task": row["task"], "seed": row["seed"], "return": e["reward"], "decisions": len(st),
                    "invalid": sum(s.get("error") is not None for s in st),
                    "penalty": sum(s["reward"] for s in st if s.get("error") is not None),
                    "finish_at": fin, "reason": e.get("reason"), "rounds": e.get("rounds"), "deal": e.get("deal"),
                    "extras": e.get("extras"), "replies": [(s["reply"][:90], s["reward"], s.get("error")) for s in st]})
json.dump({"T": float(T), "seconds": time.time() - t0, "episodes": res}, open(out, "w"), indent=1)
print("done", len(res), "episodes in %.0f s" % (time.time() - t0))
