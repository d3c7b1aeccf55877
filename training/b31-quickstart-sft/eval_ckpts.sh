#!/bin/bash
# usage: eval_ckpts.sh RUN SEEDS step...
export PATH=/work/main/.venv-test/bin:$PATH
run=$1; seeds=$2; shift 2
for s in "$@"; do
  d=$run/sft/checkpoint-$s; [ "$s" = final ] && d=$run/sft/final
  cp $run/sft/final/bazaarbatna.json $d/ 2>/dev/null
  t0=$(date +%s)
  bazaarbatna eval --arena bazaar --tasks single_deal --policies llm:$d --seeds $seeds --out $run/eval-$s-$seeds --json > $run/eval-$s-$seeds.json 2>$run/eval-$s-$seeds.err
  python - "$run/eval-$s-$seeds" "$s" $(( $(date +%s) - t0 )) <<'PY'
import json, sys, glob
recs = [json.loads(l) for f in glob.glob(sys.argv[1] + "/**/results.jsonl", recursive=True) for l in open(f)]
rs = [r["reward"] for r in recs]
print(sys.argv[2], "n", len(rs), "mean %+.3f" % (sum(rs)/len(rs)), "deals", sum(bool(r.get("deal")) for r in recs), [round(x,2) for x in rs], "s", sys.argv[3])
PY
done
