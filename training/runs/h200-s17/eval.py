"eval.py ADAPTER LABEL OUTJSONL [DEVICE]: greedy, in fp32, on the bazaar record's 48 held-out single_deal seeds; paired differences vs the record."
import json, sys, collections, statistics as st, torch
from pathlib import Path
from peft import PeftModel
from bazaarbatna.agents import LLMPolicy, rollout_batch, adapter_base
from bazaarbatna.models import load_model
from bazaarbatna.evaluate import EVAL_SEEDS, paired_difference
adapter, label, out = sys.argv[1:4]
dev = sys.argv[4] if len(sys.argv) > 4 else "cuda"
m, tok = load_model(adapter_base(Path(adapter)), device=dev, dtype=torch.float32)
m = PeftModel.from_pretrained(m, adapter).merge_and_unload(); m.eval()
pol = LLMPolicy("bazaar", model=m, tokenizer=tok, temperature=0.0, max_new_tokens=64, name=label, compact=True)
n = int(sys.argv[5]) if len(sys.argv) > 5 else 48
recs = rollout_batch("bazaar", "single_deal", list(EVAL_SEEDS[:n]), pol, progress=False, policy_name=label, keep_transcripts=False)
with open(out, "w") as f:
    for r in recs: f.write(json.dumps(r, default=str) + "\n")
old = [json.loads(l) for l in open("training/runs/cpu-smollm2/eval/bazaar/results.jsonl")]
print(label, "mean %+.3f" % st.mean(r["reward"] for r in recs), dict(collections.Counter(r["reason"] for r in recs)), "valid", pol.valid_rate)
for b in ("sft", "boulware", "expert"):
    d = paired_difference(recs + old, label, b)
    print(f"  {label} - {b}: {d['mean_diff']:+.3f} [{d['ci_lo']:+.3f}, {d['ci_hi']:+.3f}] w/t/l {d['wins']}/{d['ties']}/{d['losses']}")
