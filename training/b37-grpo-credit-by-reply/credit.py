"""Which replies an episode-GRPO step's advantages push up and down: the SFT model at T 0.5 on fresh training states,
each decision's batch-scaled episode advantage, summed by the kind of reply."""
import json, sys, collections
from bazaarbatna.agents import LLMPolicy
from bazaarbatna.train.grpo import play_groups, episode_rows, episode_advantages, GRPO_SEED_OFFSET
from bazaarbatna.evaluate import TRAIN_SEEDS
mix = {"bazaar": {t: 1.0 for t in ["single_deal", "asymmetric_pressure", "amazon_realistic", "read_the_tells", "deceptive_seller", "impatient_seller", "collaborative_seller", "marketplace_arena"]}}
rows = episode_rows(mix, int(sys.argv[2]), TRAIN_SEEDS[GRPO_SEED_OFFSET:GRPO_SEED_OFFSET + 64], seed=11)
pol = LLMPolicy("bazaar", model=sys.argv[1], temperature=0.5, top_p=1.0, max_new_tokens=64, batch_size=64, seed=7)
groups = play_groups("bazaar", rows, pol, 4)
print(json.dumps(list(groups[0][0]["steps"][0].keys())), file=sys.stderr)
json.dump([[{"reward": e["reward"], "deal": e["deal"], "steps": e["steps"]} for e in g] for g in groups], open(sys.argv[3], "w"), default=str)
