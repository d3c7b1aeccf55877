"""Summarize finish_probe.py output: within each (task, seed) group, how return, return without refusal penalties, and
the number of decisions move together."""
import json, sys, statistics as st
from collections import defaultdict
d = json.load(open(sys.argv[1])); eps = d["episodes"]
groups = defaultdict(list)
for e in eps: groups[(e["task"], e["seed"])].append(e)
dev = []
for k, g in groups.items():
    m = lambda f: sum(f(e) for e in g) / len(g)
    mr, mp, md, mi = m(lambda e: e["return"]), m(lambda e: e["return"] - e["penalty"]), m(lambda e: e["decisions"]), m(lambda e: e["invalid"])
    for e in g: dev.append((e["return"] - mr, e["return"] - e["penalty"] - mp, e["decisions"] - md, e["invalid"] - mi))
    print(k, " ".join(f"[{e['return']:+.2f} pen {e['penalty']:+.1f} dec {e['decisions']:2d} fin {e['finish_at']} {e['reason']}]" for e in g))
n = len(eps)
print(f"\n{n} episodes, {len(groups)} groups, T {d['T']}, {d['seconds']:.0f} s")
print("mean return %+.3f, mean refusal penalty %+.3f, refusals/episode %.2f, decisions/episode %.1f" % (
    st.mean(e["return"] for e in eps), st.mean(e["penalty"] for e in eps), st.mean(e["invalid"] for e in eps), st.mean(e["decisions"] for e in eps)))
def slope(ys, xs):
    sxx = sum(x * x for x in xs); return sum(x * y for x, y in zip(xs, ys)) / sxx if sxx else float("nan")
def corr(a, b):
    return sum(x * y for x, y in zip(a, b)) / ((sum(x * x for x in a) * sum(y * y for y in b)) ** .5 or float("nan"))
R, P, D, I = zip(*dev)
print("within-group: return per extra decision %+.4f (corr %+.2f); without refusal penalties %+.4f (corr %+.2f); refusals per extra decision %+.3f" % (
    slope(R, D), corr(R, D), slope(P, D), corr(P, D), slope(I, D)))
early = [e for e in eps if e["finish_at"] is not None and e["finish_at"] <= 2]
print("finished by its 3rd decision: %d episodes, mean return %+.3f" % (len(early), st.mean(e["return"] for e in early) if early else float("nan")))
