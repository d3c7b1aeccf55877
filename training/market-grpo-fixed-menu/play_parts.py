"""Play one stage's episodes of some tasks into a record's eval parts (the resume files `train eval` reads), so two
processes can share a stage's work; keys exactly as `evaluate_models` builds them.
usage: play_parts.py OUT ARENA LABEL ADAPTER (N_TEST_SEEDS | groups) MAX_NEW_TOKENS TASK..."""
import sys, json, time
from pathlib import Path
from bazaarbatna.arenas import llm_spec
from bazaarbatna.agents import LLMPolicy, rollout_batch
from bazaarbatna.evaluate import SEED_RANGES
from bazaarbatna.train.pipeline import weights_fingerprint, write_part, read_part
out, arena, label, spec, n_seeds, cap, *tasks = sys.argv[1:]
(m, temp), pol = llm_spec(f"llm:{spec}"), None
groups = json.load(open(Path(out) / "pipeline.json"))["grpo"]["groups"][arena] if n_seeds == "groups" else None
sub = "train_check/eval" if groups else "eval"
for t in tasks:
    if groups is not None and t not in groups: print('no groups', t, flush=True); continue
    seeds = [int(x) for x in groups[t]] if groups else list(SEED_RANGES["test"][:int(n_seeds)])
    key = {"model": weights_fingerprint(m), "temperature": temp, "seeds": seeds, "compact": True, "max_new_tokens": int(cap)}
    part = Path(out) / sub / arena / "parts" / f"{label.replace('/', '_')}__{t}.json"
    if read_part(part, key) is not None: print("have", label, t, flush=True); continue
    pol = pol or LLMPolicy(arena, model=m, temperature=temp, max_new_tokens=int(cap), name=label, compact=True)
    t0 = time.time()
    done = rollout_batch(arena, t, seeds, pol, progress=False, policy_name=label, keep_transcripts=True)
    write_part(part, key, done)
    print("played", label, t, len(done), "mean %+.3f" % (sum(r["reward"] for r in done) / len(done)),
          "deals", sum(bool(r.get("deal")) for r in done), "s %.0f" % (time.time() - t0), flush=True)
