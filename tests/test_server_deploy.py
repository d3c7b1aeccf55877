"""Deployment pieces: openenv.yaml parses with OpenEnv's own manifest parser, the app that the Dockerfile and the
manifest name (`bazaarbatna.server:app`) starts under uvicorn with its limits from the environment, OpenEnv's
runtime validator passes at the root and per arena, and the load benchmark runs bounded."""
import os, re, subprocess, sys, time
from pathlib import Path
import pytest

pytest.importorskip("openenv"); pytest.importorskip("uvicorn")
import httpx
from bazaarbatna import arenas
from bazaarbatna.server import ServerThread, bench_server, _free_port

ROOT = Path(__file__).resolve().parents[1]

def manifest():
    import yaml
    return yaml.safe_load((ROOT / "openenv.yaml").read_text())

def test_manifest_parses_and_matches_dockerfile():
    from openenv.validation.parsers.openenv_yaml import OpenEnvYamlParser
    m = OpenEnvYamlParser().parse(ROOT)
    assert m.name == "bazaarbatna"
    y, docker = manifest(), (ROOT / "Dockerfile").read_text()
    assert y["app"] == "bazaarbatna.server:app" and y["app"] in docker
    assert f"PORT={y['port']}" in docker and "[server]" in docker

def test_declared_reward_range_holds_for_expert_episodes():
    lo, hi = manifest()["validation"]["reward"]["range"]
    for a in ("bazaar", "market"):
        for task in arenas.get_arena(a).TASKS:
            for seed in range(3):
                env, pol = arenas.make_env(a, task, seed=seed), arenas.make_policy(a, "expert")
                obs = env.reset(seed=seed); pol.reset(seed)
                for _ in range(300):
                    r = env.step(pol.act(obs)); obs = r.observation
                    assert lo <= r.reward <= hi, (a, task, seed, r.reward)
                    if r.done: break

def test_uvicorn_module_app_reads_limits_from_environment():
    port = _free_port()
    env = {**os.environ, "BAZAARBATNA_MAX_SESSIONS": "3", "BAZAARBATNA_MAX_MESSAGE_BYTES": "2048"}
    p = subprocess.Popen([sys.executable, "-m", "uvicorn", "bazaarbatna.server:app", "--host", "127.0.0.1", "--port", str(port),
                          "--log-level", "warning"], env=env, cwd=ROOT, stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                h = httpx.get(url + "/health", timeout=1).json(); break
            except httpx.TransportError:
                assert p.poll() is None, p.stderr.read().decode()[-2000:]
                time.sleep(0.1)
        assert h["max_sessions"] == 3 and set(h["arenas"]) == {"bazaar", "market"}
        assert httpx.post(url + "/reset", content=b" " * 3000, headers={"content-type": "application/json"}).status_code == 413
    finally:
        p.terminate(); p.wait(10)

def test_openenv_runtime_validator_passes():
    from openenv.cli._validation import validate_running_environment
    with ServerThread() as srv:
        for url in (srv.url, srv.url + "/bazaar", srv.url + "/market"):
            r = validate_running_environment(url)
            assert r["passed"], (url, [c for c in r["criteria"] if not c["passed"]])

def test_bench_server_is_bounded():
    t0 = time.monotonic()
    r = bench_server(sessions=(1, 8), steps=120, seconds_cap=4)
    assert time.monotonic() - t0 < 60
    for lvl, n in zip(r["levels"], (1, 8)):
        assert lvl["sessions"] == n and 0 < lvl["steps"] <= 120 + n and lvl["errors"] == 0
        assert 0 < lvl["p50_ms"] <= lvl["p99_ms"] and lvl["steps_per_s"] > 0
