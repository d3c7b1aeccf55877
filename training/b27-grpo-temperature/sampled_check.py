"Sampled (T) vs greedy return of an adapter on the GRPO training groups of a record: does GRPO raise its own objective?"
import json, sys, time, torch
torch.set_num_threads(1)
from bazaarbatna.agents import LLMPolicy
from bazaarbatna.train.grpo import play_groups
adapter, out, T, G = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
groups = json.load(open(sys.argv[5]))["grpo"]["groups"]["bazaar"]
rows = [{"arena": "bazaar", "task": t, "seed": s} for t, ss in groups.items() for s in ss]
pol = LLMPolicy("bazaar", model=adapter, temperature=T, top_p=1.0, max_new_tokens=32, compact=True, batch_size=40, seed=7)
t0 = time.time()
res = play_groups("bazaar", rows, pol, G)
with open(out, "w") as f:
    for r, g in zip(rows, res):
        for k, e in enumerate(g):
            f.write(json.dumps({"task": r["task"], "seed": r["seed"], "sample": k, "return": sum(s["reward"] for s in e["steps"]),
                                "deal": bool(e["deal"]), "invalid": sum(s.get("error") is not None for s in e["steps"]), "decisions": len(e["steps"])}) + "\n")
print("done", out, round(time.time() - t0), "s")
