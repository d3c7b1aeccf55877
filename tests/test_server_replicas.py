"""The OpenEnv server replicated: deploy/compose.yaml (two replicas and nginx) and deploy/nginx.conf agree with each other
and with the server (replica names, the header and cookie it routes by, WebSocket upgrades, the image's port), and two
replicas started in this process serve sessions through the routing that nginx.conf describes: HTTP sessions come back
to the replica that holds them, WebSocket sessions stay on theirs, and a request at the wrong replica is told which
replica it reached. Docker cannot run here, so the files are checked by reading them."""
import asyncio, itertools, re
from pathlib import Path
import pytest

pytest.importorskip("openenv"); pytest.importorskip("uvicorn")
import httpx, yaml
from bazaarbatna import arenas
from bazaarbatna.server import ServerThread, BazaarEnv, MarketEnv, REPLICA_HEADER, REPLICA_COOKIE, ENV_VARS, create_app

ROOT = Path(__file__).resolve().parents[1]
COMPOSE, NGINX = ROOT / "deploy" / "compose.yaml", ROOT / "deploy" / "nginx.conf"

def compose() -> dict: return yaml.safe_load(COMPOSE.read_text())

def replicas() -> dict:
    "service name -> replica name, for every service that runs the server."
    return {n: s["environment"][ENV_VARS["replica"]] for n, s in compose()["services"].items() if ENV_VARS["replica"] in s.get("environment", {})}

def nginx() -> dict:
    "The parts of nginx.conf that route: upstreams (name -> servers) and maps (source variable -> {key: value})."
    text = re.sub(r"#[^\n]*", "", NGINX.read_text())
    ups = {m[1]: re.findall(r"server\s+([\w.-]+:\d+)\s*;", m[2]) for m in re.finditer(r"upstream\s+(\w+)\s*\{([^}]*)\}", text)}
    maps = {}
    for m in re.finditer(r"map\s+\$(\w+)\s+\$(\w+)\s*\{([^}]*)\}", text):
        maps[m[1]] = (m[2], dict(re.findall(r'("[^"]*"|\S+)\s+("[^"]*"|\S+)\s*;', m[3])))
    return {"upstreams": ups, "maps": maps, "text": text}

def test_compose_runs_two_replicas_of_the_image_behind_nginx():
    c, reps = compose(), replicas()
    assert len(reps) == 2 and len(set(reps.values())) == 2                  # two replicas, distinct names
    port = re.search(r"PORT=(\d+)", (ROOT / "Dockerfile").read_text())[1]
    for name in reps:
        s = c["services"][name]
        assert (COMPOSE.parent / s["build"]["context"] / s["build"]["dockerfile"]).resolve() == ROOT / "Dockerfile"
        assert s["expose"] == [port]
    proxy = c["services"]["proxy"]
    assert proxy["image"].startswith("nginx:")
    src, dst = proxy["volumes"][0].split(":")[:2]
    assert (COMPOSE.parent / src).resolve() == NGINX and dst == "/etc/nginx/nginx.conf"
    assert proxy["ports"] == ["8000:80"] and re.search(r"listen\s+80\s*;", nginx()["text"])
    assert proxy["depends_on"] == {n: {"condition": "service_healthy"} for n in reps}   # the Dockerfile's HEALTHCHECK

def test_nginx_routes_by_the_servers_header_and_cookie_to_every_replica():
    n, reps, port = nginx(), replicas(), re.search(r"PORT=(\d+)", (ROOT / "Dockerfile").read_text())[1]
    header_var = "http_" + REPLICA_HEADER.lower().replace("-", "_")
    cookie_var = "cookie_" + REPLICA_COOKIE
    assert set(n["maps"]) >= {header_var, cookie_var, "http_upgrade"}
    for var, default in ((header_var, '""'), (cookie_var, "any")):
        target, table = n["maps"][var]
        assert table.pop("default") == default
        assert table == {r: r for r in reps.values()}                        # each replica's name -> its own upstream
    for service, r in reps.items(): assert n["upstreams"][r] == [f"{service}:{port}"]
    assert sorted(n["upstreams"]["any"]) == sorted(f"{s}:{port}" for s in reps)
    assert re.search(r"proxy_pass\s+http://\$replica\s*;", n["text"])
    assert "proxy_set_header Upgrade $http_upgrade" in n["text"] and "proxy_set_header Connection $connection_upgrade" in n["text"]

class Balancer:
    "nginx.conf's routing, read from the file and applied here: the header, else the cookie, else round-robin over 'any'."
    def __init__(self, urls: dict):   # replica name -> its base URL
        n = nginx()
        self.by_header = n["maps"]["http_" + REPLICA_HEADER.lower().replace("-", "_")][1]
        self.by_cookie = n["maps"]["cookie_" + REPLICA_COOKIE][1]
        self.urls, self.any = urls, itertools.cycle(sorted(urls))
    def url(self, headers: dict, cookies) -> str:
        name = self.by_header.get(headers.get(REPLICA_HEADER, ""), "")
        if not name: name = self.by_cookie.get(cookies.get(REPLICA_COOKIE, ""), "any")
        return self.urls[next(self.any) if name == "any" else name]

def play_http(lb: Balancer, arena: str, task: str, seed: int, use_cookie: bool = True) -> list:
    "One HTTP episode of the expert through the balancer; the replica that answered each request."
    pol = arenas.make_policy(arena, "expert"); pol.reset(seed)
    with httpx.Client(timeout=30) as c:
        hdr, seen = {}, []
        def post(path, body):
            r = c.post(lb.url(hdr, c.cookies) + path, json=body, headers=hdr)
            assert r.status_code == 200, r.text
            seen.append(r.headers[REPLICA_HEADER])
            if not use_cookie: c.cookies.clear(); hdr[REPLICA_HEADER] = r.headers[REPLICA_HEADER]   # sends the header back instead
            return r.json()
        d = post(f"/{arena}/reset", {"task": task, "seed": seed})
        sid = d["session_id"]
        while not d["done"]:
            a = pol.act(d["observation"]["observation"])
            d = post(f"/{arena}/step", {"session_id": sid, "action": {"text": a} if isinstance(a, str) else a})
        post(f"/{arena}/close", {"session_id": sid})
    return seen

def test_sessions_through_two_replicas(tmp_path):
    with ServerThread(replica="r1") as s1, ServerThread(replica="r2") as s2:
        lb = Balancer({"r1": s1.url, "r2": s2.url})
        # HTTP: four new sessions go round-robin to both replicas, and every later request comes back to the one that holds it
        homes = [play_http(lb, "bazaar", "single_deal", seed, use_cookie=seed % 2 == 0) for seed in range(4)]
        assert all(len(set(h)) == 1 and len(h) >= 3 for h in homes)
        assert sorted(h[0] for h in homes) == ["r1", "r1", "r2", "r2"]
        # without the balancer, a session's request at the other replica is refused, naming the replica it reached
        d = httpx.post(s1.url + "/bazaar/reset", json={"seed": 1}).json()
        r = httpx.post(s2.url + "/bazaar/step", json={"session_id": d["session_id"], "action": {"action": "walk"}})
        assert r.status_code == 404 and "replica 'r2'" in r.json()["detail"]
        assert httpx.get(s1.url + "/health").json()["replica"] == "r1" and httpx.get(s2.url + "/").json()["replica"] == "r2"
        # WebSocket: one connection is one session on one replica; both replicas serve at once
        async def ws_episode(url, cls, seed):
            pol = arenas.make_policy(cls.arena, "expert"); pol.reset(seed)
            async with cls(base_url=url) as env:
                res = await env.reset(seed=seed)
                while not res.done: res = await env.step(pol.act(res.observation.observation))
                return (await env.state()).session_id
        async def both():
            return await asyncio.gather(*(ws_episode(u, cls, seed) for seed, (u, cls) in
                                          enumerate([(s1.url, BazaarEnv), (s2.url, BazaarEnv), (s1.url, MarketEnv), (s2.url, MarketEnv)])))
        sids = asyncio.run(both())
        assert len(set(sids)) == 4
        assert httpx.get(s1.url + "/health").json()["sessions"] == 1   # the HTTP session opened above; the WebSockets closed
