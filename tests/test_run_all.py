"tests/run_all.sh on a slice of the suite: it streams progress as it goes, and its last line counts skipped and expected-to-fail tests too."
import os, re, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLICE = '''
import time, pytest
def test_quick(): pass
def test_slow(): time.sleep(3)
@pytest.mark.skip(reason="a test that did not run here")
def test_skipped(): pass
def test_broken(): assert 1 == 2
@pytest.mark.xfail(reason="a known defect, marked")
def test_known(): assert 1 == 2
'''

def test_run_all_streams_and_counts_skips(tmp_path):
    (tmp_path / "test_slice.py").write_text(SLICE)
    env = {**os.environ, "BB_TEST_SYNC": "0", "BB_TEST_NOTEBOOKS": "nbs/00_core.ipynb", "BB_TEST_PYTEST": str(tmp_path / "test_slice.py"),
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    p = subprocess.Popen(["bash", "tests/run_all.sh"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen, out = {}, b""
    while chunk := p.stdout.read1(4096):
        out += chunk
        for key in ("notebooks: 1 passed", "- Completed"):
            if key.encode() in out: seen.setdefault(key, time.time())
    rc, end = p.wait(), time.time()
    text = out.decode()
    assert rc != 0, text                                                  # a failed test fails the run
    assert end - seen["notebooks: 1 passed"] > 2.5, text                  # printed while pytest still ran, not at the end
    last = text.strip().splitlines()[-1]
    assert last == "3 passed, 1 failed, 2 skipped, 1 expected to fail", text   # notebook + 2 tests; the sync check and one test skipped; one xfail
    ci = re.search(r"grep -E '(\^[^']+\$)'", (ROOT / ".ci/run").read_text()).group(1)
    assert re.fullmatch(ci.strip("^$"), last), ci                         # CI reads this very line
