"Sampled (T 0.5, 32 episodes) and greedy return of an adapter on the one (task, seed) B30 trains on."
import sys, json, time, statistics as st, torch
adapter, out, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.set_num_threads(threads)
from bazaarbatna.agents import LLMPolicy
from bazaarbatna.train.grpo import play_groups
row = [{"arena": "bazaar", "task": "impatient_seller", "seed": 1046}]
res = {}
for name, T, G in (("sampled", 0.5, 32), ("greedy", 0.0, 1)):
    kw = dict(temperature=T, top_p=1.0) if T else dict(temperature=0.0)
    pol = LLMPolicy("bazaar", model=adapter, max_new_tokens=32, compact=True, batch_size=G, seed=7, **kw)
    eps = play_groups("bazaar", row, pol, G)[0]
    rets = [sum(s["reward"] for s in e["steps"]) for e in eps]
    res[name] = {"returns": [round(r, 4) for r in rets], "mean": round(st.mean(rets), 4), "deal": sum(bool(e["deal"]) for e in eps) / len(eps),
                 "decisions": [len(e["steps"]) for e in eps], "replies": [s.get("reply") for s in eps[0]["steps"]]}
json.dump(res, open(out, "w"), indent=1)
print(json.dumps({k: (v["mean"], v["deal"]) for k, v in res.items()}))
