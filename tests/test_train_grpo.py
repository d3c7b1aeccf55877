"The GRPO reward equals an independent replay of the environment from the episode's seed."
import pytest
from bazaarbatna.arenas import get_arena
from bazaarbatna.train.grpo import collect_states, score_reply, replay_score, EnvReward, FORMAT_BONUS, HOLD, CONTINUATION
from bazaarbatna.agents import reply_json, parse_reply, guard_action
from bazaarbatna.arenas import make_policy
from bazaarbatna.core import extract_json

def _replies(state):
    a = get_arena(state.arena)
    exp = a.POLICIES["expert"](); exp.reset(state.seed)
    act = exp.act(state.obs)
    act = act if isinstance(act, dict) else a.ACTION_SCHEMA.parse(act)
    out = [reply_json(state.arena, act), "Sure! " + reply_json(state.arena, act) + " ok?", "thirty rupees", '{"action": "fly"}', "", '{"action": "walk"}']
    if state.arena == "bazaar":
        ask = state.obs.get("ask", 100)
        out += [f'{{"action": "offer", "price": {round(ask * f, 2)}}}' for f in (0.3, 0.6, 0.9, 1.2)] + ['{"action": "accept"}',
                '{"action": "offer", "price": -5}', '{"action": "offer", "price": NaN}']
    return out

@pytest.mark.parametrize("arena,tasks", [("bazaar", None), ("market", ["single_trade", "market_round", "coalition_market", "shock_storm"])])
def test_reward_equals_independent_replay(arena, tasks):
    states = collect_states(arena, tasks, seeds=[7, 8], max_per_episode=4)
    assert len(states) >= 8
    n = 0
    for st in states[::2]:
        for text in _replies(st):
            a, b = score_reply(st, text), replay_score(st, text)
            assert a == pytest.approx(b, abs=1e-9), (st.task, st.seed, text, a, b)
            n += 1
    assert n >= 30

def _written_out(st, text):
    """The reward as the issue states it, written here from the public API alone (none of the GRPO module's scoring
    code): a fresh env from the episode's seed, the actions that led to the state, the reply as the agent sends it
    (parsed and guarded, or the raw text when it does not parse), then the expert to the end; plus the format bonus."""
    env = get_arena(st.arena).make_env(st.task, seed=st.seed)
    obs = env.reset(seed=st.seed)
    for a in st.prefix: obs = env.step(a).observation
    a, _ = parse_reply(st.arena, text, obs=obs)
    r = env.step(guard_action(st.arena, a, obs) if a is not None else text)
    total = r.reward + (FORMAT_BONUS if a is not None and extract_json(text)[1] else 0.0)
    pol = make_policy(st.arena, "expert"); pol.reset(st.seed)
    while not r.done:
        r = env.step(pol.act(r.observation)); total += r.reward
    return total

@pytest.mark.parametrize("arena,tasks", [("bazaar", ["single_deal", "read_the_tells"]), ("market", ["single_trade", "market_round"])])
def test_reward_equals_the_episode_written_out(arena, tasks):
    assert CONTINUATION == "expert"
    states = collect_states(arena, tasks, seeds=[3, 4], max_per_episode=3)
    n = 0
    for st in states[::2]:
        for text in _replies(st):
            assert score_reply(st, text)["reward"] == pytest.approx(_written_out(st, text), abs=1e-9), (st.task, st.seed, text)
            n += 1
    assert n >= 20

def test_reward_parts_and_metrics():
    states = collect_states("bazaar", ["single_deal"], seeds=[3], max_per_episode=2)
    st = states[0]
    good, prose, junk = _replies(st)[:3]
    g, p, j = score_reply(st, good), score_reply(st, prose), score_reply(st, junk)
    assert g["format"] == FORMAT_BONUS and p["format"] == 0 and j["format"] == 0
    assert g["valid"] and p["valid"] and not j["valid"]
    assert g["reward"] == pytest.approx(g["step_reward"] + g["continuation"] + g["format"])
    assert j["step_reward"] < 0                       # the env's own invalid-action penalty
    logged = {}
    rf = EnvReward(states, num_generations=3)
    comps = [[{"role": "assistant", "content": t}] for t in (good, prose, junk, good, good, good)]
    r = rf(prompts=[None] * 6, completions=comps, state_id=[0, 0, 0, 1, 1, 1], log_metric=logged.__setitem__)
    assert len(r) == 6 and r[0] == pytest.approx(g["reward"])
    assert logged["env/valid_json"] == pytest.approx(5 / 6)
    assert logged["env/frac_zero_spread"] == pytest.approx(0.5)   # the second group is three identical replies
    assert logged["env/group_spread"] > 0

@pytest.mark.parametrize("arena,tasks", [("bazaar", ["single_deal", "career_10", "marketplace_arena"]), ("market", ["single_trade", "market_round"])])
def test_hold_continuation_is_replayable_and_repeats_the_move(arena, tasks):
    states = collect_states(arena, tasks, seeds=[5], max_per_episode=3)
    for st in states:
        for text in _replies(st):
            a, b = score_reply(st, text, HOLD), replay_score(st, text, HOLD)
            assert a == pytest.approx(b, abs=1e-9), (st.task, text, a, b)
    st = collect_states("bazaar", ["single_deal"], seeds=[11], max_per_episode=1)[0]
    bad = score_reply(st, "thirty rupees", HOLD)
    assert bad["continuation"] < 0 and bad["reward"] < score_reply(st, "thirty rupees", CONTINUATION)["reward"]  # repeated: penalised every round
    low = score_reply(st, '{"action": "offer", "price": %s}' % round(st.obs["ask"] * .02, 2), HOLD)
    assert low["reward"] < 0                                    # a held lowball ends in the seller's walk-out
