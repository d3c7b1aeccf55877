"""tools/gpu_smoke.py's decisions, checked without a GPU: its command line, what it downloads and how it packs it into
parts that each fit a device call, the calls it asks for, the parts put back together on the 'device' (a temp folder),
the recipe it cuts from the t4 one, the runs it plans, and the record it reads from a run folder."""
import hashlib, json, sys, tomllib, zipfile
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import gpu_smoke as gs

def test_command_line():
    a = gs.parse(["run", "--out", "/o", "--sections", "unsloth,vllm", "--budget-s", "300"])
    assert (a.cmd, a.out, a.sections, a.budget_s, a.dir) == ("run", "/o", ["unsloth", "vllm"], 300.0, gs.STAGE_DIR)
    assert gs.parse(["plan"]).sections == list(gs.SECTIONS)
    with pytest.raises(SystemExit): gs.parse(["run", "--out", "/o", "--sections", "unsloth,warp"])
    with pytest.raises(SystemExit): gs.parse(["run"])                       # --out is required
    with pytest.raises(SystemExit): gs.parse([])

def test_downloads_are_pinned_wheels_for_the_device():
    specs = [s for group in gs.WHEELS.values() for s in group]
    assert all("==" in s for s in specs) and len({s.split("==")[0].lower().replace("_", "-") for s in specs}) == len(specs)   # one version each
    pins = {s.split("==")[0]: s.split("==")[1] for s in specs}
    assert pins["trl"] == "1.15.0" and pins["unsloth"] == pins["unsloth_zoo"] == "2026.10.9"                # the stack pyproject pins
    assert "trl==1.15.0" in (ROOT / "pyproject.toml").read_text() and "unsloth==2026.10.9" in (ROOT / "pyproject.toml").read_text()
    cmd = gs.pip_download_cmd(["trl==1.15.0"], "/d", python="py")
    assert cmd[:4] == ["py", "-m", "pip", "download"] and "--no-deps" in cmd and "--only-binary=:all:" in cmd
    assert cmd[cmd.index("--python-version") + 1] == "3.12" and "manylinux_2_28_x86_64" in cmd and cmd[-1] == "trl==1.15.0"

def test_trim_wheel_drops_a_folder_and_its_record_lines(tmp_path):
    w = tmp_path / "unsloth-1-py3-none-any.whl"
    with zipfile.ZipFile(w, "w") as z:
        z.writestr("unsloth/__init__.py", "x = 1\n"); z.writestr("studio/big.js", "y" * 1000)
        z.writestr("unsloth-1.dist-info/RECORD", "unsloth/__init__.py,sha256=a,6\nstudio/big.js,sha256=b,1000\nunsloth-1.dist-info/RECORD,,\n")
    gs.trim_wheel(w, ("studio/",))
    with zipfile.ZipFile(w) as z:
        assert z.namelist() == ["unsloth/__init__.py", "unsloth-1.dist-info/RECORD"]
        assert "studio" not in z.read("unsloth-1.dist-info/RECORD").decode()

def test_parts_fit_a_call_and_join_back_on_the_device(tmp_path):
    assert gs.part_bytes_for(5 * 2**20) == int(62 * 2**20) - 5 * 2**20       # 64 MB a call, a 2 MB margin, the tree
    with pytest.raises(ValueError, match="leaves under 8 MB"): gs.part_bytes_for(57 * 2**20)
    # a small stage: one tar cut into parts of 1000 bytes, carried one per call, joined and checked on the 'device'
    stage, dev = tmp_path / "stage", tmp_path / "device"
    def fake_download(cmd):   # pip download: write a tiny wheel per spec
        d = Path(cmd[cmd.index("-d") + 1])
        for spec in [c for c in cmd if "==" in c]:
            name, v = spec.split("==")
            with zipfile.ZipFile(d / f"{name.replace('-', '_')}-{v}-py3-none-any.whl", "w") as z: z.writestr(f"{name}/x.txt", name * 40)
    man = gs.stage(stage, part_bytes=40_000, download=fake_download)
    assert len(man["parts"]) >= 3 and all(p["bytes"] <= 40_000 for p in man["parts"])
    assert len(man["wheels"]) == sum(len(v) for g, v in gs.WHEELS.items() if g not in gs.OPTIONAL) and man["groups"] == ["stack", "unsloth", "papermill", "model"]
    calls = gs.device_calls(man, "stage")
    assert len(calls) == len(man["parts"]) + 1 and all(len(c["command"]) <= 2000 and len(c["carry"]) <= 8 for c in calls)
    assert all(c["carry"][0] == "stage/manifest.json" for c in calls) and [c["carry"][1] for c in calls[:-1]] == [f"stage/{p['name']}" for p in man["parts"]]
    assert "--sections unsloth" in calls[-2]["command"] and "--sections market,peft4bit,vllm,shape" in calls[-1]["command"]
    assert all(c["timeout_s"] <= gs.RUN_LIMIT_S for c in calls)
    # with vLLM staged: its wheels join the parts, its GRPO runs first, then the unsloth path (peft4bit and shape give way)
    with_vllm = gs.stage(tmp_path / "stage-vllm", part_bytes=40_000, download=fake_download, with_groups=["vllm"])
    assert "vllm" in with_vllm["groups"] and "vllm-0.25.0-py3-none-any.whl" in with_vllm["wheels"] and len(with_vllm["parts"]) > len(man["parts"])
    v = gs.device_calls(with_vllm, "stage")
    assert [c["command"].split("--sections ")[1].split()[0] for c in v[-2:]] == ["vllm", "unsloth"] and "unpack" in v[-2]["command"]
    assert all(c["timeout_s"] <= gs.RUN_LIMIT_S for c in v)
    with pytest.raises(ValueError, match="unknown optional wheel group"): gs.stage(tmp_path / "x", download=fake_download, with_groups=["vllm", "sglang"])
    with pytest.raises(SystemExit): gs.parse(["stage", "--with", "sglang"])
    assert gs.parse(["stage", "--with", "vllm"]).with_groups == ["vllm"] and gs.parse(["stage"]).with_groups == []
    # each call carries the manifest and one part: the device folder gathers them; a missing one is named
    for i, p in enumerate(man["parts"]):
        carried = tmp_path / f"call{i}"; carried.mkdir()
        (carried / "manifest.json").write_text((stage / "manifest.json").read_text()); (carried / p["name"]).write_bytes((stage / p["name"]).read_bytes())
        if i == len(man["parts"]) - 1:
            with pytest.raises(SystemExit, match="missing parts"): gs.assemble(carried, dev)
        held = gs.unpack(carried, dev)
        assert held == [q["name"] for q in man["parts"][:i + 1]]
    wheels = gs.assemble(carried, dev)
    assert sorted(w.name for w in wheels.glob("*.whl")) == man["wheels"]
    assert gs.assemble(carried, dev) == wheels                                      # once unpacked, a later call reuses it
    # a part damaged in transfer is refused by its checksum
    bad = tmp_path / "bad"; bad.mkdir(); (bad / "manifest.json").write_text((stage / "manifest.json").read_text())
    (bad / man["parts"][0]["name"]).write_bytes(b"x")
    with pytest.raises(SystemExit, match="sha256"): gs.unpack(bad, tmp_path / "dev2")

def test_split_file_round_trip(tmp_path):
    data = bytes(range(256)) * 41
    (tmp_path / "f").write_bytes(data); (tmp_path / "p").mkdir()
    parts = gs.split_file(tmp_path / "f", 1000, tmp_path / "p")
    assert [p["bytes"] for p in parts] == [1000] * 10 + [496]
    assert b"".join((tmp_path / "p" / p["name"]).read_bytes() for p in parts) == data
    assert parts[0]["sha256"] == hashlib.sha256(data[:1000]).hexdigest()

@pytest.mark.parametrize("unsloth", [True, False])
def test_the_short_recipe_is_the_t4_recipe_cut(unsloth):
    from bazaarbatna.train.pipeline import check_recipe
    text = gs.short_recipe(3, 2, unsloth)
    rec = check_recipe(tomllib.loads(text), "short")
    t4 = tomllib.loads((ROOT / "training" / "configs" / "t4.toml").read_text())
    assert rec["profile"] == "t4" and rec["model"] == "embedded" and rec["compact"] == t4["compact"]
    assert (rec["sft"]["steps"], rec["grpo"]["steps"], rec["eval"]["seeds"]) == (3, 2, 1)
    assert rec["sft"]["closing_repeats"] == t4["sft"]["closing_repeats"] and rec["grpo"]["mode"] == "episode"
    assert rec["profile_overrides"]["use_unsloth"] is unsloth
    assert {k: v for k, v in rec["profile_overrides"].items() if k != "use_unsloth"} == t4["profile_overrides"]

def test_to_toml_round_trips_a_recipe():
    rec = {"profile": "t4", "compact": True, "seed": 0, "notes": 'a "quoted" note', "sft": {"steps": 3, "learning_rate": 2e-4},
           "grpo": {"tasks": {"bazaar": ["single_deal"]}, "scale_rewards": "group"}, "profile_overrides": {"target_modules": ["q_proj"]}}
    assert tomllib.loads(gs.to_toml(rec)) == rec

def test_market_short_recipe_is_t4_market_cut_to_one_task():
    from bazaarbatna.train.pipeline import check_recipe
    rec = check_recipe(tomllib.loads(gs.short_recipe(3, 2, True, "t4_market")), "short")
    t4m = tomllib.loads((ROOT / "training" / "configs" / "t4_market.toml").read_text())
    assert rec["model"] == "embedded" and (rec["sft"]["steps"], rec["grpo"]["steps"], rec["eval"]["seeds"]) == (3, 2, 1)
    assert rec["eval_tasks"] == rec["grpo"]["tasks"] == {"market": ["single_trade"]}
    assert rec["profile_overrides"]["max_seq_len"] == t4m["profile_overrides"]["max_seq_len"] and rec["grpo"]["mode"] == "episode"

def test_run_plan():
    plan = gs.run_plan(["unsloth", "peft4bit", "market", "vllm"], "/w", 4, 2)
    assert [p["section"] for p in plan] == ["unsloth", "peft4bit", "market", "vllm"]
    u, b, m = plan[0], plan[1], plan[2]
    assert u["kill_after_checkpoint"] == 2 and b["kill_after_checkpoint"] is None                # the kill and resume: on the unsloth run
    assert u["recipe"]["unsloth"] and not b["recipe"]["unsloth"]
    assert (m["params"]["ARENA"], m["recipe"]["name"], m["recipe"]["unsloth"], m["kill_after_checkpoint"]) == ("market", "t4_market", True, None)
    assert {u["params"]["ARENA"], b["params"]["ARENA"]} == {"bazaar"} and u["recipe"]["name"] == "t4"
    for p in (u, b, m):
        assert p["params"]["PROFILE"] == "t4" and p["params"]["MODEL"] == "embedded" and p["params"]["USE_DRIVE"] is False
        assert p["params"]["RECIPE"] == p["recipe"]["file"] and p["params"]["OUT_DIR"].startswith("/w/")
    nb = json.loads((ROOT / "colab" / "02_train.ipynb").read_text())
    declared = {}; exec("".join(next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))["source"]), declared)
    assert set(u["params"]) <= set(declared)                                                      # only parameters 02 declares
    with pytest.raises(ValueError, match="unknown section"): gs.run_plan(["gpu"])

def test_the_record_reads_a_run_folder(tmp_path):
    run = tmp_path / "run"; (run / "sft" / "checkpoint-3").mkdir(parents=True); (run / "sft" / "final").mkdir()
    (run / "sft" / "checkpoint-3" / "optimizer.pt").write_bytes(b"x" * 300); (run / "sft" / "final" / "a.safetensors").write_bytes(b"y" * 100)
    (run / "sft_training_curve.json").write_text(json.dumps([{"step": 1, "step_time": 2.0}, {"step": 2, "step_time": 1.0},
                                                             {"event": "resume", "step": 2, "time": 0}, {"step": 3, "step_time": 1.5}]))
    t = gs.curve_times(run)["sft"]
    assert (t["steps"], t["median_s"], t["events"]) == (3, 1.5, [{"event": "resume", "step": 2}])
    assert gs.checkpoint_sizes(run) == {"sft/checkpoint-3": 300, "sft/final": 100}

def test_vllm_counts_as_used_only_when_it_generated():
    "The section's verdict reads what the engine did (replies, weight syncs), not the plan the run printed."
    ran = {"vllm": "colocate", "steps": 2, "vllm_replies": 48, "vllm_syncs": 2}
    assert gs.vllm_did_the_rollouts(ran)
    assert not gs.vllm_did_the_rollouts({**ran, "vllm_replies": 0})          # planned colocate, generated nothing
    assert not gs.vllm_did_the_rollouts({**ran, "vllm_syncs": 1})            # a step trained on stale weights
    assert not gs.vllm_did_the_rollouts({"vllm": "none", "steps": 2}) and not gs.vllm_did_the_rollouts({})

def test_the_vllm_section_asks_the_plan_and_trains_only_where_it_says_colocate(tmp_path):
    "The vLLM section runs the real `vllm_plan` on the machine; here (no GPU, no vLLM) it is skipped with the plan's reason."
    import os, tomllib
    from bazaarbatna.train.pipeline import check_recipe
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    r = gs.vllm_colocate(env, tmp_path)
    assert (r["status"], r["plan"]) == ("skipped", "none") and "CUDA" in r["why"] and not (tmp_path / "vllm").exists()
    rec = check_recipe(tomllib.loads(gs.short_recipe(0, 2, unsloth=False, overrides=gs.VLLM_OVERRIDES)))   # what it trains where it runs
    assert {k: rec["profile_overrides"][k] for k in gs.VLLM_OVERRIDES} == gs.VLLM_OVERRIDES and rec["grpo"]["steps"] == 2
    assert rec["notes"].endswith("PEFT on the fp16 base, vLLM rollouts")
    from bazaarbatna.train.profiles import get_profile, vllm_plan, Hardware
    h200 = Hardware(cuda=True, gpu_name="NVIDIA H200", vram_gb=139.8, capability=(9, 0), cpu_count=16)
    assert vllm_plan(get_profile("t4", **gs.VLLM_OVERRIDES), h200, True)[0] == "colocate"                # a GPU with vLLM: the run
    assert vllm_plan(get_profile("t4", **gs.VLLM_OVERRIDES), h200, False)[0] == "none"                  # the lent H200's image

def _wheel(folder: Path, name: str, version: str, requires: list[str]) -> Path:
    w = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(w, "w") as z:
        z.writestr(f"{name.replace('-', '_')}-{version}.dist-info/METADATA",
                   f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires))
    return w

def test_staging_finds_requirements_the_device_would_not_meet(tmp_path):
    # what broke the first vLLM run on the device: xgrammar 0.2.8 wants apache-tvm-ffi >= 0.1.11, vLLM pins 0.1.9
    wheels = [_wheel(tmp_path, "vllm", "0.25.0", ["apache-tvm-ffi==0.1.9", "torch==2.11.0", "xgrammar<1.0.0,>=0.2.1",
                                                 'pywin32; sys_platform == "win32"', 'pytest; extra == "test"']),
              _wheel(tmp_path, "apache-tvm-ffi", "0.1.9", []),
              _wheel(tmp_path, "xgrammar", "0.2.8", ["apache-tvm-ffi>=0.1.11", "numpy"]),
              _wheel(tmp_path, "gguf", "0.19.0", ["numpy>=3", "not-on-the-device"])]
    assert gs.unmet_requirements(wheels) == [
        ("xgrammar", "apache-tvm-ffi", "apache-tvm-ffi>=0.1.11", "0.1.9"),   # a staged version that clashes
        ("gguf", "numpy", "numpy>=3", "2.5.2"),                              # the device image's version clashes
        ("gguf", "not-on-the-device", "not-on-the-device", None)]            # nowhere; markers and extras are skipped
    # `stage` refuses such a set before it packs anything (the real groups pass it: `python tools/gpu_smoke.py stage --with vllm`)
    def download(cmd):
        d = Path(cmd[cmd.index("-d") + 1])
        for spec in [c for c in cmd if "==" in c]: _wheel(d, *spec.split("=="), ["not-on-the-device"] if spec.startswith("trl==") else [])
    with pytest.raises(ValueError, match="trl needs not-on-the-device"): gs.stage(tmp_path / "stage", part_bytes=40_000, download=download)
    assert not list((tmp_path / "stage").glob("part-*"))
