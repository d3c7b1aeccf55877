"""Checkpoint overhead with the a100 recipe, written in line vs in a background thread, each against the same run without
checkpoints, on random-weight models of SmolLM2-135M's shape (the embedded model) and SmolLM2-1.7B's shape (no weights
can be downloaded on the GPU machine; the step and save times depend on the shapes, not the values).

    python bench_checkpoint.py OUTDIR [STEPS=12] [MODEL_DIR]   # MODEL_DIR: a folder with the embedded model's config and tokenizer
    DRY=1 python bench_checkpoint.py /tmp/x 3 MODEL_DIR         # the same on the CPU with a tiny shape and the cpu recipe
"""
import json, sys, time, torch
from pathlib import Path
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
from bazaarbatna.train.pipeline import bench_checkpoint
out, src = Path(sys.argv[1]), Path(sys.argv[3] if len(sys.argv) > 3 else ".d17/tok")
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 12
import os
dry = os.environ.get("DRY") == "1"   # a CPU check of this script: a tiny shape, the cpu recipe
shapes = {"tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2)} if dry else \
    {"135m": {}, "1.7b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=24, num_attention_heads=32, num_key_value_heads=32)}
dev, recipe = ("cpu", "cpu") if dry else ("cuda", "a100")
res = {"device": torch.cuda.get_device_name(0) if not dry else "cpu", "torch": torch.__version__, "steps": steps}
for name, shape in shapes.items():
    cfg = AutoConfig.from_pretrained(src); cfg.update(shape)
    with torch.device(dev): m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    d = Path(f"/tmp/random-{name}"); m.save_pretrained(d); AutoTokenizer.from_pretrained(src).save_pretrained(d)
    n = sum(p.numel() for p in m.parameters()); del m; torch.cuda.empty_cache()
    for bg in (False, True):
        t = time.time()
        r = bench_checkpoint(model=str(d), recipe=recipe, steps=steps, background=bg, without=True)
        res[f"{name}-{'background' if bg else 'in-line'}"] = {**r, "params_b": round(n / 1e9, 3), "weights": f"random ({name} SmolLM2 shape)", "wall_s": round(time.time() - t, 1)}
        print(name, bg, json.dumps(r), flush=True)
        (out / "bench_checkpoint.json").write_text(json.dumps(res, indent=1))
