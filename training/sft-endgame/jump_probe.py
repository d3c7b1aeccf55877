"""On the rule expert's own states (valid seeds), what does a model offer, by rounds left? Jump = offer >= 95 % of the ask."""
import json, sys, collections
from bazaarbatna.bazaar.env import make_env
from bazaarbatna.bazaar.policies import POLICIES
from bazaarbatna.agents import LLMPolicy

model = sys.argv[1]
if "--timed" in sys.argv:
    sys.path.insert(0, "/work/runs/b44"); import timed  # noqa: the rounds-left ladder line
tasks = ["single_deal", "asymmetric_pressure", "amazon_realistic", "read_the_tells", "deceptive_seller",
         "impatient_seller", "collaborative_seller", "marketplace_arena"]
states = []
for t in tasks:
    for s in range(100000, 100006):
        env = make_env(t, s); obs = env.reset(s); ex = POLICIES["expert"](); ex.reset(s)
        while True:
            a = ex.act(obs)
            states.append((t, s, obs, a))
            r = env.step(a)
            if r.done: break
            obs = r.observation
pol = LLMPolicy("bazaar", model, temperature=0.0, batch_size=16)
acts = pol.act_batch([o for _, _, o, _ in states])
tab = collections.defaultdict(lambda: [0, 0, 0, 0])   # rounds left -> [n, expert jumps, model jumps, model accept]
for (t, s, o, ea), ma in zip(states, acts):
    left = o["rounds_left"]
    ask = o["ask"]
    def jump(a):
        return isinstance(a, dict) and a.get("action") == "offer" and ask and a.get("price", 0) >= 0.95 * ask
    row = tab[min(left, 5)]
    row[0] += 1; row[1] += jump(ea); row[2] += jump(ma); row[3] += isinstance(ma, dict) and ma.get("action") == "accept"
print(json.dumps({"model": model, "states": len(states), "by_rounds_left(5 = 5+)": {k: dict(zip(["n", "expert_jumps", "model_jumps", "model_accepts"], v)) for k, v in sorted(tab.items())}}, indent=1))
