"""Everything the docs site needs before Quarto, runnable on a machine without Quarto.

    python tools/docs_preview.py [OUT_DIR] [--pages index.ipynb 00_core.ipynb] [--screenshots]

1. copies `nbs/` and `pyproject.toml` into OUT_DIR/site (default: a temp dir) and runs nbdev's own steps there:
   `refresh_quarto_yml` (nbdev.yml), `nbdev_sidebar` (sidebar.yml) and the notebook processing that
   `nbdev-docs`/`nbdev-proc-nbs` runs before Quarto (show_doc, hidden cells, exports...), one notebook at a
   time so every failure is reported with its notebook;
2. checks the processed pages: every chapter in the sidebar, no broken relative link between pages, every
   referenced image present;
3. renders chosen pages to standalone HTML with nbconvert (not Quarto) and, with `--screenshots`,
   screenshots them in headless Chromium.
Prints one JSON object. tests/test_docs.py drives the same functions.
"""
from __future__ import annotations
import argparse, html, json, os, queue, re, shutil, subprocess, sys, tempfile, textwrap, threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"

def chapters(nbs: Path = NBS) -> list[str]:
    "The notebooks that become pages (what nbdev's sidebar globs: not `_`/`.`-prefixed)."
    return sorted(p.relative_to(nbs).as_posix() for p in nbs.rglob("*.ipynb")
                  if not any(part.startswith(("_", ".")) for part in p.relative_to(nbs).parts))

def stage(out: Path) -> Path:
    "Copy the project's docs inputs into `out` (a fresh nbdev project root); return it."
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "pyproject.toml", out / "pyproject.toml")
    if (out / "nbs").exists(): shutil.rmtree(out / "nbs")
    shutil.copytree(NBS, out / "nbs", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "_proc", "_docs", "sidebar.yml"))
    return out

_PY = sys.executable

def _env() -> dict:
    "The environment of the Python processes this tool starts: headless plots, no hub, unbuffered output."
    return {**os.environ, "MPLBACKEND": "Agg", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}

def _run(code: str, cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([_PY, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=_env())

def config_files(site: Path) -> dict:
    "Run nbdev's `refresh_quarto_yml` and `nbdev_sidebar` in `site`; return the generated files' text."
    r = _run("""
        from nbdev.quarto import refresh_quarto_yml, nbdev_sidebar
        refresh_quarto_yml(); nbdev_sidebar.__wrapped__(path='nbs', force=True)
    """, site)
    if r.returncode: raise RuntimeError(r.stderr[-3000:])
    return {n: (site / "nbs" / n).read_text() for n in ("_quarto.yml", "nbdev.yml", "sidebar.yml")}

_WORKER = """
import json, sys, traceback
from pathlib import Path
import nbdev.serve_drv as drv
from nbdev.processors import FilterDefaults
for line in sys.stdin:
    src, dst = json.loads(line)
    try: drv.main((Path(src), Path(dst), FilterDefaults)); err = None
    except BaseException as e: err = "".join(traceback.format_exception(e))
    print("\\x00done " + json.dumps(err), flush=True)
"""

class _Processor:
    "One Python process that runs nbdev's docs processing on notebook after notebook, as `nbdev-docs`'s worker pool does (imports are paid once per process)."
    def __init__(self, site: Path): self.site, self.proc = site, None

    def __call__(self, nb: str, timeout: int = 600) -> str | None:
        "Process nb into site/_proc; the error text (with its notebook) or None."
        src, dst = self.site / "nbs" / nb, self.site / "_proc" / nb
        dst.parent.mkdir(parents=True, exist_ok=True)
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen([_PY, "-c", _WORKER], cwd=self.site, env=_env(), text=True,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        timer = threading.Timer(timeout, self.proc.kill); timer.start()
        try:
            self.proc.stdin.write(json.dumps([str(src), str(dst)]) + "\n"); self.proc.stdin.flush()
            err = f"the processing stopped (timeout {timeout} s, or the process died)"
            for line in self.proc.stdout:   # what the notebook's cells print passes by; the last line is the verdict
                if line.startswith("\x00done "): err = json.loads(line[6:]); break
        except (BrokenPipeError, OSError) as e: err = f"the processing stopped: {e}"
        finally: timer.cancel()
        if err is None and dst.exists(): return None
        lines = [l for l in (err or "no page was written").strip().splitlines() if l.strip()]
        return f"{nb}: nbdev docs processing failed\n" + "\n".join(lines[-12:])

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            try: self.proc.wait(30)
            except subprocess.TimeoutExpired: self.proc.kill()

def process_all(site: Path, nbs: list[str] | None = None, workers: int = 2) -> dict:
    "Process every chapter (non-notebook files are copied as nbdev does) on `workers` processes; {notebook: error or None}."
    proc = site / "_proc"; proc.mkdir(exist_ok=True)
    for f in (site / "nbs").rglob("*"):
        rel = f.relative_to(site / "nbs")
        if f.is_file() and f.suffix != ".ipynb" and not any(p.startswith(".") for p in rel.parts):
            (proc / rel).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(f, proc / rel)
    nbs = nbs or chapters(site / "nbs")
    todo, errs = queue.SimpleQueue(), {}
    for n in nbs: todo.put(n)
    def drain():
        p = _Processor(site)
        try:
            while True:
                try: n = todo.get_nowait()
                except queue.Empty: return
                errs[n] = p(n)
        finally: p.close()
    threads = [threading.Thread(target=drain) for _ in range(max(1, workers))]
    for t in threads: t.start()
    for t in threads: t.join()
    return {n: errs.get(n) for n in nbs}

def sidebar_pages(sidebar_yml: str) -> list[str]:
    "Every page listed in a sidebar.yml (sections flattened)."
    import yaml
    out = []
    def walk(items):
        for it in items:
            if isinstance(it, str): out.append(it)
            elif isinstance(it, dict):
                if "href" in it: out.append(it["href"])
                walk(it.get("contents", []))
    walk(yaml.safe_load(sidebar_yml)["website"]["sidebar"]["contents"])
    return out

_LINK = re.compile(r"(!?)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_TAG = re.compile(r"<(img|a)\b[^>]*?\b(src|href)\s*=\s*[\"']([^\"']+)[\"']", re.I)

def _texts(nb: dict):
    for c in nb["cells"]:
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        if c["cell_type"] == "markdown": yield src
        for o in c.get("outputs", []):
            for mime in ("text/markdown", "text/html"):
                v = o.get("data", {}).get(mime)
                if v: yield "".join(v) if isinstance(v, list) else v

def links(nb: dict) -> list[tuple[str, bool]]:
    "(target, is_image) for every markdown/HTML link in the notebook's markdown cells and rich outputs."
    res = []
    for t in _texts(nb):
        t = re.sub(r"```.*?```", "", t, flags=re.S)           # not inside code blocks
        t = re.sub(r"`[^`\n]*`", "", t)                        # nor inline code
        res += [(m.group(2), bool(m.group(1))) for m in _LINK.finditer(t)]
        res += [(m.group(3), m.group(1).lower() == "img") for m in _TAG.finditer(t)]
    return res

def _page_exists(target: Path, nbs: Path) -> bool:
    from nbdev.config import nbpath2html
    if target.exists(): return True
    name = target.name[:-3] if target.name.endswith(".html.md") else target.name
    if name.endswith(".html"):
        rel_dir = target.parent
        for nb in list(nbs.rglob("*.ipynb")) + list(nbs.rglob("*.qmd")) + list(nbs.rglob("*.md")):
            if nb.parent.resolve() == rel_dir.resolve() and (nbpath2html(nb.name).name == name or nb.with_suffix(".html").name == name):
                return True
    return False

def broken_links(proc: Path, nbs: Path) -> list[str]:
    "Relative links between pages or to images (in processed notebooks under `proc`) whose target is missing."
    bad = []
    for p in sorted(proc.rglob("*.ipynb")):
        nb = json.loads(p.read_text())
        for target, is_img in links(nb):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "//", "{", "data:")): continue
            path = target.split("#")[0].split("?")[0]
            if not path: continue
            src_dir = nbs / p.parent.relative_to(proc)
            dest = (src_dir / path).resolve()
            inside = str(dest).startswith(str(nbs.resolve()))
            if not inside or not _page_exists(dest, nbs):
                bad.append(f"{p.relative_to(proc)}: {'image' if is_img else 'link'} {target!r} -> "
                           f"{'outside the site' if not inside else 'missing'}")
    return bad

def render_html(proc_nb: Path, out_html: Path, site_pages: list[str] | None = None) -> Path:
    "A standalone HTML page of a processed notebook via nbconvert (Quarto's stand-in), with the site's CSS."
    import nbformat
    from nbconvert import HTMLExporter
    raw = json.loads(proc_nb.read_text())
    keep = {"cell_type", "id", "metadata", "source", "outputs", "execution_count", "attachments"}
    cells, title, desc = [], "", ""
    for c in raw["cells"]:
        for k in set(c) - keep: del c[k]
        c["metadata"] = {}
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        if c["cell_type"] == "raw" and src.strip().startswith("---"):   # Quarto frontmatter: title + description
            import yaml
            fm = yaml.safe_load(src.strip().strip("-")) or {}
            title, desc = fm.get("title", ""), fm.get("description", "")
            continue
        if c["cell_type"] == "code":
            dirs = [l for l in src.splitlines() if l.startswith("#|")]
            c["source"] = "\n".join(l for l in src.splitlines() if not l.startswith("#|"))
            if any(re.search(r"echo:\s*false|code-fold:\s*true", d) for d in dirs): c["metadata"] = {"tags": ["remove_input"]}   # Quarto hides (or folds) the input
            if any(re.search(r"output:\s*false", d) for d in dirs): c["outputs"] = []
            for o in c.get("outputs", []):
                md = o.get("data", {}).get("text/markdown")
                if md: o["data"]["text/markdown"] = re.sub(r"\)\{[^}]*\}", ")", "".join(md) if isinstance(md, list) else md)
            if not c["source"].strip() and not c.get("outputs"): continue
        cells.append(c)
    if title: cells.insert(0, {"cell_type": "markdown", "id": "bbtitle", "metadata": {},
                               "source": f"# {title}" + (f"\n\n<p class='description'>{html.escape(desc)}</p>" if desc else "")})
    raw["cells"] = cells
    nb = nbformat.reads(json.dumps(raw), as_version=4)
    ex = HTMLExporter(template_name="lab"); ex.exclude_input_prompt = True; ex.exclude_output_prompt = True
    from nbconvert.preprocessors import TagRemovePreprocessor
    ex.register_preprocessor(TagRemovePreprocessor(remove_input_tags={"remove_input"}, enabled=True), enabled=True)
    body, _ = ex.from_notebook_node(nb)
    css = (proc_nb.parent / "styles.css").read_text() if (proc_nb.parent / "styles.css").exists() else ""
    from nbdev.config import nbpath2html
    nav = "".join(f'<a href="{nbpath2html(p).as_posix()}">{html.escape(Path(nbpath2html(p)).stem)}</a>' for p in (site_pages or []))
    head = (f"<style>{css}\nbody{{margin:0}} nav.bb{{background:#2780e3;padding:10px 24px;font:15px sans-serif}}"
            "nav.bb a{color:#fff;margin-right:14px;text-decoration:none} nav.bb b{color:#fff;margin-right:24px} img{max-width:100%;height:auto}"
            ".jp-Cell-inputWrapper:has(.jp-InputArea-editor pre:empty){display:none} p.description{font-size:130%;opacity:.7;font-style:italic}</style>")
    body = body.replace("</head>", head + "</head>", 1)
    body = re.sub(r"(<body[^>]*>)", r'\1<nav class="bb"><b>BazaarBATNA</b>' + nav.replace("\\", r"\\") + "</nav>", body, count=1)
    out_html = Path(out_html); out_html.parent.mkdir(parents=True, exist_ok=True); out_html.write_text(body)
    for target, is_img in links(raw):   # images linked relative to the page (figures/…) travel with it, as Quarto copies them
        src = proc_nb.parent / target
        if is_img and not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) and src.is_file():
            (out_html.parent / target).parent.mkdir(parents=True, exist_ok=True); shutil.copy2(src, out_html.parent / target)
    return out_html

def chromium() -> str | None:
    return next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)

def screenshot(page: Path, png: Path, width: int = 1280, height: int = 2200, timeout: int = 120) -> Path:
    "Screenshot a local HTML file in headless Chromium (fresh profile, no network services)."
    exe = chromium()
    if not exe: raise FileNotFoundError("chromium not found: apt-get update && apt-get install -y chromium")
    png = Path(png); png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as prof:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
               "--disable-dev-shm-usage", f"--user-data-dir={prof}", f"--window-size={width},{height}",
               f"--screenshot={png}", "--virtual-time-budget=4000", Path(page).resolve().as_uri()]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if not png.exists() or png.stat().st_size == 0: raise RuntimeError(f"no screenshot from chromium:\n{r.stderr[-2000:]}")
    return png

def build(out: Path, pages=("index.ipynb", "00_core.ipynb"), shots: bool = False, workers: int = 2) -> dict:
    "Stage, configure, process, check and render; a JSON-able summary."
    site = stage(Path(out) / "site")
    cfg = config_files(site)
    errors = process_all(site, workers=workers)
    proc = site / "_proc"
    res = {"site": str(site), "chapters": chapters(site / "nbs"), "sidebar": sidebar_pages(cfg["sidebar.yml"]),
           "processing_errors": {k: v for k, v in errors.items() if v},
           "broken_links": broken_links(proc, site / "nbs"), "html": [], "screenshots": []}
    for p in pages:
        if (proc / p).exists():
            h = render_html(proc / p, Path(out) / "html" / Path(p).with_suffix(".html").name, res["sidebar"])
            res["html"].append(str(h))
            if shots: res["screenshots"].append(str(screenshot(h, Path(out) / "screenshots" / Path(p).with_suffix(".png").name)))
    return res

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", default=None)
    ap.add_argument("--pages", nargs="*", default=["index.ipynb", "00_core.ipynb"])
    ap.add_argument("--screenshots", action="store_true")
    a = ap.parse_args()
    out = Path(a.out or tempfile.mkdtemp(prefix="bb_docs_"))
    r = build(out, a.pages, a.screenshots)
    print(json.dumps(r, indent=1))
    sys.exit(1 if r["processing_errors"] or r["broken_links"] or set(r["chapters"]) - set(r["sidebar"]) else 0)
