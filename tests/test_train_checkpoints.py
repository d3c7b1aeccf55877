"""A training run killed by a real SIGKILL resumes from its last checkpoint with the same losses as an uninterrupted run,
with checkpoints written in line and in a background thread."""
import os, signal, subprocess, sys, textwrap, time
from pathlib import Path
import pytest

WORKER = textwrap.dedent('''
    import sys, time
    from transformers import TrainerCallback
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer
    from peft import LoraConfig
    from bazaarbatna.train.checkpoints import tiny_model_and_tokenizer, train_resumable, checkpoint_args
    from bazaarbatna.train.profiles import checkpointing_args
    out, steps, delay, background = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
    class Slow(TrainerCallback):
        def on_step_end(self, *a, **k): time.sleep(delay)
    model, tok = tiny_model_and_tokenizer()
    ds = Dataset.from_list([{"prompt": [{"role": "user", "content": f"Seller asks {p}. Budget {p - 7}."}],
                             "completion": [{"role": "assistant", "content": f'{{"action": "offer", "price": {p // 2}}}'}]}
                            for p in range(30, 90)])
    args = SFTConfig(output_dir=out, max_steps=steps, per_device_train_batch_size=4, learning_rate=2e-3,
                     use_cpu=True, bf16=False, seed=0, data_seed=0, max_length=64, **{**checkpoint_args(), "disable_tqdm": True, checkpointing_args()[0]: False})
    tr = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok,
                    peft_config=LoraConfig(r=4, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"),
                    callbacks=[Slow()])
    train_resumable(tr, "sft", keep=2, background=background)
''')

def _run(script, out, steps, delay=0.0, background=False, **kw):
    return subprocess.Popen([sys.executable, str(script), str(out), str(steps), str(delay), str(int(background))],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)

def _losses(out):
    from bazaarbatna.train.checkpoints import read_json, curve_path
    return {r["step"]: r["loss"] for r in read_json(curve_path(out, "sft")) if not r.get("event")}

@pytest.mark.slow
@pytest.mark.parametrize("background", [False, True], ids=["in-line", "background"])
def test_sigkill_then_resume_matches_uninterrupted(tmp_path, background):
    from bazaarbatna.train.checkpoints import list_checkpoints, read_json, curve_path
    script = tmp_path / "worker.py"; script.write_text(WORKER)
    steps = 10
    ref = _run(script, tmp_path / "ref", steps)
    assert ref.wait(300) == 0, ref.stderr.read().decode()[-2000:]
    # the same run, killed without warning once it has passed step 4
    out = tmp_path / "killed"
    p = _run(script, out, steps, delay=0.4, background=background)
    deadline = time.time() + 300
    while time.time() < deadline and p.poll() is None:
        if any(int(c.name.split("-")[1]) >= 4 for c in list_checkpoints(out)): break
        time.sleep(0.05)
    assert p.poll() is None, "worker finished before it could be killed"
    os.kill(p.pid, signal.SIGKILL); p.wait()
    killed_at = int(list_checkpoints(out)[-1].name.split("-")[1])
    assert 4 <= killed_at < steps
    assert len(list_checkpoints(out)) <= 2                     # keep=2
    q = _run(script, out, steps, background=background)
    assert q.wait(300) == 0, q.stderr.read().decode()[-2000:]
    curve = read_json(curve_path(out, "sft"))
    assert {"event": "resume", "step": killed_at}.items() <= [r for r in curve if r.get("event")][-1].items()
    a, b = _losses(tmp_path / "ref"), _losses(out)
    assert sorted(b) == list(range(1, steps + 1))              # the join is seamless: every step once
    for s in range(killed_at + 1, steps + 1):
        assert b[s] == pytest.approx(a[s], rel=1e-4, abs=1e-5), (s, a[s], b[s])
    assert any(a[s] != a[1] for s in a)                        # the losses really move

def test_every_checkpoint_is_saved_after_its_curve_row(tmp_path, monkeypatch):
    "The order that makes a kill at any moment harmless: when checkpoint-k is written, the curve already holds step k."
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer
    from peft import LoraConfig
    from bazaarbatna.train import checkpoints as C
    from bazaarbatna.train.profiles import checkpointing_args
    seen, save = [], C.StepCheckpointer.save
    def checked_save(self):
        k = self.trainer.state.global_step
        seen.append((k, any(r.get("step") == k and not r.get("event") for r in C.read_json(C.curve_path(tmp_path, "sft"), []))))
        return save(self)
    monkeypatch.setattr(C.StepCheckpointer, "save", checked_save)
    model, tok = C.tiny_model_and_tokenizer()
    ds = Dataset.from_list([{"prompt": [{"role": "user", "content": f"Seller asks {p}."}],
                             "completion": [{"role": "assistant", "content": f'{{"action": "offer", "price": {p // 2}}}'}]}
                            for p in range(30, 50)])
    args = SFTConfig(output_dir=str(tmp_path), max_steps=3, per_device_train_batch_size=4, use_cpu=True, bf16=False, seed=0,
                     max_length=64, **{**C.checkpoint_args(), "disable_tqdm": True, checkpointing_args()[0]: False})
    tr = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok,
                    peft_config=LoraConfig(r=4, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    C.train_resumable(tr, "sft", keep=2)
    assert [k for k, _ in seen] == [1, 2, 3] and all(ok for _, ok in seen), seen
