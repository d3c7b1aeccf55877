"""The RL sanity checks every committed training record must pass, recomputed from its episode records
(`results.jsonl`), not read from its summary: on the very (task, seed) groups GRPO trained on, SFT+GRPO beats the SFT
model it started from with a 95 % CI above 0 (a loop that cannot raise its own objective has a bug), the groups are
the ones `pipeline.json` says GRPO played, and the RL model still makes deals on the test seeds."""
import json
from pathlib import Path
import pytest
from bazaarbatna.evaluate import paired_difference, read_records

ROOT = Path(__file__).resolve().parents[1]
RECORDS = sorted(p for p in (ROOT / "training" / "records").iterdir() if (p / "train_check").is_dir())

def test_every_record_has_a_training_seed_check():
    assert {p.name for p in RECORDS} >= {"bazaar", "market"}

@pytest.mark.parametrize("record", RECORDS, ids=lambda p: p.name)
def test_grpo_raises_its_own_objective(record):
    arena = record.name
    recs = read_records(record / "train_check" / "eval" / arena / "results.jsonl")
    groups = json.loads((record / "pipeline.json").read_text())["grpo"]["groups"][arena]
    for policy in ("sft", "sft+grpo"):   # exactly the groups GRPO trained on, each played once by each stage
        played = sorted((r["task"], r["seed"]) for r in recs if r["policy"] == policy)
        assert played == sorted((t, s) for t, seeds in groups.items() for s in seeds), policy
    d = paired_difference(recs, "sft+grpo", "sft", n_boot=4000)
    assert d["ci_lo"] > 0, f"{arena}: on its own training groups SFT+GRPO - SFT is {d['mean_diff']:+.3f} [{d['ci_lo']:+.3f}, {d['ci_hi']:+.3f}]"

@pytest.mark.parametrize("record", RECORDS, ids=lambda p: p.name)
def test_the_rl_model_makes_deals(record):
    recs = [r for r in read_records(record / "eval" / record.name / "results.jsonl") if r["policy"] == "sft+grpo"]
    assert recs and sum(bool(r["deal"]) for r in recs) / len(recs) > 0.1, f"{record.name}: the RL model barely trades"
