"DPO stage: the heuristic judge's ordering, and pairs built at the first divergence of two rollouts of one scenario."
import json
import pytest
from hypothesis import given, strategies as st
from bazaarbatna.train.dpo import judge_episodes, is_deal, pair_from_episodes, preference_pairs

price = st.floats(1, 1000, allow_nan=False)
episode = st.one_of(
    st.builds(lambda p, who: {"deal": True, "price": p, "reason": f"deal_{who}_accepted"}, price, st.sampled_from(["buyer", "seller"])),
    st.builds(lambda r: {"deal": False, "price": None, "reason": r}, st.sampled_from(["buyer_walked", "seller_walked", "timeout", "invalid_actions"])))

@given(episode, episode)
def test_judge_antisymmetric(a, b):
    assert judge_episodes(a, b) == -judge_episodes(b, a)

@given(episode, episode, episode)
def test_judge_transitive(a, b, c):
    if judge_episodes(a, b) >= 0 and judge_episodes(b, c) >= 0: assert judge_episodes(a, c) >= 0

@given(episode, episode)
def test_deal_beats_no_deal_then_price(a, b):
    w = judge_episodes(a, b)
    if is_deal(a) and not is_deal(b): assert w == 1
    if is_deal(a) and is_deal(b): assert w == (0 if a["price"] == b["price"] else 1 if a["price"] < b["price"] else -1)
    if not is_deal(a) and not is_deal(b): assert w == 0

def test_deal_recognised_from_reason_alone():
    assert is_deal({"reason": "deal_buyer_accepted"}) and is_deal({"deal": True}) and not is_deal({"reason": "timeout"})

class Toy:
    "Batched stand-in: the hot buyer accepts sooner (dearer)."
    name, temperature, last_replies = "toy", 0.3, []
    def reset(self, seed): pass
    def act_batch(self, observations):
        self.last_replies = [json.dumps({"action": "accept"}) if o["ask"] <= o["opening_ask"] * (.75 + self.temperature / 5) or o["rounds_left"] <= 1
                             else json.dumps({"action": "offer", "price": round(o["opening_ask"] / 2 + o["round"], 2)}) for o in observations]
        return self.last_replies

def test_pairs_share_the_prompt_and_prefer_the_judged_winner():
    from bazaarbatna.agents import rollout_batch, build_messages
    pol, seeds = Toy(), [0, 1, 2, 3]
    runs = []
    for t in (0.3, 1.0):
        pol.temperature = t
        runs.append(rollout_batch("bazaar", "single_deal", seeds, pol, progress=False, keep_transcripts=False, keep_steps=True))
    n = 0
    for a, b in zip(*runs):
        p = pair_from_episodes("bazaar", a, b)
        if p is None: continue
        n += 1
        k = next(i for i, (x, y) in enumerate(zip(a["steps"], b["steps"])) if x["reply"] != y["reply"])
        assert all(x["obs"] == y["obs"] for x, y in zip(a["steps"][:k + 1], b["steps"][:k + 1]))   # same prompt up to the pair
        assert p["prompt"] == build_messages("bazaar", a["steps"][k]["obs"])
        winner = a if judge_episodes(a["episode"], b["episode"]) > 0 else b
        assert p["chosen"][0]["content"] == winner["steps"][k]["reply"]
    assert n >= 1
    pairs, counts = preference_pairs("bazaar", Toy(), ["single_deal"], seeds, progress=False)
    assert counts["pairs"] == n and counts["pairs"] + counts["ties"] == len(seeds)

def test_temperature_restored_after_pairs():
    pol = Toy(); pol.temperature = 0.7
    preference_pairs("bazaar", pol, ["single_deal"], [0], progress=False)
    assert pol.temperature == 0.7
