import gzip, json, collections
from bazaarbatna.train.grpo import episode_advantages
from bazaarbatna.bazaar.prompts import price_ladder
G = json.load(gzip.open("groups.json.gz", "rt"))
adv = episode_advantages([[[s["reward"] for s in e["steps"]] for e in g] for g in G], scale="batch")
by = collections.defaultdict(list)
for g, ag in zip(G, adv):
    for e, ae in zip(g, ag):
        for k, (s, a) in enumerate(zip(e["steps"], ae)):
            try: r = json.loads(s["reply"][s["reply"].index("{"):s["reply"].rindex("}") + 1])
            except Exception: by["unparsed"].append(a); continue
            act = r.get("action")
            if act == "offer" and "rung" in r:
                labels = [n for n, _ in price_ladder(s["obs"])]
                pos = labels.index(r["rung"]) if r["rung"] in labels else -1
                by["offer: lowest rung (floor)" if pos == 0 else "offer: off the ladder" if pos < 0 else "offer: 2nd-3rd rung" if pos <= 2 else "offer: higher rung"].append(a)
            else: by[str(act)].append(a)
        by["episode: deal" if e["deal"] else "episode: no deal"].append(ae[0] if ae else 0)
print(f"{'reply kind':28s} {'n':>4s} {'sum adv':>8s} {'mean adv':>9s}")
for k, v in sorted(by.items()): print(f"{k:28s} {len(v):4d} {sum(v):+8.2f} {sum(v)/len(v):+9.3f}")
# the same, each episode's decisions sharing one unit of weight (advantage / the episode's number of decisions)
by2 = collections.defaultdict(list); lens = collections.defaultdict(list)
for g, ag in zip(G, adv):
    for e, ae in zip(g, ag):
        n = max(1, len(ae)); lens["positive" if ae and ae[0] > 0 else "negative"].append(n)
        for s, a in zip(e["steps"], ae):
            try: r = json.loads(s["reply"][s["reply"].index("{"):s["reply"].rindex("}") + 1])
            except Exception: continue
            labels = [n_ for n_, _ in price_ladder(s["obs"])]
            pos = labels.index(r["rung"]) if r.get("rung") in labels else -1
            by2["floor" if pos == 0 else "off" if pos < 0 else "raise"].append(a / n)
print("per-episode weight:", {k: (len(v), round(sum(v), 2), round(sum(v) / len(v), 3)) for k, v in by2.items()})
print("decisions per episode, advantage > 0:", round(sum(lens["positive"]) / len(lens["positive"]), 2), " <= 0:", round(sum(lens["negative"]) / len(lens["negative"]), 2))
