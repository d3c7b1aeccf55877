export PATH=/work/main/.venv-test/bin:$PATH
cd /work/main
while [ ! -f /work/runs/b36/done ]; do sleep 10; done
time bazaarbatna eval --arena bazaar --tasks all --seeds valid:6 --workers 2 --transcripts none --out /work/runs/b36/valid6 \
  --policies llm:training/records/bazaar/adapters/sft,llm:/work/runs/b34/real/grpo/checkpoint-6,llm:/work/runs/b36/real/grpo/checkpoint-6,llm:/work/runs/b36/real/grpo/checkpoint-8 \
  > /work/runs/b36/valid6.out 2> /work/runs/b36/valid6.err
echo "eval rc=$?" >> /work/runs/b36/done
