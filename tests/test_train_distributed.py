"""Training under `accelerate launch`: two CPU processes over gloo run SFT and episode GRPO through the command line
(`accelerate launch -m bazaarbatna.cli train ...`, built by `launch_command`). After every step the ranks must hold the
same weights (`RankSync` hashes them on each rank and gathers the hashes; the curve records it), only the main process
writes and prints, and a second launch after a kill resumes every rank from the same checkpoint (each rank's RNG state
is in it). Three launches of the embedded model at tiny settings."""
import json, os, subprocess, sys, time
from pathlib import Path
import pytest
from bazaarbatna.train.distributed import launch_command, launch_env
from bazaarbatna.train.checkpoints import read_json, curve_path, list_checkpoints, atomic_write_json

ROOT = Path(__file__).resolve().parents[1]
RECIPE = """
profile = "cpu"
model = "embedded"
compact = true
train_tasks = {bazaar = ["single_deal"]}
[profile_overrides]
batch_size = 1          # SFT: one sample per process per step
lora_layers = 2
max_completion_len = 16
num_generations = 2     # GRPO: one group of two episodes per process per step
[sft]
steps = 2
n_seeds = 1
[grpo]
steps = 1
prompts_per_step = 1
n_seeds = 2
max_episode_steps = 2
"""

def launch(stage: str, steps: int, out: Path, recipe: Path) -> dict:
    "Run one `bazaarbatna train` stage on 2 processes; the one JSON summary it prints (from the main process alone)."
    cmd = launch_command(stage, 2, "ddp", "--recipe", str(recipe), "--arena", "bazaar", "--steps", str(steps), "--out", str(out), "--json")
    env = {**launch_env(1), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200, cwd=ROOT)
    assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stderr[-4000:]}"
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    assert len(lines) == 1, f"expected one JSON summary (the main process's), got:\n{r.stdout[-2000:]}"
    assert r.stderr.count(f"[bazaarbatna train] {stage.upper()}:") == 1, r.stderr[-2000:]   # the main process says it, once
    return json.loads(lines[0])

def rows(curve): return [r for r in curve if not r.get("event")]

@pytest.mark.slow
def test_two_processes_train_in_step_and_resume(tmp_path):
    t0 = time.time()
    recipe = tmp_path / "tiny.toml"; recipe.write_text(RECIPE)
    out = tmp_path / "run"

    res = launch("sft", 1, out, recipe)
    assert res["processes"] == 2 and res["sft"]["steps"] == 1
    ck1 = list_checkpoints(out / "sft")[-1]
    assert ck1.name == "checkpoint-1" and {"rng_state_0.pth", "rng_state_1.pth"} <= {p.name for p in ck1.iterdir()}
    assert not any(p.name.startswith(".staging") for p in (out / "sft").iterdir())

    # a kill during step 2: its curve row was logged, its checkpoint was being staged, not yet renamed
    curve = read_json(curve_path(out, "sft"))
    atomic_write_json(curve_path(out, "sft"), curve + [{**rows(curve)[-1], "step": 2}])
    (out / "sft" / ".staging-99999" / "checkpoint-2").mkdir(parents=True)

    res = launch("sft", 2, out, recipe)            # every rank resumes from checkpoint-1 and trains step 2
    curve = read_json(curve_path(out, "sft"))
    assert [(r.get("event"), r["step"]) for r in curve] == [(None, 1), ("resume", 1), (None, 2)]
    for r in rows(curve): assert (r["ranks"], r["ranks_in_sync"]) == (2, 1)   # same weights on both ranks after each step
    assert rows(curve)[-1]["learning_rate"] > 0                                # step 2 changed them (step 1 is warm-up, lr 0)
    assert {"rng_state_0.pth", "rng_state_1.pth"} <= {p.name for p in (out / "sft" / "checkpoint-2").iterdir()}
    assert (out / "sft" / "final" / "bazaarbatna.json").exists() and res["sft"]["steps"] == 2

    res = launch("grpo", 1, out, recipe)           # episode GRPO from the SFT adapter: one group per rank
    g = rows(read_json(curve_path(out, "grpo")))
    assert [r["step"] for r in g] == [1] and (g[0]["ranks"], g[0]["ranks_in_sync"]) == (2, 1)
    assert g[0]["env/groups"] == 2          # the curve's episode metrics cover both ranks' groups, gathered
    assert g[0]["env/decisions"] <= 2       # max_episode_steps
    assert {"rng_state_0.pth", "rng_state_1.pth"} <= {p.name for p in (out / "grpo" / "checkpoint-1").iterdir()}
    assert (out / "grpo" / "final" / "adapter_model.safetensors").exists()
    pipe = read_json(out / "pipeline.json")
    assert pipe["processes"] == 2 and {"sft", "grpo"} <= set(pipe)
    print(f"three 2-process launches: {time.time() - t0:.0f} s", file=sys.stderr)
