"Profile selection and loader plans for simulated hardware (pure: no GPU needed)."
import json, os
import pytest
from bazaarbatna.train.profiles import Hardware, select_profile, get_profile, loader_plan, trainer_kwargs, PROFILES

CASES = [  # (hardware, expected profile)
    (Hardware(), "cpu"),
    (Hardware(cuda=False, cpu_count=64), "cpu"),
    (Hardware(True, "Tesla T4", 15.0, (7, 5)), "t4"),
    (Hardware(True, "Tesla P100-PCIE-16GB", 16.0, (6, 0)), "t4"),
    (Hardware(True, "Tesla V100-SXM2-32GB", 32.0, (7, 0)), "t4"),     # no bf16 → fp16 settings
    (Hardware(True, "NVIDIA GeForce RTX 3060", 12.0, (8, 6)), "t4"),  # bf16 but small
    (Hardware(True, "NVIDIA L4", 22.5, (8, 9)), "l4"),
    (Hardware(True, "NVIDIA A10G", 22.0, (8, 6)), "l4"),
    (Hardware(True, "NVIDIA A100-SXM4-40GB", 39.6, (8, 0)), "l4"),
    (Hardware(True, "NVIDIA A100-SXM4-80GB", 79.2, (8, 0)), "a100"),
    (Hardware(True, "NVIDIA H100 80GB HBM3", 79.6, (9, 0)), "a100"),
]

@pytest.mark.parametrize("hw,expected", CASES, ids=[c[0].gpu_name or "cpu" for c in CASES])
def test_select_profile(hw, expected):
    assert select_profile(hw) == expected
    p = get_profile("auto", hw=hw)
    k = trainer_kwargs(p)
    if hw.cuda:
        assert k["fp16"] != k["bf16"]                     # exactly one half-precision mode on a GPU
        if not hw.bf16: assert k["fp16"]                  # never bf16 where the GPU lacks it
    else: assert k["use_cpu"] and not (k["fp16"] or k["bf16"])

def test_loader_plans():
    t4, cpu = Hardware(True, "Tesla T4", 15.0, (7, 5)), Hardware()
    assert loader_plan(PROFILES["t4"], t4, unsloth_ok=True) == "unsloth"
    assert loader_plan(PROFILES["t4"], t4, unsloth_ok=False) == "transformers-4bit"
    for name in PROFILES:                                  # on CPU: never unsloth, never 4-bit
        assert loader_plan(PROFILES[name], cpu, unsloth_ok=True) == "transformers"
    assert loader_plan(get_profile("t4", use_unsloth=False), t4, True) == "transformers-4bit"
    assert loader_plan(PROFILES["cpu"], t4, unsloth_ok=True) == "transformers"   # the cpu profile on a GPU machine
    p100 = Hardware(True, "Tesla P100-PCIE-16GB", 16.0, (6, 0))                  # Kaggle's P100: no unsloth kernels
    assert loader_plan(PROFILES["t4"], p100, unsloth_ok=True) == "transformers-4bit"

def test_overrides_and_errors():
    assert get_profile("l4", lora_r=64).lora_r == 64
    with pytest.raises(ValueError, match="unknown profile"): get_profile("tpu-v5")
    with pytest.raises(ValueError, match="unknown profile setting"): get_profile("cpu", rank=3)

@pytest.mark.parametrize("name", sorted(PROFILES))
def test_trainer_configs_print_no_deprecation_warning(name, tmp_path):
    "The configs the SFT and GRPO stages build from a profile: none of our settings may go through a deprecated name."
    trl = pytest.importorskip("trl")
    import warnings
    kw = {**trainer_kwargs(PROFILES[name]), "fp16": False, "bf16": False, "use_cpu": True}   # a GPU profile's settings, built on this CPU
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trl.SFTConfig(output_dir=str(tmp_path), **kw)
        trl.GRPOConfig(output_dir=str(tmp_path), num_generations=2, **kw)
    deprecated = [f"{w.category.__name__}: {w.message}" for w in caught if issubclass(w.category, (DeprecationWarning, FutureWarning))]
    assert deprecated == []

def test_a_training_step_logs_to_trackio(tmp_path):
    "report_to = 'trackio': a real SFT step's loss lands in trackio's local store, under the project `bazaarbatna`."
    pytest.importorskip("trackio")
    import sqlite3, subprocess, sys
    code = ("import torch; torch.set_num_threads(1)\n"
            "from bazaarbatna.train.sft import train_sft\n"
            "from bazaarbatna.train.profiles import get_profile\n"
            "p = get_profile('cpu', report_to='trackio', lora_layers=1, max_seq_len=512)\n"
            f"train_sft({str(tmp_path / 'run')!r}, profile=p, arenas=('bazaar',), steps=1, n_seeds=1, tasks={{'bazaar': ['single_deal']}}, compact=True, resume=False)\n")
    env = {**os.environ, "TRACKIO_DIR": str(tmp_path / "trackio"), "HF_HUB_OFFLINE": "1"}   # trackio reads it at import
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    db = tmp_path / "trackio" / "bazaarbatna.db"
    assert db.exists(), sorted(p.name for p in (tmp_path / "trackio").glob("*"))
    rows = [json.loads(m) for (m,) in sqlite3.connect(db).execute("select metrics from metrics")]
    assert any("train/loss" in m and m.get("train/global_step") == 1 for m in rows), rows

RECIPE_ARENAS = [  # each committed recipe and the arena its README or notebook trains it on
    ("cpu", "bazaar"), ("cpu_record", "bazaar"), ("cpu_record_market", "market"),
    ("t4", "bazaar"), ("l4", "bazaar"), ("a100", "bazaar"), ("t4_market", "market"),   # l4_market and a100_market: t4_market's
]                                                                                      # data and max_seq_len (tests/test_colab.py)

@pytest.mark.parametrize("name,arena", RECIPE_ARENAS, ids=[f"{n}-{a}" for n, a in RECIPE_ARENAS])
def test_recipe_sft_samples_fit_max_seq_len(name, arena):
    "A recipe's SFT stage refuses samples longer than its max_seq_len (check_fits): every committed recipe must fit its own data."
    from transformers import AutoTokenizer
    from bazaarbatna.models import resolve_model
    from bazaarbatna.train.pipeline import load_recipe, sft_data
    from bazaarbatna.train.sft import build_sft_dataset, check_fits
    rec = load_recipe(name)
    p = get_profile(rec["profile"], **rec.get("profile_overrides", {}))
    ds = build_sft_dataset((arena,), **sft_data(rec))   # the data run_pipeline's SFT stage trains on
    tok = AutoTokenizer.from_pretrained(resolve_model("embedded"))   # the GPU recipes' SmolLM2 models share its tokenizer
    assert check_fits(ds, tok, p.max_seq_len) > 0
