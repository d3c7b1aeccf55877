"Figures and tables rebuilt from records alone: PNGs render, are non-empty and of sane size."
import json, shutil, sys
from pathlib import Path
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evaltoy  # the throwaway arena in tests/evaltoy

from bazaarbatna.evaluate import run_eval, read_records, RESULTS_FILE
from bazaarbatna.report import build_report, marketplace_rows

def _check_png(path):
    from matplotlib.image import imread
    p = Path(path)
    assert p.exists() and p.stat().st_size > 8_000, p
    img = imread(p)
    h, w = img.shape[:2]
    assert 300 <= w <= 4000 and 200 <= h <= 4000, (p, w, h)
    assert img[..., :3].std() > 0.02, f"{p} is blank"

@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    evaltoy.register()
    d = tmp_path_factory.mktemp("run")
    run_eval("evaltoy", None, ["eager", "expert", "patient", "junk"], "eval:5", d, workers=2, progress=False, transcripts=2)
    return d

def test_report_from_records_alone(run_dir, tmp_path):
    # copy only what a tournament leaves on disk (records and transcripts): the report needs nothing else
    d = tmp_path / "copy"
    shutil.copytree(run_dir, d, ignore=shutil.ignore_patterns("summary.json"))
    rep = build_report(d)
    assert rep["n_records"] == 2 * 4 * 5
    ar = rep["arenas"]["evaltoy"]
    assert ar["leader"] == "expert" and ar["expert_first"] and ar["expert_rank"] == 1
    assert set(ar["figures"]) == {"bars", "rewards", "before_after"}
    for f in rep["figures"]: _check_png(f)
    md = Path(rep["tables"]).read_text()
    for s in ("### Ranking over all tasks", "### Per task", "### Paired difference", "![baseline bars](figures/bars_evaltoy.png)",
              "Last-ranked vs expert: `junk` → `expert`"):
        assert s in md, s
    tj = json.loads((d / "tables.json").read_text())
    assert [r["policy"] for r in tj["evaltoy"]["ranking"]][0] == "expert"
    ba = Path(ar["before_after"]["markdown"]).read_text()
    assert "## Last-ranked: `junk`" in ba and "## Expert: `expert`" in ba and "error: not_json" in ba   # no training pair named: not "before/after"
    # same records, same tables
    first = md
    assert Path(build_report(d)["tables"]).read_text() == first

def test_before_after_pair_can_be_chosen(run_dir):
    rep = build_report(run_dir, before="eager", after="patient", task="long", seed=100_001)
    ba = rep["arenas"]["evaltoy"]["before_after"]
    assert (ba["before"], ba["after"], ba["task"], ba["seed"]) == ("eager", "patient", "long", 100_001)
    _check_png(ba["figure"])

def test_marketplace_rows_from_records_and_transcripts(tmp_path):
    from bazaarbatna.core import Transcript
    from bazaarbatna.evaluate import save_transcript, append_records
    from bazaarbatna.report import marketplace_section
    recs = []
    for pol, deal, reason, price in (("expert", True, "deal_seller_accepted", 60.0), ("lowballer", False, "sold_to_rival", None)):
        tr = Transcript({"arena": "bazaar", "task": "marketplace_arena", "seed": 7, "policy": pol})
        tr.add(0, "seller", "ask", 100.0)
        for k in (1, 2):
            tr.add(k, "buyer", "offer", 50.0 + 5 * k if deal else 20.0 + k)
            tr.add(k, "rival_0", "bid", 40.0 + 10 * k); tr.add(k, "rival_1", "bid", 30.0 + 10 * k)
            tr.add(k, "seller", "counter" if k == 1 else "accept", 80.0 if k == 1 else (60.0 if deal else 60.0))
        if not deal: tr.meta["rival_price"] = 60.0
        stem = f"transcripts/bazaar/marketplace_arena/{pol}/seed7"
        save_transcript(tr, tmp_path / stem)
        recs.append(dict(arena="bazaar", task="marketplace_arena", seed=7, policy=pol, reward=0.4 if deal else -0.1,
                         utility=0.4 if deal else 0.0, deal=deal, rounds=2, reason=reason, n_actions=2, n_invalid=0,
                         n_invalid_json=0, opponent_version="v", transcript=stem + ".json",
                         extras={"price": price, "opening_ask": 100.0, "listing": "L1"}))
    rows = marketplace_rows(recs, tmp_path)
    got = {(r["policy"], r["buyer"]): (r["outcome"], r["round"], r["price"]) for r in rows}
    assert got[("expert", "agent")] == ("won", 2, 60.0)
    assert got[("expert", "rival_0")] == ("outbid", 2, 60.0) and got[("expert", "rival_1")] == ("outbid", 2, 50.0)
    assert got[("lowballer", "agent")] == ("sold_to_rival", 2, 60.0)
    assert got[("lowballer", "rival_0")] == ("won", 2, 60.0) and got[("lowballer", "rival_1")][0] == "outbid"
    sec = marketplace_section(recs, tmp_path, tmp_path / "m.png")
    assert [(d["policy"], d["won"], d["lost to rival"]) for d in sec["summary"]] == [("expert", 1, 0), ("lowballer", 0, 1)]
    _check_png(sec["figure"])
    assert marketplace_rows([dict(task="single_deal", seed=1, policy="p", extras={})]) == []
