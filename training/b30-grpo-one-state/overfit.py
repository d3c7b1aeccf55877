"B30: can episode GRPO raise the return of the one (task, seed) it trains on? The record's SFT adapter, 20 steps on one group state."
import sys, json, time, torch
adv, out, steps, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
TASK, SEED = "impatient_seller", 1046
torch.set_num_threads(threads)
import bazaarbatna.train.grpo as g
g.GRPO_SEED_OFFSET = SEED          # TRAIN_SEEDS[SEED:SEED + 1] = [SEED]: every step's group starts from this one state
from bazaarbatna.train.profiles import get_profile
p = get_profile("cpu", batch_size=4, lora_r=16, lora_alpha=32, max_seq_len=512, max_completion_len=32, lora_layers=8,
                target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
t0 = time.time()
res = g.train_grpo(out, model="embedded", adapter="/work/main/training/records/bazaar/adapters/sft", profile=p, arenas=("bazaar",),
                   steps=steps, num_generations=4, prompts_per_step=1, learning_rate=1e-4, temperature=0.5, n_seeds=1,
                   tasks={"bazaar": {TASK: 1.0}}, compact=True, advantage=adv, seed=0, resume=True)
print(json.dumps({"groups": res["groups"], "seconds": round(time.time() - t0)}), flush=True)
