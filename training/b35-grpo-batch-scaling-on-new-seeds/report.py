"""Per task and pooled: GRPO − SFT on the same (task, seed), greedy, from one eval's results.jsonl."""
import sys
from bazaarbatna.evaluate import read_records, paired_difference
recs = read_records(sys.argv[1]); a, b = sys.argv[2], sys.argv[3]
tasks = sorted({r["task"] for r in recs})
m = lambda p, t=None, f="reward": (lambda xs: sum(xs) / len(xs))([float(r[f]) for r in recs if r["policy"] == p and (t is None or r["task"] == t)])
print(f"{'task':24s} {'sft':>7s} {'grpo':>7s} {'diff':>7s}  CI               w/t/l  deals sft/grpo")
for t in tasks + [None]:
    d = paired_difference(recs, a, b, tasks=None if t is None else [t])
    print(f"{(t or 'POOLED'):24s} {m(b, t):+.3f} {m(a, t):+.3f} {d['mean_diff']:+.3f}  [{d['ci_lo']:+.3f}, {d['ci_hi']:+.3f}]  {d['wins']}/{d['ties']}/{d['losses']}  {m(b, t, 'deal'):.2f}/{m(a, t, 'deal'):.2f}")
