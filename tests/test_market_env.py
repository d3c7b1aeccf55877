"GPU market arena: completion, conservation, consent, archetypes, shocks, privacy, invalid actions, determinism, snapshots, exploits."
import json, re, statistics, subprocess, sys
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from bazaarbatna.core import canonical_json, INVALID_ACTION_PENALTY, MAX_INVALID_ACTIONS
from bazaarbatna.market.env import TASKS, make_env, ACTION_SCHEMA, REWARD_TABLE, render_observation, bench_steps
from bazaarbatna.market.world import ARCHETYPES, SHOCK_KINDS
from bazaarbatna.market.policies import POLICIES, POLICY_DOCS, run_episode, valid_actions
from bazaarbatna.market.parallel import MarketParallelEnv, run_parallel


def play(env, policy, seed, check=None):
    "Play to the end; call `check(env, res)` after every step; return (total, last result)."
    policy.reset(seed)
    obs, total = env.reset(seed), 0.
    for _ in range(1000):
        res = env.step(policy.act(obs))
        total += res.reward
        if check: check(env, res)
        obs = res.observation
        if res.done: return total, res
    raise AssertionError("episode did not end")


def _ledger(env, res):
    env.w.check_ledger()
    assert abs(sum(res.info["reward_components"].values()) - res.reward) < 1e-9
    assert -1.2 <= res.reward <= 1.


@pytest.mark.parametrize("task", sorted(TASKS))
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_every_task_completes_100_seeds_with_ledger(task, policy):
    env, pol = make_env(task, 0), POLICIES[policy](0)
    for seed in range(100):
        total, res = play(env, pol, seed, _ledger)
        ep = res.info["episode"]
        assert ep["reason"] in ("finish", "max_rounds", "invalid_actions")
        assert -1 <= ep["utility"] <= 1 and ep["rounds"] <= env.task.max_rounds
        # the return is the utility (clipped to [-1, 1]) plus penalties: shaping telescopes to zero, `clip` pays the bound
        assert abs(total - (ep["utility"] + INVALID_ACTION_PENALTY * env.invalid[0])) < 1e-4 or abs(res.reward) == 1.


def test_contract_names():
    for t in TASKS.values():
        d = t.describe(); json.dumps(d)
        assert {"name", "difficulty", "summary"} <= set(d)
    assert {"single_trade", "market_round", "coalition_market"} <= set(TASKS)
    assert TASKS["single_trade"].n_labs == 2 and TASKS["market_round"].n_labs == 3 and 4 <= TASKS["coalition_market"].n_labs <= 5
    assert TASKS["coalition_market"].n_shocks > 0
    with pytest.raises(ValueError, match="single_trade"): make_env("nope")
    assert set(POLICIES) == set(POLICY_DOCS) and "expert" in POLICIES
    assert {r["component"] for r in REWARD_TABLE} >= {"money", "job_value", "progress_shaping", "invalid_action"}
    assert set(ACTION_SCHEMA.actions) == {"send_offer", "accept_offer", "reject_offer", "counter_offer", "make_pitch", "counter_pitch",
                                         "reserve_capacity", "release_capacity", "form_coalition", "commit_to_coalition",
                                         "allocate_to_job", "send_message", "wait", "finish"}
    env = make_env("coalition_market", 3)
    assert env.transcript.meta["arena"] == "market" and env.transcript.meta["opponent_version"] == env.opponent_version
    assert "Round 0/20" in render_observation(env.reset(3))


def test_coalitions_need_consent():
    "A refusing lab is never made a member; consent is decided by the invitee; repeated proposals are refused."
    formed = refused = 0
    for seed in range(40):
        env = make_env("coalition_market", seed)
        obs = env.reset(seed)
        for l in obs["labs"]:
            before = {c.id: list(c.members) for c in env.w.coalitions.values()}
            res = env.step({"action": "form_coalition", "target": l["id"]})
            if "error" in res.info: continue
            turns = [t for t in env.transcript.turns if t.action in ("consent", "refuse")]
            last = turns[-1]
            k = int(l["id"][1:])
            member = any(k in c.members and 0 in c.members for c in env.w.coalitions.values())
            if last.action == "refuse":
                refused += 1
                assert not member
                # asking again at once is refused automatically
                if not res.done:
                    res2 = env.step({"action": "form_coalition", "target": l["id"]})
                    if "error" not in res2.info:
                        assert [t for t in env.transcript.turns if t.action in ("consent", "refuse")][-1].action == "refuse"
                        assert not any(k in c.members and 0 in c.members for c in env.w.coalitions.values())
            else:
                formed += 1; assert member
            if res.done: break
    assert formed > 0 and refused > 0


def test_parallel_coalition_waits_for_consent():
    pe = MarketParallelEnv("market_round", 0)
    obs, _ = pe.reset(0)
    obs, *_ = pe.step({"L0": {"action": "form_coalition", "target": "L1"}, "L1": {"action": "wait"}, "L2": {"action": "wait"}})
    assert not pe.env.w.coalitions                     # a driven lab must answer itself
    inv = [o for o in obs["L1"]["offers"] if o["kind"] == "coalition"]
    assert inv
    obs, *_ = pe.step({"L1": {"action": "reject_offer", "offer": inv[0]["id"]}})
    assert not pe.env.w.coalitions
    obs, *_ = pe.step({"L0": {"action": "form_coalition", "target": "L1"}})
    inv = [o for o in obs["L1"]["offers"] if o["kind"] == "coalition"]
    pe.step({"L1": {"action": "accept_offer", "offer": inv[0]["id"]}})
    (c,) = pe.env.w.coalitions.values()
    assert sorted(c.members) == [0, 1]


def test_every_archetype_occurs_and_acts():
    seen, behaviour = set(), set()
    for seed in range(30):
        ep, total, env = run_episode("expert", "coalition_market", seed)
        seen |= {l.archetype for l in env.w.labs[1:]}
        for t in env.transcript.turns:
            if t.speaker != "Aurora" and t.speaker != "market": behaviour.add(t.action)
    assert seen == set(ARCHETYPES)
    assert {"accept", "offer_sell"} <= behaviour
    # opponents trade among themselves (lab to lab, not only from the exchange) and betray (deceptive breach) somewhere
    texts = " ".join(t.message for s in range(30) for t in run_episode("expert", "coalition_market", s)[2].transcript.turns)
    between = [m.groups() for m in re.finditer(r"(\w+) bought B\d+ from (\w+) for", texts) if m.group(2) != "the"]
    assert len(between) >= 10 and all("Aurora" not in pair for pair in between[:10]), between[:10]
    assert "breach" in texts


def test_every_shock_kind_occurs_and_is_observed():
    kinds = set()
    for seed in range(30):
        env = make_env("coalition_market", seed)
        obs = env.reset(seed)
        while True:
            res = env.step({"action": "wait"})
            if res.done: break
            obs = res.observation
        kinds |= {s["kind"] for s in obs["shocks"]}
        assert len(obs["shocks"]) == TASKS["coalition_market"].n_shocks
    assert kinds == set(SHOCK_KINDS)
    env = make_env("shock_storm", 1); obs = env.reset(1)
    while not (res := env.step({"action": "wait"})).done: obs = res.observation
    assert {s["kind"] for s in res.observation["shocks"]} == set(SHOCK_KINDS)
    assert "Shocks:" in render_observation(res.observation)


def _assert_private(env, lab, obs):
    "Nothing of another lab's private state is in `lab`'s observation: jobs, archetype, memory, reservation prices, budget."
    text = canonical_json(obs)
    for l in env.w.labs:
        if l.idx == lab: continue
        for j in l.jobs: assert f'"{j.id}"' not in text
        assert l.archetype not in text
    for k in ("trust", "grudge", "goodwill", "archetype", "betray", "floor", "buy_cap", "sell_floor"):
        assert f'"{k}' not in text
    def walk(o, key=None):
        if isinstance(o, dict):
            for k, v in o.items(): walk(v, k)
        elif isinstance(o, list):
            for v in o: walk(v, key)
        elif key == "budget": assert o == round(env.w.labs[lab].budget, 2)
    walk(obs)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_private_information_never_leaks(task):
    for seed in range(12):
        for name in ("expert", "random_valid"):
            play(make_env(task, seed), POLICIES[name](seed), seed, lambda env, res: _assert_private(env, 0, res.observation))
    for seed in range(6):                 # the multi-agent view: every lab's observation, every round
        pe = MarketParallelEnv(task, seed)
        pols = {a: POLICIES["expert"](seed) for a in pe.possible_agents}
        obs, _ = pe.reset(seed)
        while pe.agents:
            for a, o in obs.items(): _assert_private(pe.env, int(a[1:]), o)
            obs, *_ = pe.step({a: pols[a].act(obs[a]) for a in pe.agents})


BAD = [
    "not json at all", "[1, 2]", '{"action": "teleport"}', {"action": "send_offer"}, {"action": "send_offer", "target": "L1", "block": "B0", "payment": "ten"},
    {"action": "send_offer", "target": "L1", "block": "B0", "payment": float("nan")}, {"action": "send_offer", "target": "L1", "block": "B0", "payment": -4},
    {"action": "send_offer", "target": "L0", "block": "B0", "payment": 4}, {"action": "send_offer", "target": "L9", "block": "B0", "payment": 4},
    {"action": "send_offer", "target": "L1", "block": "B999", "payment": 4}, {"action": "accept_offer", "offer": "O1"},
    {"action": "allocate_to_job", "job": "J10", "block": "B0"}, {"action": "allocate_to_job", "job": "J00", "block": "B999"},
    {"action": "reserve_capacity", "block": "B999"}, {"action": "release_capacity", "block": "B999"},
    {"action": "commit_to_coalition", "coalition": "C1", "payment": 1}, {"action": "form_coalition", "target": "Aurora"},
    {"action": "make_pitch", "target": "L1"}, {"action": "counter_pitch", "offer": "O5", "message": "hi"},
    {"action": "send_message", "target": "L1", "message": "x" * 5000}, {"action": 7}, {"action": "wait", "extra": {"a": 1}} ,
    {"action": "send_offer", "target": "L1", "block": "B0", "payment": 1e12},
]


def _wrong_for_this_state(obs):
    "Actions the state forbids: someone else's block, the exchange's block sold, its own offer accepted, hours out of range."
    me, out = obs["lab"], []
    theirs = [b["id"] for b in obs["blocks"] if b["owner"] not in (me, "exchange")]
    exch = [b["id"] for b in obs["blocks"] if b["owner"] == "exchange"]
    jobs = [j["id"] for j in obs["jobs"]]
    for b in theirs[:2]:
        out += [{"action": "release_capacity", "block": b}, {"action": "reserve_capacity", "block": b}]
        out += [{"action": "allocate_to_job", "job": j, "block": b} for j in jobs[:1]]
    for b in exch[:1]:
        out += [{"action": "send_offer", "target": "L1", "block": b, "payment": 5}, {"action": "release_capacity", "block": b}]
    out += [{"action": "accept_offer", "offer": o["id"]} for o in obs["my_offers"][:1]]   # its own offer
    mine = [b["id"] for b in obs["blocks"] if b["owner"] == me]
    out += [{"action": "allocate_to_job", "job": j, "block": b, "hours": h} for j in jobs[:1] for b in mine[:1] for h in (-3, 0, 10**6)]
    return out


@pytest.mark.parametrize("task", sorted(TASKS))
def test_malformed_actions_change_nothing(task):
    env = make_env(task, 7)
    obs = env.reset(7)
    for _ in range(3): obs = env.step(POLICIES["expert"](7).act(obs)).observation
    snap, checked = env.snapshot(), 0
    for bad in BAD + _wrong_for_this_state(obs):
        env.restore(snap)                 # each bad action from the same state, none near the invalid-action limit
        key, n = env.state_key(), env.invalid[0]
        res = env.step(bad)
        if "error" not in res.info: continue   # (a few may be valid in some worlds, e.g. B0 owned by L1)
        assert env.state_key() == key, bad
        assert res.reward == INVALID_ACTION_PENALTY and res.info["reward_components"]["invalid_action"] == INVALID_ACTION_PENALTY
        assert set(res.info["error"]) == {"code", "field", "message"} and res.info["error"]["message"]
        assert env.invalid[0] == n + 1 and not res.done
        checked += 1
    assert checked >= len(BAD) - 1, checked   # all but the wait with an extra field (unknown fields are dropped)
    env.restore(snap)                     # the documented timeout: the limit'th invalid action ends the episode and settles
    for k in range(MAX_INVALID_ACTIONS):
        res = env.step("not json")
        assert res.done == (k == MAX_INVALID_ACTIONS - 1)
    assert res.info["episode"]["reason"] == "invalid_actions"


# ids with odd digits: superscripts, other scripts' decimal digits, fractions, Roman numerals, full-width digits
_ODD_DIGITS = st.text(st.characters(categories=("Nd", "No", "Nl")), min_size=1, max_size=3)
_IDS = st.one_of(st.sampled_from(["L1", "L0", "B0", "B1", "J00", "O101", "C101", "L¹", "L٣", "B١", "L１", "Lⅱ", "L½"]),
                 st.builds(lambda p, d: p + d, st.sampled_from(["L", "l", "B", "J0", "O", "C", ""]), _ODD_DIGITS))

@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=80), st.dictionaries(st.sampled_from(["action", "target", "block", "offer", "job", "payment", "coalition", "hours", "message"]),
                 st.one_of(st.sampled_from(list(ACTION_SCHEMA.actions)), _IDS, st.integers(-5, 10**7),
                           st.floats(allow_nan=True), st.none(), st.text(max_size=10)), max_size=5)))
def test_fuzz_never_crashes_and_keeps_books(raw):
    env = make_env("market_round", 1)
    key = env.state_key()
    res = env.step(raw)
    env.w.check_ledger()
    if "error" in res.info: assert env.state_key() == key


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["send_offer", "make_pitch", "form_coalition", "send_message"]), _IDS)
def test_lab_ids_with_odd_digits_are_typed_errors(action, target):
    "A lab id is 'L' and ASCII digits (or a lab's name): 'L¹' or 'L٣' gets the typed error, the penalty, an unchanged market."
    env = make_env("market_round", 2)
    key = env.state_key()
    raw = {"action": action, "target": target, "block": "B0", "payment": 5, "message": "We pay a fair rate on time."}
    res = env.step(raw)
    if target.isascii(): return          # plain ids: valid or not, `test_fuzz…` covers them
    assert res.info["error"]["field"] == "target" and res.info["error"]["code"] == "invalid_now", res.info["error"]
    assert res.reward == INVALID_ACTION_PENALTY and env.state_key() == key


def test_more_labs_than_names_is_a_clear_error():
    "The market names 6 labs; asking for more is a ValueError naming the limit (not an IndexError from the name table)."
    for n in (7, 0, 2.5):
        with pytest.raises(ValueError, match="from 1 to 6"): make_env("market_round", 0, n_labs=n)
    with pytest.raises(ValueError, match="from 1 to 6"): MarketParallelEnv("coalition_market", 0, n_labs=9)
    assert len(make_env("market_round", 0, n_labs=6).w.labs) == 6


@pytest.mark.parametrize("task", sorted(TASKS))
def test_determinism_byte_identical(task):
    for seed in (0, 11):
        a = run_episode("expert", task, seed)[2].transcript.to_json()
        b = run_episode("expert", task, seed)[2].transcript.to_json()
        assert a == b
        c = run_episode("random_valid", task, seed)[2].transcript.to_json()
        assert c == run_episode("random_valid", task, seed)[2].transcript.to_json()
    assert run_episode("expert", task, 0)[2].transcript.to_json() != run_episode("expert", task, 1)[2].transcript.to_json()


@pytest.mark.parametrize("task", sorted(TASKS))
def test_snapshot_restore_branches_identically(task):
    env, pol = make_env(task, 4), POLICIES["random_valid"](4)
    obs = env.reset(4)
    for _ in range(3):
        res = env.step(pol.act(obs)); obs = res.observation
        assert not res.done
    snap, key = env.snapshot(), env.state_key()

    def finish():
        "Play on with the expert; every step's reward, observation and info, and the transcript."
        p2, o, out = POLICIES["expert"](1), env.observe(0), []
        while True:
            r = env.step(p2.act(o)); out.append((r.reward, canonical_json(r.observation), canonical_json(r.info)))
            o = r.observation
            if r.done: return out, env.transcript.to_json()

    original = finish()                   # the uninterrupted episode
    for between in (None, 5, 0):          # restored straight away, or after playing another seed
        if between is not None:
            env.reset(between); env.step({"action": "wait"})
        env.restore(snap)
        assert env.state_key() == key
        assert finish() == original, between


# ---- exploit probes: repeated, cycling and random action policies -----------------------------------------
class Repeat:
    def __init__(self, make): self.make, self.name = make, "repeat"
    def reset(self, seed): self.t = 0
    def act(self, obs):
        self.t += 1; return self.make(obs, self.t)

def _labs(obs): return [l["id"] for l in obs["labs"]]
def _first(obs, pred): return next((b["id"] for b in obs["blocks"] if pred(b)), "B0")

EXPLOITS = {
    "wait": lambda o, t: {"action": "wait"},
    "finish": lambda o, t: {"action": "finish"},
    "coalition_rotating": lambda o, t: {"action": "form_coalition", "target": _labs(o)[t % len(_labs(o))], "message": "Let's pool capacity at a fair rate, together."},
    "pitch_rotating": lambda o, t: {"action": "make_pitch", "target": _labs(o)[t % len(_labs(o))], "message": f"You get 40 GPU-hours at a fair rate; we commit {t}."},
    "message_spam": lambda o, t: {"action": "send_message", "target": _labs(o)[0], "message": "hello"},
    "reserve_release": lambda o, t: ({"action": "reserve_capacity", "block": _first(o, lambda b: b["owner"] == "exchange")} if t % 2 else
                                     {"action": "release_capacity", "block": _first(o, lambda b: b["owner"] == o["lab"])}),
    "release_all": lambda o, t: {"action": "release_capacity", "block": _first(o, lambda b: b["owner"] == o["lab"])},
    "sell_high_rotating": lambda o, t: {"action": "send_offer", "target": _labs(o)[t % len(_labs(o))], "block": _first(o, lambda b: b["owner"] == o["lab"]), "payment": 500},
    "coalition_commit_cycle": lambda o, t: ({"action": "form_coalition", "target": _labs(o)[t % len(_labs(o))]} if t % 3 == 0 else
                                            {"action": "commit_to_coalition", "coalition": o["coalitions"][0]["id"], "payment": 1} if o["coalitions"] and t % 3 == 1 else
                                            {"action": "make_pitch", "target": _labs(o)[0], "message": "We pay on time, a fair rate for you."}),
    "accept_everything": lambda o, t: {"action": "accept_offer", "offer": o["offers"][0]["id"]} if o["offers"] else {"action": "wait"},
    "garbage": lambda o, t: "I will not answer in JSON",
}


def _mean(policy, task, seeds):
    env, out = make_env(task, 0), []
    for s in seeds:
        policy.reset(s)
        total, res = play(env, policy, s)
        out.append(res.info["episode"]["utility"])
    return statistics.mean(out)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_no_repeated_cycling_or_random_policy_beats_the_expert(task):
    seeds = range(60)
    expert = _mean(POLICIES["expert"](0), task, seeds)
    assert expert > 0.1, expert
    for name, make in EXPLOITS.items():
        m = _mean(Repeat(make), task, seeds)
        assert m < expert, (name, m, expert)
    for name in POLICIES:
        if name != "expert":
            m = _mean(POLICIES[name](0), task, seeds)
            assert m < expert, (name, m, expert)


class DuesDodge(POLICIES["expert"]):
    """The expert, plus the dues dodge: it plays every round (waits instead of finishing), from 5 rounds before the end
    asks the labs outside its coalition into a second one, and in the last round, in two coalitions or more, moves its
    whole budget into the newest one's escrow, so that the earlier coalition, settled first, finds nothing to take for
    the pooled hours it ran. `dodge=False` is the plain strategy: the same play, waiting in the last round instead."""
    def __init__(self, seed=0, dodge=True): self.dodge = dodge; super().__init__(seed)
    def reset(self, seed=0):
        super().reset(seed); self.asked, self.moved = set(), False
    def act(self, obs):
        a = super().act(obs)
        cs, r, R = obs["coalitions"], obs["round"], obs["max_rounds"]
        if a["action"] == "finish": a = {"action": "wait"}
        if r == R - 1 and len(cs) >= 2 and obs["budget"] >= .02:
            if not self.dodge: return {"action": "wait"}
            self.moved = True
            return {"action": "commit_to_coalition", "coalition": cs[-1]["id"], "payment": int(obs["budget"] * 100 - 1) / 100}
        if cs and len(cs) < 2 and R - 5 <= r < R - 1 and a["action"] == "wait":
            allied = {m for c in cs for m in c["members"]}
            for l in obs["labs"]:
                if l["id"] not in allied and l["id"] not in self.asked:
                    self.asked.add(l["id"])
                    return {"action": "form_coalition", "target": l["id"], "message": "Let's pool spare capacity at a fair rate; we pay on time."}
        return a


@pytest.mark.parametrize("task,seeds", [("market_round", range(30)), ("coalition_market", range(40))])
def test_coalition_dues_cannot_be_dodged(task, seeds):
    "Moving the whole budget into a later coalition's escrow in the last round gains nothing: dues are collected from every holding."
    dodged = 0
    for s in seeds:
        dodge, plain = DuesDodge(s), DuesDodge(s, dodge=False)
        (_, r_dodge, env), (_, r_plain, _) = run_episode(dodge, task, s), run_episode(plain, task, s)
        assert r_dodge <= r_plain + 1e-9, (task, s, r_dodge, r_plain)
        owed = any((0, o) in c.usage for c in list(env.w.coalitions.values())[:-1] for o in range(len(env.w.labs)))
        dodged += dodge.moved and owed
    assert dodged >= 2, dodged              # the dodge was tried where dues were owed (else this test shows nothing)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_pettingzoo_api_tests_pass_on_every_task(task):
    "PettingZoo's own checkers: `parallel_api_test`, and `api_test` on the AEC env `parallel_to_aec` makes of it."
    import warnings
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import parallel_api_test, api_test
    from pettingzoo.utils.conversions import parallel_to_aec
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # advice only: Box/Discrete spaces, 'player_0' names, numpy observations
        parallel_api_test(MarketParallelEnv(task, 0), num_cycles=80)
        api_test(parallel_to_aec(MarketParallelEnv(task, 0, render_mode="ansi")), num_cycles=80)
    pe = MarketParallelEnv(task, 0)
    assert pe.observation_space("L0") is pe.observation_space(pe.possible_agents[-1])   # one spaces.Dict for every agent
    assert type(pe.observation_space("L0")).__name__ == "Dict"
    with pytest.warns(UserWarning, match="render mode"): assert pe.render() is None   # PettingZoo's default: no render mode


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TASKS)), st.sampled_from(sorted(POLICIES)), st.integers(0, 2**40))
def test_every_observation_is_in_the_observation_space(task, policy, seed):
    "The parallel view's `spaces.Dict` holds every lab's observation at every round, whatever the policies play."
    pytest.importorskip("gymnasium")
    pols = {}
    pe = MarketParallelEnv(task, seed)
    space = pe.observation_space("L0")
    obs, _ = pe.reset(seed)
    for a in pe.possible_agents: pols[a] = POLICIES[policy](seed); pols[a].reset(seed)
    while True:
        for a, o in obs.items(): assert space.contains(o), (a, o)
        if not pe.agents: break
        acts = {a: pols[a].act(obs[a]) for a in pe.agents}
        if seed % 3 == 0: acts[pe.agents[0]] = "not json"   # observations with a last_error
        obs, *_ = pe.step(acts)


def test_parallel_view_all_policies_keep_books():
    for task in sorted(TASKS):
        for seed in range(5):
            for pol in sorted(POLICIES):
                returns, pe = run_parallel(task, seed, pol)
                assert pe.env.done and set(returns) == set(pe.possible_agents)


def test_judged_pitches_in_transcript():
    ep, total, env = run_episode("expert", "coalition_market", 5)
    md = env.transcript.to_markdown()
    assert "(judge: " in md
    scored = [t for t in env.transcript.turns if "score" in t.data and t.message]
    assert scored and all(0 <= t.data["score"] <= 1 for t in scored)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_pitched_offers_state_the_price_they_record(task):
    "A lab's sell pitch names the price it asks, judge premium included (a pitch once said 57 while the offer asked 65.98)."
    n = 0
    for seed in range(12):
        for pol in ("expert", "no_negotiation"):
            ep, total, env = run_episode(pol, task, seed)
            for t in env.transcript.turns:
                if t.action != "offer_sell": continue
                n += 1
                assert f"{t.price:.0f}" in t.message, (t.price, t.message)
                prem, base = t.data["premium"], t.price - t.data["premium"]   # premium = 15% of the base price × the judge score
                assert prem >= 0 and abs(prem - base * .15 * t.data["score"]) <= .006, (t.price, t.data)
                assert env.w.offers[t.data["offer"]].message == t.message   # the observation shows the same text
    assert n > 0


def test_transcript_turns_made_on_read_keep_order():
    "Turns are recorded as tuples and made into `Turn`s when read: appends, `add` and truncation keep their order."
    from bazaarbatna.core import Turn, Transcript
    env = make_env("coalition_market", 3)
    env.step({"action": "wait"})
    n = len(env.transcript.turns)
    assert n >= 1 and all(isinstance(t, Turn) for t in env.transcript.turns)
    env.transcript.add(env.w.round, "test", "note")
    env.step({"action": "wait"})
    acts = [t.action for t in env.transcript.turns]
    assert acts[n] == "note" and acts[n + 1] == "wait"
    del env.transcript.turns[n:]                      # as the UI does when it rewinds
    env.step({"action": "wait"})
    assert [t.action for t in env.transcript.turns][n] == "wait"
    d = Transcript.from_json(env.transcript.to_json())
    assert d.turns == env.transcript.turns and d.meta == env.transcript.meta


def _range(row):
    "(lo, hi) of a REWARD_TABLE row's documented range ('[-1, 1]' or a single value)."
    v = json.loads(row["range"])
    return (v, v) if isinstance(v, (int, float)) else tuple(v)

RANGES = {r["component"]: _range(r) for r in REWARD_TABLE}


class Garbled:
    "A policy that now and then sends an invalid action instead (to put penalties in the property test)."
    def __init__(self, pol, every): self.pol, self.every, self.name = pol, every, pol.name
    def reset(self, seed): self.pol.reset(seed); self.t = 0
    def act(self, obs):
        self.t += 1
        return "not json" if self.every and self.t % self.every == 0 else self.pol.act(obs)


@settings(max_examples=160, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(TASKS)), st.sampled_from(sorted(POLICIES) + ["dues_dodge"]), st.integers(0, 2**40),
       st.sampled_from([0, 0, 3, 7]))
def test_rewards_and_returns_stay_in_their_documented_bounds(task, policy, seed, garble):
    "Every component within its REWARD_TABLE range, every step in [-1, 1] (+ penalty), the return the clipped utility (+ penalties)."
    pol = Garbled(DuesDodge(seed) if policy == "dues_dodge" else POLICIES[policy](seed), garble)
    env = make_env(task, seed)
    steps = []
    def check(env, res):
        comp = res.info["reward_components"]
        assert abs(sum(comp.values()) - res.reward) < 1e-9, comp
        for k, v in comp.items():
            lo, hi = RANGES[k]
            assert lo - 1e-12 <= v <= hi + 1e-12, (k, v)
        pen = comp.get("invalid_action", 0.)
        assert -1. + pen - 1e-12 <= res.reward <= 1. + pen + 1e-12, res.reward
        steps.append(res.reward - pen)
    total, res = play(env, pol, seed, check)
    ep = res.info["episode"]
    penalties = INVALID_ACTION_PENALTY * env.invalid[0]
    assert -1. - 1e-9 <= total - penalties <= 1. + 1e-9, total
    assert -1. <= ep["utility"] <= 1.
    if abs(steps[-1]) < 1.:               # unless the last step itself was cut at 1: the return is the clipped utility
        assert abs(total - penalties - ep["utility"]) < 1e-4, (total, penalties, ep["utility"])


def test_return_is_bounded_in_the_parallel_view_too():
    for task in sorted(TASKS):
        for seed in range(3):
            returns, pe = run_parallel(task, seed, "expert")
            for a, r in returns.items():
                lab = int(a[1:])
                assert -1. - 1e-9 <= r - INVALID_ACTION_PENALTY * pe.env.invalid[lab] <= 1. + 1e-9
                assert abs(r - INVALID_ACTION_PENALTY * pe.env.invalid[lab] - pe.env.utility(lab)) < 1e-4


@pytest.mark.parametrize("task", sorted(TASKS))
def test_reset_right_after_construction_is_the_drawn_episode(task):
    "`make_env(task, s)` then `reset(s)` skips the second draw: the same episode as a full reset, and any play or other seed draws again."
    import copy
    for s in (0, 3):
        env = make_env(task, s)
        obs = env.reset(s)                # the constructor's draw
        key = env.state_key()
        env.fresh = None                  # force the full draw
        assert canonical_json(env.reset(s)) == canonical_json(obs) and env.state_key() == key
        env.step({"action": "wait"})
        assert canonical_json(env.reset(s)) == canonical_json(obs) and env.state_key() == key   # played: drawn again
        assert env.reset(s + 1) != obs    # another seed
    env = make_env(task, 0)
    with pytest.raises(TypeError, match="a seed is a whole number"): env.reset(False)   # a bool is no seed (`core.episode_seed`)
    assert env.fresh == 0 and canonical_json(env.reset(0.0)) == canonical_json(make_env(task, 0).reset(0))   # 0.0 is seed 0
    assert make_env(task, 1, max_rounds=5).w.max_rounds == 5       # every configuration has its own setup


def test_market_modules_do_not_import_torch():
    code = "import sys, bazaarbatna.market.env, bazaarbatna.market.policies, bazaarbatna.market.parallel, bazaarbatna.market.judge; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_bench_steps_reports():
    r = bench_steps(.2, "single_trade")
    assert r["steps"] > 0 and r["steps_per_s"] > 0 and r["episodes"] > 0 and r["fresh_env"]   # a new env per episode by default
    assert r["steps_per_cpu_s"] == r["cpu_steps_per_s"] > 0   # the bazaar bench's key too


def test_bench_runs_from_the_command_line():
    code = "import sys; from bazaarbatna.cli import main; sys.exit(main(sys.argv[1:]))"
    for task in ("market_round", "coalition_market"):
        out = subprocess.run([sys.executable, "-c", code, "bench", "env", "--arena", "market", "--task", task, "--seconds", "0.2", "--json"],
                             capture_output=True, text=True, check=True).stdout
        r = json.loads(out)
        assert r["task"] == task and r["policy"] == "expert" and r["steps_per_s"] > 0 and r["episodes"] > 0

_PIECES = ["guaranteed 99", "Guaranteed 99", "guaranteed 990", "99", "9", "1", "0", "%", " ", "95%", "12.5 %", "99%", "you", "both",
           "best deal", "act now", "fair", "GPU", "hours", "reliable", "BLOCK", "A", "!", "x", "٣", "or else", "\n"]

@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30), st.sampled_from([None, .3, .6, .9, .95]), st.booleans())
def test_judge_memo_key_never_changes_a_score(pieces, rel, repeated):
    "The memo shares one entry among texts that differ only in digits; every score equals a fresh, unmemoized one."
    from bazaarbatna.market.judge import RuleJudge
    j = RuleJudge()
    text = "".join(pieces)
    facts = None if rel is None else {"reliability": rel}
    variants = [text, text.translate(str.maketrans("0123456789", "9876543210")), text.translate(str.maketrans("0123456789", "1111111111"))]
    for t in variants:   # the shared memo first sees one variant, then the others
        assert j.score(t, facts, repeated) == RuleJudge()._score(t, facts, repeated), t


def _fresh_observation(env, lab=0):
    "The observation of `lab` with every cached view dropped: what an observation built from scratch shows."
    w = env.w
    for b in w.blocks.values(): b.view = None
    for l in w.labs:
        for j in l.jobs: j.view = None
    for o in w.offers.values(): o.view = None
    w.alive, w.alive_n = None, -1
    from bazaarbatna.market.env import _Views
    env.views = _Views()
    return env.observe(lab)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_cached_views_equal_views_built_from_scratch(task):
    "Views live on blocks, jobs and offers and are rebuilt only after a change: every change must drop them (no stale view)."
    import random
    for policy in sorted(POLICIES):
        for seed in range(8):
            env, pol = make_env(task, seed), POLICIES[policy](seed)
            rnd = random.Random(seed)
            obs = env.reset(seed); pol.reset(seed)
            while True:
                a = pol.act(obs)
                if rnd.random() < .1: a = rnd.choice(valid_actions(obs, rnd))   # a few other valid moves
                res = env.step(a)
                text = canonical_json(res.observation)
                assert canonical_json(_fresh_observation(env)) == text, (task, policy, seed, env.w.round)
                if res.done: break
                obs = env.observe(0)   # continue from caches rebuilt from scratch (a second, equal observation)
                assert canonical_json(obs) == text


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["action", "target", "block", "offer", "job", "payment", "coalition", "hours", "message", "conditions", "extra"]),
                       st.one_of(st.sampled_from(list(ACTION_SCHEMA.actions) + ["L1", "B0", "x" * 30, "x" * 700]), st.integers(-5, 10**7),
                                 st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(), st.text(max_size=10),
                                 st.sampled_from([1, 0, 1e6, 1e6 + 1, .01, .005, 2.0, 100000, 100001])), max_size=6))
def test_fast_action_parse_matches_the_schema(raw):
    "`env._parse` (the fast path for plain dicts) gives exactly `ACTION_SCHEMA.parse`'s result, or its error."
    from bazaarbatna.core import ActionError
    from bazaarbatna.market.env import _parse
    def run(f):
        try: return ("ok", f(raw))
        except ActionError as e: return ("error", e.to_dict())
    a, b = run(_parse), run(ACTION_SCHEMA.parse)
    assert a == b and (a[0] == "error" or [type(v) for v in a[1].values()] == [type(v) for v in b[1].values()])


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(list("0123456789.%  \t\nab") + ["\u0663", "\u2003", "99", "100", "12.5", " " * 13]), max_size=60).map("".join))
def test_pct_claims_match_the_regex_scan(text):
    "`judge._pct_claims` (the regex run in a window before each '%') finds what `_PCT.finditer` finds on the whole text."
    from bazaarbatna.market.judge import _pct_claims, _PCT
    assert _pct_claims(text) == [m.group(1) for m in _PCT.finditer(text)]
    for t in ("at 95% and 12.5 % and 1234%", "x" * 30 + "12" + " " * 20 + "%", "99.12345678901234%", "%%12%", "\u0663\u0664%", "7.5%"):
        assert _pct_claims(t) == [m.group(1) for m in _PCT.finditer(t)], t


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(["guaranteed 99", "guaranteed 999", "guaranteed 9", "x", "_", " ", "9", "\u0663", "\u00e9", ".", "%"]), max_size=12).map("".join))
def test_g99_counts_like_the_regex(text):
    "`judge._g99` (by `str.find`) counts what `_G99.findall` finds."
    from bazaarbatna.market.judge import _g99, _G99
    assert _g99(text) == len(_G99.findall(text))


def test_fast_round_matches_round():
    "`world._round` (rounding by `floor` away from ties) returns what `round` returns, bit for bit."
    import math, random
    from bazaarbatna.market.world import _round
    r = random.Random(5)
    for _ in range(30000):
        n = r.randrange(0, 7); s = 10 ** n
        base = r.randrange(-10**7, 10**7) / s
        for x in (base, base + .5 / s, base - .5 / s, math.nextafter(base + .5 / s, 0), math.nextafter(base + .5 / s, 1e300),
                  base + r.uniform(-1, 1) / s, r.uniform(-1, 1) * 10 ** r.randrange(-12, 12)):
            assert repr(_round(x, n)) == repr(round(x, n)), (x, n)
    for x in (0., -0., -1e-9, 2.675, 1.005, -2.5, float("nan"), float("inf"), 7, True, 1e12):
        for n in range(7): assert repr(_round(x, n)) == repr(round(x, n)) and type(_round(x, n)) is type(round(x, n))


def test_generated_objects_equal_constructed_ones():
    "`generate_world` sets the fields of its world, jobs, blocks and labs directly (no `__init__`): each equals what the constructor makes."
    import dataclasses
    from bazaarbatna.market.world import generate_world, World
    for task, cfg in TASKS.items():
        for seed in list(range(30)) + [-7, 10**9]:
            w = generate_world(cfg, seed)
            fields = dataclasses.fields(World)
            y = World(w.labs, w.blocks, w.max_rounds, w.shock_plan, goodwill_live=False)   # the constructor, defaults included
            y.money_total, y.hours_total, y.next_id = w.money_in_play(), w.hours_in_play(), 100
            assert y == w and repr(y) == repr(w), task
            assert [(f.name, repr(getattr(y, f.name))) for f in fields] == [(f.name, repr(getattr(w, f.name))) for f in fields], task
            for x in [*w.blocks.values(), *w.labs, *(j for l in w.labs for j in l.jobs)]:
                y = type(x)(**{f.name: getattr(x, f.name) for f in dataclasses.fields(x)})
                assert y == x and repr(y) == repr(x) and (not hasattr(x, "view") or x.view is None)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_episode_info_matches_its_definition(task):
    "`episode_info` (one inline pass) equals the outcome computed from `utility`, `wealth` and the jobs."
    from bazaarbatna.market.world import _round
    for policy in ("expert", "random_valid", "naive"):
        for seed in range(10):
            info, _, env = run_episode(policy, task, seed)
            L, st = env.w.labs[0], env.stats
            assert env.w.round == env.task.max_rounds      # the market runs its course; `rounds` are the ones lab 0 played
            ref = {"deal": st["trades"] + st["coalitions"] > 0, "utility": round(env.utility(0), 6), "rounds": env.stopped[0],
                   "reason": env.reason, "jobs_done": sum(j.status == "done" for j in L.jobs), "jobs": len(L.jobs),
                   "value": round(sum(j.credited for j in L.jobs), 2), "wealth_change": round(env.wealth(0) - env.wealth0[0], 2),
                   "trades": st["trades"], "coalitions": st["coalitions"], "breaches": st["breaches"], "pitches": st["pitches"],
                   "mean_pitch_score": round(st["pitch_score"] / st["pitches"], 3) if st["pitches"] else None,
                   "shocks": [s["kind"] for s in env.w.shocks], "reputation": L.reputation}
            assert info == ref and env.episode_info(0) == ref and repr(info) == repr(ref)


def test_inline_views_equal_the_view_functions():
    "The observation builds views inline: each equals `_block_view`, `_job_view` or `_offer_view` of its object, key order included."
    from bazaarbatna.market.env import _block_view, _job_view, _offer_view
    for task in sorted(TASKS):
        for seed in range(6):
            env, pol = make_env(task, seed), POLICIES["random_valid"](seed)
            obs = env.reset(seed); pol.reset(seed)
            while True:
                w = env.w
                for v in obs["blocks"]: assert list(v.items()) == list(_block_view(w, w.blocks[v["id"]]).items())
                for v in obs["jobs"]: assert list(v.items()) == list(_job_view(next(j for j in w.labs[0].jobs if j.id == v["id"])).items())
                for v in obs["offers"] + obs["my_offers"]: assert list(v.items()) == list(_offer_view(w.offers[v["id"]]).items())
                res = env.step(pol.act(obs))
                if res.done: break
                obs = res.observation

@pytest.mark.parametrize("task", ["single_trade", "market_round", "coalition_market", "shock_storm"])
@pytest.mark.parametrize("policy", ["random_valid", "expert", "greedy_hoarder"])
def test_account_version_catches_every_change(task, policy):
    "The reward skips an account whose `acct_version` did not move: after every step, the one it kept must equal a fresh one."
    checked = 0
    for seed in range(15):
        env, pol = make_env(task, seed), POLICIES[policy](seed)
        pol.reset(seed); obs = env.reset(seed)
        while True:
            r = env.step(pol.act(obs))
            if r.done: break
            for lab in range(len(env.w.labs)):
                if env.pre_v[lab] == env.w.labs[lab].acct_version:   # the kept account claims to be current
                    assert env.pre[lab] == env._account(lab), (task, policy, seed, lab, env.w.round); checked += 1
            obs = r.observation
    assert checked > 0


def test_judged_pitches_change_prices():
    """A counter-pitch that outscores an offer's pitch strips its premium (one that does not leaves the price); a good pitch
    to a lab raises its goodwill, which lowers the least it will sell to the pitcher for."""
    from bazaarbatna.market.opponents import sell_floor
    strong = "Block {b} is {r:.0%} reliable with {h} GPU-hours; a fair rate for both of us is lower, and we pay on time."
    countered = 0
    for seed in range(80):
        env = make_env("market_round", seed); obs = env.reset(seed)
        sells = []
        while not sells:
            sells = [o for o in obs["offers"] if o["kind"] == "sell" and 0 < o["judge"] < 1]
            if not sells:
                res = env.step({"action": "wait"}); obs = res.observation
                if res.done: break
        if not sells: continue
        oid = sells[0]["id"]; off = env.w.offers[oid]; b = env.w.blocks[off.block]
        pay, prem = off.payment, off.premium
        assert prem > 0
        snap = env.snapshot()
        res = env.step({"action": "counter_pitch", "offer": oid, "message": strong.format(b=b.id, r=b.reliability, h=b.hours_left)})
        turn = next(t for t in env.transcript.turns if t.action == "counter_pitch")
        assert turn.data["won"] and env.w.offers[oid].payment == round(pay - prem, 2) and env.w.offers[oid].premium == 0
        env.restore(snap)
        env.step({"action": "counter_pitch", "offer": oid, "message": "NO. THIS IS A SCAM!!!"})
        turn = next(t for t in env.transcript.turns if t.action == "counter_pitch")
        assert not turn.data["won"] and env.w.offers[oid].payment == pay
        countered += 1
    assert countered >= 10, countered
    env = make_env("market_round", 3); env.reset(3)
    b = next(b for b in env.w.blocks.values() if b.owner == 1)
    before = sell_floor(env.w, 1, 0, b)
    env.step({"action": "make_pitch", "target": "L1", "message": "We pay on time and commit 40 GPU-hours at a fair rate; "
                                                                 "your spare hours earn more with us, and both of us finish our jobs."})
    assert env.w.labs[1].goodwill[0] > 0 and sell_floor(env.w, 1, 0, b) < before
