"""The table and figure of a folder of GPU trials on the bazaar record's seeds: each run folder's results.jsonl (48
held-out `single_deal` seeds, greedy), against a baseline run folder played on the same machine and the CPU record
(`training/runs/cpu-smollm2/eval`).

    python tools/trials_report.py training/runs/h200-s16 --baseline sft-gpu --figure s16.png
    python tools/trials_report.py training/runs/h200-s17 --baseline sft-v7-fp32 --figure s17.png

prints the markdown table and writes the figure into the folder.
"""
import argparse, collections, json
from pathlib import Path
from bazaarbatna.evaluate import paired_difference, summarize_group

RECORD = Path(__file__).resolve().parent.parent / "training" / "runs" / "cpu-smollm2" / "eval" / "bazaar" / "results.jsonl"
COLORS = {"dagger": "tab:orange", "grpo": "tab:blue", "sft": "tab:green"}   # by the run name's first word

def read(path: Path, label: str) -> list[dict]:
    return [{**json.loads(line), "policy": label} for line in path.read_text().splitlines() if line.strip()]

def runs(folder: Path, baseline: str) -> dict:
    "label -> episode records: the baseline first, then every other run folder with results."
    out = {baseline: read(folder / baseline / "results.jsonl", baseline)}
    for d in sorted(p for p in folder.iterdir() if p.is_dir() and p.name != baseline and (p / "results.jsonl").exists()):
        out[d.name] = read(d / "results.jsonl", d.name)
    return out

def per_deal(recs) -> float:
    "Mean utility of the episodes that closed (how good the prices were, apart from how often a deal came)."
    u = [r["utility"] for r in recs if r["deal"]]
    return sum(u) / len(u) if u else float("nan")

def ci(m, lo, hi): return f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]"

def rows(all_runs: dict, baseline: str) -> list[dict]:
    record = [json.loads(line) for line in RECORD.read_text().splitlines()]
    out = []
    for label, recs in all_runs.items():
        s = summarize_group(recs)
        both = recs + record + (all_runs[baseline] if label != baseline else [])
        out.append({"run": label, "recs": recs, "summary": s, "reasons": collections.Counter(r["reason"] for r in recs),
                    "vs_gpu_sft": None if label == baseline else paired_difference(both, label, baseline),
                    "vs_cpu_sft": paired_difference(both, label, "sft"), "vs_boulware": paired_difference(both, label, "boulware")})
    return out

def table(rs: list[dict], baseline: str) -> str:
    lines = [f"| run | reward [95% CI] | deals / timeouts / invalid-action ends | utility per deal | valid JSON | refused replies | − {baseline} | − CPU record SFT | − boulware |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rs:
        s, n = r["summary"], r["reasons"]
        deals = sum(v for k, v in n.items() if k.startswith("deal"))
        d = [x and ci(x["mean_diff"], x["ci_lo"], x["ci_hi"]) for x in (r["vs_gpu_sft"], r["vs_cpu_sft"], r["vs_boulware"])]
        lines.append(f"| {r['run']} | {ci(s['reward_mean'], s['reward_ci_lo'], s['reward_ci_hi'])} | {deals} / {n.get('timeout', 0)} / "
                     f"{n.get('invalid_actions', 0)} | {per_deal(r['recs']):.3f} | {s['valid_json_rate']:.2f} | {s['invalid_action_rate']:.2f} | {d[0] or '(baseline)'} | {d[1]} | {d[2]} |")
    return "\n".join(lines)

def figure(rs: list[dict], path: Path, baseline: str, title: str):
    import matplotlib; matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    record = [json.loads(line) for line in RECORD.read_text().splitlines()]
    ref = {p: summarize_group([x for x in record if x["policy"] == p])["reward_mean"] for p in ("sft", "boulware", "expert")}
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for i, r in enumerate(rs):
        s = r["summary"]; c = "grey" if r["run"] == baseline else COLORS.get(r["run"].split("-")[0], "tab:purple")
        ax.errorbar(i, s["reward_mean"], yerr=[[s["reward_mean"] - s["reward_ci_lo"]], [s["reward_ci_hi"] - s["reward_mean"]]], fmt="o", color=c, capsize=3)
    for (name, v), ls in zip(ref.items(), (":", "--", "-.")):
        ax.axhline(v, color="black", lw=0.8, ls=ls, label=f"CPU record: {name} {v:+.3f}")
    ax.set_xticks(range(len(rs)), [r["run"] for r in rs], rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("mean episode reward (48 held-out seeds)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="lower right"); fig.tight_layout(); fig.savefig(path, dpi=120); plt.close(fig)

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path); ap.add_argument("--baseline", required=True, help="the run folder the others are paired with")
    ap.add_argument("--figure", default="trials.png", help="file name of the figure, written into the folder")
    ap.add_argument("--title", default="", help="the figure's title (default: the folder's name; grey: the baseline, green SFT, blue GRPO, orange DAgger)")
    a = ap.parse_args()
    rs = rows(runs(a.folder, a.baseline), a.baseline)
    print(table(rs, a.baseline))
    figure(rs, a.folder / a.figure, a.baseline, a.title or f"{a.folder.name}: grey the baseline, green SFT, blue GRPO, orange DAgger")
