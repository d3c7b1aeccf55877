"""The SFT model's greedy move kind against the expert's, at each state of the expert's own episodes (validation seeds).
usage: move_confusion.py ADAPTER OUT.json SEED..."""
import sys, json, re, time
from collections import Counter
from bazaarbatna.agents import LLMPolicy
from bazaarbatna.train.sft import expert_samples
adapter, out, *seeds = sys.argv[1:]
pol = LLMPolicy("market", model=adapter, compact=True, max_new_tokens=72)
samples = expert_samples("market", None, [int(s) for s in seeds], compact=True)
t0 = time.time()
replies = pol.generate([s["prompt"] for s in samples], None)
kind = lambda text: (re.search(r'"move"\s*:\s*"([a-z_]+)', text or "") or [None, None])[1]
pairs = Counter((s["action"], kind(r)) for s, r in zip(samples, replies))
teacher = Counter(s["action"] for s in samples)
rows = {t: {"states": n, "agree": pairs[(t, t)] / n, "model": {m or "unparsed": c for (tt, m), c in pairs.items() if tt == t}} for t, n in teacher.most_common()}
json.dump({"states": len(samples), "seconds": time.time() - t0, "agree": sum(pairs[(t, t)] for t in teacher) / len(samples), "by_teacher_move": rows,
           "replies": [(s["task"], s["action"], r[:80]) for s, r in zip(samples, replies)]}, open(out, "w"), indent=1)
print("states", len(samples), "agree %.3f" % (sum(pairs[(t, t)] for t in teacher) / len(samples)), "%.0f s" % (time.time() - t0))
for t, r in rows.items(): print(f"{t:20s} {r['states']:4d} agree {r['agree']:.2f}  model: {dict(sorted(r['model'].items(), key=lambda kv: -kv[1]))}")
