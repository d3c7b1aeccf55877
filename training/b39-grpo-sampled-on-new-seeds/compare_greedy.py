"""B39's sampled episodes against the greedy ones of B36's check (same 54 (task, seed) pairs): the four combinations of model and decoding."""
import json, sys
from bazaarbatna.evaluate import bootstrap_ci
S = json.load(open(sys.argv[1]))           # sampled.json
rows, M = S["rows"], S["models"]
g = {}
for l in open(sys.argv[2]):                # B36's valid6_results.jsonl
    r = json.loads(l); g.setdefault(r["policy"], {})[(r["task"], r["seed"])] = r["reward"]
sg, b6g = g["llm:training/records/bazaar/adapters/sft"], g["llm:/work/runs/b36/real/grpo/checkpoint-6"]
m = lambda xs: sum(xs) / len(xs)
keys = [(r["task"], r["seed"]) for r in rows]
gs, ss = [m(x) for x in M["b36s6"]["returns"]], [m(x) for x in M["sft"]["returns"]]
for name, d in (("GRPO sampled - SFT greedy", [a - sg[k] for a, k in zip(gs, keys)]),
                ("GRPO sampled - GRPO greedy", [a - b6g[k] for a, k in zip(gs, keys)]),
                ("SFT sampled - SFT greedy", [a - sg[k] for a, k in zip(ss, keys)])):
    print(f"{name}: {m(d):+.3f} CI {tuple(round(x, 3) for x in bootstrap_ci(d))}")
print("means: SFT greedy %.3f SFT sampled %.3f GRPO greedy %.3f GRPO sampled %.3f" % (m([sg[k] for k in keys]), m(ss), m([b6g[k] for k in keys]), m(gs)))
