"The compact bazaar prompt's price ladder and its teacher, across every bazaar task."
import math, random, re
import pytest
from bazaarbatna.agents import build_messages, guard_action, teacher_policy
from bazaarbatna.bazaar.prompts import ladder_line, price_ladder, snap_to_ladder
from bazaarbatna.arenas import get_arena, make_env
from bazaarbatna.evaluate import TRAIN_SEEDS

TASKS = list(get_arena("bazaar").TASKS)

@pytest.mark.parametrize("task", TASKS)
def test_teacher_offers_are_printed_guarded_and_accepted(task):
    for seed in TRAIN_SEEDS[:6]:
        env, pol = make_env("bazaar", task, seed=seed), teacher_policy("bazaar", "expert", compact=True)
        pol.reset(seed); obs = env.reset(seed=seed)
        for _ in range(200):
            a = pol.act(obs)
            if a["action"] == "offer":
                lad = price_ladder(obs)
                assert a["price"] in [p for _, p in lad], (task, seed, a, lad)
                label, line = next(n for n, p in lad if p == a["price"]), ladder_line(obs)   # the rung, and the prompt's ladder line
                shown = [int(x) for x in re.findall(r"(\d+)% (?:to|of)", line)]              # its range: lowest and highest rung
                assert (label + "=") in line if not label.endswith("%") else shown[0] <= int(label[:-1]) <= shown[-1], (label, line)
                assert line in build_messages("bazaar", obs, compact=True)[1]["content"]
                assert guard_action("bazaar", a, obs)["price"] == a["price"]       # the ladder is inside the guard's range
            r = env.step(a)
            assert "error" not in r.info, (task, seed, a, r.info)
            obs = r.observation
            if r.done: break

def test_ladder_is_increasing_and_capped():
    rng = random.Random(0)
    for _ in range(2000):
        a0 = rng.choice([rng.uniform(1, 100), rng.uniform(100, 1e5)])
        ask, budget = a0 * rng.uniform(.5, 1), a0 * rng.uniform(.3, 1.2)
        prev = [round(min(ask, budget) * rng.uniform(0, 1), 2)] if rng.random() < .7 else []
        obs = {"opening_ask": a0, "ask": ask, "budget": budget, "buyer_offers": prev}
        prices = [p for _, p in price_ladder(obs)]
        assert prices == sorted(prices) and len(set(prices)) == len(prices)
        assert prices[-1] == round(min(ask, budget), 2)
        assert all(p >= prev[-1] for p in prices) if prev else True
        x = rng.uniform(0, 1.5 * a0)
        s = snap_to_ladder(x, obs)
        assert s in prices and (s >= x - 1e-9 or s == prices[-1])

@pytest.mark.parametrize("bad", [{}, {"ask": "x", "budget": 1}, {"ask": math.nan, "budget": 5}, {"opening_ask": 10, "ask": None, "budget": 5},
                                 {"ask": -1, "budget": 5}, {"ask": 5, "budget": math.inf}, {"ask": True, "budget": 5}])
def test_no_ladder_without_prices(bad):
    assert price_ladder(bad) == [] and ladder_line(bad) == "" and snap_to_ladder(7.5, bad) == 7.5
