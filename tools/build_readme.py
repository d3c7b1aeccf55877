"""Write README.md from nbs/index.ipynb without Quarto: markdown cells as they are, code cells as
Python blocks followed by their text outputs. Cells marked `#| hide` are left out.
The docs site renders the same notebook with Quarto; this keeps the GitHub README in sync on any machine."""
import json, sys
from pathlib import Path

root = Path(__file__).resolve().parents[1]

def cell_text(src): return "".join(src) if isinstance(src, list) else src

def render(nb: dict) -> str:
    parts = []
    for c in nb["cells"]:
        src = cell_text(c["source"])
        lines = src.splitlines()
        directives = [l for l in lines if l.startswith("#|")]
        if any(d.split()[1:2] in (["hide"], ["default_exp"]) for d in directives if len(d.split()) > 1): continue
        body = "\n".join(l for l in lines if not l.startswith("#|")).strip()
        if c["cell_type"] == "markdown":
            if body: parts.append(body)
            continue
        echo = not any("echo: false" in d or "echo:false" in d for d in directives)
        if body and echo: parts.append(f"```python\n{body}\n```")
        for o in c.get("outputs", []):
            data = o.get("data", {})
            if "text/markdown" in data: parts.append(cell_text(data["text/markdown"]).strip())
            elif "image/png" in data:  # a committed figure says where it lives ("figure: PATH"): link it
                txt = cell_text(data.get("text/plain", "")).strip().strip("'\"")
                if txt.startswith("figure: "): parts.append(f"![{Path(txt[8:]).stem}]({txt[8:]})")
            elif "text/plain" in data or o.get("output_type") == "stream":
                txt = cell_text(data.get("text/plain", o.get("text", ""))).rstrip()
                if txt: parts.append(f"```\n{txt}\n```")
    return "<!-- Generated from nbs/index.ipynb by tools/build_readme.py: edit the notebook, not this file. -->\n\n" + "\n\n".join(parts) + "\n"

if __name__ == "__main__":
    nb = json.loads((root / "nbs" / "index.ipynb").read_text())
    out = root / "README.md"
    new = render(nb)
    if not out.exists() or out.read_text() != new:
        out.write_text(new); print("README.md written")
