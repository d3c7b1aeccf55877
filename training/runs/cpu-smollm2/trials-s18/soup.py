"""Trial (session 18): a "soup" of two SFT runs of the record's recipe, seed 0 (the record) and seed 1 (`../trials-s17/`).
The two LoRA adapters are joined into one of twice the rank whose weight change is exactly the mean of theirs,
ΔW = (B0 A0 + B1 A1) / 2 (PEFT's `add_weighted_adapter(..., combination_type="cat")`), checked here on every LoRA module.
Averaging fine-tunes of one base model tends to keep what they share and cancel what each learned by chance; the two
runs time out on different seeds.

    python training/runs/cpu-smollm2/trials-s18/soup.py ADAPTER_SEED0 ADAPTER_SEED1 OUT
    python training/runs/cpu-smollm2/trials-s15/compare_adapter.py OUT training/runs/cpu-smollm2/trials-s18/sft-soup sft-soup 2
"""
import shutil, sys
from pathlib import Path
import torch
from peft import PeftModel
from bazaarbatna.models import load_model

a, b, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
base, _ = load_model("embedded")
m = PeftModel.from_pretrained(base, str(a), adapter_name="a")
m.load_adapter(str(b), adapter_name="b")
m.add_weighted_adapter(["a", "b"], [0.5, 0.5], adapter_name="soup", combination_type="cat")
n = 0
for name, mod in m.named_modules():
    if hasattr(mod, "get_delta_weight") and "soup" in getattr(mod, "lora_A", {}):
        want = (mod.get_delta_weight("a") + mod.get_delta_weight("b")) / 2
        assert torch.allclose(mod.get_delta_weight("soup"), want, atol=1e-6), name
        n += 1
print(f"soup = mean of the two adapters' weight changes on {n} LoRA modules")
m.delete_adapter("a"); m.delete_adapter("b")
tmp = out.with_name(out.name + ".tmp")
m.save_pretrained(str(tmp))
shutil.rmtree(out, ignore_errors=True)
shutil.copytree(tmp / "soup" if (tmp / "soup").is_dir() else tmp, out)
shutil.rmtree(tmp)
for f in a.iterdir():   # the prompt style note and the tokenizer, as the record's adapter has them
    if f.name not in {"adapter_model.safetensors", "adapter_config.json", "README.md"}: shutil.copy(f, out / f.name)
print("wrote", out, sorted(p.name for p in out.iterdir()))
