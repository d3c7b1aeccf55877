"Headless tests of the widget UI: set values, click buttons, assert on the transcript and the displayed HTML."
import json, pytest
pytest.importorskip("ipywidgets")
from bazaarbatna import ui
from bazaarbatna.core import Transcript
import ui_toy

@pytest.fixture(scope="module")
def toy():
    return ui_toy.install()

def offer(p, price, message=""):
    p.form.inputs["price"].value = price
    p.form.inputs["message"].value = message
    p.form.buttons["offer"].click()

def test_play_full_negotiation_as_buyer(toy):
    p = ui.Play(toy)
    assert "Pure brass" in p.board.chat.value and "5</span> rounds left" in p.board.status.value
    assert p.form.buttons["accept"].disabled and not p.form.buttons["offer"].disabled  # nothing to accept yet
    offer(p, "300", "300 chalega?")
    assert p.error_text == ""
    t = p.transcript.turns
    assert (t[1].speaker, t[1].action, t[1].price, t[1].message) == ("buyer", "offer", 300.0, "300 chalega?")
    assert t[2].speaker == "seller" and t[2].action == "counter"
    # the seller's tells are highlighted with signal and score
    assert 'data-signal="deception"' in p.board.chat.value and "deception 0.75" in p.board.chat.value
    assert p.board.plot.value.count("<polyline") == 2 and "budget" in p.board.plot.value
    assert "4</span> rounds left" in p.board.status.value
    assert p.form.inputs["message"].value == ""  # the message box is cleared after a move
    offer(p, "₹450")  # a currency sign is fine
    assert p.done and p.episode["deal"] and p.episode["price"] == 450.0
    assert "Deal at ₹450" in p.board.chat.value and "Game over" in p.notice.value
    assert all(b.disabled for b in p.form.buttons.values())

@pytest.mark.parametrize("price,expect", [("", "please enter the price"), ("abc", "must be a number"), ("nan", "finite"),
                                          ("-5", ">= 0.01"), ("700", "above your budget")])
def test_bad_price_is_refused_and_changes_nothing(toy, price, expect):
    p = ui.Play(toy)
    before = (p.transcript.to_json(), p.env.invalid, p.env.round, p.board.chat.value)
    offer(p, price)
    assert expect in p.error_text
    assert (p.transcript.to_json(), p.env.invalid, p.env.round, p.board.chat.value) == before

def test_action_not_valid_now_is_refused(toy):
    p = ui.Play(toy)
    n = len(p.transcript.turns)
    p.form.buttons["accept"].click()  # disabled in the browser; a programmatic click still must not go through
    assert "not allowed now" in p.error_text and len(p.transcript.turns) == n
    offer(p, "450"); assert p.done
    p.form.buttons["walk"].click()
    assert "episode is over" in p.error_text and len(p.transcript.turns) == 3

def test_bad_seed_and_recovery(toy):
    p = ui.Play(toy)
    p.seed_w.value = "seven"; p.new_w.click()
    assert "seed must be a whole number" in p.error_text
    p.seed_w.value = "3"; p.new_w.click()
    assert p.error_text == "" and p.env.seed == 3 and "seed 3" in p.notice.value

def test_errors_are_messages_not_tracebacks(toy, monkeypatch):
    p = ui.Play(toy)
    def boom(a): raise RuntimeError("kaboom")
    monkeypatch.setattr(p.env, "step", boom)
    offer(p, "300")
    assert "Something went wrong (RuntimeError): kaboom" in p.error_text and "Traceback" not in p.notice.value
    assert "kaboom" in p.last_traceback

def test_play_as_seller_side(toy):
    p = ui.Play(toy, side="seller")
    assert p.env.human_seller and p.side == "seller"
    assert p.right == ("seller",) and 'class="bb-row bb-right"><div class="bb-bubble bb-seller"' in p.board.chat.value

def test_watch_step_and_run(toy):
    w = ui.Watch(toy, policy="expert")
    w.step_w.click()
    assert len(w.transcript.turns) == 3 and not w.done
    w.run_w.click()
    assert w.done and "Episode over" in w.notice.value and w.step_w.disabled
    assert "Deal at" in w.board.chat.value
    w.step_w.click(); assert "episode is over" in w.error_text

def test_watch_bad_policy_is_part_of_the_game(toy):
    w = ui.Watch(toy, policy="junk")
    w.step_w.click()
    assert "refused: not_json" in w.board.chat.value and w.error_text == ""

def test_replay_steps_through_a_saved_transcript(toy, tmp_path):
    w = ui.Watch(toy); w.run_w.click()
    f = tmp_path / "t.json"; f.write_text(w.transcript.to_json(indent=1))
    r = ui.Replay()
    r.path_w.value = str(f); r.load_w.click()
    n = len(w.transcript.turns)
    assert r.slider.max == n and r.slider.value == 1 and "Pure brass" in r.board.chat.value
    assert r.board.chat.value.count("bb-bubble") == 1
    r.nav["next"].click(); assert r.board.chat.value.count("bb-bubble") == 2
    r.nav["last"].click(); assert "End of transcript" in r.board.chat.value and r.board.chat.value.count("bb-bubble") == n
    r.nav["first"].click(); assert r.slider.value == 1
    # a record that points at its transcript file also loads
    rec = tmp_path / "results.jsonl"; rec.write_text(json.dumps({"policy": "expert", "transcript": "t.json"}) + "\n")
    r.load(str(rec)); assert r.slider.max == n

@pytest.mark.parametrize("src,expect", [("", "enter the path"), ("/no/such.json", "no such file"), ('{"a": 1}', "no transcript"),
                                        ("not json at all {", "not JSON")])
def test_replay_bad_input(src, expect, tmp_path):
    r = ui.Replay()
    if expect == "not JSON": (tmp_path / "x.json").write_text(src); src = str(tmp_path / "x.json")
    r.load(src)
    assert expect in r.error_text and r.tr is None

def test_action_form_menu_mode_shows_only_valid_actions():
    from bazaarbatna.core import ActionSchema, Field
    s = ActionSchema({"buy": (Field("block", "string"), Field("price", "number", lo=0)), "pitch": (Field("text", "string", max_len=300),),
                      "join": (Field("coalition", "string"),), "allocate": (Field("block", "string"), Field("job", "string")), "pass": ()})
    sent = []
    f = ui.ActionForm(s, sent.append)
    assert not f.buttons_mode
    f.set_state({"valid_actions": ["buy", "pass"], "choices": {"block": ["b1", "b2"]}}, ["buy", "pass"])
    assert list(f.menu.options) == ["buy", "pass"]
    f.menu.value = "buy"
    assert [w.description for w in f.fields_box.children] == ["block", "price"]
    assert isinstance(f.inputs["block"], ui.W.Dropdown) and f.inputs["block"].options == (("b1", "b1"), ("b2", "b2"))
    f.inputs["price"].value = "12.5"; f.send.click()
    assert sent == ["buy"] and f.read("buy") == {"action": "buy", "block": "b1", "price": 12.5}
    with pytest.raises(ui.ActionError, match="not allowed now"): f.read("pitch")
