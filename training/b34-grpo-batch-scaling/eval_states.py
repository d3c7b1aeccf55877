"""B33's check (a label=@file.json:label takes that model's rows from an earlier check): each model on GRPO's training states (the groups it trained on), greedy once and sampled 8 times at T 0.5."""
import json, sys
from pathlib import Path
from bazaarbatna.agents import LLMPolicy
from bazaarbatna.train.grpo import play_groups
from bazaarbatna.evaluate import bootstrap_ci

import tomllib
from bazaarbatna.evaluate import TRAIN_SEEDS
from bazaarbatna.train.grpo import GRPO_SEED_OFFSET
tasks = tomllib.load(open(sys.argv[1], "rb"))["grpo"]["tasks"]["bazaar"]   # the recipe's task mix; n_seeds = 1: one seed per task
groups = {t: [TRAIN_SEEDS[GRPO_SEED_OFFSET]] for t in tasks}
rows = [{"task": t, "seed": s} for t, ss in groups.items() for s in ss]
out = {}
for name in sys.argv[3:]:
    label, path = name.split("=", 1)
    if path.startswith("@"):
        f, src = path[1:].split(":")
        old = json.load(open(f)); assert old["rows"] == rows, "another check's states"
        out[label] = res = old["models"][src]
        print(label, "from", f, flush=True)
        continue
    res = {}
    for T, n in ((0.0, 1), (0.5, 8)):
        pol = LLMPolicy("bazaar", model=path, temperature=T, top_p=1.0, max_new_tokens=64, batch_size=64, seed=7)
        g = play_groups("bazaar", rows, pol, n)
        res["greedy" if T == 0 else "sampled"] = [[e["reward"] for e in grp] for grp in g]
        res[("greedy" if T == 0 else "sampled") + "_deals"] = sum(bool(e["deal"]) for grp in g for e in grp)
        del pol
    out[label] = res
    m = lambda xs: sum(xs) / len(xs)
    print(label, "greedy %+.3f" % m([x for r in res["greedy"] for x in r]), "sampled %+.3f" % m([x for r in res["sampled"] for x in r]),
          "deals", res["greedy_deals"], res["sampled_deals"], flush=True)
json.dump({"rows": rows, "models": out}, open(sys.argv[2], "w"), indent=1)
labels = list(out)
for a in labels[1:]:
    for kind in ("sampled", "greedy"):
        d = [m(x) - m(y) for x, y in zip(out[a][kind], out[labels[0]][kind])]   # per state: mean over its episodes
        print(f"{a} - {labels[0]} ({kind}, per state): {m(d):+.3f} CI {bootstrap_ci(d)}")
        de = [x - y for xs, ys in zip(out[a][kind], out[labels[0]][kind]) for x, y in zip(xs, ys)]
        print(f"{a} - {labels[0]} ({kind}, per episode pair): {m(de):+.3f} CI {bootstrap_ci(de)}")
