"""Tournaments on Ray (`run_tournament(backend="ray")`, `bazaarbatna eval --backend ray`) against a local Ray instance
with two CPUs: the records and transcripts are the local pool's, a resumed run plays only what is missing, and an LLM
policy is loaded once per actor (one model per worker), not once per episode."""
import json, os, sys
from pathlib import Path
import pytest

ray = pytest.importorskip("ray", reason="the distributed extra (ray) is not installed")
from bazaarbatna.evaluate import run_tournament, read_records, run_units_ray, comparable_records
from bazaarbatna.train.checkpoints import tiny_model_and_tokenizer

ROOT = Path(__file__).resolve().parents[1]

@pytest.fixture(scope="module")
def local_ray():
    # the workers import bazaarbatna from this checkout, as the driver does
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def files(d: Path) -> dict: return {str(p.relative_to(d)): p.read_bytes() for p in sorted((d / "transcripts").rglob("*")) if p.is_file()}

def test_ray_records_equal_the_local_pool(local_ray, tmp_path):
    kw = dict(arena="bazaar", tasks=["single_deal", "impatient_seller"], policies=["expert", "boulware", "lowballer"],
              seeds="eval:3", progress=False, transcripts=2)
    here = run_tournament(**kw, out_dir=tmp_path / "local", workers=2)
    there = run_tournament(**kw, out_dir=tmp_path / "ray", backend="ray")
    assert there["errors"] == [] and there["new"] == len(here["records"]) == 2 * 3 * 3
    assert comparable_records(there["records"]) == comparable_records(here["records"])                 # the same records (the clock aside)
    assert comparable_records(read_records(tmp_path / "ray")) == comparable_records(read_records(tmp_path / "local"))
    assert files(tmp_path / "ray") == files(tmp_path / "local") != {}        # the same transcripts, written by the driver

def test_ray_resumes_like_the_local_pool(local_ray, tmp_path):
    kw = dict(arena="market", tasks=["single_trade"], policies=["expert", "no_negotiation"], seeds="eval:4", progress=False, transcripts="none")
    full = run_tournament(**kw, out_dir=tmp_path / "full")
    half = tmp_path / "half"; half.mkdir()
    kept = full["records"][::2]   # a run cut short: every other episode is on disk
    (half / "results.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in kept))
    res = run_tournament(**kw, out_dir=half, backend="ray")
    assert res["new"] == len(full["records"]) - len(kept)                    # only the missing episodes were played
    assert comparable_records(res["records"]) == comparable_records(full["records"])

def test_llm_policy_loads_once_per_actor(local_ray, tmp_path):
    model, tok = tiny_model_and_tokenizer(seed=0)   # a random model: fast, and every reply is refused, which is fine here
    folder = tmp_path / "tiny"; model.save_pretrained(folder); tok.save_pretrained(folder)
    pol = f"llm:{folder}"
    res = run_tournament("bazaar", ["single_deal"], [pol], "eval:8", tmp_path / "out", workers=2, backend="ray", batch=2,
                         progress=False, transcripts="none", policy_kwargs={pol: {"max_new_tokens": 4}})
    assert res["errors"] == [] and res["new"] == 8                           # four lockstep units of two episodes
    held = ray.get([a.models.remote() for a in run_units_ray.last_actors])
    assert len(held) == 2 and all(h == [pol] for h in held)                  # two actors, one model each, for all four units
