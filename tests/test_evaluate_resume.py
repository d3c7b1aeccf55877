"A tournament killed mid-way (SIGKILL to its whole process group) resumes without duplicates or gaps."
import json, os, signal, subprocess, sys, time, textwrap
from pathlib import Path
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import evaltoy  # the throwaway arena in tests/evaltoy

from bazaarbatna.evaluate import run_tournament, read_records, record_key, RESULTS_FILE

HERE = Path(__file__).resolve().parent
POLICIES, TASKS, SEEDS = ["eager", "expert", "patient", "junk"], ["short", "long"], "eval:6"
TOTAL = len(POLICIES) * len(TASKS) * 6

SCRIPT = textwrap.dedent(f"""
    import sys; sys.path.insert(0, {str(HERE)!r})
    import evaltoy; evaltoy.register()
    from bazaarbatna.evaluate import run_tournament
    run_tournament("evaltoy", {TASKS!r}, {POLICIES!r}, {SEEDS!r}, sys.argv[1], workers=2, progress=False)
""")

def _raw_lines(path):
    out = []
    for line in Path(path).read_text().splitlines():
        try: out.append(json.loads(line))
        except json.JSONDecodeError: pass
    return out

def test_killed_tournament_resumes(tmp_path):
    evaltoy.register()
    env = {**os.environ, "EVALTOY_DELAY": "0.03"}        # ~0.03-0.2 s per episode: slow enough to kill mid-run
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(tmp_path)], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results = tmp_path / RESULTS_FILE
    deadline = time.time() + 60
    try:
        while time.time() < deadline:
            if results.exists() and len(_raw_lines(results)) >= 8: break
            assert proc.poll() is None, f"tournament ended before it could be killed: {proc.stderr.read().decode()[-2000:]}"
            time.sleep(0.02)
        else: pytest.fail("the tournament wrote nothing within 60 s")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)                 # the runner and its worker processes (our own group)
        proc.wait(timeout=10)
    before = read_records(tmp_path)
    assert 8 <= len(before) < TOTAL, f"killed after {len(before)} of {TOTAL} episodes"

    res = run_tournament("evaltoy", TASKS, POLICIES, SEEDS, tmp_path, workers=2, progress=False)
    assert res["errors"] == []
    assert res["new"] == TOTAL - len(before)               # only the missing episodes were played
    lines = _raw_lines(results)
    keys = [record_key(r) for r in lines]
    assert len(keys) == len(set(keys)) == TOTAL            # no duplicates, nothing missing, on disk
    assert {(t, p, s) for (_, t, p, s) in keys} == {(t, p, s) for t in TASKS for p in POLICIES for s in range(100_000, 100_006)}
    # the records written before the kill are the ones an uninterrupted run gives
    fresh = run_tournament("evaltoy", TASKS, POLICIES, SEEDS, tmp_path / "fresh", workers=1, progress=False, transcripts="none")
    strip = lambda r: {k: v for k, v in r.items() if k not in ("seconds", "transcript")}
    by_key = {record_key(r): strip(r) for r in fresh["records"]}
    assert all(strip(r) == by_key[record_key(r)] for r in lines)
    # a second resume has nothing to do
    assert run_tournament("evaltoy", TASKS, POLICIES, SEEDS, tmp_path, workers=2, progress=False)["new"] == 0
