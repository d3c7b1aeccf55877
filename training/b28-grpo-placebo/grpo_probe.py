"A small episode-GRPO run from the record's SFT adapter on a few training groups: does it raise its own return?"
import json, sys, torch
torch.set_num_threads(int(sys.argv[2]))
from bazaarbatna.train.grpo import train_grpo
from bazaarbatna.train.profiles import get_profile
cfg = json.loads(sys.argv[3])
p = get_profile("cpu", batch_size=4, lora_r=16, lora_alpha=32, max_seq_len=512, max_completion_len=32, lora_layers=8,
                target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
res = train_grpo(sys.argv[1], model="embedded", adapter="/work/main/training/records/bazaar/adapters/sft", profile=p, arenas=("bazaar",),
                 compact=True, seed=0, **cfg)
print(json.dumps(res, default=str))
