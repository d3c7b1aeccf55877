"""A table and a figure for a folder of short runs (a sweep): each sub-folder holds eval/<arena>/summary.json.
Usage: python tools/sweep_report.py training/runs/h100-sweep   (prints markdown, writes sweep.png there)"""
import json, sys
from pathlib import Path
from bazaarbatna.train.pipeline import best_scripted
from trials_report import ci   # tools/ is on the path when this runs as a script

def row(summary: dict, policy: str) -> dict | None:
    return next((r for r in summary["rows"] if r["policy"] == policy), None)

def field(summary: dict) -> list[dict]:
    "The scripted policies' rows (everything but the LLM stages the summary names)."
    return [r for r in summary["rows"] if r["policy"] not in summary["models"]]

def paired(summary: dict, a: str, b: str | None) -> dict | None:
    return next((p for p in summary["paired"] if (p["a"], p["b"]) == (a, b)), None)

def collect(root: Path) -> list[dict]:
    runs = []
    for f in sorted(root.glob("*/eval/*/summary.json")):
        s = json.loads(f.read_text())
        if s["n_seeds"] < 20: continue   # smoke runs
        runs.append({"run": f.parents[2].name, "arena": s["arena"], "summary": s})
    return runs

def table(runs: list[dict]) -> str:
    out = ["| run | SFT reward [95% CI] | SFT deal | SFT − best scripted | SFT+GRPO reward | GRPO − SFT |", "|---|---|---|---|---|---|"]
    for r in runs:
        s, sft, g = r["summary"], row(r["summary"], "sft"), row(r["summary"], "sft+grpo")
        best = best_scripted(field(s), [x["policy"] for x in field(s)])
        vs, gd = paired(s, "sft", best), paired(s, "sft+grpo", "sft")
        out.append(f"| {r['run']} | {ci(sft['reward_mean'], sft['reward_ci_lo'], sft['reward_ci_hi'])} | {sft['deal_rate']:.2f} | "
                   + (f"{ci(vs['mean_diff'], vs['ci_lo'], vs['ci_hi'])} vs {best} | " if vs else "(field not run) | ")
                   + (f"{ci(g['reward_mean'], g['reward_ci_lo'], g['reward_ci_hi'])} | {ci(gd['mean_diff'], gd['ci_lo'], gd['ci_hi'])} |" if g else "| |"))
    return "\n".join(out)

def figure(runs: list[dict], path: Path):
    import matplotlib; matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    arenas = sorted({r["arena"] for r in runs})
    fig, axes = plt.subplots(1, len(arenas), figsize=(7 * len(arenas), 5), squeeze=False)
    for ax, a in zip(axes[0], arenas):
        rs, labelled = [r for r in runs if r["arena"] == a], set()
        for i, r in enumerate(rs):
            for stage, dy, c in (("sft", 0.12, "tab:blue"), ("sft+grpo", -0.12, "tab:orange")):
                if not (x := row(r["summary"], stage)): continue
                ax.errorbar(x["reward_mean"], i + dy, xerr=[[x["reward_mean"] - x["reward_ci_lo"]], [x["reward_ci_hi"] - x["reward_mean"]]],
                            fmt="o", color=c, capsize=3, label=None if stage in labelled else stage)
                labelled.add(stage)
        scripted = max((field(q["summary"]) for q in rs), key=len)   # a run may have evaluated its stages only
        for x in sorted(scripted, key=lambda x: -x["reward_mean"])[:3]:
            ax.axvline(x["reward_mean"], ls="--", lw=1, color="grey")
            ax.text(x["reward_mean"], 1.01, x["policy"], rotation=30, fontsize=7, transform=ax.get_xaxis_transform())
        ax.set_yticks(range(len(rs))); ax.set_yticklabels([r["run"] for r in rs], fontsize=8); ax.invert_yaxis()
        ax.set_xlabel(f"mean episode reward, {rs[0]['summary']['n_seeds']} held-out seeds (95% CI)"); ax.set_title(a, pad=28); ax.legend(fontsize=8, loc="lower left")
    fig.suptitle(f"{path.parent.name}: SFT and SFT+GRPO against the three best scripted policies (dashed)")
    fig.tight_layout(); fig.savefig(path, dpi=90)

if __name__ == "__main__":
    root = Path(sys.argv[1])
    runs = collect(root)
    print(table(runs))
    figure(runs, root / "sweep.png")
