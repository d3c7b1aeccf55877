"""Does a GRPO model beat SFT at its own training temperature on new seeds? Each model sampled at T 0.5, n episodes per
(task, validation seed), on the first 6 validation seeds of all nine tasks; paired per (task, seed) against the first model."""
import json, sys
from bazaarbatna.agents import LLMPolicy
from bazaarbatna.train.grpo import play_groups
from bazaarbatna.evaluate import bootstrap_ci, parse_seeds
from bazaarbatna.arenas import get_arena
T, n = float(sys.argv[2]), int(sys.argv[3])
tasks = sorted(get_arena("bazaar").TASKS)
rows = [{"task": t, "seed": s} for t in tasks for s in parse_seeds("valid:6")]
out = {}
m = lambda xs: sum(xs) / len(xs)
for name in sys.argv[4:]:
    label, path = name.split("=", 1)
    pol = LLMPolicy("bazaar", model=path, temperature=T, top_p=1.0, max_new_tokens=64, batch_size=64, seed=7)
    g = play_groups("bazaar", rows, pol, n)
    out[label] = {"returns": [[e["reward"] for e in grp] for grp in g], "deals": [[bool(e["deal"]) for e in grp] for grp in g]}
    del pol
    r = out[label]
    print(label, "mean %+.3f" % m([x for g in r["returns"] for x in g]), "deal rate %.3f" % m([x for g in r["deals"] for x in g]), flush=True)
    json.dump({"rows": rows, "T": T, "n": n, "models": out}, open(sys.argv[1], "w"), indent=1)
labels = list(out)
for a in labels[1:]:
    d = [m(x) - m(y) for x, y in zip(out[a]["returns"], out[labels[0]]["returns"])]
    print(f"{a} - {labels[0]} (per seed, {len(d)} pairs): {m(d):+.3f} CI {bootstrap_ci(d)}")
    for t in tasks:
        dt = [x for x, r in zip(d, rows) if r["task"] == t]
        print(f"  {t}: {m(dt):+.3f}")
