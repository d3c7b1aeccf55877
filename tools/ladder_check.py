"""What the compact bazaar prompt's price ladder costs the SFT teacher: mean episode reward of the rule expert,
the expert on the ladder (`agents.LadderPolicy`) and the other scripted buyers, on held-out seeds.

    python tools/ladder_check.py [--task single_deal] [--seeds 100]
"""
import argparse, statistics
from bazaarbatna.agents import LadderPolicy
from bazaarbatna.arenas import make_env, make_policy
from bazaarbatna.bazaar.policies import POLICIES
from bazaarbatna.evaluate import EVAL_SEEDS, run_episode

def mean_reward(policy, task, seeds):
    return statistics.mean(run_episode(make_env("bazaar", task, seed=s), policy, s)[0]["reward"] for s in seeds)

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="single_deal"); ap.add_argument("--seeds", type=int, default=100)
    a = ap.parse_args()
    seeds = list(EVAL_SEEDS[:a.seeds])
    rows = [("expert_ladder", LadderPolicy(make_policy("bazaar", "expert")))] + [(n, make_policy("bazaar", n)) for n in POLICIES]
    print(f"bazaar/{a.task}, eval seeds {seeds[0]}-{seeds[-1]}: mean episode reward")
    means = {name: mean_reward(pol, a.task, seeds) for name, pol in rows}
    for name, m in sorted(means.items(), key=lambda kv: -kv[1]): print(f"  {name:18s} {m:+.3f}")
