"""The B27 T 0.5 GRPO recipe with a placebo advantage: each group's episode advantages are shuffled among its episodes
(never the identity), so every update has the real one's size and no information about which episode was better."""
import json, random, sys, torch
torch.set_num_threads(int(sys.argv[2]))
import bazaarbatna.train.grpo as grpo
real = grpo.episode_advantages
rng = random.Random(0)
def placebo(groups, scale="group", kind="episode", eps=1e-4):
    out = []
    for g, adv in zip(groups, real(groups, scale, kind, eps)):
        per_ep = [a[0] if a else 0.0 for a in adv]
        idx = list(range(len(per_ep)))
        while len(idx) > 1 and idx == list(range(len(per_ep))): rng.shuffle(idx)
        out.append([[per_ep[j]] * len(ep) for ep, j in zip(g, idx)])
    return out
grpo.episode_advantages = placebo
from bazaarbatna.train.profiles import get_profile
cfg = json.loads(sys.argv[3])
p = get_profile("cpu", batch_size=4, lora_r=16, lora_alpha=32, max_seq_len=512, max_completion_len=32, lora_layers=8,
                target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
res = grpo.train_grpo(sys.argv[1], model="embedded", adapter="/work/main/training/records/bazaar/adapters/sft", profile=p, arenas=("bazaar",),
                      compact=True, seed=0, **cfg)
print(json.dumps(res, default=str))
