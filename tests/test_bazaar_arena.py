"Bazaar arena (several buyer policies, one listing): fuzzing one buyer, determinism, seller rules, winners, rewards, the CLI."
import json, math, random, subprocess, sys
from pathlib import Path
import pytest
from bazaarbatna.core import ERROR_CODES, INVALID_ACTION_PENALTY, MAX_INVALID_ACTIONS
from bazaarbatna.bazaar.env import TASKS, make_env, NO_DEAL_PENALTY, SHAPING_WEIGHT
from bazaarbatna.bazaar.policies import POLICIES
from bazaarbatna.bazaar.sellers import leaks_reservation, says_only
from bazaarbatna.bazaar.arena import MarketplaceArena, CLOSINGS, play_arena, arena_report, closing

ALL = list(POLICIES)
SINGLE_DEAL = [t for t, c in TASKS.items() if c.n_deals == 1]

def garbage(rng, obs):
    "A malformed or currently invalid buyer action."
    ask, budget, last = obs["ask"], obs["budget"], (obs["buyer_offers"] or [None])[-1]
    pool = ["", "thirty rupees", "{", "[]", "null", '{"action": "offer", "price": NaN}', "offer 30", None, 42, 3.5, [1, 2],
            {"action": "offer"}, {"action": "offer", "price": -3}, {"action": "offer", "price": 0}, {"action": "offer", "price": "30"},
            {"action": "offer", "price": float("nan")}, {"action": "offer", "price": float("inf")}, {"action": "offer", "price": True},
            {"action": "offer", "price": 1e13}, {"action": "offer", "price": budget * 1.5 + 1}, {"action": "haggle", "price": 3},
            {"action": "offer", "price": 10, "message": "x" * 501}, {"action": 7}, {"price": 10}, {"action": "offer", "price": [10]},
            '{"action": "offer", "price": 1e400}', 'sure! {"action": "dance"} ok']
    if last is not None and last > .02: pool.append({"action": "offer", "price": last / 2})   # offers may only rise
    if ask > budget: pool.append({"action": "accept"})                                          # cannot afford the ask
    return rng.choice(pool)

def run(arena, pols, seed, fuzz=None, fuzz_rate=1.0, frng=None):
    "Play one episode; `fuzz` names a buyer that sends garbage with probability `fuzz_rate`. Returns per-buyer returns and results."
    obs = arena.reset(seed)
    for p in pols.values(): p.reset(seed)
    rets, last, steps = {a: 0.0 for a in arena.possible_agents}, {}, 0
    while arena.agents:
        acts, sent_bad = {}, set()
        for a in arena.agents:
            if a == fuzz and frng.random() < fuzz_rate: acts[a] = garbage(frng, obs[a]); sent_bad.add(a)
            else: acts[a] = pols[a].act(obs[a])
        before = {a: (list(arena.seats[a].s.buyer_offers), arena.seats[a].s.budget) for a in sent_bad}
        res = arena.step(acts)
        for a, r in res.items():
            assert math.isclose(r.reward, sum(r.info["reward_components"].values()), abs_tol=1e-12)
            assert -1.0 <= r.reward <= 1.2
            rets[a] += r.reward; obs[a] = r.observation; last[a] = r
            if a in sent_bad:
                err = r.info["error"]
                assert err["code"] in ERROR_CODES and err["message"], err
                assert r.info["reward_components"]["invalid_action"] == INVALID_ACTION_PENALTY
                assert r.observation["last_error"] == err
                assert (arena.seats[a].s.buyer_offers, arena.seats[a].s.budget) == before[a]   # nothing of that buyer changed
            else: assert "error" not in r.info, r.info
        steps += 1
        assert steps <= arena.task.max_rounds + MAX_INVALID_ACTIONS + 1
    return rets, last

def seat_pols(names):
    return {f"buyer_{i}": POLICIES[n]() for i, n in enumerate(names)}

def test_fuzz_one_buyer_while_others_play():
    frng = random.Random(0)
    for seed in range(60):
        names = [ALL[(seed + i) % len(ALL)] for i in range(4)]
        arena, pols = MarketplaceArena(4, seed=seed), seat_pols(names)
        fuzz = f"buyer_{seed % 4}"
        rate = (1.0, .5, .2)[seed % 3]
        rets, last = run(arena, pols, seed, fuzz=fuzz, fuzz_rate=rate, frng=frng)
        ep = last[fuzz].info["episode"]
        assert ep["closed"] in CLOSINGS
        if ep["reason"] == "invalid_actions":
            assert last[fuzz].info.get("truncated") and ep["closed"] == "timeout" and arena.seats[fuzz].s.invalid == MAX_INVALID_ACTIONS
        if rate == 1.0: assert ep["closed"] != "won" and not arena.seats[fuzz].s.buyer_offers   # it never made a valid move
        assert not arena.agents and arena.transcript.meta["outcome"]

def test_all_invalid_round_changes_nothing():
    arena = MarketplaceArena(3, seed=7)
    obs = arena.reset(7)
    arena.step({a: {"action": "offer", "price": round(o["ask"] * .5, 2)} for a, o in obs.items()})
    snap = arena.snapshot()
    state = lambda: (arena.round, arena.house.s.last_ask, list(arena.house.s.seller_offers), arena.house.rng.getstate(),
                     {a: (list(e.s.buyer_offers), e.s.t, e.s.last_ask, e.s.budget, e.s.done) for a, e in arena.seats.items()})
    s0 = state()
    res = arena.step({"buyer_0": "nope", "buyer_1": {"action": "offer", "price": 1.0}, "buyer_2": {"action": "walkk"}})
    test = {a: r.info["error"]["code"] for a, r in res.items()}
    assert test == {"buyer_0": "not_json", "buyer_1": "invalid_now", "buyer_2": "unknown_action"}
    assert all(r.reward == INVALID_ACTION_PENALTY and not r.done for r in res.values())
    assert state() == s0 and all(e.s.invalid == 1 for e in arena.seats.values())
    arena.restore(snap)
    assert all(e.s.invalid == 0 for e in arena.seats.values())

def test_bad_calls_are_clear_errors():
    arena = MarketplaceArena(2, seed=1)
    with pytest.raises(ValueError, match="unknown buyers"): arena.step({"buyer_9": {"action": "walk"}})
    with pytest.raises(ValueError, match="must be a dict"): arena.step([{"action": "walk"}])
    with pytest.raises(ValueError, match="career"): MarketplaceArena(2, "career_10")
    with pytest.raises(ValueError, match="unknown bazaar task"): MarketplaceArena(2, "nope")
    arena.step({"buyer_0": {"action": "walk"}, "buyer_1": {"action": "walk"}})
    assert not arena.agents and arena.transcript.meta["outcome"].startswith("no sale")
    r = arena.step({"buyer_0": {"action": "walk"}})   # a closed buyer: the env's "episode is over" answer, no crash
    assert r["buyer_0"].done and r["buyer_0"].reward == 0.0 and r["buyer_0"].info["error"]["code"] == "invalid_now"

def test_same_seed_same_bytes_and_snapshots():
    names = ["expert", "boulware", "split_difference", "lowballer", "tit_for_tat"]
    for seed in range(10):
        a, b = play_arena(names, seed), play_arena(names, seed)
        assert a["transcript"].to_json() == b["transcript"].to_json() and a["outcomes"] == b["outcomes"]
    # branch from a mid-episode snapshot: the same moves give the same bytes
    arena, pols = MarketplaceArena(4, seed=3), seat_pols(names[:4])
    obs = arena.reset(3)
    for p in pols.values(): p.reset(3)
    obs = {a: r.observation for a, r in arena.step({a: pols[a].act(obs[a]) for a in arena.agents}).items()}
    snap, moves = arena.snapshot(), {a: {"action": "offer", "price": round(obs[a]["ask"] * .7, 2)} for a in arena.agents}
    arena.step(dict(moves)); j1 = arena.transcript.to_json()
    arena.restore(snap); arena.step(dict(moves))
    assert arena.transcript.to_json() == j1

@pytest.mark.parametrize("task", SINGLE_DEAL)
def test_one_buyer_is_the_single_env(task):
    "One seller implementation: a one-buyer arena steps exactly like the single-buyer env (without scripted rivals)."
    for name, P in POLICIES.items():
        for seed in range(8):
            env, arena, p1, p2 = make_env(task, n_rivals=0), MarketplaceArena(1, task, seed, budget_spread=0), P(), P()
            o1, o2 = env.reset(seed), arena.reset(seed)["buyer_0"]; p1.reset(seed); p2.reset(seed)
            assert o1 == o2
            while not o1["done"]:
                r1, r2 = env.step(p1.act(o1)), arena.step({"buyer_0": p2.act(o2)})["buyer_0"]
                assert (r1.observation, r1.reward, r1.done, r1.info["reward_components"]) == \
                       (r2.observation, r2.reward, r2.done, r2.info["reward_components"])
                o1, o2 = r1.observation, r2.observation
            assert env.transcript.turns == arena.seats["buyer_0"].transcript.turns

def test_seller_rules_and_winner_reached_the_price():
    sold = 0
    for seed in range(150):
        k = 2 + seed % 6
        names = [ALL[(seed + i) % len(ALL)] for i in range(k)]
        res = play_arena(names, seed, task=("marketplace_arena", "impatient_seller", "single_deal")[seed % 3])
        tr, m = res["transcript"], res["transcript"].meta
        asks = [t.price for t in tr.turns if t.speaker == "seller" and t.action in ("ask", "counter")]
        assert asks == sorted(asks, reverse=True)                        # monotone concessions
        assert not any(leaks_reservation(t.message, res["reservation"], res["tick"]) for t in tr.turns if t.speaker == "seller")
        wins = [o for o in res["outcomes"] if o["closed"] == "won"]
        assert len(wins) == (m["winner"] is not None) <= 1
        if not wins: continue
        sold += 1
        w = wins[0]
        assert w["buyer"] == m["winner"] and w["price"] == m["price"] >= res["reservation"] and w["price"] <= w["budget"]
        r = w["round"]
        moves = {t.speaker: t for t in tr.turns if t.round == r and t.speaker.startswith("buyer_") and t.action != "invalid"}
        ask = asks[-1]   # the ask standing when the winning round was played
        mv = moves[w["buyer"]]
        met = [b for b, t in moves.items() if t.action == "accept" or (t.action == "offer" and t.price >= ask)]
        if met:   # someone met the ask: the seller sold at its ask to one of them
            assert w["buyer"] in met and w["price"] == ask
            if len(met) > 1: assert any(t.action == "lottery" and set(t.data["tied"]) == set(met) for t in tr.turns)
        else:     # the seller accepted the best bid of the round
            assert mv.action == "offer" and w["price"] == mv.price == max(t.price for t in moves.values() if t.action == "offer")
        for o in res["outcomes"]:
            if o is not w: assert o["closed"] != "won" and (o["closed"] != "lost_to_rival" or o["sold_at"] == w["price"])
    assert sold > 100

def test_a_seller_counter_names_the_price_it_offers():
    "The rival anchor raises a counter before its words are written, so the message never names a lower price."
    counters = []
    for seed in range(60):
        env = make_env("marketplace_arena", seed=seed); obs = env.reset(seed); pol = POLICIES["expert"](); pol.reset(seed)
        while not obs["done"]: obs = env.step(pol.act(obs)).observation
        counters += [(t, env.s.tick) for t in env.transcript.turns if t.speaker == "seller" and t.action == "counter"]
        res = play_arena(["expert", "boulware", "split_difference"], seed)
        counters += [(t, res["tick"]) for t in res["transcript"].turns if t.speaker == "seller" and t.action == "counter"]
    assert len(counters) > 300
    bad = [(t.price, t.message) for t, tick in counters if not says_only(t.message, (t.price,), t.price, tick)]
    assert not bad, bad[:3]

def test_rewards_follow_the_surplus_formula():
    "Hand-checked case: seed 0, budgets [2260, 2340], cost 1267.85, ask 2290."
    arena = MarketplaceArena(2, seed=0, budget_spread=.1)
    obs = arena.reset(0)
    s = arena.house.s
    assert [o["budget"] for o in obs.values()] == [2260.0, 2340.0] and (s.cost, s.ask0) == (1267.85, 2290.0)
    r = arena.step({"buyer_0": {"action": "accept"}, "buyer_1": {"action": "accept"}})   # buyer_0 cannot afford the ask
    assert r["buyer_0"].info["error"]["code"] == "invalid_now" and r["buyer_1"].info["episode"]["closed"] == "won"
    u = (2340 - 2290) / (2340 - 1267.85)                                  # 0.0466353...
    assert math.isclose(r["buyer_1"].info["reward_components"]["deal"], u)
    assert math.isclose(r["buyer_1"].reward, u - SHAPING_WEIGHT * u)       # shaping: Φ(end) = 0 minus Φ(start) = 0.2 u
    assert math.isclose(r["buyer_1"].reward, 0.0373082, abs_tol=1e-6)
    assert r["buyer_0"].info["episode"]["closed"] == "lost_to_rival"       # budget below the ask: Φ = 0 throughout
    assert math.isclose(r["buyer_0"].reward, INVALID_ACTION_PENALTY + NO_DEAL_PENALTY)
    # over many episodes: each buyer's return = terminal surplus (or the no-deal penalty) - Φ(start), on its own budget
    for seed in range(40):
        names = [ALL[(seed + i) % len(ALL)] for i in range(4)]
        arena = MarketplaceArena(4, seed=seed)
        res = play_arena(names, seed, arena=arena)
        for o in res["outcomes"]:
            b, c, a0 = o["budget"], arena.house.s.cost, arena.house.s.ask0
            phi0 = SHAPING_WEIGHT * min(1.0, max(0.0, (b - a0) / (b - c)))
            term = min(1.0, max(0.0, (b - o["price"]) / (b - c))) if o["closed"] == "won" else NO_DEAL_PENALTY
            assert math.isclose(o["reward"], term - phi0, abs_tol=1e-9), (seed, o)

class TextBuyer:
    "A batched text policy (the LLM policy's interface): JSON text replies, every third one garbage."
    name = "text_buyer"
    def reset(self, seed): self.n, self.sizes = 0, []
    def act_batch(self, observations):
        out = []
        self.sizes.append(len(observations))
        for o in observations:
            self.n += 1
            p = max([round(o["ask"] * .8, 2)] + o["buyer_offers"][-1:])
            out.append("hmm, let me think" if self.n % 3 == 0 else f'Sure: {{"action": "offer", "price": {p}}}')
        return out

def test_batched_text_policies_share_one_call():
    tb = TextBuyer()
    res = play_arena([tb, "expert", tb, "boulware"], seed=5)
    assert [o["policy"] for o in res["outcomes"]] == ["text_buyer", "expert", "text_buyer", "boulware"]
    errs = [t for t in res["transcript"].turns if t.action == "invalid"]
    assert errs and all(t.data["error"]["code"] == "not_json" for t in errs)
    assert tb.sizes[0] == 2   # both of its seats answered in one call

def test_report_rotates_seats_and_writes_records(tmp_path):
    names = ["expert", "boulware", "split_difference", "lowballer"]
    rep = arena_report(names, seeds=range(12), out_dir=tmp_path)
    assert {r["policy"] for r in rep["policies"]} == set(names)
    for p in names: assert {r["seat"] for r in rep["episodes"] if r["policy"] == p} == {0, 1, 2, 3}
    for r in rep["policies"]:
        rows = [e for e in rep["episodes"] if e["policy"] == r["policy"]]
        assert r["n"] == 12 and sum(r[c] for c in CLOSINGS) == 12 and r["won"] == sum(e["closed"] == "won" for e in rows)
        assert math.isclose(r["reward"], sum(e["reward"] for e in rows) / 12, abs_tol=1e-4)
    saved = json.loads((tmp_path / "arena.json").read_text())
    assert saved["policies"] == rep["policies"] and saved["config"]["seeds"] == list(range(12))
    md = (tmp_path / "transcript.md").read_text()
    assert "seed 0" in md and "| buyer | policy | budget |" in md
    again = tmp_path / "again"
    arena_report(names, seeds=range(12), out_dir=again)
    assert (again / "arena.json").read_bytes() == (tmp_path / "arena.json").read_bytes()

def cli(*args):
    exe = Path(sys.executable).parent / "bazaarbatna"
    return subprocess.run([str(exe), *args], capture_output=True, text=True)

def test_cli_json_and_errors(tmp_path):
    out = cli("arena", "--policies", "expert,boulware,split_difference,lowballer", "--seeds", "0-3", "--json", "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    assert set(rep) >= {"config", "policies", "market", "episodes", "files"}
    assert len(rep["episodes"]) == 16 and {r["policy"] for r in rep["policies"]} == {"expert", "boulware", "split_difference", "lowballer"}
    assert all(set(r) >= {"seed", "policy", "closed", "round", "price"} for r in rep["episodes"])
    assert (tmp_path / "arena.json").exists() and (tmp_path / "transcript.md").exists()
    text = cli("arena", "--policies", "expert,lowballer", "--seeds", "0-1")
    assert text.returncode == 0 and "won" in text.stdout and "episodes:" in text.stdout
    for bad in (["--policies", "expert,haggler"], ["--policies", "expert"], ["--seeds", "a-b"], ["--task", "career_10"]):
        r = cli("arena", *bad)
        assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.startswith("bazaarbatna arena:"), (bad, r.stderr)
