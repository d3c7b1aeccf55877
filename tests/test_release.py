"The release workflow (build + publish on a version tag), and the wheels it builds (pure and compiled), built here offline from this tree."
import hashlib, json, os, shutil, subprocess, sys, zipfile
from pathlib import Path
import pytest
yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[1]

def test_release_workflow_builds_checks_and_publishes_on_a_tag():
    wf = yaml.safe_load((ROOT / ".github/workflows/release.yaml").read_text())
    on = wf.get("on", wf.get(True))                     # YAML 1.1 reads a bare `on:` key as True
    assert on["push"]["tags"] == ["v*"]
    build, publish = wf["jobs"]["build"], wf["jobs"]["publish"]
    runs = " ".join(st.get("run", "") for st in build["steps"])
    assert "BAZAARBATNA_PURE=1 python -m build" in runs and "twine check" in runs and "GITHUB_REF_NAME" in runs   # built, checked, tag == version
    assert "pip install dist/*.whl" in runs and "bazaarbatna tasks" in runs                    # the pure wheel runs on its own
    cib = next(st for st in wf["jobs"]["compiled"]["steps"] if st.get("uses", "").startswith("pypa/cibuildwheel"))
    assert "cp311-manylinux_x86_64" in cib["env"]["CIBW_BUILD"] and "engine_status" in cib["env"]["CIBW_TEST_COMMAND"]   # compiled wheels run compiled
    assert publish["needs"] == ["build", "compiled"] and "refs/tags/v" in publish["if"]
    assert publish["permissions"]["id-token"] == "write"                                        # trusted publishing, no token
    assert any(st.get("uses", "").startswith("pypa/gh-action-pypi-publish") for st in publish["steps"])

def _build_wheel(tmp_path, pure: bool) -> zipfile.ZipFile:
    "The wheel `python -m build` makes from a copy of this tree (the build leaves nothing in the tree)."
    src = tmp_path / "src"
    if not src.exists():
        src.mkdir()
        for name in ("pyproject.toml", "README.md", "setup.py"): shutil.copy(ROOT / name, src / name)
        shutil.copytree(ROOT / "bazaarbatna", src / "bazaarbatna",   # without what a local build left: compiled modules, their manifest
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "_compiled.json"))
    out = tmp_path / ("dist-pure" if pure else "dist-compiled")
    from bazaarbatna.engine import PURE_ENV
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV} | ({PURE_ENV: "1"} if pure else {})
    r = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(out), str(src)],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    whl, = out.glob("bazaarbatna-*.whl")
    return zipfile.ZipFile(whl)

def test_the_wheel_holds_the_package_its_data_and_the_command(tmp_path):
    pytest.importorskip("build"); pytest.importorskip("setuptools")
    z = _build_wheel(tmp_path, pure=True)
    assert z.filename.endswith("-py3-none-any.whl")                      # the pure wheel fits any platform
    names = set(z.namelist())
    assert {"bazaarbatna/cli.py", "bazaarbatna/data/bazaar_listings.json", "bazaarbatna/bazaar/env.py", "bazaarbatna/engine.py"} <= names
    assert not [n for n in names if n.endswith((".so", ".pyd", "_compiled.json"))]
    info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "bazaarbatna = bazaarbatna.cli:main" in z.read(info).decode()
    meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: train" in meta and "Provides-Extra: server" in meta and "Provides-Extra: ui" in meta
    flat = meta.replace(" ", "")                               # one tested stack: what unsloth 2026.10.9 accepts
    assert "transformers==5.17.0" in flat and "trl==1.15.0" in flat and "unsloth==2026.10.9" in flat

def test_the_compiled_wheel_holds_each_engine_module_compiled_from_the_source_it_ships(tmp_path):
    pytest.importorskip("build"); pytest.importorskip("setuptools"); pytest.importorskip("Cython")
    from bazaarbatna.engine import COMPILED_MODULES, MANIFEST
    z = _build_wheel(tmp_path, pure=False)
    assert not z.filename.endswith("-none-any.whl")                      # a compiled wheel names its interpreter and platform
    names = set(z.namelist())
    for mod in COMPILED_MODULES:
        folder, leaf = mod.replace(".", "/").rsplit("/", 1)
        assert any(n.startswith(f"{folder}/{leaf}.") and n.endswith((".so", ".pyd")) for n in names), mod
        manifest = json.loads(z.read(f"{folder}/{MANIFEST}"))
        assert manifest[leaf] == hashlib.sha256(z.read(f"{folder}/{leaf}.py")).hexdigest(), mod   # built from the .py beside it
