"Per task means and paired differences of market evaluation records.  usage: compare.py NAME=results.jsonl ...  (the first against each of the others)"
import json, sys, collections
from bazaarbatna.evaluate import paired_difference
def load(f): return [json.loads(l) for l in open(f)]
runs = {a.split('=')[0]: load(a.split('=')[1]) for a in sys.argv[1:]}
for name, r in runs.items():
    d = collections.defaultdict(list)
    for x in r: d[x['task']].append(x['reward'])
    print(f"{name:8s} {r[0]['policy'][:40]:40s} mean {sum(x['reward'] for x in r)/len(r):+.3f}", {k: round(sum(v)/len(v), 3) for k, v in d.items()},
          'deal', sum(1 for x in r if x['deal']), 'rounds %.1f' % (sum(x['rounds'] for x in r)/len(r)), 'refused', sum(1 for x in r if x['refused']))
names = list(runs)
for b in names[1:]:
    a = names[0]
    ra, rb = runs[a], runs[b]
    pa, pb = ra[0]['policy'], rb[0]['policy']
    if pa == pb:
        rb = [dict(x, policy=pb + '#b') for x in rb]; pb += '#b'
    print(a, '-', b, paired_difference(ra + rb, pa, pb))
