import json, sys, collections, random
g = json.load(open('/work/main/training/records/bazaar/pipeline.json'))["grpo"]["groups"]["bazaar"]
recs = [json.loads(l) for l in open('/work/main/training/records/bazaar/train_check/eval/bazaar/results.jsonl')]
gre = {(r["task"], r["seed"]): r["reward"] for r in recs if r["policy"] == "sft"}
for f in sys.argv[1:]:
    samp = [json.loads(l) for l in open(f)]
    d = collections.defaultdict(list)
    for r in samp: d[(r["task"], r["seed"])].append(r["return"])
    mx = [max(v) - gre[k] for k, v in d.items()]; mn = [sum(v) / len(v) - gre[k] for k, v in d.items()]
    rng = random.Random(0); b = sorted(sum(rng.choice(mx) for _ in mx) / len(mx) for _ in range(4000))
    print(f.split('/')[-1], "mean-greedy %+.3f" % (sum(mn) / len(mn)), "max4-greedy %+.3f [%+.3f, %+.3f]" % (sum(mx) / len(mx), b[100], b[3899]),
          "groups with max4 > greedy+0.02:", sum(x > 0.02 for x in mx), "/", len(mx),
          "deal %.2f invalid/ep %.2f" % (sum(r["deal"] for r in samp) / len(samp), sum(r["invalid"] for r in samp) / len(samp)),
          "zero-spread groups", sum(max(v) - min(v) < 1e-6 for v in d.values()))
