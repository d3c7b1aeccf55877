"""The landing page (nbs/index.ipynb, also the README) shows tables and figures drawn from the committed records.
Its outputs are committed with the notebook (Quarto renders them; nothing re-executes on the docs site), so this
re-runs the page and checks that every table and number it shows still follows from the records at HEAD."""
import json, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / "nbs" / "index.ipynb"
sys.path.insert(0, str(ROOT / "tools"))
import build_readme  # noqa: E402

def text_outputs(nb: dict) -> list[list[str]]:
    "Per code cell, its markdown and stream outputs (figures are compared by existence, not by pixels)."
    cells = []
    for c in nb["cells"]:
        if c["cell_type"] != "code": continue
        outs = []
        for o in c.get("outputs", []):
            d = o.get("data", {})
            if "text/markdown" in d: outs.append("".join(d["text/markdown"]))
            elif o.get("output_type") == "stream": outs.append("".join(o["text"]))
            elif "image/png" in d: outs.append("<figure>")
        cells.append(outs)
    return cells

@pytest.fixture(scope="module")
def executed():
    nbformat = pytest.importorskip("nbformat")
    from nbconvert.preprocessors import ExecutePreprocessor
    nb = nbformat.read(str(INDEX), as_version=4)
    ExecutePreprocessor(timeout=600, kernel_name="python3").preprocess(nb, {"metadata": {"path": str(INDEX.parent)}})
    return json.loads(nbformat.writes(nb))

def test_landing_page_outputs_match_the_records(executed):
    committed = json.loads(INDEX.read_text())
    old, new = text_outputs(committed), text_outputs(executed)
    assert len(old) == len(new)
    stale = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
    assert not stale, ("nbs/index.ipynb shows outputs that no longer follow from the committed records (code cells "
                       f"{stale}); re-run it: jupyter nbconvert --to notebook --execute --inplace nbs/index.ipynb "
                       "&& nbdev-clean --fname nbs/index.ipynb && python tools/build_readme.py")

def test_landing_page_has_the_sections_a_visitor_expects():
    heads = [l for c in json.loads(INDEX.read_text())["cells"] if c["cell_type"] == "markdown"
             for l in "".join(c["source"]).splitlines() if l.startswith("#")]
    text = "\n".join(heads).lower()
    for section in ("arenas at a glance", "quickstart", "live demo", "judged pitches", "baseline policy performance",
                    "training trajectory", "sft loss", "reward progress under grpo", "training dashboard",
                    "reward improvement", "before vs after", "dense reward", "action space", "one sft sample",
                    "records and artifacts", "server endpoints"):
        assert section in text, f"landing page lacks a '{section}' section"

def test_readme_is_the_landing_page_with_its_figures():
    text, figs = build_readme.render(json.loads(INDEX.read_text()))
    assert (ROOT / "README.md").read_text() == text, "README.md is stale: python tools/build_readme.py"
    assert len(figs) >= 5
    for name, png in figs.items():
        assert (ROOT / name).read_bytes() == png, f"{name} missing or stale: python tools/build_readme.py"
        assert f"]({name})" in text
