"LLM seller on the real embedded model (SmolLM2-135M): the hard rules hold on what a model actually writes. Slow: loads the model."
import math
import pytest
from bazaarbatna.bazaar.env import make_env
from bazaarbatna.bazaar.sellers import LLMSeller, leaks_reservation

pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def seller():
    from bazaarbatna.models import load_model
    model, tok = load_model("embedded")
    return LLMSeller(model, tok, max_new_tokens=32)

class ScriptedBuyer:
    "Offers the given fractions of the opening ask; `at_reservation` makes one offer exactly at the seller's reservation."
    name = "scripted"
    def __init__(self, env, fracs, at_reservation=None): self.env, self.fracs, self.at = env, fracs, at_reservation
    def reset(self, seed): self.k = 0
    def act(self, obs):
        s, k = self.env.s, self.k; self.k += 1
        p = s.reservation if k == self.at else round(self.fracs[min(k, len(self.fracs) - 1)] * obs["opening_ask"], 2)
        p = max(p, obs["buyer_offers"][-1] if obs["buyer_offers"] else 0)
        return {"action": "offer", "price": p, "message": "Bhai, thoda kam karo. I have seen it cheaper, 3 other shops."}

def play(env, buyer, seed):
    obs, done = env.reset(seed), False; buyer.reset(seed)
    while not done:
        r = env.step(buyer.act(obs)); obs, done = r.observation, r.done
        assert "error" not in r.info
    return r.info["episode"]

def check_hard_rules(env):
    s, turns = env.s, env.transcript.turns
    prev, offer, n_model = math.inf, None, 0
    for t in turns:
        if t.speaker == "buyer": offer = t.price; continue
        if t.speaker != "seller": continue
        assert not leaks_reservation(t.message, s.reservation, s.tick), t.message            # never reveals it
        if t.action in ("ask", "counter"):
            assert t.price <= prev, (t.price, prev)                                           # monotone concessions
            assert t.price >= s.floor > s.reservation                                         # never counters below it
            prev = t.price
        if t.action == "accept": assert t.price >= s.reservation                              # never accepts below it
        if offer is not None and t.action != "ask" and offer >= s.reservation:
            assert t.action == "accept", (offer, s.reservation, t)                            # auto-accept at/above it
        n_model += "raw" in t.data
    return n_model

def test_llm_seller_keeps_hard_rules_with_real_model(seller):
    # at most four generations in all, to stay near a minute on a 2-core CPU (model load included)
    # episode 1: the first offer is exactly the reservation; whatever the model says, the seller must take it
    env = make_env("single_deal", personas=("default",), seller=seller, max_rounds=4)
    ep = play(env, ScriptedBuyer(env, (.4,), at_reservation=0), 0)
    assert check_hard_rules(env) == 1                  # the model really spoke (raw text recorded)
    assert ep["deal"] and ep["price"] == env.s.reservation and ep["reason"] == "deal_seller_accepted"
    # episode 2: a lowballer that never reaches the reservation: counters (or a walk), never a deal below it
    env = make_env("deceptive_seller", seller=seller, max_rounds=3)
    ep = play(env, ScriptedBuyer(env, (.3, .35, .4)), 1)
    assert check_hard_rules(env) >= 1
    assert not ep["deal"]                              # 0.4 of the ask is below every deceptive seller's reservation
