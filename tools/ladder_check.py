"""What the compact bazaar prompt's price ladder costs the SFT teacher: mean episode reward of the rule expert,
the expert on the ladder (`agents.LadderPolicy`) and the other scripted buyers, on held-out seeds; and why the
ladder is priced in % of the seller's current ask: the expert's offers as fractions of the ask, per round, on
training seeds, and what a buyer scores that offers those mean fractions and nothing else (`round_table`).

    python tools/ladder_check.py [--task single_deal] [--seeds 100] [--train-seeds 200]
"""
import argparse, statistics
from bazaarbatna.agents import LadderPolicy
from bazaarbatna.arenas import make_env, make_policy
from bazaarbatna.bazaar.policies import POLICIES, _offer
from bazaarbatna.evaluate import EVAL_SEEDS, TRAIN_SEEDS, run_episode

def mean_reward(policy, task, seeds):
    return statistics.mean(run_episode(make_env("bazaar", task, seed=s), policy, s)[0]["reward"] for s in seeds)

def offer_fractions(task, seeds):
    "round -> the expert's offers over the seller's current ask in that round, on `seeds`."
    out = {}
    for s in seeds:
        env, pol = make_env("bazaar", task, seed=s), make_policy("bazaar", "expert")
        pol.reset(s); obs, done = env.reset(seed=s), False
        while not done:
            a = pol.act(obs)
            if a["action"] == "offer": out.setdefault(obs["round"], []).append(a["price"] / obs["ask"])
            r = env.step(a); obs, done = r.observation, r.done
    return out

class RoundTable:
    "Offers a fixed fraction of the seller's current ask per round (the last fraction after the table ends)."
    name = "round_table"
    def __init__(self, fractions): self.fractions = fractions
    def reset(self, seed: int = 0): pass
    def act(self, obs):
        return _offer(obs, self.fractions[min(obs["round"], len(self.fractions) - 1)] * obs["ask"])

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="single_deal"); ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--train-seeds", type=int, default=200)
    a = ap.parse_args()
    seeds = list(EVAL_SEEDS[:a.seeds])
    fr = offer_fractions(a.task, list(TRAIN_SEEDS[:a.train_seeds]))
    print(f"bazaar/{a.task}, training seeds {TRAIN_SEEDS[0]}-{TRAIN_SEEDS[a.train_seeds - 1]}: the expert's offer / the seller's ask")
    for k in sorted(fr): print(f"  round {k}: {statistics.mean(fr[k]):.3f} ± {statistics.pstdev(fr[k]):.3f} ({len(fr[k])} offers)")
    table = [statistics.mean(fr[k]) for k in sorted(fr)]
    rows = [("expert_ladder", LadderPolicy(make_policy("bazaar", "expert"))), ("round_table", RoundTable(table))]
    rows += [(n, make_policy("bazaar", n)) for n in POLICIES]
    print(f"bazaar/{a.task}, eval seeds {seeds[0]}-{seeds[-1]}: mean episode reward")
    means = {name: mean_reward(pol, a.task, seeds) for name, pol in rows}
    for name, m in sorted(means.items(), key=lambda kv: -kv[1]): print(f"  {name:18s} {m:+.3f}")
