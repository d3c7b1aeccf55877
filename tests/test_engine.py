"""The compiled engine (`bazaarbatna.engine`, nbs/02_engine.ipynb) plays exactly as the pure-Python modules it is
compiled from: the same rewards, infos, observations and transcripts, bit for bit, on every task of both arenas with
every scripted policy, hostile actions included; and the development install runs it compiled."""
import os, subprocess, sys
import pytest
from bazaarbatna.engine import PURE_ENV, engine_status, engine_summary

# One process per engine: the finder picks compiled or pure at import. Every fourth step also sends a hostile action
# (not JSON, a huge integer, a non-ASCII digit in a lab id, a lone surrogate) so the error paths are compared too.
PLAY = r'''
import hashlib, sys
from bazaarbatna import arenas
from bazaarbatna.engine import engine_summary
HOSTILE = {"market": ("not json", '{"action": "buy_from_exchange", "block": "B1", "max_price": ' + "9" * 400 + "}",
                      {"action": "send_message", "to": "L\u00b9", "message": "hi"}, {"action": "send_message", "to": "L1", "message": "\ud800"}),
           "bazaar": ("not json", '{"action": "offer", "price": ' + "9" * 400 + "}", {"action": "offer", "price": 10 ** 400},
                      {"action": "offer", "price": 10, "message": "\ud800"})}
h, steps = hashlib.sha256(), 0
for arena in ("bazaar", "market"):
    for task in arenas.list_tasks(arena):
        for pol in arenas.list_policies(arena):
            for seed in range(int(sys.argv[1])):
                p = arenas.make_policy(arena, pol); p.reset(seed)
                env = arenas.make_env(arena, task, seed); obs = env.reset(seed)
                while True:
                    if steps % 4 == 3:
                        r = env.step(HOSTILE[arena][steps // 4 % 4])
                        h.update(repr((r.reward, r.done, r.info, r.observation)).encode())
                    r = env.step(p.act(obs)); steps += 1
                    h.update(repr((r.reward, r.done, r.info, r.observation)).encode())
                    if r.done: break
                    obs = r.observation
                h.update(repr(env.transcript.turns).encode())
print(engine_summary(), steps, h.hexdigest())
'''

def _play(pure: bool, seeds: int = 40) -> list:
    env = {k: v for k, v in os.environ.items() if k != PURE_ENV} | ({PURE_ENV: "1"} if pure else {})
    r = subprocess.run([sys.executable, "-c", PLAY, str(seeds)], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.split()

def _import_engine_modules():
    from bazaarbatna import arenas
    for arena in ("bazaar", "market"): arenas.make_policy(arena, "expert"); arenas.make_env(arena, next(iter(arenas.list_tasks(arena))))

def test_the_development_install_runs_the_engine_compiled():
    if os.environ.get(PURE_ENV) == "1": pytest.skip(f"{PURE_ENV}=1: the pure-Python engine was asked for")
    _import_engine_modules()
    st = engine_status()
    assert all(v == "compiled" for v in st.values()), (
        f"{st}: `pip install -e .` compiles the engine (it needs a C compiler; Cython comes from the build requirements)")

def test_compiled_and_pure_engines_play_bit_for_bit_alike():
    _import_engine_modules()
    if engine_summary() != "compiled": pytest.skip("the engine is not compiled here: nothing to compare")
    compiled, pure = _play(pure=False), _play(pure=True)
    assert compiled[0] == "compiled" and pure[0] == "pure"
    assert int(compiled[1]) > 20_000, compiled
    assert compiled[1:] == pure[1:], (compiled, pure)
