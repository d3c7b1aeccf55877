# usage: bash run.sh VARIANT   (VARIANT.toml: kl or t03); trains 8 steps, then plays steps 6 and 8 on valid:6
V=$1
export PATH=/work/main/.venv-test/bin:$PATH
cd /work/runs/b39
mkdir -p $V && [ -e $V/sft/final ] || cp -r /work/runs/b38/real/sft $V/sft
bazaarbatna train grpo --recipe $V.toml --arena bazaar --out $V >> $V.out 2>> $V.err
echo "train rc=$?" >> $V.done
cd /work/main
bazaarbatna eval --arena bazaar --tasks all --seeds valid:6 --workers 2 --transcripts none --out /work/runs/b39/$V-valid6 \
  --policies llm:/work/runs/b39/$V/grpo/checkpoint-6,llm:/work/runs/b39/$V/grpo/checkpoint-8 > /work/runs/b39/$V-valid6.out 2> /work/runs/b39/$V-valid6.err
echo "eval rc=$?" >> /work/runs/b39/$V.done
mkdir -p /work/runs/b39/$V-merged && cat /work/runs/b36/valid6/results.jsonl /work/runs/b39/$V-valid6/results.jsonl > /work/runs/b39/$V-merged/results.jsonl
for m in 6 8; do python /work/runs/b35/report.py /work/runs/b39/$V-merged llm:/work/runs/b39/$V/grpo/checkpoint-$m llm:training/records/bazaar/adapters/sft; done > /work/runs/b39/$V-report.out 2>&1
