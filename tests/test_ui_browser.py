"""Real-browser tests of the widget UI: `bazaarbatna ui` serves the app (through Voilà) on a loopback port, headless
Chromium (Debian's `chromium`, driven by Playwright) plays through it the way a person does, and one test saves a screenshot.

Run: `.venv/bin/pytest tests/test_ui_browser.py -q -s` (needs `apt-get install chromium` and `pip install voila playwright`).
The screenshot path is printed; set BB_UI_SCREENSHOT_DIR to keep it somewhere else than pytest's tmp dir.
One Voilà server serves the module; every test opens its own page (so its own kernel and game)."""
import os, re, shutil, signal, socket, subprocess, sys, time, urllib.request
from pathlib import Path
import pytest

CHROMIUM = os.environ.get("BB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM: pytest.skip("chromium is not installed (apt-get install chromium); the browser test needs it", allow_module_level=True)
pytest.importorskip("voila", reason="voila is not installed (pip install voila)")
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
DEADLINE = 110  # seconds for each test (CI budget: < 2 min)

def _free_port() -> int:
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); return s.getsockname()[1]

@pytest.fixture
def deadline():
    "Fail (never hang) if a test runs past DEADLINE seconds."
    def boom(*_): raise TimeoutError(f"the browser test ran past {DEADLINE} s")
    old = signal.signal(signal.SIGALRM, boom); signal.alarm(DEADLINE)
    yield time.time()
    signal.alarm(0); signal.signal(signal.SIGALRM, old)

@pytest.fixture(scope="module")
def voila_url(tmp_path_factory):
    "The page `bazaarbatna ui` serves (the app, through Voilà), started the way a user starts it."
    tmp = tmp_path_factory.mktemp("voila")
    port = _free_port()
    log = open(tmp / "voila.log", "w")
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp / "rt")}
    cmd = [sys.executable, "-c", "import sys; from bazaarbatna.cli import main; sys.exit(main())",
           "ui", "--port", str(port), "--task", "single_deal", "--seed", "0", "--no-browser"]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp, start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        t0 = time.time()
        while True:
            if p.poll() is not None: pytest.fail("bazaarbatna ui exited: " + (tmp / "voila.log").read_text()[-2000:])
            try: urllib.request.urlopen(url, timeout=2); break
            except OSError: pass
            if time.time() - t0 > 90: pytest.fail("bazaarbatna ui did not start in 90 s: " + (tmp / "voila.log").read_text()[-2000:])
            time.sleep(0.3)
        yield url
    finally:
        os.killpg(p.pid, signal.SIGTERM)   # the command and the Voilà server it started
        try: p.wait(10)
        except subprocess.TimeoutExpired: os.killpg(p.pid, signal.SIGKILL)
        log.close()

@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with sync_api.sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(str(tmp_path_factory.mktemp("profile")), executable_path=CHROMIUM, headless=True,
                                                    args=ARGS, viewport={"width": 1280, "height": 900})
        try: yield ctx
        finally: ctx.close()

@pytest.fixture
def page(deadline, voila_url, browser):
    "A fresh page on the app (its own kernel), with the Play tab's widgets rendered."
    pg = browser.new_page()
    pg.set_default_timeout(30_000)
    pg.goto(voila_url, wait_until="domcontentloaded")
    pg.locator(".bb-play .bb-in-price input").wait_for(state="visible", timeout=90_000)   # a kernel started and drew the app
    yield pg
    pg.close()

def bubbles(page) -> int: return page.locator(".bb-play .bb-chat .bb-bubble").count()

def wait_bubbles(page, n: int):
    page.wait_for_function(f"() => document.querySelectorAll('.bb-play .bb-chat .bb-bubble').length >= {n}")

def squash(s: str) -> str: return re.sub(r"\s+", " ", s)

def wait_text(page, sel: str, text: str):
    "Wait until the element `sel` shows `text`: the kernel redraws the chat and the status in separate messages."
    page.wait_for_function("([sel, t]) => { const e = document.querySelector(sel);"
                           " return e !== null && e.innerText.replace(/\\s+/g, ' ').includes(t); }", arg=[sel, text])

def facts(page) -> dict:
    "The side panel's facts table, label -> text."
    rows = page.locator(".bb-play .bb-facts tr")
    return {rows.nth(i).locator("th").inner_text().strip(): rows.nth(i).locator("td").inner_text().strip() for i in range(rows.count())}

def number(text: str) -> float: return float(re.sub(r"[^\d.]", "", text))

def settle(page, seconds: float = 1.5):
    "Let the kernel drain whatever the browser sent (a queued click, a value sync) and the page redraw."
    page.wait_for_timeout(int(seconds * 1000))

def choose(page, cls: str, value: str):
    "Pick `value` in the Play tab's dropdown with class `cls`."
    page.locator(f".bb-play .{cls} select").select_option(value)

# ---- the first game ------------------------------------------------------------------------------------------------------
def test_negotiate_in_a_real_browser(page, deadline, tmp_path):
    t0 = deadline
    shots = Path(os.environ.get("BB_UI_SCREENSHOT_DIR", tmp_path)); shots.mkdir(parents=True, exist_ok=True)
    play = page.locator(".bb-play")
    price = play.locator(".bb-in-price input")
    chat = play.locator(".bb-chat")
    assert "rounds left" in play.locator(".bb-status").inner_text()
    n0 = bubbles(page)
    assert n0 >= 1                                        # the seller's opening ask
    # bad input first: words in the price box are refused with a message, nothing is sent
    price.fill("thirty")
    play.locator(".bb-act-offer").click()
    page.wait_for_function("() => document.querySelector('.bb-play .bb-notice-error') !== null")
    assert "must be a number" in play.locator(".bb-notice-error").inner_text()
    assert bubbles(page) == n0
    # two real offers; each brings the seller's counter
    budget = number(facts(page)["budget"])
    for frac, msg in ((.55, "Bhaiya, itna nahi. Thoda kam karo?"), (.7, "Okay, last offer from my side.")):
        n = bubbles(page)
        price.fill(f"{budget * frac:.2f}")
        play.locator(".bb-in-message input").fill(msg)
        play.locator(".bb-act-offer").click()
        wait_bubbles(page, n + 2)
        assert msg in chat.inner_text()
    assert play.locator(".bb-notice-error").count() == 0
    assert play.locator(".bb-plot-w polyline").count() == 2   # buyer and seller price lines
    wait_text(page, ".bb-play .bb-status", "6 rounds left")
    path = shots / "ui_play.png"
    page.screenshot(path=str(path), full_page=True)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    print(f"\nscreenshot: {path} ({len(data)} bytes, {time.time() - t0:.1f} s)")

def test_the_page_speaks_to_its_user_not_to_the_tests(page):
    "The served page is the app a person opens: no note meant for the test suite."
    text = page.locator("body").inner_text()
    assert "BazaarBATNA" in text and not re.search(r"\btests?\b|test_ui|tests/", text, re.I), text[:300]

# ---- 1. a double-click sends one offer ----------------------------------------------------------------------------------
def test_a_double_click_on_offer_sends_one_offer(page):
    play = page.locator(".bb-play")
    n = bubbles(page)
    budget = number(facts(page)["budget"])
    play.locator(".bb-in-price input").fill(f"{budget * .5:.2f}")
    play.locator(".bb-act-offer").dblclick()
    wait_bubbles(page, n + 2)
    wait_text(page, ".bb-play .bb-status", "7 rounds left")
    settle(page)
    assert bubbles(page) == n + 2                             # one offer and its counter, not two of each
    assert "7 rounds left" in squash(play.locator(".bb-status").inner_text())
    play.locator(".bb-in-price input").fill(f"{budget * .6:.2f}")
    play.locator(".bb-act-offer").click()                     # a later, separate click still counts
    wait_bubbles(page, n + 4)
    wait_text(page, ".bb-play .bb-status", "6 rounds left")                   # not still "7": the click was not dropped

# ---- 2. one colour per party --------------------------------------------------------------------------------------------
COLOR_JS = """([sel, line]) => {
  const norm = c => { const d = document.createElement('div'); d.style.color = c; document.body.appendChild(d);
                      const v = getComputedStyle(d).color; d.remove(); return v; };
  const b = document.querySelector(sel), l = document.querySelector(line);
  return [getComputedStyle(b).borderLeftColor, norm(l.getAttribute('stroke'))];
}"""

def test_each_party_has_one_colour_as_seller(page):
    choose(page, "bb-sel-side", "seller")
    page.locator(".bb-play .bb-new").click()
    page.wait_for_function("() => document.querySelector('.bb-play .bb-status').innerText.includes('Your reservation is')")
    page.locator(".bb-play .bb-plot-w polyline[data-speaker='buyer']").wait_for(state="attached")   # one point: no area
    for who in ("seller", "buyer"):
        bubble, line = page.evaluate(COLOR_JS, [f".bb-play .bb-bubble.bb-{who}", f".bb-play .bb-plot-w polyline[data-speaker='{who}']"])
        assert bubble == line, (who, bubble, line)
    seller, buyer = (page.evaluate(COLOR_JS, [f".bb-play .bb-bubble.bb-{w}", f".bb-play .bb-plot-w polyline[data-speaker='{w}']"])[0]
                     for w in ("seller", "buyer"))
    assert seller != buyer
    # 5. the human seller's bonus is shown in money once the deal closes
    page.locator(".bb-play .bb-act-accept").click()
    page.wait_for_function("() => document.querySelector('.bb-play .bb-status').innerText.toLowerCase().includes('bonus')"
                           " && document.querySelector('.bb-play .bb-banner') !== null")
    status = squash(page.locator(".bb-play .bb-status").inner_text())
    assert re.search(r"bonus [₹$][\d,]+(\.\d\d)?", status), status

# ---- 3. the plot fits a narrow window -----------------------------------------------------------------------------------
FIT_JS = """() => {
  const r = e => e.getBoundingClientRect();
  const side = r(document.querySelector('.bb-play .bb-side')), plot = document.querySelector('.bb-play .bb-plot-w');
  const svg = r(plot.querySelector('svg')), box = r(plot);
  const items = [...plot.querySelectorAll('.bb-legend-item')].map(r);
  const axis = [...plot.querySelectorAll('svg text')].map(r);
  const overlap = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  return {svgRight: svg.right, svgWidth: svg.width, sideRight: side.right, boxLeft: box.left, boxRight: box.right,
          items: items.length, itemsInside: items.every(i => i.left >= box.left - 1 && i.right <= box.right + 1),
          overlaps: items.some(i => axis.some(t => overlap(i, t))), pageWidth: document.documentElement.scrollWidth};
}"""

def test_the_plot_fits_a_900px_window(page):
    page.set_viewport_size({"width": 900, "height": 900})
    budget = number(facts(page)["budget"])
    n = bubbles(page)
    page.locator(".bb-play .bb-in-price input").fill(f"{budget * .5:.2f}")
    page.locator(".bb-play .bb-act-offer").click()
    wait_bubbles(page, n + 2)
    settle(page, .5)
    fit = page.evaluate(FIT_JS)
    assert fit["svgRight"] <= fit["sideRight"] + 1 and fit["svgRight"] <= fit["boxRight"] + 1, fit   # not clipped
    assert fit["svgWidth"] >= 200, fit                                                               # and not shrunk to nothing
    assert fit["items"] >= 2 and fit["itemsInside"] and not fit["overlaps"], fit                     # the legend wraps, clear of the axis
    assert fit["pageWidth"] <= 900, fit                                                              # no sideways scrolling

# ---- 4 and 5. the end of a game: no rounds left, the outcome and the reward ------------------------------------------------
def test_the_end_of_a_game_shows_the_outcome_and_the_reward(page):
    play = page.locator(".bb-play")
    budget = number(facts(page)["budget"])
    n = bubbles(page)
    play.locator(".bb-in-price input").fill(f"{budget * .5:.2f}")
    play.locator(".bb-act-offer").click()
    wait_bubbles(page, n + 2)
    page.wait_for_function("() => document.querySelector('.bb-play .bb-reward') !== null")
    reward = squash(play.locator(".bb-reward").inner_text())
    assert "step reward" in reward and "shaping" in reward and "return" in reward, reward   # with its components
    play.locator(".bb-act-walk").click()
    page.wait_for_function("() => document.querySelector('.bb-play .bb-banner') !== null")
    wait_text(page, ".bb-play .bb-status", "Game over")
    status = squash(play.locator(".bb-status").inner_text())
    assert "rounds left" not in status and "Game over" in status, status
    reward = squash(play.locator(".bb-reward").inner_text())
    assert "no deal" in reward and "return" in reward, reward
    assert "utility" in status and "share of the surplus" in status, status                  # utility explained in one line
    assert "_" not in play.locator(".bb-banner").inner_text()                                # words, not codes

# ---- 8. the form explains itself, and Enter submits ------------------------------------------------------------------------
PLACEHOLDER_JS = """(sel) => {
  const i = document.querySelector(sel), s = getComputedStyle(i);
  const c = document.createElement('canvas').getContext('2d'); c.font = s.font;
  const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  return [c.measureText(i.placeholder).width, room, i.placeholder];
}"""

def test_the_form_explains_and_submits(page):
    play = page.locator(".bb-play")
    # seed 0 opens with an ask above the budget: Accept is greyed out, and the form says why
    assert play.locator(".bb-act-accept").is_disabled()
    why = squash(play.locator(".bb-why").inner_text())
    assert "Accept" in why and "budget" in why, why
    # the price box's placeholder is readable in full
    need, room, text = page.evaluate(PLACEHOLDER_JS, ".bb-play .bb-in-price input")
    assert need <= room, (text, need, room)
    # Enter in the price box sends the offer
    budget = number(facts(page)["budget"])
    n = bubbles(page)
    play.locator(".bb-in-price input").fill(f"{budget * .5:.2f}")
    play.locator(".bb-in-price input").press("Enter")
    wait_bubbles(page, n + 2)
    # a message typed with a refused offer does not ride along with a later Walk
    play.locator(".bb-in-price input").fill(f"{budget * 10:.2f}")
    play.locator(".bb-in-message input").fill("This one is for the offer only")
    play.locator(".bb-act-offer").click()
    page.wait_for_function("() => document.querySelector('.bb-play .bb-notice-error') !== null")
    assert "budget" in play.locator(".bb-notice-error").inner_text()
    play.locator(".bb-act-walk").click()
    page.wait_for_function("() => document.querySelector('.bb-play .bb-banner') !== null")
    assert "for the offer only" not in play.locator(".bb-chat").inner_text()

# ---- 5 and 9. the market: a losing lab does not read "Deal"; jobs listed, Send after the fields ------------------------------
def send(page, label: str):
    "Choose `label` in the market form's action menu and press Send; wait until the board has answered."
    before = page.locator(".bb-play .bb-status").inner_text()
    page.locator(".bb-play .bb-menu select").select_option(value=label)   # ipywidgets writes each option's label as its value
    page.wait_for_timeout(600)   # a person's pace: the same click twice within half a second is a double-click, and dropped
    page.locator(".bb-play .bb-send").click()
    page.wait_for_function("(b) => document.querySelector('.bb-play .bb-status').innerText !== b", arg=before)
    wait_turn(page)

def wait_turn(page):
    "Wait until the turn that has redrawn the board has ended: the menu of valid actions is set after the board (`_View.turn`)."
    page.wait_for_function("() => !document.querySelector('.bb-play.bb-turn')")

def test_a_market_lab_that_loses_money_does_not_read_deal(page):
    choose(page, "bb-sel-arena", "market")
    page.wait_for_function("() => [...document.querySelectorAll('.bb-play .bb-sel-task option')].some(o => o.textContent === 'single_trade')")
    choose(page, "bb-sel-task", "single_trade")
    page.locator(".bb-play .bb-new").click()
    page.locator(".bb-play .bb-menu select").wait_for()
    wait_text(page, ".bb-play .bb-status", "Your jobs")                               # the status redraws in its own message
    wait_turn(page)                                                                      # ...before the menu narrows to the valid actions
    status = squash(page.locator(".bb-play .bb-status").inner_text())
    assert "Your jobs" in status and "due R4" in status, status                        # jobs and deadlines, not only in the raw text
    fields = page.locator(".bb-play .bb-send").evaluate("b => b.closest('.widget-hbox, .widget-box').parentElement !== null && "
                                                        "[...b.parentElement.parentElement.children].indexOf(b.parentElement)")
    assert fields > 0                                                                    # Send comes after the fields it sends
    for _ in range(6):
        labels = page.eval_on_selector_all(".bb-play .bb-menu select option", "os => os.map(o => o.value)")
        if "Accept offer" in labels: break
        send(page, "Wait")
    send(page, "Accept offer")        # sell the block the lab's own job needs...
    send(page, "Finish")              # ...and stop: money lost
    banner = page.locator(".bb-play .bb-banner").inner_text()
    assert "Deal" not in banner and banner.startswith("1 trade") and "utility -" in banner, banner
