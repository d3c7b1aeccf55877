"The agent's guards: any offer the model emits, once guarded, is a move the environment accepts."
from hypothesis import given, settings, strategies as st
from bazaarbatna.arenas import make_env, make_policy
from bazaarbatna.agents import guard_action

@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10_000), task=st.sampled_from(["single_deal", "career_10", "impatient_seller", "asymmetric_pressure"]),
       steps=st.integers(0, 4), price=st.floats(0.01, 1e7, allow_nan=False), scale=st.sampled_from([None, .3, .9, 1.0, 1.5, 10.0]))
def test_guarded_bazaar_offer_is_always_valid(seed, task, steps, price, scale):
    env, pol = make_env("bazaar", task, seed=seed), make_policy("bazaar", "expert")
    pol.reset(seed); obs = env.reset(seed=seed)
    for _ in range(steps):
        r = env.step(pol.act(obs))
        if r.done: return
        obs = r.observation
    p = price if scale is None else obs["ask"] * scale
    g = guard_action("bazaar", {"action": "offer", "price": p}, obs)
    assert g["price"] <= min(obs["ask"], obs["budget"]) or (obs["buyer_offers"] and g["price"] == obs["buyer_offers"][-1])
    if obs["buyer_offers"]: assert g["price"] >= obs["buyer_offers"][-1]
    r = env.step(g)
    assert "error" not in r.info, r.info

def test_guard_leaves_other_actions_and_arenas_alone():
    obs = make_env("bazaar", "single_deal", seed=1).reset(seed=1)
    for a in ({"action": "walk"}, {"action": "accept", "message": "ok"}):
        assert guard_action("bazaar", a, obs) is a
    assert guard_action("bazaar", "not json", obs) == "not json"
    mo = make_env("market", "single_trade", seed=1).reset(seed=1)
    own = next(b for b in mo["blocks"] if b["owner"] == mo["lab"])
    sell = {"action": "send_offer", "target": "L1", "block": own["id"], "payment": 1e6}
    assert guard_action("market", sell, mo) is sell                     # selling: any price
    theirs = next(b for b in mo["blocks"] if b["owner"] == "L1")
    buy = guard_action("market", {"action": "send_offer", "target": "L1", "block": theirs["id"], "payment": 1e6}, mo)
    assert buy["payment"] <= mo["budget"]
    r = make_env("market", "single_trade", seed=1)
    r.reset(seed=1)
    assert "payment" not in (r.step(buy).info.get("error") or {}).get("field", "")
