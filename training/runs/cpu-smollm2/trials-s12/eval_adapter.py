"""Replay one adapter greedily on the first N held-out seeds of a task, keeping every raw reply.

    python training/runs/cpu-smollm2/trials-s12/eval_adapter.py ARENA TASK ADAPTER OUTDIR N
"""
import torch, json, sys, statistics as st, pathlib
torch.set_num_threads(1)
from bazaarbatna.agents import LLMPolicy, rollout_batch
from bazaarbatna.evaluate import EVAL_SEEDS
arena, task, adapter, out, n = sys.argv[1], sys.argv[2], sys.argv[3], pathlib.Path(sys.argv[4]), int(sys.argv[5])
pol = LLMPolicy(arena, model=adapter, temperature=0.0, max_new_tokens=64, compact=True, name="sft")
recs = rollout_batch(arena, task, list(EVAL_SEEDS[:n]), pol, progress=False, keep_steps=True, keep_transcripts=False)
out.mkdir(parents=True, exist_ok=True)
with open(out / "results.jsonl", "w") as f:
    for r in recs:
        r["replies"] = [s["reply"] for s in r.pop("steps")]
        f.write(json.dumps(r, default=str) + "\n")
print(out, "mean reward", round(st.mean(r["reward"] for r in recs), 3), "valid", round(pol.valid_rate, 3), "deal", round(st.mean(bool(r.get("deal")) for r in recs), 3))
