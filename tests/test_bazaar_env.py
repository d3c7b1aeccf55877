"Bazaar arena: completion, determinism, snapshots, errors, tells switch, exploitability."
import json, subprocess, sys, math
import pytest
from bazaarbatna.core import INVALID_ACTION_PENALTY, MAX_INVALID_ACTIONS
from bazaarbatna.bazaar.env import TASKS, make_env, make_human_seller_env, gym_env, REWARD_TABLE, render_observation, bench_steps
from bazaarbatna.bazaar.policies import POLICIES, POLICY_DOCS

def run(env, pol, seed):
    obs, done, total, n = env.reset(seed), False, 0.0, 0
    pol.reset(seed)
    while not done:
        r = env.step(pol.act(obs)); obs, done = r.observation, r.done; total += r.reward; n += 1
        assert "error" not in r.info, r.info["error"]
        assert math.isclose(r.reward, sum(r.info["reward_components"].values()), abs_tol=1e-12)
        assert -1.0 <= r.reward <= 1.2
        assert n < 500
    return total, r.info["episode"]

@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_every_policy_100_seeds(task):
    env = make_env(task)
    for name, P in POLICIES.items():
        pol = P()
        for seed in range(100):
            total, ep = run(env, pol, seed)
            assert set(ep) >= {"deal", "utility", "rounds", "reason"}
            assert 0 <= ep["utility"] <= 1
            if ep["deal"] and TASKS[task].n_deals == 1: assert ep["price"] >= ep["reservation"] and ep["price"] <= ep["budget"]

def test_same_seed_same_transcript():
    for task in TASKS:
        a, b = make_env(task), make_env(task)
        run(a, POLICIES["expert"](), 7); run(b, POLICIES["expert"](), 7)
        assert a.transcript.to_json() == b.transcript.to_json()
        run(b, POLICIES["expert"](), 8)
        assert a.transcript.to_json() != b.transcript.to_json()

def test_snapshot_restore_round_trip():
    for task in TASKS:
        env, pol = make_env(task), POLICIES["tit_for_tat"]()
        obs = env.reset(3); pol.reset(3)
        env.step(pol.act(obs))
        snap = env.snapshot(); j = env.transcript.to_json(); obs = env._obs()
        rs = []
        for _ in range(2):
            env.restore(snap)
            assert env.transcript.to_json() == j
            o, done, trace = obs, False, []
            while not done:
                r = env.step(pol.act(o)); o, done = r.observation, r.done; trace.append((r.reward, json.dumps(o, sort_keys=True)))
            rs.append((trace, env.transcript.to_json()))
        assert rs[0] == rs[1]

BAD = ["", "thirty rupees", "[1,2]", '{"price": 3}', '{"action": "haggle"}', '{"action": "offer"}', '{"action": "offer", "price": "40"}',
       '{"action": "offer", "price": NaN}', '{"action": "offer", "price": -5}', '{"action": "offer", "price": 0}',
       {"action": "offer", "price": float("inf")}, {"action": "offer", "price": True}, {"action": 3}, {"action": "offer", "price": 1e15},
       {"action": "offer", "price": 10, "message": "x" * 600}, None, 42, {"action": "offer", "price": 1e11}]

@pytest.mark.parametrize("bad", BAD, ids=range(len(BAD)))
def test_malformed_action_precise_error_state_unchanged(bad):
    env = make_env("single_deal", seed=1)
    obs = env.reset(1)
    env.step({"action": "offer", "price": round(obs["ask"] * .5)})
    snap = env.snapshot()
    r = env.step(bad)
    e = r.info["error"]
    assert e["code"] and e["message"] and not r.done
    assert r.reward == INVALID_ACTION_PENALTY and r.info["reward_components"] == {"invalid_action": INVALID_ACTION_PENALTY}
    after = env.snapshot()
    assert after[0].invalid == snap[0].invalid + 1
    after[0].invalid -= 1
    assert after[0] == snap[0] and after[3] == snap[3] and after[1] == snap[1]

def test_state_dependent_errors_name_the_field():
    env = make_env("single_deal", seed=2); obs = env.reset(2)
    assert env.step({"action": "offer", "price": obs["budget"] + 1}).info["error"]["field"] == "price"
    env.step({"action": "offer", "price": round(obs["ask"] * .6)})
    r = env.step({"action": "offer", "price": round(obs["ask"] * .5)})
    assert r.info["error"] == {"code": "invalid_now", "field": "price", "message": r.info["error"]["message"]}

def test_too_many_invalid_actions_end_the_episode_truncated():
    env = make_env("single_deal"); env.reset(0)
    for i in range(MAX_INVALID_ACTIONS):
        r = env.step("nope")
    assert r.done and r.info["episode"]["reason"] == "invalid_actions" and r.info.get("truncated")
    last = env.transcript.turns[-1]   # the transcript names the same reason, not a timeout
    assert (last.speaker, last.action, last.message) == ("system", "invalid_actions", "too many invalid actions")
    assert env.step({"action": "walk"}).info["error"]["code"] == "invalid_now"

def test_tells_switch_changes_observation():
    for task in ("read_the_tells", "deceptive_seller"):
        on, off = make_env(task, tells=True), make_env(task, tells=False)
        diff = 0
        for seed in range(20):
            a, b = on.reset(seed), off.reset(seed)
            assert "tells" in a and "tells" not in b and "Tells:" not in render_observation(b)
            diff += bool(a["tells"])
            assert a["dialogue"] == b["dialogue"]
        assert diff > 0

def test_unknown_task_lists_valid():
    with pytest.raises(ValueError, match="valid tasks"): make_env("nope")

def test_reward_table_and_docs():
    assert {r["component"] for r in REWARD_TABLE} == {"deal", "no_deal", "shaping", "invalid_action"}
    assert set(POLICY_DOCS) == set(POLICIES) and "expert" in POLICIES
    json.dumps([t.describe() for t in TASKS.values()])

def test_shaping_telescopes():
    env, pol = make_env("asymmetric_pressure"), POLICIES["conceder"]()
    for seed in range(20):
        env.reset(seed); phi0 = env._phi(); obs = env._obs(); pol.reset(seed); tot = 0.0; done = False
        while not done:
            r = env.step(pol.act(obs)); obs, done = r.observation, r.done; tot += r.info["reward_components"]["shaping"]
        assert math.isclose(tot, -phi0, abs_tol=1e-9)

# ---- exploitability: no constant or repeated action beats the expert on any task ---------------------
class Const:
    "Constant/repeated action policies."
    def __init__(self, kind, x=0.0): self.kind, self.x, self.name = kind, x, f"{kind}:{x}"
    def reset(self, seed): pass
    def act(self, o):
        if self.kind == "accept": return {"action": "accept"}
        if self.kind == "walk": return {"action": "walk"}
        if self.kind == "frac_ask": return {"action": "offer", "price": round(self.x * o["ask"], 2), "message": "same again"}
        if self.kind == "frac_ask_mono":
            last = o["buyer_offers"][-1] if o["buyer_offers"] else 0
            return {"action": "offer", "price": max(last, min(o["budget"], round(self.x * o["ask"], 2))), "message": "3 other sellers, cheaper online"}
        if self.kind == "frac_open":
            return {"action": "offer", "price": min(o["budget"], round(self.x * o["opening_ask"], 2)), "message": "I'm making a loss, teen aur log"}
        if self.kind == "frac_budget":
            return {"action": "offer", "price": round(self.x * o["budget"], 2), "message": "final"}

EXPLOITS = [Const("accept"), Const("walk")] + [Const(k, x) for k in ("frac_ask", "frac_ask_mono", "frac_open", "frac_budget")
                                               for x in (.3, .5, .6, .7, .75, .8, .85, .9, .95)]

def mean_return(task, pol, seeds):
    env = make_env(task); t = 0.0
    for s in seeds:
        obs, done = env.reset(s), False; pol.reset(s)
        while not done:
            r = env.step(pol.act(obs)); obs, done = r.observation, r.done; t += r.reward
    return t / len(seeds)

@pytest.mark.parametrize("task", sorted(TASKS))
def test_no_constant_policy_beats_expert(task):
    seeds = range(100)
    expert = mean_return(task, POLICIES["expert"](), seeds)
    for p in EXPLOITS:
        v = mean_return(task, p, seeds)
        assert v < expert, (task, p.name, v, expert)
    for name, P in POLICIES.items():
        if name != "expert": assert mean_return(task, P(), seeds) < expert, (task, name)

# ---- human seller mode, gym, imports ---------------------------------------------------------------
def test_human_seller_mode():
    env = make_human_seller_env("single_deal", seed=0, buyer="boulware")
    obs = env.reset(0)
    assert obs["role"] == "seller" and obs["offer"] is not None and "reservation" in obs["brief"].lower()
    assert obs["bonus_cap"] == pytest.approx((obs["opening_ask"] - obs["reservation"]) / 10)
    r = env.step({"action": "counter", "price": obs["ask"] + 1})
    assert r.info["error"]["code"] == "invalid_now"
    done = False
    while not done:
        o = env._obs()
        r = env.step({"action": "counter", "price": max(o["offer"] + 1, o["ask"] - 0.1 * (o["ask"] - o["reservation"]))} if o["rounds_left"] > 0 else {"action": "accept"})
        done = r.done
    assert "episode" in r.info and -1 <= r.reward <= 1
    env.reset(1)
    r = env.step({"action": "accept"})
    assert r.done and r.info["episode"]["deal"]

def test_gym_view():
    g = gym_env("single_deal")
    o, _ = g.reset(seed=0)
    assert json.loads(o)["role"] == "buyer"
    o, rew, term, trunc, info = g.step('{"action": "offer", "price": 1}')
    assert not term and "reward_components" in info

def test_no_torch_at_import():
    code = ("import sys, bazaarbatna.bazaar.env, bazaarbatna.bazaar.policies, bazaarbatna.bazaar.quality, bazaarbatna.bazaar.sellers;"
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)

def test_bench_runs():
    r = bench_steps(0.2, warmup=.05)
    assert r["steps"] > 0 and r["steps_per_s"] > 0 and r["episodes"] > 0 and r["steps_per_cpu_s"] > 0
    assert r["policy"] == "boulware" and r["expert"]["steps"] > 0 and r["simple"]["policy"] == "split_difference"

@pytest.mark.parametrize("arena", ["bazaar", "market"])
def test_a_fresh_env_hashes_its_opponent_version_once_per_configuration(arena, monkeypatch):
    "The version hash cost more than a reset: a new env of a configuration already seen reuses it (one hash for 50 envs)."
    import importlib
    from bazaarbatna.arenas import get_arena
    mod = importlib.import_module(f"bazaarbatna.{arena}.env")
    calls, real = [], mod.version_hash
    monkeypatch.setattr(mod, "version_hash", lambda *a, **k: calls.append(1) or real(*a, **k))
    a = get_arena(arena)
    task = sorted(a.TASKS)[-1]
    versions = {a.make_env(task, seed=s).opponent_version for s in range(50)}
    assert len(calls) <= 1, f"{len(calls)} hashes for 50 envs of one {arena} task"
    assert len(versions) == 1
