"The arenas as TRL `environment_factory` environments: tools built from the action schemas, rewards equal to the env's, and one real GRPOTrainer step on the embedded model."
import inspect, os, tempfile
import pytest
from transformers.utils import get_json_schema
from bazaarbatna.arenas import get_arena, make_env, make_policy
from bazaarbatna.tools import BazaarTools, MarketTools, tool_prompts, tool_chat_template

ENVS = {"bazaar": BazaarTools, "market": MarketTools}

@pytest.mark.parametrize("arena", ["bazaar", "market"])
def test_every_action_is_a_tool_with_a_schema(arena):
    schema, cls = get_arena(arena).ACTION_SCHEMA, ENVS[arena]
    public = {n for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction) if not n.startswith("_")} - {"reset", "get_reward"}
    assert public == set(schema.actions)   # what TRL exposes as tools: exactly the actions
    for name, fields in schema.actions.items():
        s = get_json_schema(getattr(cls(), name))["function"]
        assert s["name"] == name and s["description"]
        fs = (*fields, *schema.common)
        assert set(s["parameters"]["properties"]) == {f.name for f in fs}
        assert set(s["parameters"].get("required", [])) == {f.name for f in fs if f.required}

@pytest.mark.parametrize("arena,task", [("bazaar", "single_deal"), ("bazaar", "career_10"), ("market", "single_trade"), ("market", "market_round")])
def test_tool_episode_returns_what_the_env_returns(arena, task):
    "The expert played through the tools scores exactly what it scores on the env."
    for seed in (0, 1):
        tools, env = ENVS[arena](), make_env(arena, task, seed)
        obs, pol, total = env.reset(seed), make_policy(arena, "expert"), 0.0
        pol.reset(seed)
        text = tools.reset(task=task, seed=seed)
        assert text == get_arena(arena).render_observation(obs)
        done = False
        while not done:
            a = pol.act(obs)
            a = a if isinstance(a, dict) else get_arena(arena).ACTION_SCHEMA.parse(a)
            r = env.step(a); obs, done, total = r.observation, r.done, total + r.reward
            getattr(tools, a["action"])(**{k: v for k, v in a.items() if k != "action"})
        assert tools.get_reward() == pytest.approx(total, abs=1e-12)

def test_unfinished_episode_is_closed_and_refused_actions_cost_the_penalty():
    t = BazaarTools(); t.reset(task="single_deal", seed=2)
    assert "invalid" in t.offer(price=-1.0)
    r = t.get_reward()
    env = make_env("bazaar", "single_deal", 2); env.reset(2)
    assert r == pytest.approx(env.step({"action": "offer", "price": -1.0}).reward + env.step({"action": "walk"}).reward)
