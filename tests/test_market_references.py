"""The market's references (issue 28, item 3): `tuned` (the expert's thresholds fitted per task on training seeds) and
`oracle` (a lab that plans on a private copy of the episode), built by name and kept out of the scripted field."""
import json
from pathlib import Path
import pytest
import bazaarbatna
from bazaarbatna.arenas import get_arena, make_policy
from bazaarbatna.evaluate import VALID_SEEDS, TRAIN_SEEDS
from bazaarbatna.market.env import TASKS, make_env
from bazaarbatna.market.policies import (POLICIES, REFERENCES, EXPERT_PARAMS, TUNED_FILE, Expert, Oracle, Tuned,
                                         run_episode)


def test_references_are_built_by_name_and_kept_out_of_the_field():
    a = get_arena("market")
    assert set(a.REFERENCES) == {"tuned", "oracle"} and not set(a.REFERENCES) & set(a.POLICIES)
    assert isinstance(make_policy("market", "tuned"), Tuned) and isinstance(make_policy("market", "oracle"), Oracle)


@pytest.mark.parametrize("task", sorted(TASKS))
def test_oracle_scores_at_least_the_expert_on_every_seed(task):
    "The expert's own move is always in the oracle's family, and the market is deterministic: never below the expert."
    gains = []
    for s in VALID_SEEDS[:6]:
        orc = Oracle(s)
        o, e = run_episode(orc, task, s)[1], run_episode("expert", task, s)[1]
        assert not orc.lost and o >= e - 1e-9, (task, s, o, e)
        gains.append(o - e)
    assert max(gains) > 0, gains                 # and it finds more than the expert somewhere


def test_oracle_out_of_step_plays_as_the_expert():
    "In an env made with other settings its private copy shows another episode: it notices and plays the expert's moves."
    s, env = 100_003, make_env("market_round", 100_003, max_rounds=8)
    orc, exp = Oracle(s), Expert(s)
    obs = env.reset(s)
    a = orc.act(obs)
    assert orc.lost and a == exp.act(obs)


def test_shipped_fit_matches_todays_market_and_its_seeds():
    shipped = json.loads((Path(bazaarbatna.__file__).parent / "data" / TUNED_FILE).read_text())
    assert set(shipped["tasks"]) == set(TASKS)
    for t, v in shipped["opponent_versions"].items(): assert make_env(t, 0).opponent_version == v, t
    lo, hi = shipped["seeds"]
    assert lo >= TRAIN_SEEDS[50_000] and hi in TRAIN_SEEDS        # training seeds past the ones SFT and GRPO use
    for p in shipped["tasks"].values(): assert set(p) == set(EXPERT_PARAMS)


def test_tuned_with_the_experts_thresholds_is_the_expert():
    for task in sorted(TASKS):
        s = VALID_SEEDS[1]
        a, b = run_episode(Tuned(s, dict(EXPERT_PARAMS)), task, s), run_episode("expert", task, s)
        assert a[2].transcript.to_dict()["turns"] == b[2].transcript.to_dict()["turns"]
