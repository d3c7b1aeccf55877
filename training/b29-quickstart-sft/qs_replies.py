"Greedy replies of an adapter on single_deal validation seeds: what it writes and why each is refused."
import json, sys, torch
torch.set_num_threads(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
from bazaarbatna.agents import LLMPolicy
from bazaarbatna.train.grpo import play_groups
adapter, n = sys.argv[1], int(sys.argv[2])
rows = [{"arena": "bazaar", "task": "single_deal", "seed": 100_000 + i} for i in range(n)]
pol = LLMPolicy("bazaar", model=adapter, temperature=0.0, max_new_tokens=64, compact=True, batch_size=n)
res = play_groups("bazaar", rows, pol, 1)
for r, g in zip(rows, res):
    e = g[0]
    print("seed", r["seed"], "return", round(e["reward"], 3), "deal", e["deal"])
    for s in e["steps"][:4]:
        print("   ", json.dumps({k: s.get(k) for k in ("reply", "action", "error")}, default=str)[:300])
