"""The OpenEnv server end to end: a real uvicorn server on a loopback port, driven by the typed clients.

Every task of both arenas is played to the end over WebSocket (sync and async clients) and over per-session
HTTP; 32 concurrent sessions must each reproduce, step for step, the episode the same seed gives in process."""
import asyncio, json, os, sys
import pytest

pytest.importorskip("openenv"); pytest.importorskip("uvicorn")
from bazaarbatna import arenas
from bazaarbatna.core import canonical_json

ARENAS = ("bazaar", "market")

from bazaarbatna.server import ServerThread, ArenaClient, CLIENTS, create_app

MAX_STEPS = 300  # no task of either arena needs this many steps; a guard against a hung episode

def client_cls(arena):
    return CLIENTS.get(arena) or type(f"{arena.title()}Env", (ArenaClient,), {"arena": arena})

def tasks(arena): return list(arenas.get_arena(arena).TASKS)

def reference(arena, task, seed):
    "The episode played in process: per-step rewards and the final info."
    env, pol = arenas.make_env(arena, task, seed=seed), arenas.make_policy(arena, "expert")
    obs = env.reset(seed=seed); pol.reset(seed); rewards = []
    for _ in range(MAX_STEPS):
        r = env.step(pol.act(obs)); rewards.append(r.reward); obs = r.observation
        if r.done: return rewards, r.info
    raise AssertionError(f"{arena}/{task}/{seed} did not end in {MAX_STEPS} steps")

@pytest.fixture(scope="module")
def server():
    with ServerThread(arenas=ARENAS, max_sessions=48) as srv: yield srv

@pytest.mark.parametrize("arena,task", [(a, t) for a in ARENAS for t in tasks(a)])
def test_every_task_sync_client(server, arena, task):
    seed = 11
    want_rewards, want_info = reference(arena, task, seed)
    pol = arenas.make_policy(arena, "expert"); pol.reset(seed)
    with client_cls(arena)(base_url=server.url).sync() as env:
        r = env.reset(task=task, seed=seed); rewards = []
        test_meta = r.observation.metadata
        assert (test_meta["arena"], test_meta["task"], test_meta["seed"]) == (arena, task, seed)
        assert isinstance(r.observation.text, str) and r.observation.text
        while not r.done and len(rewards) < MAX_STEPS:
            r = env.step(pol.act(r.observation.observation)); rewards.append(r.reward)
            assert "reward_components" in r.observation.info
            assert sum(r.observation.info["reward_components"].values()) == pytest.approx(r.reward, abs=1e-6)
        st = env.state()
    assert r.done and st.done and st.task == task and st.step_count == len(rewards)
    assert rewards == pytest.approx(want_rewards)
    assert canonical_json(r.observation.info["episode"]) == canonical_json(want_info["episode"])
    assert st.score["session"]["episodes"] == 1 and st.score["episode"]["result"] == r.observation.info["episode"]
    ep = r.observation.info["episode"]
    assert {"deal", "utility", "rounds", "reason"} <= set(ep)

@pytest.mark.parametrize("arena", ARENAS)
def test_every_task_http_sessions(server, arena):
    import httpx
    with httpx.Client(base_url=server.url, timeout=30) as c:
        for task in tasks(arena):
            pol = arenas.make_policy(arena, "expert"); pol.reset(3)
            r = c.post(f"/{arena}/reset", json={"task": task, "seed": 3}); assert r.status_code == 200, r.text
            sid, d, n = r.json()["session_id"], r.json(), 0
            while not d["done"]:
                a = pol.act(d["observation"]["observation"])
                body = {"action": {"text": a} if isinstance(a, str) else a}
                r = c.post(f"/{arena}/step", json=body, headers={"X-Session-Id": sid}); assert r.status_code == 200, r.text
                d, n = r.json(), n + 1
                assert n < MAX_STEPS
            assert d["observation"]["info"]["episode"] == reference(arena, task, 3)[1]["episode"]
            s = c.get(f"/{arena}/score", params={"session_id": sid}).json()
            assert s["episode"]["done"] and s["session"]["episodes"] == 1
            assert c.get(f"/{arena}/state", params={"session_id": sid}).json()["step_count"] == n
            assert c.post(f"/{arena}/step", json={**body, "session_id": sid}).status_code == 409   # episode over
            assert c.post(f"/{arena}/close", json={"session_id": sid}).json() == {"closed": sid}
            assert c.post(f"/{arena}/step", json={**body, "session_id": sid}).status_code == 404   # closed

def test_async_clients_many_sessions_do_not_interfere(server):
    "32 WebSocket sessions at once over both arenas, every task, different seeds: each reproduces its in-process episode."
    combos = [(a, t) for a in ARENAS for t in tasks(a)]
    jobs = [(*combos[i % len(combos)], 100 + i) for i in range(32)]
    async def play(arena, task, seed):
        pol = arenas.make_policy(arena, "expert"); pol.reset(seed)
        async with client_cls(arena)(base_url=server.url) as env:
            r = await env.reset(task=task, seed=seed); rewards = []
            while not r.done and len(rewards) < MAX_STEPS:
                r = await env.step(pol.act(r.observation.observation)); rewards.append(r.reward)
                await asyncio.sleep(0)   # interleave the sessions step by step
            return rewards, r.observation.info, (await env.state())
    async def main(): return await asyncio.gather(*(play(*j) for j in jobs))
    results = asyncio.run(main())
    ids = set()
    for (arena, task, seed), (rewards, info, st) in zip(jobs, results):
        want_rewards, want_info = reference(arena, task, seed)
        assert rewards == pytest.approx(want_rewards), (arena, task, seed)
        assert canonical_json(info["episode"]) == canonical_json(want_info["episode"])
        assert (st.arena, st.task, st.seed, st.done) == (arena, task, seed, True)
        ids.add(st.session_id)
    assert len(ids) == len(jobs)   # one isolated session per client

def test_session_keeps_task_and_counts_episodes(server):
    arena = ARENAS[0]; task = tasks(arena)[-1]
    with client_cls(arena)(base_url=server.url).sync() as env:
        for seed in (1, 2):
            pol = arenas.make_policy(arena, "expert")
            r = env.reset(task=task, seed=seed) if seed == 1 else env.reset(seed=seed)  # the task sticks
            pol.reset(seed)
            while not r.done: r = env.step(pol.act(r.observation.observation))
        st = env.state()
    assert st.task == task and st.score["session"]["episodes"] == 2

def test_root_serves_default_arena_and_index(server):
    import httpx
    c = httpx.Client(base_url=server.url)
    idx = c.get("/").json()
    assert idx["default_arena"] == ARENAS[0] and set(idx["arenas"]) == set(ARENAS)
    assert c.get("/health").json()["status"] == "healthy"
    t = c.get("/tasks").json()
    assert set(t) == set(ARENAS)
    for a in ARENAS:
        assert set(t[a]) == set(tasks(a))
        assert all({"name", "difficulty", "summary"} <= set(d) for d in t[a].values())
        assert c.get(f"/{a}/tasks").json() == t[a]
        sch = c.get(f"/{a}/schema").json()
        assert set(sch["action"]["properties"]) >= {"action", "text"}
        assert c.get(f"/{a}/metadata").json()["name"] == f"bazaarbatna-{a}"
    r = c.post("/reset", json={"seed": 1}).json()       # the root is the default arena
    assert r["metadata"]["arena"] == ARENAS[0]
    c.post("/close", json={"session_id": r["session_id"]})
