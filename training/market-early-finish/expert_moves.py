"""The market expert's moves, split by whether the lab still has an open job (training seeds 5000-5029, all four tasks),
and the move kinds of the SFT set before and after the recipe's cap."""
import json
from collections import Counter
from bazaarbatna.arenas import make_env, make_policy
from bazaarbatna.train.sft import expert_samples, cap_actions
from bazaarbatna.evaluate import TRAIN_SEEDS
post, pre = Counter(), Counter()
for t in ["single_trade", "market_round", "coalition_market", "shock_storm"]:
    for s in range(5000, 5030):
        env = make_env("market", t, seed=s); pol = make_policy("market", "expert"); pol.reset(s)
        obs = env.reset(seed=s)
        for _ in range(300):
            a = pol.act(obs)
            o = obs if isinstance(obs, dict) else json.loads(obs)
            jobs = o.get("you", o).get("jobs") if isinstance(o, dict) else None
            if jobs is None: jobs = o.get("jobs", [])
            is_open = any(j.get("status") not in ("done", "closed", "missed") for j in jobs)
            (pre if is_open else post)[(a if isinstance(a, dict) else json.loads(a)).get("action")] += 1
            r = env.step(a); obs = r.observation
            if r.done: break
print("expert moves with an open job:", pre.most_common())
print("expert moves with no open job:", post.most_common())
s = expert_samples("market", None, list(TRAIN_SEEDS[:48]), compact=True)
print("SFT set, all", len(s), Counter(r["action"] for r in s).most_common())
c = cap_actions(s, 60)
print("SFT set, max_per_action 60:", len(c), Counter(r["action"] for r in c).most_common())
