"Compact prompts: shorter, same facts (latest offers and asks, the last dialogue lines), and trained/evaluated consistently."
import pytest
from bazaarbatna.arenas import make_env, make_policy
import re
from bazaarbatna.agents import build_messages, compact_observation, compact_system_prompt, _THOUSANDS

def _mid_episode(task="single_deal", seed=3, steps=5):
    env, pol = make_env("bazaar", task, seed=seed), make_policy("bazaar", "expert")
    pol.reset(seed); obs = env.reset(seed=seed)
    for _ in range(steps):
        r = env.step(pol.act(obs))
        if r.done: break
        obs = r.observation
    return obs

@pytest.mark.parametrize("task", ["single_deal", "career_10", "read_the_tells", "deceptive_seller"])
def test_compact_bazaar_keeps_latest_facts(task):
    obs = _mid_episode(task)
    full, short = build_messages("bazaar", obs), build_messages("bazaar", obs, compact=True)
    assert sum(len(m["content"]) for m in short) < 0.75 * sum(len(m["content"]) for m in full)
    u = short[1]["content"]
    lines = {l.split(": ")[0]: _THOUSANDS.sub("", l) for l in full[1]["content"].splitlines() if ": " in l}
    for key in ("Your offers", "Seller's asks"):                                  # the latest entries survive
        if key in lines: assert lines[key].split(", ")[-1] in u
    assert lines["Seller's asks"].split(", ")[-1] in u and len(u.splitlines()) <= len(full[1]["content"].splitlines())
    talk = [l for l in u.splitlines() if l.startswith("  buyer") or l.startswith("  seller")]
    assert len(talk) <= 2

@pytest.mark.parametrize("task", ["single_trade", "market_round", "coalition_market", "shock_storm"])
def test_compact_market_lists_every_action(task):
    from bazaarbatna.arenas import get_arena
    sp = compact_system_prompt("market")
    for name in get_arena("market").ACTION_SCHEMA.actions: assert f'"action": "{name}"' in sp
    obs = make_env("market", task, seed=1).reset(seed=1)
    assert len(build_messages("market", obs, compact=True)[0]["content"]) < len(build_messages("market", obs)[0]["content"]) / 2

def test_compact_observation_is_idempotent_and_never_grows():
    t = "Your offers: $1, $2, $3, $4, $5, $6\n  buyer: a\n  seller: b\n  buyer: c\nTells: x"
    c = compact_observation(t)
    assert compact_observation(c) == c and len(c) < len(t) and c.endswith("Tells: x")

def test_training_and_eval_use_the_same_prompt():
    from bazaarbatna.train.sft import expert_samples
    from bazaarbatna.train.grpo import build_grpo_dataset
    s = expert_samples("bazaar", ["single_deal"], seeds=[0], compact=True)[0]
    obs = make_env("bazaar", "single_deal", seed=0).reset(seed=0)
    assert s["prompt"] == build_messages("bazaar", obs, compact=True)
    ds, states = build_grpo_dataset(("bazaar",), n_seeds=1, max_per_episode=1, tasks={"bazaar": ["single_deal"]}, compact=True)
    assert ds[0]["prompt"] == build_messages("bazaar", states[ds[0]["state_id"]].obs, compact=True)

@pytest.mark.parametrize("task", ["single_deal", "career_10", "impatient_seller", "marketplace_arena"])
def test_compact_prices_have_no_thousands_separators(task):
    "A model copies numbers from its prompt: they must already be JSON numbers (not `38,600`)."
    for seed in range(6):
        obs = _mid_episode(task, seed=seed, steps=2)
        u = build_messages("bazaar", obs, compact=True)[1]["content"]
        assert not re.search(r"\d,\d", u), u
        for p in [obs["ask"], obs["budget"], *obs["buyer_offers"][-2:]]:
            assert f"{p:.0f}" in u or f"{p:.2f}" in u
    assert compact_observation("Your offers: $38, $40, ₹1,250,000") == "Your offers: $38, $40, ₹1250000"

def _ids_line_parts(line):
    "{'allocate': [...], 'reserve': [...], ...} from a `market_moves_line`."
    parts = {}
    for part in line.removeprefix("Ids now: ").split(" | "):
        key = next(k for k in ("allocate", "reserve", "sell yours", "buy from owner", "inbox offers") if part.startswith(k + " "))
        rest = part[len(key) + 1:]
        parts[key] = [] if rest == "none" else rest.split(", ")
    return parts

@pytest.mark.parametrize("task", ["single_trade", "market_round", "coalition_market", "shock_storm"])
def test_market_ids_line_only_offers_moves_the_env_accepts(task):
    "Every move the 'Ids now' line names, tried on a restored copy of the state, is accepted (random walk over states)."
    from bazaarbatna.agents import market_moves_line
    tried = {}
    for seed in range(6):
        env, pol = make_env("market", task, seed=seed), make_policy("market", "random_valid")
        pol.reset(seed); obs = env.reset(seed=seed)
        for _ in range(40):
            line = market_moves_line(obs)
            parts = _ids_line_parts(line)
            assert set(parts) == {"allocate", "reserve", "sell yours", "buy from owner", "inbox offers"}, line
            moves = [{"action": "allocate_to_job", "job": p.split("+")[0], "block": p.split("+")[1]} for p in parts["allocate"]]
            moves += [{"action": "reserve_capacity", "block": p.split(" ")[0]} for p in parts["reserve"]]
            other = next((l["id"] for l in obs["labs"]), None)
            moves += [{"action": "send_offer", "target": other, "block": b, "payment": 1} for b in parts["sell yours"] if other]
            pay = round(min(0.5, obs["budget"]), 2)                 # a buy offer the budget covers
            moves += [{"action": "send_offer", "target": p.split("@")[1], "block": p.split("@")[0], "payment": pay}
                      for p in parts["buy from owner"] if pay > 0]
            moves += [{"action": "reject_offer", "offer": o, "message": "no"} for o in parts["inbox offers"]]
            snap = env.snapshot()
            for m in moves:
                r = env.step(m)
                err = r.info.get("error")
                assert err is None or "energy" in str(err), (task, seed, line, m, err)   # only a too-high energy bill may refuse
                tried[m["action"]] = tried.get(m["action"], 0) + 1
                env.restore(snap)
            r = env.step(pol.act(obs))
            if r.done: break
            obs = r.observation
    assert tried.get("allocate_to_job") and tried.get("send_offer") and tried.get("reject_offer"), tried
