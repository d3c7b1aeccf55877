"""Write README.md from nbs/index.ipynb without Quarto: markdown cells as they are, code cells as
Python blocks followed by their outputs. Cells marked `#| hide` are left out; cells marked `#| echo: false` or
`#| code-fold: true` show their outputs only (on the docs site their code is hidden or folded).
Figures in the notebook's outputs are written to readme_figures/ (named by content, so an unchanged figure keeps
its file and a stale one is removed) and linked from the README.
The docs site renders the same notebook with Quarto; this keeps the GitHub README in sync on any machine."""
import base64, hashlib, json, sys
from pathlib import Path

root = Path(__file__).resolve().parents[1]
FIG_DIR = "readme_figures"

def cell_text(src): return "".join(src) if isinstance(src, list) else src

def render(nb: dict) -> tuple[str, dict]:
    "The README text and the figures it links ({relative path: PNG bytes})."
    parts, figs = [], {}
    for c in nb["cells"]:
        src = cell_text(c["source"])
        lines = src.splitlines()
        directives = [l.replace(" ", "") for l in lines if l.startswith("#|")]
        if any(d.startswith(("#|hide", "#|default_exp")) for d in directives): continue
        body = "\n".join(l for l in lines if not l.startswith("#|")).strip()
        if c["cell_type"] == "markdown":
            if body: parts.append(body)
            continue
        echo = not any(d in ("#|echo:false", "#|code-fold:true") for d in directives)
        if body and echo: parts.append(f"```python\n{body}\n```")
        for o in c.get("outputs", []):
            data = o.get("data", {})
            if "text/markdown" in data: parts.append(cell_text(data["text/markdown"]).strip())
            elif "image/png" in data:
                png = base64.b64decode(cell_text(data["image/png"]))
                name = f"{FIG_DIR}/{hashlib.sha1(png).hexdigest()[:16]}.png"
                figs[name] = png
                parts.append(f"![figure]({name})")
            elif "text/plain" in data or o.get("output_type") == "stream":
                txt = cell_text(data.get("text/plain", o.get("text", ""))).rstrip()
                if txt: parts.append(f"```\n{txt}\n```")
    text = "<!-- Generated from nbs/index.ipynb by tools/build_readme.py: edit the notebook, not this file. -->\n\n" + "\n\n".join(parts) + "\n"
    return text, figs

if __name__ == "__main__":
    nb = json.loads((root / "nbs" / "index.ipynb").read_text())
    text, figs = render(nb)
    out, fig_dir = root / "README.md", root / FIG_DIR
    fig_dir.mkdir(exist_ok=True)
    for name, png in figs.items():
        f = root / name
        if not f.exists() or f.read_bytes() != png: f.write_bytes(png); print(f"{name} written")
    for f in fig_dir.glob("*.png"):
        if f"{FIG_DIR}/{f.name}" not in figs: f.unlink(); print(f"{FIG_DIR}/{f.name} removed")
    if not out.exists() or out.read_text() != text:
        out.write_text(text); print("README.md written")
