"""The docs site up to Quarto: nbdev's config files, the sidebar, nbdev's notebook processing of every chapter,
links and images between pages, and the landing page + one chapter rendered to HTML (nbconvert) and
screenshotted in headless Chromium. Quarto itself runs only in .github/workflows/deploy.yaml.
Set BB_DOCS_OUT=DIR to keep the processed site, the HTML and the screenshots."""
import json, os, sys
from pathlib import Path
import pytest, yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import docs_preview as dp  # noqa: E402

@pytest.fixture(scope="module")
def shared(tmp_path_factory, worker_id):
    "A folder of this run that every pytest-xdist worker shares (under xdist each worker's basetemp is a child of the run's)."
    base = tmp_path_factory.getbasetemp()
    d = (base if worker_id == "master" else base.parent) / "bb_docs"
    d.mkdir(exist_ok=True)
    return d

@pytest.fixture(scope="module")
def out_dir(shared):
    keep = os.environ.get("BB_DOCS_OUT")
    if keep: Path(keep).mkdir(parents=True, exist_ok=True); return Path(keep)
    return shared

def _once(shared: Path, name: str, build):
    "build() on the first worker to get here; the others wait for it and read its JSON result (the site is built once a run)."
    from filelock import FileLock
    done = shared / f"{name}.json"
    with FileLock(str(done) + ".lock"):
        if not done.exists(): done.write_text(json.dumps(build()))
        return json.loads(done.read_text())

@pytest.fixture(scope="module")
def site(out_dir, shared):
    s = out_dir / "site"
    def build(): dp.stage(s); return dp.config_files(s)
    return s, _once(shared, "site", build)

@pytest.fixture(scope="module")
def processed(site, shared):
    s, _ = site   # processing uses every core, so a worker waiting here costs nothing
    return s, _once(shared, "processed", lambda: dp.process_all(s, workers=int(os.environ.get("BB_TEST_WORKERS", 2))))

def test_quarto_config_is_nbdevs_with_our_styles(site):
    s, cfg = site
    q = yaml.safe_load((ROOT / "nbs" / "_quarto.yml").read_text())
    assert q["project"]["type"] == "website"
    assert {"nbdev.yml", "sidebar.yml"} <= set(q["metadata-files"])
    assert (ROOT / "nbs" / q["format"]["html"]["css"]).exists()
    for item in q["website"]["navbar"].get("left", []):   # navbar pages exist
        h = item["href"]
        if not h.startswith("http"): assert (ROOT / "nbs" / h.split("#")[0]).exists(), h
    # the committed nbdev.yml is what nbdev generates from pyproject.toml (no drift)
    assert (ROOT / "nbs" / "nbdev.yml").read_text() == cfg["nbdev.yml"]
    ny = yaml.safe_load(cfg["nbdev.yml"])
    assert ny["project"]["output-dir"] == "_docs"
    assert ny["website"]["site-url"] == "https://bazaarbatna.github.io/bazaarbatna"

def test_sidebar_lists_every_chapter(site):
    s, cfg = site
    pages = dp.sidebar_pages(cfg["sidebar.yml"])
    chapters = dp.chapters(ROOT / "nbs")
    assert "index.ipynb" in chapters and len(chapters) >= 5
    test_missing = sorted(set(chapters) - set(pages))
    assert not test_missing, f"chapters not in the sidebar: {test_missing}"
    assert pages[0] == "index.ipynb"                       # the landing page comes first
    assert all((ROOT / "nbs" / p).exists() for p in pages)  # and nothing stale is listed

def test_workflows_build_test_and_deploy():
    t = yaml.safe_load((ROOT / ".github/workflows/test.yaml").read_text())
    d = yaml.safe_load((ROOT / ".github/workflows/deploy.yaml").read_text())
    runs = lambda wf: " ".join(st.get("run", "") for job in wf["jobs"].values() for st in job["steps"])
    uses = lambda wf: " ".join(st.get("uses", "") for job in wf["jobs"].values() for st in job["steps"])
    assert "bash .ci/run" in runs(t)                       # the README's test command, from a fresh clone
    assert "nbdev-docs" in runs(d) and "quarto-dev/quarto-actions/setup" in uses(d)
    assert "actions/deploy-pages" in uses(d) and "actions/upload-pages-artifact" in uses(d)
    assert d["permissions"]["pages"] == "write"

def test_links_extracted_from_markdown_and_html():
    nb = {"cells": [{"cell_type": "markdown", "source": "see [core](00_core.ipynb) and ![fig](img/x.png) `[no](y.md)`"},
                    {"cell_type": "code", "source": "", "outputs": [{"data": {"text/html": '<img src="a.png"><a href="b.html">b</a>'}}]}]}
    assert dp.links(nb) == [("00_core.ipynb", False), ("img/x.png", True), ("a.png", True), ("b.html", False)]

@pytest.mark.slow
def test_every_chapter_survives_nbdev_processing(processed):
    "What nbdev-docs does before Quarto: show_doc, exported cells and imports are executed per notebook."
    _, errors = processed
    bad = {k: v for k, v in errors.items() if v}
    assert not bad, "\n\n".join(bad.values())

@pytest.mark.slow
def test_no_broken_links_or_missing_images(processed):
    s, errors = processed
    assert not dp.broken_links(s / "_proc", s / "nbs")

@pytest.mark.slow
@pytest.mark.skipif(dp.chromium() is None, reason="chromium not installed (apt-get install chromium)")
def test_landing_and_chapter_render_and_screenshot(processed, out_dir):
    pytest.importorskip("nbconvert", reason="nbconvert renders the pages (add it to the dev extras)")
    import numpy as np
    from matplotlib.image import imread
    s, errors = processed
    pages = [p for p in ("index.ipynb", "00_core.ipynb") if not errors.get(p) and (s / "_proc" / p).exists()]
    assert "index.ipynb" in pages and "00_core.ipynb" in pages
    sidebar = dp.sidebar_pages((s / "nbs" / "sidebar.yml").read_text())
    for p in pages:
        h = dp.render_html(s / "_proc" / p, out_dir / "html" / Path(p).with_suffix(".html").name, sidebar)
        text = h.read_text()
        assert "BazaarBATNA" in text and "<h1" in text
        png = dp.screenshot(h, out_dir / "screenshots" / Path(p).with_suffix(".png").name, height=1600)
        img = imread(png)
        assert img.shape[0] >= 1000 and img.shape[1] >= 1200
        assert float(np.std(img[..., :3])) > 0.05, f"{png} looks blank"
