# the training-seed check: SFT and a GRPO checkpoint, both sampled at T 0.3 (the objective GRPO optimized), on the (task, seed) groups GRPO trained on
import json, sys
from pathlib import Path
from bazaarbatna.evaluate import run_eval
ck = sys.argv[1]
groups = json.load(open("/work/runs/b42/kl03/pipeline.json"))["grpo"]["groups"]["bazaar"]
pols = ["llm:/work/main/training/records/bazaar/adapters/sft@0.3", f"llm:{ck}@0.3"]
out = Path("/work/runs/b42/tc")
for task, seeds in groups.items():
    run_eval("bazaar", [task], pols, sorted(set(seeds)), out / task, workers=2, progress=False, transcripts="none")
with open(out / "results.jsonl", "w") as f:
    for task in groups: f.write((out / task / "results.jsonl").read_text())
