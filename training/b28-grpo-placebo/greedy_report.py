import json, sys, random
recs = [json.loads(l) for l in open('/work/main/training/records/bazaar/train_check/eval/bazaar/results.jsonl')]
sft = {(r["task"], r["seed"]): r["reward"] for r in recs if r["policy"] == "sft"}
for f in sys.argv[1:]:
    rs = [json.loads(l) for l in open(f)]
    d = [r["return"] - sft[(r["task"], r["seed"])] for r in rs]
    rng = random.Random(0); b = sorted(sum(rng.choice(d) for _ in d) / len(d) for _ in range(4000))
    print(f.split("/")[-1], "mean %+.3f" % (sum(r["return"] for r in rs) / len(rs)), "deal %.2f" % (sum(r["deal"] for r in rs) / len(rs)),
          "vs SFT (train_check) %+.3f [%+.3f, %+.3f]" % (sum(d) / len(d), b[100], b[3899]), "W/T/L", sum(x > 1e-9 for x in d), sum(abs(x) <= 1e-9 for x in d), sum(x < -1e-9 for x in d))
