export PATH=/work/main/.venv-test/bin:$PATH
cd /work/main
while ! grep -q "eval rc=" /work/runs/b38/done 2>/dev/null; do sleep 20; done
python /work/runs/b39s/sampled_valid.py /work/runs/b39s/sampled.json 0.5 2 sft=training/records/bazaar/adapters/sft b36s6=/work/runs/b36/real/grpo/checkpoint-6 > /work/runs/b39s/sampled.out 2> /work/runs/b39s/sampled.err
echo "sampled rc=$?" >> /work/runs/b39s/done
