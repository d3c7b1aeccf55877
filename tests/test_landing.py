"""The pages drawn from the committed records: the landing page (nbs/index.ipynb, also the README) and the Results
chapter (nbs/95_results.ipynb). Their outputs are committed with the notebooks (the docs site executes nothing), so
this re-runs both and checks that every table and number they show still follows from the records at HEAD, that
their figures are files under nbs/figures (not embedded), and that the README is the landing page. It also checks
the promise the README makes about the records: `bazaarbatna report` rebuilds tables, figures and the shown
transcripts from a record folder alone; and that training/ stays a product, not a lab notebook."""
import json, os, re, shutil, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
PAGES = ("index.ipynb", "95_results.ipynb")
sys.path.insert(0, str(ROOT / "tools"))
import build_readme  # noqa: E402

RERUN = ("python tools/build_readme.py --execute (re-runs nbs/index.ipynb and nbs/95_results.ipynb against the records, "
         "writes nbs/figures and the README)")

def text_outputs(nb: dict) -> list[list[str]]:
    "Per code cell, its markdown and stream outputs."
    cells = []
    for c in nb["cells"]:
        if c["cell_type"] != "code": continue
        outs = []
        for o in c.get("outputs", []):
            d = o.get("data", {})
            if "text/markdown" in d: outs.append("".join(d["text/markdown"]))
            elif o.get("output_type") == "stream": outs.append("".join(o["text"]))
            elif "text/plain" in d: outs.append("".join(d["text/plain"]))
        cells.append(outs)
    return cells

def headings(nb: dict) -> list[str]:
    return [l.lstrip("#").strip().lower() for c in nb["cells"] if c["cell_type"] == "markdown"
            for l in "".join(c["source"]).splitlines() if l.startswith("#")]

def committed(name): return json.loads((NBS / name).read_text())

@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    nbformat = pytest.importorskip("nbformat")
    from nbconvert.preprocessors import ExecutePreprocessor
    figs = tmp_path_factory.mktemp("figures")
    old = os.environ.get("BAZAARBATNA_FIGURES")
    os.environ["BAZAARBATNA_FIGURES"] = str(figs)   # the runs draw their figures here, not into the tree
    try:
        out = {}
        for name in PAGES:
            nb = nbformat.read(str(NBS / name), as_version=4)
            ExecutePreprocessor(timeout=900, kernel_name="python3").preprocess(nb, {"metadata": {"path": str(NBS)}})
            out[name] = json.loads(nbformat.writes(nb))
    finally:
        if old is None: os.environ.pop("BAZAARBATNA_FIGURES", None)
        else: os.environ["BAZAARBATNA_FIGURES"] = old
    return out, figs

@pytest.mark.parametrize("name", PAGES)
def test_pages_outputs_match_the_records(executed, name):
    nbs, figs = executed
    old, new = text_outputs(committed(name)), text_outputs(nbs[name])
    assert len(old) == len(new)
    stale = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
    assert not stale, f"nbs/{name} shows outputs that no longer follow from the committed records (code cells {stale}); {RERUN}"
    for f in build_readme.figures_linked(nbs[name]): assert (figs / f).exists(), f"the page links figures/{f} but did not draw it"

@pytest.mark.parametrize("name", PAGES)
def test_figures_are_files_not_embedded(name):
    nb = committed(name)
    embedded = [i for i, c in enumerate(nb["cells"]) for o in c.get("outputs", []) if {"image/png", "image/svg+xml"} & set(o.get("data", {}))]
    assert not embedded, f"nbs/{name} embeds images in cells {embedded}: save them under nbs/figures and link them"
    linked = build_readme.figures_linked(nb)
    assert linked, f"nbs/{name} shows no figure"
    for f in linked: assert (NBS / "figures" / f).exists(), f"nbs/figures/{f} is missing: {RERUN}"

def test_every_committed_figure_is_shown():
    shown = {f for name in PAGES for f in build_readme.figures_linked(committed(name))}
    unused = sorted(p.name for p in (NBS / "figures").glob("*.png") if p.name not in shown)
    assert not unused, f"nbs/figures holds figures no page shows: {unused}"

def test_landing_page_reads_as_a_product():
    heads = headings(committed("index.ipynb"))
    order = ["quickstart", "colab", "results", "before vs after", "using the library", "command line", "server", "contributing"]
    found = [next((i for i, h in enumerate(heads) if key in h), None) for key in order]
    assert None not in found, f"the landing page lacks a section: {[k for k, i in zip(order, found) if i is None]}"
    assert found == sorted(found), f"the landing page's sections are out of order: {heads}"
    assert not any("records and artifacts" in h or "files" == h for h in heads), "no file table on the landing page"
    assert (NBS / "index.ipynb").stat().st_size <= 300_000, "nbs/index.ipynb is over 300 KB"

def test_results_chapter_has_the_detailed_results():
    heads = "\n".join(headings(committed("95_results.ipynb")))
    for section in ("the tasks", "the scripted field", "per task", "our buyers on one listing", "the training records",
                    "before vs after", "a live episode", "judged pitches", "dense reward", "action space", "one sft sample"):
        assert section in heads, f"the Results chapter lacks a '{section}' section"

def test_readme_is_the_landing_page():
    text = build_readme.render(committed("index.ipynb"))
    assert (ROOT / "README.md").read_text() == text, "README.md is stale: python tools/build_readme.py"
    assert len(text.encode()) <= 40_000, "README.md is over 40 KB"
    for f in re.findall(r"\]\((nbs/figures/[^)\s]+)\)", text): assert (ROOT / f).exists(), f
    assert "<!-- quickstart-tests -->\n```bash\n" in text, "CI's test command (.ci/run) reads the block after this marker"
    # one headline table per committed record, and the CLI example on validation seeds
    for rec in sorted((ROOT / "training" / "records").glob("*/eval/*/results.jsonl")):
        arena = rec.parent.name
        assert f"**{arena}** ([`training/records/{rec.parents[2].name}`]" in text, f"no headline for the {arena} record"
    assert "--seeds 0-4" not in text and "--seeds eval:5" in text

def test_readme_links_chapters_on_the_site():
    assert build_readme.readme_links("see [Results](95_results.ipynb#x) and ![f](figures/a.png)") == \
        "see [Results](https://bazaarbatna.github.io/bazaarbatna/results.html#x) and ![f](nbs/figures/a.png)"
    with pytest.raises(ValueError, match="embeds an image"):
        build_readme.render({"cells": [{"cell_type": "code", "source": "plot()", "outputs": [{"data": {"image/png": "iVBOR"}}]}]})

def _tracked(folder: Path) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z", "--", str(folder)], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / f for f in out.split("\0") if f]

def _copy_record(folder: Path, dest: Path) -> Path:
    "The files git tracks under `folder`, nothing else (no report written by an earlier run)."
    for f in _tracked(folder):
        (dest / f.relative_to(folder)).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(f, dest / f.relative_to(folder))
    return dest

def _records():
    return sorted({p.parents[2] for p in (ROOT / "training" / "records").glob("*/eval/*/results.jsonl")})

@pytest.mark.slow
@pytest.mark.parametrize("record", _records(), ids=lambda p: p.name)
def test_report_rebuilds_a_training_record_from_its_files_alone(record, tmp_path):
    from bazaarbatna.cli import main
    rec = _copy_record(record, tmp_path / record.name)
    assert main(["report", str(rec), "--json"]) == 0
    out = rec / "report"
    assert (out / "README.md").exists() and (out / "dashboard.png").stat().st_size > 10_000
    for ev in rec.glob("eval/*"):
        assert (out / ev.name / "tables.md").exists()
        ba = (out / ev.name / "figures" / f"before_after_{ev.name}.md").read_text()
        assert ba.count("### Transcript") == 2, "both shown transcripts are rebuilt"
        assert (out / ev.name / "figures" / f"before_after_{ev.name}.png").stat().st_size > 10_000

@pytest.mark.slow
@pytest.mark.parametrize("arena", ["bazaar", "market"])
def test_report_rebuilds_the_scripted_field_by_replaying(arena, tmp_path):
    from bazaarbatna.report import report
    folder = _copy_record(ROOT / "training" / "baselines" / arena, tmp_path / arena)
    assert not (folder / "transcripts").exists()       # nothing kept: every episode is replayed from its seed
    rep = report(folder, n_boot=200)
    ba = rep["arenas"][arena]["before_after"]
    assert ba and Path(ba["markdown"]).read_text().count("### Transcript") == 2

def test_training_is_a_product_not_a_lab_notebook():
    files = _tracked(ROOT / "training")
    assert len(files) <= 150, f"training/ tracks {len(files)} files (at most 150)"
    adapters = [f for f in files if "adapters" in f.relative_to(ROOT).parts]   # a record's trained LoRA adapters
    assert sum(f.stat().st_size for f in files if f not in adapters) <= 5 * 2**20, "training/ holds more than 5 MB besides the adapters"
    for folder in {f.parent for f in adapters}:
        assert sum(f.stat().st_size for f in folder.iterdir()) <= 10 * 2**20, f"{folder} is over 10 MB"
        assert (folder / "adapter_config.json").exists() and (folder / "adapter_model.safetensors").exists(), folder
    assert (ROOT / "training" / "EXPERIMENTS.md").exists() and not (ROOT / "training" / "runs").exists()
    named = [f.relative_to(ROOT).as_posix() for f in files if re.search(r"(^|/)(v[0-9]+|trials-s[0-9]+)[-/_]", f.relative_to(ROOT).as_posix())]
    assert not named, f"files named after versions or sessions: {named}"

def test_no_history_words_in_the_tree():
    "A trial's story is a row of training/EXPERIMENTS.md; no file speaks of sessions."
    found = subprocess.run(["git", "grep", "-il", r"session [0-9]"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert not found, f"history words ('session N') in {found}"

def test_quickstart_run_is_the_main_job():
    "The committed run of the README's first command was made with today's quickstart recipe, and the README shows what it printed."
    import tomllib
    qs = ROOT / "training" / "quickstart"
    run = json.loads((qs / "pipeline.json").read_text())
    assert run["recipe"] == "cpu" and run["arenas"] == ["bazaar"] and run["device"] == "cpu"
    assert run["recipe_settings"] == tomllib.loads((ROOT / "training" / "configs" / "cpu.toml").read_text()), \
        "training/configs/cpu.toml changed since the committed quickstart run: run command 1 again and commit its pipeline.json and output"
    readme = (ROOT / "README.md").read_text()
    main_job = readme.split("<!-- quickstart-main -->", 1)[1].split("```", 2)[1]
    assert "bazaarbatna train all --profile cpu --arena bazaar --out runs/quickstart" in main_job
    printed = (qs / "output.txt").read_text()
    lines = [x["line"] for v in run["verdict"].values() for x in v]
    assert lines and all(l in printed and l in readme for l in lines), "the README and output.txt must show the run's closing lines"
    assert f"the training command took {run['wall_seconds']['all'] / 60:.0f} minutes" in readme

def test_readme_says_how_to_install_and_what_each_command_costs():
    "A new user learns from the README how to install a package that is not on PyPI, what each command costs, and when the taste runs."
    text = (ROOT / "README.md").read_text()
    assert "not on PyPI yet" in text and 'pip install -e ".[train]"' in text, "install from a clone"
    assert re.search(r'pip install "bazaarbatna\[train\] @ git\+https://github\.com/[\w-]+/bazaarbatna"', text), "install from git"
    main, tests, taste = (text.index(k) for k in ("<!-- quickstart-main -->", "<!-- quickstart-tests -->", "**A one-minute taste**, after command 1"))
    assert main < tests < taste, "the taste needs .venv, which command 1 makes: it comes after it"
    for env, cost in (("`.venv`", r"`\.venv` takes [\d.]+ GB"), ("`.venv-test`", r"`\.venv-test` takes [\d.]+ GB"), ("model", r"model [\d.]+ GB")):
        assert re.search(cost, text), f"the README does not say how much disk {env} takes"
    assert re.search(r"\*\*2\. Run the tests\*\* \([^)]*\d+[^)]*minute", text) or "half an hour" in text, "how long the tests take"

def test_readme_explains_the_rung_offers_with_an_example():
    "The demo shows `rung` offers; the README says what they are, with a real prompt line and a reply that the ladder accepts."
    text = (ROOT / "README.md").read_text()
    part = text[text.index("**What the demo's `rung` offers are.**"):]
    ladder = re.search(r"Offer ladder: (\d+)% to (\d+)% of the seller's ask in steps of (\d+)%", part)
    reply = json.loads(re.search(r"The reply `(\{[^`]+\})`", part).group(1))
    assert ladder and reply["action"] == "offer", part[:800]
    lo, hi, step = map(int, ladder.groups())
    rung = int(reply["rung"].rstrip("%"))
    assert lo <= rung <= hi and (rung - lo) % step == 0, f"the example's rung {reply['rung']} is not on the ladder it shows"

def test_readme_says_how_trl_trains_against_the_arenas():
    "The README's promise about TRL is one the package keeps: the tool environments exist and the chapter that runs them is linked."
    text = (ROOT / "README.md").read_text()
    assert "any OpenEnv or TRL client can train against it" not in text   # the server speaks OpenEnv; TRL trains through bazaarbatna.tools
    from bazaarbatna.tools import BazaarTools, MarketTools
    for cls in (BazaarTools, MarketTools): assert callable(getattr(cls, "get_reward", None)) and callable(getattr(cls, "reset", None))
    assert "environment_factory=BazaarTools" in text and "tools.html" in text
