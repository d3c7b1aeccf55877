"""Fuzzing the action edge of both arenas with the inputs that used to crash it: integers past the float range,
integer literals past Python's 4,300-digit `int` limit, JSON nested deeper than the parser recurses, lone
surrogates (not Unicode text: a transcript holding one could not be written as UTF-8), and odd but valid unicode.

`env.step`, `agents.parse_reply` and `core.extract_json` raise nothing but (for `extract_json`) an `ActionError`;
a refused action gets the typed error, the documented penalty and leaves the state as it was; and every transcript
can still be written."""
import json, math
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from bazaarbatna.core import ActionError, ERROR_CODES, INVALID_ACTION_PENALTY, extract_json
from bazaarbatna.arenas import get_arena, make_env
from bazaarbatna.agents import parse_reply
from bazaarbatna.evaluate import save_transcript

SETTINGS = dict(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

def huge_ints(digits=6000): return st.integers(309, digits).flatmap(lambda n: st.sampled_from([10 ** n, -(10 ** n), 10 ** n - 1]))
long_literals = st.integers(310, 6000).map(lambda n: "9" * n)             # as JSON text: past the float, maybe past `int`
deep_json = st.integers(500, 120_000).flatmap(lambda d: st.sampled_from(["[" * d + "]" * d, '{"a":' * d + "1" + "}" * d, "[" * d]))
surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
odd_chars = st.characters(categories=("Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me", "Nd", "No", "So", "Sc", "Lo", "Co"))
odd_text = st.text(odd_chars, max_size=40)
bad_text = st.tuples(odd_text, surrogates, odd_text).map("".join)
def values(digits=6000):
    numbers = st.one_of(huge_ints(digits), st.integers(-10, 10 ** 7), st.floats(allow_nan=True, allow_infinity=True))
    return st.one_of(numbers, odd_text, bad_text, st.none(), st.booleans(), st.lists(huge_ints(digits), max_size=2))

def actions(arena, digits=6000):   # (`json.dumps` writes no int over 4,300 digits: text gets long literals another way)
    "Dicts an agent might send: the arena's action names and fields, any of the values above."
    schema = get_arena(arena).ACTION_SCHEMA
    names = st.sampled_from(sorted(schema.actions) + ["haggle", ""])
    keys = sorted({f.name for fs in schema.actions.values() for f in fs} | {f.name for f in schema.common})
    return st.builds(lambda name, fields: {"action": name, **fields}, names, st.dictionaries(st.sampled_from(keys), values(digits), max_size=4))

def texts(arena):
    "Model replies: those dicts as JSON (surrogates escaped), wrapped in prose, plus long literals and deep nesting."
    as_json = actions(arena, 4000).map(lambda a: json.dumps(a))
    literal = st.tuples(st.sampled_from(["offer", "send_offer", "wait"]), long_literals).map(
        lambda t: '{"action": "%s", "price": %s, "payment": %s}' % (t[0], t[1], t[1]))
    deep = deep_json.map(lambda d: '{"action": "walk", "message": "x", "extra": %s}' % d if d.endswith(("]", "}")) else d)
    core = st.one_of(as_json, literal, deep, deep_json, bad_text, odd_text)
    return st.tuples(odd_text, core, odd_text).map(lambda t: t[0] + t[1] + t[2]) | core

TASK = {"bazaar": "single_deal", "market": "market_round"}

def _started(arena):
    "An env a few valid moves into an episode, and a snapshot to return to."
    env = make_env(arena, TASK[arena], 3)
    obs = env.reset(3)
    pol = get_arena(arena).POLICIES["expert"]
    pol = pol(3) if arena == "market" else pol()
    pol.reset(3)
    for _ in range(2): obs = env.step(pol.act(obs)).observation
    return env, obs, env.snapshot()

def _state(arena, env):
    "What a refused action must leave unchanged (the invalid-action counter aside)."
    if arena == "market": return env.state_key()
    s = env.s.copy(); s.invalid = 0
    return s, len(env.transcript.turns)

ENVS = {arena: _started(arena) for arena in ("bazaar", "market")}

def _step_checks(arena, action, tmp_path_factory):
    env, obs, snap = ENVS[arena]
    env.restore(snap)
    before = _state(arena, env)
    r = env.step(action)   # never raises
    if "error" in r.info:
        assert r.info["error"]["code"] in ERROR_CODES
        assert r.info["reward_components"]["invalid_action"] == INVALID_ACTION_PENALTY and r.reward == INVALID_ACTION_PENALTY
        assert _state(arena, env) == before and not r.done
    env.transcript.to_json().encode("utf-8")   # a transcript can always be written
    json.dumps(r.observation, ensure_ascii=False).encode("utf-8")

@pytest.mark.parametrize("arena", ["bazaar", "market"])
def test_step_never_crashes_on_text(arena, tmp_path_factory):
    @settings(**SETTINGS)
    @given(texts(arena))
    def check(text): _step_checks(arena, text, tmp_path_factory)
    check()

@pytest.mark.parametrize("arena", ["bazaar", "market"])
def test_step_never_crashes_on_dicts(arena, tmp_path_factory):
    acts = actions(arena)
    @settings(**SETTINGS)
    @given(acts)
    def check(action): _step_checks(arena, action, tmp_path_factory)
    check()

def test_market_refuses_lone_surrogates_in_dicts():
    "The market's fast path for plain dicts checks text as the schema does: a lone surrogate is bad_text, not a later crash."
    env, obs, snap = ENVS["market"]
    env.restore(snap)
    r = env.step({"action": "send_message", "target": "L1", "message": "ok \ud800"})
    assert r.info.get("error", {}).get("code") == "bad_text"

@pytest.mark.parametrize("arena", ["bazaar", "market"])
def test_parse_reply_returns_an_action_or_a_typed_error(arena):
    env, obs, snap = ENVS[arena]
    @settings(**SETTINGS)
    @given(texts(arena), st.booleans())
    def check(text, with_obs):
        a, e = parse_reply(arena, text, obs if with_obs else None)
        assert (a is None) != (e is None)
        if e is not None: assert isinstance(e, ActionError) and e.code in ERROR_CODES
        else: json.dumps(a, ensure_ascii=False).encode("utf-8")   # an accepted action is always writable
    check()

@settings(**SETTINGS)
@given(texts("bazaar"))
def test_extract_json_raises_only_action_errors(text):
    try: obj, _ = extract_json(text)
    except ActionError as e: assert e.code in ERROR_CODES
    else: assert isinstance(obj, dict)

@pytest.mark.parametrize("arena", ["bazaar", "market"])
def test_each_crash_class_gets_its_typed_error(arena, tmp_path):
    env, obs, snap = ENVS[arena]
    offer = {"bazaar": "offer", "market": "send_offer"}[arena]
    cases = {
        "out_of_range": [{"action": offer, "price": 10 ** 400, "payment": 10 ** 400, "target": "L1", "block": "B0"},
                         '{"action": "%s", "price": %s, "payment": %s, "target": "L1", "block": "B0"}' % (offer, "9" * 5000, "9" * 5000)],
        "too_deep": ['{"action": "wait", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "[" * 100_000],
        "bad_text": ['{"action": "%s", "target": "L1", "message": "hi \\ud800"}' % ("walk" if arena == "bazaar" else "send_message")]
                    + ([{"action": "walk", "message": "hi \ud800"}] if arena == "bazaar" else []),
    }
    for code, raws in cases.items():
        for raw in raws:
            env.restore(snap); before = _state(arena, env)
            r = env.step(raw)
            assert r.info["error"]["code"] == code, (code, r.info["error"])
            assert r.reward == INVALID_ACTION_PENALTY and _state(arena, env) == before
            text = raw if isinstance(raw, str) else json.dumps(raw)
            assert parse_reply(arena, text, obs)[1].code == code
    save_transcript(env.transcript, tmp_path / "t")   # used to fail with UnicodeEncodeError
