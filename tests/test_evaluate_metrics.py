"Evaluation statistics against hand-computed cases, bootstrap coverage on synthetic data, and the seed split."
import math
import numpy as np
import pytest
from bazaarbatna.evaluate import (TRAIN_SEEDS, EVAL_SEEDS, check_seed_split, seed_split, parse_seeds, bootstrap_ci,
                                  summarize, paired_difference, rank_policies, format_table, markdown_table)

def rec(policy, seed, reward, utility=0.0, deal=False, rounds=1, n_actions=1, n_invalid=0, n_invalid_json=0, task="t"):
    return dict(arena="a", task=task, policy=policy, seed=seed, reward=reward, utility=utility, deal=deal, rounds=rounds,
                n_actions=n_actions, n_invalid=n_invalid, n_invalid_json=n_invalid_json, opponent_version="v")

def test_train_and_eval_seeds_are_disjoint():
    assert check_seed_split()
    assert not set(TRAIN_SEEDS) & set(EVAL_SEEDS)
    assert len(EVAL_SEEDS) == 48 and len(TRAIN_SEEDS) >= 1000   # the design's validation range: 100000-100047
    assert all(seed_split(s) == "eval" for s in parse_seeds("eval:48"))
    assert seed_split(100_048) == "other"
    with pytest.raises(ValueError, match="ask for 1..48 eval seeds"): parse_seeds("eval:49")
    assert all(seed_split(s) == "train" for s in parse_seeds("train:50"))
    with pytest.raises(ValueError, match="both training and evaluation"): check_seed_split(range(10), range(9, 12))

def test_summary_matches_hand_computation():
    rs = [rec("p", 0, 0.5, 0.5, True, 2, 4, 1, 1), rec("p", 1, -0.1, 0.0, False, 8, 6, 3, 0),
          rec("p", 2, 0.8, 0.8, True, 3, 2, 0, 0), rec("p", 3, 0.2, 0.4, True, 5, 8, 0, 0)]
    (row,) = summarize(rs)
    assert row["n"] == 4 and row["seeds"] == 4
    assert row["reward_mean"] == pytest.approx(1.4 / 4)
    # sample std: deviations 0.15, -0.45, 0.45, -0.15 -> sum sq 0.45 -> /3 = 0.15
    assert row["reward_std"] == pytest.approx(math.sqrt(0.15))
    assert row["utility_mean"] == pytest.approx(1.7 / 4)
    assert row["deal_rate"] == pytest.approx(0.75)
    assert row["rounds_mean"] == pytest.approx(4.5)
    assert row["invalid_action_rate"] == pytest.approx(4 / 20)       # pooled over the 20 actions
    assert row["valid_json_rate"] == pytest.approx(1 - 1 / 20)
    for m in ("reward", "utility", "deal_rate", "rounds", "valid_json_rate", "invalid_action_rate"):
        assert row[f"{m}_ci_lo"] <= row[f"{m}_ci_hi"]
    assert -0.1 <= row["reward_ci_lo"] <= row["reward_mean"] <= row["reward_ci_hi"] <= 0.8

def test_single_episode_and_constant_groups():
    (row,) = summarize([rec("p", 0, 0.25)])
    assert row["reward_std"] == 0.0 and (row["reward_ci_lo"], row["reward_ci_hi"]) == (0.25, 0.25)
    assert all(math.isnan(x) for x in bootstrap_ci([]))

def test_bootstrap_is_seeded_and_narrows_with_n():
    x = np.random.default_rng(1).normal(size=50)
    assert bootstrap_ci(x, seed=3) == bootstrap_ci(x, seed=3)
    lo, hi = bootstrap_ci(x)
    lo4, hi4 = bootstrap_ci(np.tile(x, 4))
    assert hi4 - lo4 < hi - lo

@pytest.mark.parametrize("dist", ["normal", "bernoulli"])
def test_bootstrap_ci_covers_the_true_mean(dist):
    rng = np.random.default_rng(12345)
    n, trials, hits = 40, 200, 0
    for i in range(trials):
        if dist == "normal": x, mu = rng.normal(0.3, 1.0, n), 0.3
        else: x, mu = (rng.random(n) < 0.6).astype(float), 0.6
        lo, hi = bootstrap_ci(x, n_boot=1000, seed=i)
        hits += lo <= mu <= hi
    assert hits / trials >= 0.90, f"coverage {hits / trials:.3f}"

def test_the_same_records_in_any_order_give_the_same_intervals():
    "`eval` summarizes records in the order they finished, `report` in file order: both must print the same CIs."
    rng = np.random.default_rng(7)
    rs = [rec(p, s, float(rng.normal(.3, .4)), n_actions=int(rng.integers(3, 9)), n_invalid=int(rng.integers(0, 3)))
          for p in ("a", "b") for s in range(30)]
    shuffled = [rs[i] for i in rng.permutation(len(rs))]
    assert summarize(shuffled) == summarize(rs)
    assert paired_difference(shuffled, "a", "b") == paired_difference(rs, "a", "b")

def test_weighted_bootstrap_equals_pooled_rate_on_full_sample():
    x, w = np.array([0.5, 0.0, 0.25]), np.array([4, 6, 4])
    lo, hi = bootstrap_ci(x, w)
    assert lo <= (x * w).sum() / w.sum() <= hi

def test_paired_difference_hand_case():
    rs = [rec("a", s, r) for s, r in enumerate([1.0, 0.5, 0.2, 0.9])] + \
         [rec("b", s, r) for s, r in enumerate([0.5, 0.5, 0.4, 0.1])] + [rec("b", 99, 5.0)]
    d = paired_difference(rs, "a", "b")
    assert (d["n"], d["wins"], d["ties"], d["losses"]) == (4, 2, 1, 1)
    assert d["mean_diff"] == pytest.approx((0.5 + 0 - 0.2 + 0.8) / 4)
    assert -0.2 <= d["ci_lo"] <= d["mean_diff"] <= d["ci_hi"] <= 0.8
    rev = paired_difference(rs, "b", "a")
    assert rev["mean_diff"] == pytest.approx(-d["mean_diff"])
    # pairs are per (task, seed): the same seed on another task is another pair
    rs2 = rs + [rec("a", 0, 0.0, task="u"), rec("b", 0, 1.0, task="u")]
    assert paired_difference(rs2, "a", "b")["n"] == 5

def test_ranking_and_tables():
    rs = [rec("lo", s, 0.1 * s) for s in range(3)] + [rec("hi", s, 1 + 0.1 * s) for s in range(3)]
    rk = rank_policies(rs)
    assert [(r["rank"], r["policy"]) for r in rk] == [(1, "hi"), (2, "lo")]
    t = format_table(rk)
    lines = t.splitlines()
    assert lines[0].split()[:4] == ["rank", "arena", "task", "policy"] and len(lines) == 4
    assert "+1.100 ± 0.100" in t
    assert len({len(l) for l in lines[:2]}) == 1       # header and rule line up
    assert markdown_table(rk).count("\n") == 3
    assert format_table([]) == "(no rows)"
