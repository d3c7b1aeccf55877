"""Trial (session 17): the v7 record's SFT with another training seed. Every SFT run so far used `seed=0` (the data
order, the LoRA initialization); this runs the record's recipe with `SFTConfig(seed=SEED)` (by wrapping
`trl.SFTConfig`, which `train.sft` imports when it runs, in this process only) to see how far the v7 score is a matter of the draw.

    python training/runs/cpu-smollm2/trials-s17/sft_seed.py SEED OUT [THREADS]
    python training/runs/cpu-smollm2/trials-s15/compare_adapter.py OUT/sft/final OUTDIR sft-seedSEED [THREADS]
"""
import sys
from pathlib import Path
import trl

seed, out = int(sys.argv[1]), sys.argv[2]
threads = sys.argv[3] if len(sys.argv) > 3 else "2"
real = trl.SFTConfig
trl.SFTConfig = lambda *a, **kw: real(*a, **{**kw, "seed": seed})
from bazaarbatna.cli import main
sys.exit(main(["train", "sft", "--profile", "cpu", "--recipe", str(Path(__file__).resolve().parents[3] / "configs" / "cpu_record.toml"),
               "--arena", "bazaar", "--out", out, "--threads", threads]))
