"""Play one bazaar adapter greedily on the record's 48 held-out `single_deal` seeds and compare it, episode by episode,
with the record's stages and scripted field (`../eval/bazaar/results.jsonl`, the same seeds).

    python training/runs/cpu-smollm2/trials-s15/compare_adapter.py ADAPTER OUTDIR LABEL [THREADS]
"""
import collections, json, pathlib, statistics as st, sys
import torch
from bazaarbatna.agents import LLMPolicy, rollout_batch
from bazaarbatna.evaluate import EVAL_SEEDS, paired_difference

adapter, out, label = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
torch.set_num_threads(int(sys.argv[4]) if len(sys.argv) > 4 else 2)
record = pathlib.Path(__file__).resolve().parents[1] / "eval" / "bazaar" / "results.jsonl"
pol = LLMPolicy("bazaar", model=adapter, temperature=0.0, max_new_tokens=64, name=label, compact=True)
recs = rollout_batch("bazaar", "single_deal", list(EVAL_SEEDS[:48]), pol, progress=False, policy_name=label, keep_transcripts=False)
out.mkdir(parents=True, exist_ok=True)
(out / "results.jsonl").write_text("".join(json.dumps(r, default=str) + "\n" for r in recs))
print(f"{label}: mean reward {st.mean(r['reward'] for r in recs):+.3f}, valid JSON {pol.valid_rate:.3f},",
      dict(collections.Counter(r["reason"] for r in recs)))
both = recs + [json.loads(line) for line in record.read_text().splitlines()]
for other in ("sft", "sft+grpo", "boulware", "expert"):
    d = paired_difference(both, label, other)
    print(f"  {label} - {other}: {d['mean_diff']:+.3f} [{d['ci_lo']:+.3f}, {d['ci_hi']:+.3f}], "
          f"wins/ties/losses {d['wins']}/{d['ties']}/{d['losses']}")
