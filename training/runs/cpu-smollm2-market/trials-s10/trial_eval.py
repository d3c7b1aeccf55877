import torch, json, sys, statistics as st, pathlib
torch.set_num_threads(1)
from bazaarbatna.agents import LLMPolicy, rollout_batch
from bazaarbatna.evaluate import EVAL_SEEDS, summarize
adapter, out = sys.argv[1], pathlib.Path(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 12   # held-out seeds
pol = LLMPolicy("market", model=adapter, temperature=0.0, max_new_tokens=72, compact=True, name="sft")
recs = rollout_batch("market", "single_trade", list(EVAL_SEEDS[:n]), pol, progress=False, keep_steps=True, keep_transcripts=False)
out.mkdir(parents=True, exist_ok=True)
with open(out / "results.jsonl", "w") as f:
    for r in recs:
        r["replies"] = [s["reply"] for s in r.pop("steps")]
        f.write(json.dumps(r, default=str) + "\n")
print(out, "mean reward", round(st.mean(r["reward"] for r in recs), 3), "valid", round(pol.valid_rate, 3))
