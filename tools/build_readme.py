"""Write README.md from nbs/index.ipynb without Quarto: markdown cells as they are, code cells as Python blocks
followed by their outputs. Cells marked `#| hide` are left out; cells marked `#| echo: false` or `#| code-fold: true`
show their outputs only (on the docs site their code is hidden or folded).

The pages drawn from the records (the landing page and the results chapter) keep their figures as files under
`nbs/figures/` and link them (`![...](figures/NAME.png)`); the README links the same files (`nbs/figures/NAME.png`).
Links to other chapters (`95_results.ipynb`) become links to the docs site. A notebook output that embeds an image is
refused: the page would grow by the image's size.

    python tools/build_readme.py              # README.md from the committed nbs/index.ipynb
    python tools/build_readme.py --execute    # first re-run the record pages against training/, writing nbs/figures/

The docs site renders the same notebooks with Quarto; this keeps the GitHub README in sync on any machine.
"""
import argparse, json, os, re, subprocess, sys
from pathlib import Path

root = Path(__file__).resolve().parents[1]
NBS = root / "nbs"
FIG_DIR = "figures"                                  # under nbs/
PAGES = ("index.ipynb", "95_results.ipynb")          # the pages drawn from the committed records
SITE = "https://bazaarbatna.github.io/bazaarbatna"

def cell_text(src): return "".join(src) if isinstance(src, list) else src

def page_url(nb_name: str) -> str:
    "The docs-site address of a chapter notebook (nbdev drops the numeric prefix: 95_results.ipynb -> results.html)."
    stem = Path(nb_name).stem
    return f"{SITE}/{re.sub(r'^[0-9]+_', '', stem) if stem != 'index' else 'index'}.html"

def readme_links(text: str) -> str:
    "Links as they work from the repository root: figures under nbs/, chapters on the docs site."
    text = re.sub(rf"\]\({FIG_DIR}/", f"](nbs/{FIG_DIR}/", text)
    return re.sub(r"\]\(([0-9]+_[\w-]+\.ipynb)(#[^)]*)?\)", lambda m: f"]({page_url(m.group(1))}{m.group(2) or ''})", text)

def figures_linked(nb: dict) -> list[str]:
    "The figure files (names under nbs/figures) that the notebook's markdown and outputs link."
    out = []
    for c in nb["cells"]:
        texts = [cell_text(c["source"])] if c["cell_type"] == "markdown" else [
            cell_text(o.get("data", {}).get("text/markdown", "")) for o in c.get("outputs", [])]
        for t in texts: out += re.findall(rf"\]\({FIG_DIR}/([^)\s]+)\)", t)
    return out

def render(nb: dict) -> str:
    "The README text of the landing notebook."
    parts = []
    for c in nb["cells"]:
        src = cell_text(c["source"])
        lines = src.splitlines()
        directives = [l.replace(" ", "") for l in lines if l.startswith("#|")]
        if any(d.startswith(("#|hide", "#|default_exp")) for d in directives): continue
        body = "\n".join(l for l in lines if not l.startswith("#|")).strip()
        if c["cell_type"] == "markdown":
            if body: parts.append(readme_links(body))
            continue
        echo = not any(d in ("#|echo:false", "#|code-fold:true") for d in directives)
        if body and echo: parts.append(f"```python\n{body}\n```")
        for o in c.get("outputs", []):
            data = o.get("data", {})
            if "image/png" in data or "image/svg+xml" in data:
                raise ValueError(f"a cell of the landing page embeds an image ({body[:60]!r}...): save it under nbs/{FIG_DIR}/ "
                                 f"and show it as a markdown image link instead")
            if "text/markdown" in data: parts.append(readme_links(cell_text(data["text/markdown"]).strip()))
            elif "text/plain" in data or o.get("output_type") == "stream":
                txt = cell_text(data.get("text/plain", o.get("text", ""))).rstrip()
                if txt: parts.append(f"```\n{txt}\n```")
    return ("<!-- Generated from nbs/index.ipynb by tools/build_readme.py: edit the notebook, not this file. -->\n\n"
            + "\n\n".join(parts) + "\n")

def execute(pages=PAGES, timeout: int = 900) -> None:
    "Re-run the record pages in place against the checkout's training/ (figures into nbs/figures), then nbdev-clean them."
    import nbformat
    from nbconvert.preprocessors import ExecutePreprocessor
    figs = NBS / FIG_DIR
    figs.mkdir(exist_ok=True)
    for f in figs.glob("*.png"): f.unlink()          # every figure is written again; none is left stale
    os.environ["BAZAARBATNA_FIGURES"] = str(figs)
    for name in pages:
        nb = nbformat.read(str(NBS / name), as_version=4)
        ExecutePreprocessor(timeout=timeout, kernel_name="python3").preprocess(nb, {"metadata": {"path": str(NBS)}})
        nbformat.write(nb, str(NBS / name)); print(f"nbs/{name} executed")
        subprocess.run(["nbdev-clean", "--fname", str(NBS / name)], check=True, cwd=root)
    linked = {f for name in pages for f in figures_linked(json.loads((NBS / name).read_text()))}
    for f in figs.glob("*.png"):
        if f.name not in linked: f.unlink(); print(f"nbs/{FIG_DIR}/{f.name} removed (no page links it)")

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--execute", action="store_true", help="re-run the record pages first (needs the dev environment)")
    args = ap.parse_args()
    if args.execute: execute()
    text = render(json.loads((NBS / "index.ipynb").read_text()))
    out = root / "README.md"
    if not out.exists() or out.read_text() != text:
        out.write_text(text); print("README.md written")
    missing = [f for name in PAGES if (NBS / name).exists() for f in figures_linked(json.loads((NBS / name).read_text()))
               if not (NBS / FIG_DIR / f).exists()]
    if missing: sys.exit(f"figures linked but missing under nbs/{FIG_DIR}: {missing} (python tools/build_readme.py --execute)")
