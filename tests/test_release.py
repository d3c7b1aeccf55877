"The release workflow (build + publish on a version tag), and the wheel it builds, built here offline from this tree."
import shutil, subprocess, sys, zipfile
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
    assert "python -m build" in runs and "twine check" in runs and "GITHUB_REF_NAME" in runs   # built, checked, tag == version
    assert "pip install dist/*.whl" in runs and "bazaarbatna tasks" in runs                    # the wheel runs on its own
    assert publish["needs"] == "build" and "refs/tags/v" in publish["if"]
    assert publish["permissions"]["id-token"] == "write"                                        # trusted publishing, no token
    assert any(st.get("uses", "").startswith("pypa/gh-action-pypi-publish") for st in publish["steps"])

def test_the_wheel_holds_the_package_its_data_and_the_command(tmp_path):
    pytest.importorskip("build"); pytest.importorskip("setuptools")
    src = tmp_path / "src"; src.mkdir()
    for name in ("pyproject.toml", "README.md"): shutil.copy(ROOT / name, src / name)   # a copy: the build leaves nothing in the tree
    shutil.copytree(ROOT / "bazaarbatna", src / "bazaarbatna", ignore=shutil.ignore_patterns("__pycache__"))
    r = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", str(tmp_path / "dist"), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    whl, = (tmp_path / "dist").glob("bazaarbatna-*.whl")
    z = zipfile.ZipFile(whl)
    names = set(z.namelist())
    assert {"bazaarbatna/cli.py", "bazaarbatna/data/bazaar_listings.json", "bazaarbatna/bazaar/env.py"} <= names
    info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "bazaarbatna = bazaarbatna.cli:main" in z.read(info).decode()
    meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Provides-Extra: train" in meta and "Provides-Extra: server" in meta and "Provides-Extra: ui" in meta
    flat = meta.replace(" ", "")                               # one tested stack: what unsloth 2026.10.9 accepts
    assert "transformers==5.17.0" in flat and "trl==1.15.0" in flat and "unsloth==2026.10.9" in flat
