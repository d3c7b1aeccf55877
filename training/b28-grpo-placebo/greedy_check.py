"Greedy returns of an adapter on the record's GRPO training groups (the train_check seeds), as evaluate_models plays them."
import json, sys, time, torch
torch.set_num_threads(1)
from bazaarbatna.agents import LLMPolicy
from bazaarbatna.train.grpo import play_groups
adapter, out = sys.argv[1], sys.argv[2]
groups = json.load(open(sys.argv[3]))["grpo"]["groups"]["bazaar"]
rows = [{"arena": "bazaar", "task": t, "seed": s} for t, ss in groups.items() for s in ss]
pol = LLMPolicy("bazaar", model=adapter, temperature=0.0, max_new_tokens=64, compact=True, batch_size=20)
t0 = time.time()
res = play_groups("bazaar", rows, pol, 1)
with open(out, "w") as f:
    for r, g in zip(rows, res):
        e = g[0]
        f.write(json.dumps({"task": r["task"], "seed": r["seed"], "return": e["reward"], "deal": bool(e["deal"]), "decisions": len(e["steps"])}) + "\n")
print("done", out, round(time.time() - t0), "s")
