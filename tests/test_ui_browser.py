"""Real-browser test of the widget UI: Voilà serves tests/ui_app.ipynb on a loopback port, headless Chromium
(Debian's `chromium`, driven by Playwright) clicks through a short negotiation and saves a screenshot.

Run: `.venv/bin/pytest tests/test_ui_browser.py -q -s` (needs `apt-get install chromium` and `pip install voila playwright`).
The screenshot path is printed; set BB_UI_SCREENSHOT_DIR to keep it somewhere else than pytest's tmp dir."""
import os, re, shutil, signal, socket, subprocess, sys, time, urllib.request
from pathlib import Path
import pytest

CHROMIUM = os.environ.get("BB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM: pytest.skip("chromium is not installed (apt-get install chromium); the browser test needs it", allow_module_level=True)
pytest.importorskip("voila", reason="voila is not installed (pip install voila)")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")

NB = Path(__file__).with_name("ui_app.ipynb")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
DEADLINE = 110  # seconds for the whole test (CI budget: < 2 min)

def _free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

@pytest.fixture
def deadline():
    "Fail (never hang) if the whole test, server start included, runs past DEADLINE seconds."
    def boom(*_): raise TimeoutError(f"the browser test ran past {DEADLINE} s")
    old = signal.signal(signal.SIGALRM, boom); signal.alarm(DEADLINE)
    yield time.time()
    signal.alarm(0); signal.signal(signal.SIGALRM, old)

@pytest.fixture
def voila_url(deadline, tmp_path):
    port = _free_port()
    log = open(tmp_path / "voila.log", "w")
    env = {**os.environ, "BB_UI_TASK": "single_deal", "BB_UI_SEED": "0", "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt")}
    p = subprocess.Popen([sys.executable, "-m", "voila", str(NB), f"--port={port}", "--no-browser", "--Voila.ip=127.0.0.1",
                          "--Voila.port_retries=0", f"--Voila.root_dir={NB.parent}"],
                         stdout=log, stderr=subprocess.STDOUT, env=env, cwd=NB.parent)
    url = f"http://127.0.0.1:{port}/"
    try:
        t0 = time.time()
        while True:
            if p.poll() is not None: pytest.fail("voila exited: " + (tmp_path / "voila.log").read_text()[-2000:])
            try: urllib.request.urlopen(url, timeout=2); break
            except OSError: pass
            if time.time() - t0 > 40: pytest.fail("voila did not start in 40 s: " + (tmp_path / "voila.log").read_text()[-2000:])
            time.sleep(0.3)
        yield url
    finally:
        p.terminate()
        try: p.wait(10)
        except subprocess.TimeoutExpired: p.kill()
        log.close()

def test_negotiate_in_a_real_browser(deadline, voila_url, tmp_path):
    t0 = deadline
    shots = Path(os.environ.get("BB_UI_SCREENSHOT_DIR", tmp_path)); shots.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True, args=ARGS,
                                                    viewport={"width": 1280, "height": 900})
        try:
            page = ctx.new_page()
            page.set_default_timeout(45_000)
            page.goto(voila_url, wait_until="domcontentloaded")
            play = page.locator(".bb-play")
            price = play.locator(".bb-in-price input")
            price.wait_for(state="visible")                       # the kernel ran the notebook and the widgets rendered
            chat = play.locator(".bb-chat")
            assert "rounds left" in play.locator(".bb-status").inner_text()
            n0 = chat.locator(".bb-bubble").count()
            assert n0 >= 1                                        # the seller's opening ask
            # bad input first: words in the price box are refused with a message, nothing is sent
            price.fill("thirty")
            play.locator(".bb-act-offer").click()
            page.wait_for_function("() => document.querySelector('.bb-play .bb-notice-error') !== null")
            assert "must be a number" in play.locator(".bb-notice-error").inner_text()
            assert chat.locator(".bb-bubble").count() == n0
            # two real offers; each brings the seller's counter
            budget = float(re.sub(r"[^\d.]", "", play.locator(".bb-facts tr", has_text="budget").locator("td").inner_text()))
            for frac, msg in ((.55, "Bhaiya, itna nahi. Thoda kam karo?"), (.7, "Okay, last offer from my side.")):
                n = chat.locator(".bb-bubble").count()
                price.fill(f"{budget * frac:.2f}")
                play.locator(".bb-in-message input").fill(msg)
                play.locator(".bb-act-offer").click()
                page.wait_for_function(f"() => document.querySelectorAll('.bb-play .bb-chat .bb-bubble').length >= {n + 2}")
                assert msg in chat.inner_text()
            assert play.locator(".bb-notice-error").count() == 0
            assert play.locator(".bb-plot-w polyline").count() == 2   # buyer and seller price lines
            text = play.inner_text()
            assert "6 rounds left" in re.sub(r"\s+", " ", text)
            path = shots / "ui_play.png"
            page.screenshot(path=str(path), full_page=True)
        finally:
            ctx.close()
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    print(f"\nscreenshot: {path} ({len(data)} bytes, {time.time() - t0:.1f} s)")
    assert time.time() - t0 < DEADLINE
