"""`llm:<model>@T` in a tournament: the LLM policy sampled at temperature T (the model's own distribution, as GRPO samples
its episodes) beside the same model played greedily; a bad temperature or an unknown name is refused before anything is
played or written. Runs the bazaar record's SFT adapter (the real embedded model with LoRA) on CPU."""
import subprocess, sys
from pathlib import Path
import pytest
from bazaarbatna.evaluate import run_eval, read_records

def _rewards(out):
    return {(r["policy"], r["task"], r["seed"]): (r["reward"], r["n_actions"]) for r in read_records(out / "results.jsonl")}

SFT = str(Path(__file__).resolve().parents[1] / "training/records/bazaar/adapters/sft")

def test_a_sampled_llm_policy_plays_beside_the_greedy_one_and_is_seeded(tmp_path):
    pols = [f"llm:{SFT}", f"llm:{SFT}@0.7"]
    a = run_eval("bazaar", ["single_deal"], pols, "valid:1", tmp_path / "a", progress=False, transcripts="none")
    assert {r["policy"] for r in a["ranking"]} == set(pols) and len(_rewards(tmp_path / "a")) == 2
    run_eval("bazaar", ["single_deal"], pols[1:], "valid:1", tmp_path / "b", progress=False, transcripts="none")
    sampled = lambda d: {k[1:]: v for k, v in _rewards(d).items() if k[0] == pols[1]}
    assert sampled(tmp_path / "a") == sampled(tmp_path / "b")   # seeded: the same command plays the same episode

@pytest.mark.parametrize("bad, says", [("llm:embedded@0", "above 0"), ("llm:embedded@3", "at most 2"), ("llm@", "followed by a temperature"),
                                       ("boulwre", "unknown bazaar policy")])
def test_a_bad_policy_name_is_refused_before_anything_is_written(tmp_path, bad, says):
    out = tmp_path / "ev"
    p = subprocess.run([sys.executable, "-m", "bazaarbatna.cli", "eval", "--arena", "bazaar", "--tasks", "single_deal",
                        "--policies", f"expert,{bad}", "--seeds", "valid:1", "--out", str(out)], capture_output=True, text=True)
    assert p.returncode != 0 and says in p.stderr, p.stderr[-800:]
    assert not out.exists()
