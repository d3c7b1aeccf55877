# after training: B38's steps 6 and 8 greedy on the first 6 validation seeds of all nine tasks (SFT's rows: B36's valid6)
export PATH=/work/main/.venv-test/bin:$PATH
cd /work/main
while ! grep -q "train rc=0" /work/runs/b38/done 2>/dev/null; do sleep 20; done
bazaarbatna eval --arena bazaar --tasks all --seeds valid:6 --workers 2 --transcripts none --out /work/runs/b38/valid6 \
  --policies llm:/work/runs/b38/real/grpo/checkpoint-6,llm:/work/runs/b38/real/grpo/checkpoint-8 > /work/runs/b38/valid6.out 2> /work/runs/b38/valid6.err
echo "eval rc=$?" >> /work/runs/b38/done
mkdir -p /work/runs/b38/merged && cat /work/runs/b36/valid6/results.jsonl /work/runs/b38/valid6/results.jsonl > /work/runs/b38/merged/results.jsonl
for m in 6 8; do python /work/runs/b35/report.py /work/runs/b38/merged llm:/work/runs/b38/real/grpo/checkpoint-$m llm:training/records/bazaar/adapters/sft; done > /work/runs/b38/report.out 2>&1
