"Headless tests of the widget UI: set values, click buttons, assert on the transcript and on the displayed HTML."
import datetime, json, pytest
pytest.importorskip("ipywidgets")
from bazaarbatna import ui
from bazaarbatna.core import Transcript
import ui_toy

def offer(p, price, message="", action="offer"):
    p.form.inputs["price"].value = price
    p.form.inputs["message"].value = message
    p.form.buttons[action].click()

def state(p):
    "Everything a refused input must leave unchanged."
    return (p.transcript.to_json(), json.dumps(p.obs, sort_keys=True, default=str), p.done, p.board.chat.value, p.board.plot.value,
            repr(p.env.snapshot()))

# ---- bazaar, human buyer ------------------------------------------------------------------------------
def test_play_bazaar_buyer_full_negotiation():
    p = ui.Play("bazaar", task="single_deal", seed=0)
    assert p.error_text == "" and "You are the buyer" in p.notice.value
    ask0, budget = p.obs["ask"], p.obs["budget"]
    assert "8</span> rounds left" in p.board.status.value and "budget" in p.board.plot.value
    assert p.transcript.turns[0].speaker == "seller" and p.board.chat.value.count("bb-bubble bb-seller") == 1
    price = round(budget * .5, 2)
    offer(p, str(price), "Bhaiya, thoda kam karo")
    assert p.error_text == ""
    buyer = [t for t in p.transcript.turns if t.speaker == "buyer"]
    assert (buyer[-1].action, buyer[-1].price, buyer[-1].message) == ("offer", price, "Bhaiya, thoda kam karo")
    assert p.transcript.turns[-1].speaker == "seller" and "7</span> rounds left" in p.board.status.value
    assert 'data-speaker="buyer"' in p.board.plot.value and 'data-speaker="seller"' in p.board.plot.value
    assert "Bhaiya, thoda kam karo" in p.board.chat.value and p.form.inputs["message"].value == ""
    # raise step by step until the seller accepts or the rounds run out; accept when the ask is affordable
    for _ in range(10):
        if p.done: break
        if not p.form.buttons["accept"].disabled and p.obs["ask"] <= price * 1.05: p.form.buttons["accept"].click(); break
        price = min(budget, round(price + (budget - price) * .4, 2))
        offer(p, str(price))
        assert p.error_text == ""
    assert p.done and p.episode is not None
    assert all(b.disabled for b in p.form.buttons.values())
    assert "Game over" in p.notice.value and 'class="bb-banner"' in p.board.chat.value
    assert p.transcript.meta["arena"] == "bazaar" and len(p.transcript.turns) >= 3

def test_tells_are_highlighted_with_signal_and_score():
    # seed 0 of single_deal opens with a cue; any seller tell must be shown as a <mark> plus a chip
    for seed in range(6):
        p = ui.Play("bazaar", task="deceptive_seller", seed=seed)
        offer(p, str(round(p.obs["budget"] * .4, 2)))
        tells = [x for t in p.transcript.turns if t.speaker == "seller" for x in t.data.get("tells", [])]
        if tells: break
    assert tells, "no seller tells in 6 seeds of deceptive_seller"
    x = tells[0]
    assert f'data-signal="{x["signal"]}"' in p.board.chat.value
    assert f'{x["signal"]} {x["score"]:.2f}' in p.board.chat.value and "⚑" in p.board.chat.value

@pytest.mark.parametrize("price,expect", [("", "please enter the price"), ("abc", "must be a number"), ("12abc", "must be a number"),
                                          ("nan", "finite"), ("-5", "at least 0.01"), ("0", "at least 0.01"), ("99999999", "above your budget")])
def test_bad_price_is_refused_and_changes_nothing(price, expect):
    p = ui.Play("bazaar", task="single_deal", seed=1)
    before = state(p)
    offer(p, price)
    assert expect in p.error_text
    assert state(p) == before

def test_offer_below_own_last_offer_is_refused_by_the_env_and_changes_nothing():
    p = ui.Play("bazaar", task="single_deal", seed=2)
    offer(p, str(round(p.obs["budget"] * .5, 2))); assert p.error_text == ""
    before = state(p)
    offer(p, str(round(p.obs["budget"] * .3, 2)))
    assert "offers may only rise" in p.error_text
    assert state(p) == before and p.env.s.invalid == 0   # the refusal did not count against the human

def test_action_not_valid_now_is_refused():
    p = ui.Play("bazaar", task="single_deal", seed=0)
    assert p.obs["ask"] > p.obs["budget"] and p.form.buttons["accept"].disabled
    before = state(p)
    p.form.buttons["accept"].click()          # disabled in a browser; a programmatic click must not get through either
    assert "not allowed now" in p.error_text and state(p) == before
    p.form.buttons["walk"].click()
    assert p.done and p.episode["deal"] is False
    before = state(p)
    offer(p, "10")
    assert "episode is over" in p.error_text and state(p) == before

def test_bad_seed_is_refused_then_recovers():
    p = ui.Play("bazaar", task="single_deal", seed=0)
    before = state(p)
    p.seed_w.value = "seven"; p.new_w.click()
    assert "seed must be a whole number" in p.error_text and state(p) == before
    p.seed_w.value = "3"; p.new_w.click()
    assert p.error_text == "" and p.transcript.meta["seed"] == 3 and "seed 3" in p.notice.value

def test_errors_are_messages_not_tracebacks(monkeypatch):
    p = ui.Play("bazaar", task="single_deal", seed=0)
    def boom(a): raise RuntimeError("kaboom")
    monkeypatch.setattr(p.env, "step", boom)
    offer(p, "10")
    assert "Something went wrong (RuntimeError): kaboom" in p.error_text and "Traceback" not in p.notice.value
    assert "kaboom" in p.last_traceback and not p.new_w.disabled   # the UI is usable again

# ---- bazaar, human seller -----------------------------------------------------------------------------
def test_play_bazaar_human_seller_with_brief_and_bonus():
    p = ui.Play("bazaar", side="seller", task="single_deal", seed=0)
    assert p.error_text == "" and list(p.form.buttons) == ["counter", "accept", "walk"]
    assert "Your reservation is" in p.board.status.value and "bonus" in p.board.status.value   # the seller brief
    assert "reservation" in p.board.plot.value                                                 # reference line
    assert p.transcript.turns[-1].speaker == "buyer" and p.obs["offer"] is not None
    res = p.obs["reservation"]
    before = state(p)
    offer(p, str(p.obs["ask"] * 2), action="counter")   # above the previous ask: refused by the env
    assert "above your previous ask" in p.error_text and state(p) == before
    for _ in range(10):
        if p.done: break
        if p.obs["offer"] >= res: p.form.buttons["accept"].click(); break
        offer(p, str(round(max(res * 1.02, (p.obs["ask"] + p.obs["offer"]) / 2), 2)), "Last price, final", action="counter")
        assert p.error_text == ""
    assert p.done and p.episode is not None and "bonus" in p.episode
    seller_turns = [t for t in p.transcript.turns if t.speaker == "seller"]
    assert 'class="bb-row bb-right"><div class="bb-bubble bb-seller"' in p.board.chat.value and seller_turns

# ---- market -------------------------------------------------------------------------------------------
def test_play_market_form_offers_only_valid_actions():
    p = ui.Play("market", task="single_trade", seed=0)
    f = p.form
    assert p.error_text == "" and not f.buttons_mode
    opts = [v for _, v in f.menu.options]
    assert "wait" in opts and "accept_offer" not in opts      # nothing in the inbox yet
    assert ("Reserve capacity", "reserve_capacity") in f.menu.options   # shown in words
    f.menu.value = "reserve_capacity"
    blocks = [b for b in p.obs["blocks"] if b["owner"] == "exchange"]
    assert isinstance(f.inputs["block"], ui.W.Dropdown) and [v for _, v in f.inputs["block"].options if v] == [b["id"] for b in blocks]
    f.menu.value = "make_pitch"
    assert [v for _, v in f.inputs["target"].options] == [l["id"] for l in p.obs["labs"]]
    before = state(p)
    f.texts["message"].value = ""; f.send.click()              # a pitch needs its message
    assert "please enter the message" in p.error_text and state(p) == before
    f.texts["message"].value = "Our reliable 8-GPU job finishes early; we pay on time and share surplus."
    f.send.click()
    assert p.error_text == ""
    pitch = [t for t in p.transcript.turns if t.action == "make_pitch"][-1]
    assert "judge" in p.board.judge.value.lower() and f"{pitch.data['score']:.2f}" in p.board.judge.value
    f.menu.value = "wait"; f.send.click(); assert p.error_text == ""
    f.menu.value = "finish"; f.send.click()
    assert p.done and f.send.disabled and "Game over" in p.notice.value

# ---- watch and replay ---------------------------------------------------------------------------------
def test_watch_bazaar_step_and_run():
    w = ui.Watch("bazaar", task="single_deal", policy="expert", seed=0)
    n = len(w.transcript.turns)
    w.step_w.click()
    assert len(w.transcript.turns) > n and not w.done and w.error_text == ""
    w.run_w.click()
    assert w.done and "Episode over" in w.notice.value and w.step_w.disabled and 'class="bb-banner"' in w.board.chat.value
    w.step_w.click(); assert "episode is over" in w.error_text

def test_watch_marketplace_arena_shows_rival_bidders():
    w = ui.Watch("bazaar", task="marketplace_arena", policy="conceder", seed=1)
    w.run_w.click()
    assert w.done and 'data-speaker="rival_0"' in w.board.plot.value

def test_watch_market():
    pytest.importorskip("bazaarbatna.market.policies")
    w = ui.Watch("market", task="single_trade", policy="expert", seed=0)
    w.run_w.click()
    assert w.done and w.error_text == ""

@pytest.fixture
def toy_arena():
    "The toy arena, registered for one test only (other suites list the registry's arenas)."
    from bazaarbatna import arenas
    name = ui_toy.install()
    yield name
    arenas.ARENAS.pop(name, None); arenas._loaded.pop(name, None)

def test_watch_a_bad_policy_is_part_of_the_game(toy_arena):
    w = ui.Watch(toy_arena, policy="junk")
    w.step_w.click()
    assert "refused: no JSON object found" in w.board.chat.value and w.error_text == ""

def test_replay_steps_through_a_saved_transcript(tmp_path):
    w = ui.Watch("bazaar", task="single_deal", seed=4); w.run_w.click()
    f = tmp_path / "t.json"; f.write_text(w.transcript.to_json(indent=1))
    r = ui.Replay()
    r.path_w.value = str(f); r.load_w.click()
    n = len(w.transcript.turns)
    assert r.error_text == "" and r.slider.max == n and r.slider.value == 1 and r.board.chat.value.count("bb-bubble ") == 1
    assert "single_deal" in r.meta.value
    r.nav["next"].click(); assert r.board.chat.value.count("bb-bubble ") == 2
    r.nav["last"].click(); assert "bb-banner" in r.board.chat.value and r.board.chat.value.count("bb-bubble ") == n
    r.nav["first"].click(); assert r.slider.value == 1
    rec = tmp_path / "results.jsonl"; rec.write_text(json.dumps({"policy": "expert", "transcript": "t.json"}) + "\n")
    r.load(str(rec)); assert r.slider.max == n and r.error_text == ""

@pytest.mark.parametrize("src,expect", [("", "enter the path"), ("/no/such.json", "no such file"), ('{"a": 1}', "no transcript"),
                                        ("FILE:not json at all {", "not JSON"), ('{"turns": [{"x": 1}]}', "unexpected fields")])
def test_replay_bad_input(src, expect, tmp_path):
    r = ui.Replay()
    if src.startswith("FILE:"): (tmp_path / "x.json").write_text(src[5:]); src = str(tmp_path / "x.json")
    r.load(src)
    assert expect in r.error_text and r.tr is None
    r.nav["next"].click(); assert "load a transcript first" in r.error_text

def test_app_has_three_tabs():
    a = ui.App()
    assert a.widget.titles == ("Play", "Watch", "Replay") and a.play.error_text == "" and a.watch.error_text == ""

@pytest.mark.slow
def test_play_against_the_llm_seller_shows_progress():
    pytest.importorskip("torch")
    p = ui.Play("bazaar", task="single_deal", seed=0, opponent="llm", start=False)
    labels = []
    p.busy_label.observe(lambda ch: labels.append(ch["new"]), names="value")
    p.new_game()
    assert p.error_text == "", p.error_text
    assert any("Loading the LLM seller" in l for l in labels)          # the load is announced, not silent
    assert p.env.seller.config()["kind"] == "llm"
    offer(p, str(round(p.obs["budget"] * .6, 2)), "Thoda kam karo")
    assert p.error_text == "" and any("thinking" in l for l in labels)
    assert p.transcript.turns[-1].speaker == "seller" and p.board.chat.value.count("bb-bubble bb-seller") >= 2
    assert p.busy_label.value == ""                                     # and the busy line is gone afterwards

def test_watch_market_every_lab_a_policy():
    pytest.importorskip("bazaarbatna.market.parallel")
    w = ui.Watch("market", task="market_round", policy="expert", seed=0, others="naive, retaliator")
    assert w.error_text == "" and w.pe is not None and "naive" in w.notice.value
    w.run_w.click()
    assert w.done and w.error_text == "" and 'class="bb-banner"' in w.board.chat.value
    speakers = {t.speaker for t in w.transcript.turns}
    assert len(speakers & set(w.transcript.meta["labs"])) >= 2
    w.others_w.value = "naive, nobody"; w.reset_w.click()
    assert "unknown market policy 'nobody'" in w.error_text

def test_replay_from_an_uploaded_file():
    w = ui.Watch("bazaar", task="single_deal", seed=5); w.run_w.click()
    r = ui.Replay()
    data = w.transcript.to_json().encode()
    r.upload_w.value = ({"name": "t.json", "type": "application/json", "size": len(data), "content": memoryview(data),
                         "last_modified": datetime.datetime(2026, 1, 1)},)
    assert r.error_text == "" and r.slider.max == len(w.transcript.turns)
    r.upload_w.value = ({"name": "x.json", "type": "application/json", "size": 3, "content": memoryview(b"{x}"), "last_modified": datetime.datetime(2026, 1, 1)},)
    assert "not JSON" in r.error_text and r.slider.max == len(w.transcript.turns)   # the loaded transcript stays

# ---- what a new user trips on (issue 33) ----------------------------------------------------------------
def colour_of(html_text, css_class):
    "The border colour of the first bubble with `css_class`."
    import re
    m = re.search(rf'class="bb-bubble {css_class}" style="border-color:(#[0-9a-f]{{6}})', html_text)
    return m and m.group(1)

def stroke_of(svg, speaker):
    import re
    m = re.search(rf'data-speaker="{speaker}" points="[^"]*" fill="none" stroke="(#[0-9a-f]{{6}})"', svg)
    return m and m.group(1)

def test_the_multi_buyer_replay_gives_every_party_its_own_colour(tmp_path):
    from bazaarbatna.bazaar.arena import arena_report
    rep = arena_report(["expert", "boulware", "split_difference"], [100_000], task="marketplace_arena", out_dir=tmp_path)
    r = ui.Replay(str(tmp_path / "transcript.json")); r.nav["last"].click()
    speakers = {t.speaker for t in r.tr.turns if t.price is not None and t.speaker != "system"}
    assert {"seller", "buyer_0", "buyer_1"} <= speakers, speakers
    colours = {s: colour_of(r.board.chat.value, f"bb-{s}") for s in speakers}
    assert len(set(colours.values())) == len(speakers), colours                 # buyer_0 is not the seller's orange
    assert all(stroke_of(r.board.plot.value, s) == c for s, c in colours.items())   # the same colour on the plot

def test_codes_and_raw_numbers_do_not_reach_the_user():
    s = ui.Play("bazaar", side="seller", task="single_deal", seed=0)
    offer(s, "2e12", action="counter")                                          # past the schema's bound
    assert "at most 1,000,000,000,000" in s.error_text and "e+" not in s.error_text, s.error_text
    s.form.buttons["accept"].click()
    assert s.done and "deal_seller_accepted" not in s.board.text and "the seller accepted the offer" in s.board.chat.value
    assert "1 round ·" in s.board.chat.value and "1 rounds" not in s.board.text
    b = ui.Play("bazaar", task="single_deal", seed=0)
    offer(b, "1e11")
    assert "above your budget $37" in b.error_text and "e+" not in b.error_text and "$100,000,000,000" in b.error_text, b.error_text
    m = ui.Play("market", task="single_trade", seed=0)
    m.form.menu.value = "send_offer"
    assert "`" not in m.form.doc.value and "offer to buy block" in m.form.doc.value
    assert all("_" not in label for label, _ in m.form.menu.options)           # actions in words

def test_money_has_its_currency_in_the_panel_and_in_a_replay(tmp_path):
    p = ui.Play("bazaar", task="single_deal", seed=0)                           # a USD listing
    facts = dict(ui.obs_facts(p.obs, currency="$"))
    assert facts["budget"] == "$37" and "<td>$37</td>" in p.board.status.value
    w = ui.Watch("bazaar", task="single_deal", policy="expert", seed=100_000); w.run_w.click()   # an INR listing
    assert w.transcript.meta["currency"] == "INR"
    f = tmp_path / "t.json"; f.write_text(w.transcript.to_json())
    r = ui.Replay(str(f)); r.nav["last"].click()
    assert r.board.chat.value.count("₹") >= 2 and "bb-price\">₹" in r.board.chat.value

def test_the_market_view_folds_waits_lists_jobs_and_sends_after_the_fields():
    pytest.importorskip("bazaarbatna.market.parallel")
    w = ui.Watch("market", task="market_round", policy="expert", seed=0, others="naive, retaliator")
    w.run_w.click()
    waits = sum(t.action == "wait" for t in w.transcript.turns)
    assert waits >= 3 and w.board.fold_w.layout.display is None and w.board.fold_w.value
    folded = w.board.chat.value.count("bb-bubble ")
    w.board.fold_w.value = False
    assert w.board.chat.value.count("bb-bubble ") >= folded + waits - w.board.chat.value.count("bb-folded")
    p = ui.Play("market", task="single_trade", seed=0)
    assert "Your jobs" in p.board.status.value and "due R4" in p.board.status.value
    assert p.form.fields_box.children[-1] is p.form.send                           # Send after the fields it sends
    assert "<details>" in p.board.status.value                                     # the raw text folded away

def test_a_losing_lab_does_not_read_deal():
    p = ui.Play("market", task="single_trade", seed=0)
    for _ in range(6):
        if "accept_offer" in [v for _, v in p.form.menu.options]: break
        p.form.menu.value = "wait"; p.form.send.click()
    p.form.menu.value = "accept_offer"; p.form.send.click()
    p.form.menu.value = "finish"; p.form.send.click()
    assert p.done and p.episode["deal"] and p.episode["utility"] < 0
    banner = p.board.chat.value.split('class="bb-banner">')[1]
    assert "Deal" not in banner and banner.startswith("1 trade") and "utility -" in banner

def test_replay_offers_every_record_and_plays_again_those_without_a_transcript(tmp_path):
    from bazaarbatna.evaluate import run_tournament
    run_tournament("bazaar", ["single_deal"], ["expert", "boulware"], [100_000, 100_001, 100_002], tmp_path, workers=1,
                   progress=False, transcripts=1)
    recs = [json.loads(l) for l in (tmp_path / "results.jsonl").read_text().splitlines()]
    r = ui.Replay(str(tmp_path / "results.jsonl"))
    assert r.error_text == "" and len(r.rec_w.options) == len(recs) == 6 and r.rec_w.layout.display is None
    for i, rec in enumerate(recs):
        r.rec_w.value = i
        assert r.error_text == "" and r.tr.meta["seed"] == rec["seed"] and r.tr.meta["policy"] == rec["policy"]
        status = r.board.status.value
        assert f"{rec['reward']:+.3f}" in status and "budget" in status and any(c in status for c in "₹$")
        if rec["transcript"] is None: assert "played again (the same episode)" in r.notice.value
    llm = {**recs[-1], "policy": "llm:runs/x/grpo/final", "transcript": None}
    (tmp_path / "llm.jsonl").write_text(json.dumps(recs[0]) + "\n" + json.dumps(llm) + "\n")
    r.load(str(tmp_path / "llm.jsonl")); r.rec_w.value = 1
    assert "evaluate with --transcripts all" in r.error_text and r.tr.meta["seed"] == recs[0]["seed"]   # the shown one stays
