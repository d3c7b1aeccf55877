"""The OpenAPI document is exact: what it allows the server takes, what the server answers it documents. Schemathesis
(the ecosystem's own checker) generates schema-valid requests for every operation from /openapi.json and checks every
answer; targeted tests pin the cases it once found (task enums, both `action` and `text` null, the seed edge, the 400
for a body that is not UTF-8)."""
import json
import pytest

pytest.importorskip("openenv"); pytest.importorskip("uvicorn")
schemathesis = pytest.importorskip("schemathesis")
import httpx, jsonschema
from hypothesis import HealthCheck, settings
from bazaarbatna import arenas
from bazaarbatna.server import ServerThread, MAX_SEED, create_app

ARENAS = ("bazaar", "market")


APP = create_app(ARENAS, max_sessions=10_000)   # one app: its schema drives the generated tests, a loopback server answers them


@pytest.fixture(scope="module")
def server():
    with ServerThread(app=APP) as srv: yield srv


@pytest.fixture(scope="module")
def sessions(server):
    "One live HTTP session per arena (and the root's), so generated /step, /state, /score and /close calls reach an episode."
    out = {}
    with httpx.Client(base_url=server.url, timeout=20) as c:
        for prefix in ("", *(f"/{a}" for a in ARENAS)):
            out[prefix] = c.post(prefix + "/reset", json={"seed": 1}).json()["session_id"]
    return out


schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=5, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
def test_schemathesis_finds_no_gap_between_schema_and_server(case, server, sessions):
    "Every operation, schema-valid requests (fixed seed, few examples): no 5xx, no undocumented status, no valid request refused."
    prefix = next((p for p in (f"/{a}" for a in ARENAS) if case.path.startswith(p + "/")), "")
    if case.path.endswith(("/step", "/state", "/score", "/close")):
        case.headers = {**(case.headers or {}), "x-session-id": sessions[prefix]}
    case.call_and_validate(base_url=server.url)


def _components():
    return create_app(ARENAS).openapi()["components"]["schemas"]


def _validator(components, name):
    "A JSON Schema validator for component `name` of the OpenAPI document (its $refs resolved within it)."
    doc = {"$defs": components, **components[name]}
    text = json.dumps(doc).replace("#/components/schemas/", "#/$defs/")
    return jsonschema.Draft202012Validator(json.loads(text))


def test_reset_tasks_are_each_arenas_enum_and_seeds_end_where_the_server_does(server):
    comps = _components()
    for a in ARENAS:
        v = _validator(comps, f"{a.title()}ResetBody")
        assert v.is_valid({"task": next(iter(arenas.get_arena(a).TASKS)), "seed": MAX_SEED})
        assert not v.is_valid({"task": "casino"}) and not v.is_valid({"seed": MAX_SEED + 1})
        assert v.is_valid({"seed": 5.0}) and not v.is_valid({"seed": 5.5})   # JSON Schema's integer includes 5.0
    with httpx.Client(base_url=server.url, timeout=20) as c:
        for body, status in (({"seed": MAX_SEED}, 200), ({"seed": 5.0}, 200), ({"seed": MAX_SEED + 1}, 422),
                             ({"task": "casino"}, 422), ({"task": "shock_storm"}, 200)):
            r = c.post("/market/reset", json=body)
            assert r.status_code == status, (body, r.text)
            if status == 200:
                assert r.json()["metadata"]["seed"] == int(body.get("seed", r.json()["metadata"]["seed"]))
                c.post("/market/close", json={"session_id": r.json()["session_id"]})


def test_an_action_is_text_or_a_named_action_never_neither():
    comps = _components()
    for a in ARENAS:
        v = _validator(comps, f"{a.title()}Action")
        assert not v.is_valid({}) and not v.is_valid({"action": None, "text": None})
        assert not v.is_valid({"action": "walk", "text": "{}"})   # both: refused by the server, so not schema-valid
        assert v.is_valid({"text": "anything a model wrote"})
    v = _validator(comps, "MarketAction")
    assert v.is_valid({"action": "send_offer", "target": "L1", "block": "B0", "payment": 5})
    assert not v.is_valid({"action": "send_offer", "target": "L1"})                   # its required fields
    assert v.is_valid({"action": "allocate_to_job", "job": "J00", "block": "B1", "hours": 3.0})


def test_a_body_that_is_not_utf8_is_a_documented_400(server):
    doc = create_app(ARENAS).openapi()
    with httpx.Client(base_url=server.url, timeout=20) as c:
        for path, op in doc["paths"].items():
            post = op.get("post")
            if not post or "requestBody" not in post: continue
            r = c.post(path, content=b'{"message": "\x80"}', headers={"content-type": "application/json"})
            assert r.status_code == 400 and "pars" in r.json()["detail"], (path, r.status_code, r.text)
            assert str(r.status_code) in post["responses"], (path, sorted(post["responses"]))
