"LLM seller on the real embedded model (SmolLM2-135M): the rules make every move, the model's words state the price actually offered or none, and the hard rules hold. Slow: loads the model."
import math
import pytest
from bazaarbatna.bazaar.env import make_env
from bazaarbatna.bazaar.sellers import LLMSeller, leaks_reservation, numbers_in

pytestmark = pytest.mark.slow

@pytest.fixture(scope="module")
def seller():
    from bazaarbatna.models import load_model
    model, tok = load_model("embedded")
    return LLMSeller(model, tok, max_new_tokens=32)

class ScriptedBuyer:
    "Offers the given fractions of the opening ask; in the last round `final` ('final_min') offers the seller's final-round point."
    name = "scripted"
    def __init__(self, env, fracs, final=None): self.env, self.fracs, self.final = env, fracs, final
    def reset(self, seed): self.k = 0
    def act(self, obs):
        s, k = self.env.s, self.k; self.k += 1
        last = obs["round"] + 1 >= obs["max_rounds"]
        p = s.final_min if last and self.final == "final_min" else round(self.fracs[min(k, len(self.fracs) - 1)] * obs["opening_ask"], 2)
        p = max(p, obs["buyer_offers"][-1] if obs["buyer_offers"] else 0)
        return {"action": "offer", "price": p, "message": "Bhai, thoda kam karo. I have seen it cheaper, 3 other shops."}

def play(env, buyer, seed):
    obs, done = env.reset(seed), False; buyer.reset(seed)
    while not done:
        r = env.step(buyer.act(obs)); obs, done = r.observation, r.done
        assert "error" not in r.info
    return r.info["episode"]

def check(env):
    "The hard rules, and every seller line after the opening names no price but the one its move offers. Returns the model-written lines."
    s, turns = env.s, env.transcript.turns
    prev, ask, model_lines = math.inf, s.ask0, []
    for t in turns:
        if t.speaker != "seller": continue
        assert not leaks_reservation(t.message, s.reservation, s.tick), t.message            # never reveals it
        if t.action in ("ask", "counter"):
            assert t.price <= prev, (t.price, prev)                                           # monotone concessions
            assert t.price >= s.floor > s.reservation                                         # never counters below it
            prev = t.price
        if t.action == "accept": assert t.price >= s.reservation                              # never accepts below it
        if t.action != "ask":
            assert t.data["words"] in ("model", "template") and t.data["raw"]                 # the model was asked
            offered = t.price if t.action in ("counter", "accept") else None
            prices = [x for x in numbers_in(t.message) if x >= ask / 10]
            assert all(abs(x - offered) <= s.tick / 2 for x in prices) if offered is not None else not prices, (t.action, t.price, t.message)
            if t.data["words"] == "model": model_lines.append(t.message)
        if t.action in ("ask", "counter"): ask = t.price
    return model_lines

def test_llm_seller_moves_by_the_rules_in_its_own_words(seller):
    # at most eight generations in all (two turns an episode, two tries a turn), to stay within minutes on a 2-core CPU
    # episode 1: the last offer is exactly the seller's final-round point: the rules take it, whatever the model would say
    env = make_env("single_deal", personas=("default",), seller=seller, max_rounds=2)
    ep = play(env, ScriptedBuyer(env, (.4,), final="final_min"), 0)
    lines = check(env)
    assert ep["deal"] and ep["price"] == env.s.final_min and ep["reason"] == "deal_seller_accepted"
    # episode 2: a lowballer that never reaches the reservation: counters (or a walk), never a deal below it
    env = make_env("deceptive_seller", seller=seller, max_rounds=2)
    ep = play(env, ScriptedBuyer(env, (.3, .35)), 1)
    lines += check(env)
    assert not ep["deal"]                              # 0.35 of the ask is below every deceptive seller's reservation
    assert lines, "the model wrote no line that fits its move"   # the words are the model's where they fit
