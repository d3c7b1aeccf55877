"A tiny arena that follows the Env contract; used only while the real arenas are not importable."
from dataclasses import dataclass, asdict
from types import SimpleNamespace
from bazaarbatna.core import (ActionSchema, Field, ActionError, StepResult, Transcript, INVALID_ACTION_PENALTY,
                              MAX_INVALID_ACTIONS, version_hash)

@dataclass
class ToyTask:
    name: str; difficulty: str = "easy"; summary: str = "guess the number"; hi: int = 10; max_rounds: int = 6
    def describe(self): return asdict(self)

TASKS = {"guess": ToyTask("guess"), "guess_hard": ToyTask("guess_hard", "hard", hi=100, max_rounds=8)}
ACTION_SCHEMA = ActionSchema({"guess": (Field("n", "integer", lo=0, hi=1000),), "give_up": ()},
                             common=(Field("message", "string", required=False, max_len=200),))

class ToyEnv:
    def __init__(self, task, seed=0): self.task, self.seed = task, seed; self.opponent_version = version_hash({"toy": 1})
    def reset(self, seed=None):
        if seed is not None: self.seed = seed
        self.secret, self.round, self.bad, self.done = self.seed % (self.task.hi + 1), 0, 0, False
        self.transcript = Transcript({"arena": "toy", "task": self.task.name, "seed": self.seed, "opponent_version": self.opponent_version})
        return self._obs(None)
    def _obs(self, hint): return {"round": self.round, "hint": hint, "hi": self.task.hi}
    def step(self, action):
        try: a = ACTION_SCHEMA.parse(action)
        except ActionError as e:
            self.bad += 1
            done = self.bad >= MAX_INVALID_ACTIONS
            info = {"reward_components": {"invalid": INVALID_ACTION_PENALTY}, "error": e.to_dict()}
            if done: self.done = True; info["episode"] = {"deal": False, "utility": 0.0, "rounds": self.round, "reason": "timeout"}
            return StepResult(self._obs("invalid"), INVALID_ACTION_PENALTY, done, info)
        self.round += 1
        self.transcript.add(self.round, "agent", a["action"], a.get("n"), a.get("message", ""))
        if a["action"] == "give_up" or self.round >= self.task.max_rounds or a["n"] == self.secret:
            win = a["action"] == "guess" and a["n"] == self.secret
            u = 1.0 - self.round / (self.task.max_rounds + 1) if win else 0.0
            self.done = True
            return StepResult(self._obs("done"), u, True, {"reward_components": {"utility": u},
                              "episode": {"deal": win, "utility": u, "rounds": self.round, "reason": "found" if win else "gave_up"}})
        hint = "higher" if a["n"] < self.secret else "lower"
        return StepResult(self._obs(hint), 0.0, False, {"reward_components": {"shaping": 0.0}})
    def snapshot(self): return dict(self.__dict__)
    def restore(self, s): self.__dict__.update(s)

def make_env(task, seed=0, **overrides):
    if task not in TASKS: raise ValueError(f"unknown task {task!r}; valid: {sorted(TASKS)}")
    return ToyEnv(TASKS[task], seed)

class Bisect:
    name = "expert"
    def reset(self, seed): self.lo, self.hi, self.last = 0, None, None
    def act(self, obs):
        if self.hi is None: self.hi = obs["hi"]
        if obs["hint"] == "higher": self.lo = self.last + 1
        elif obs["hint"] == "lower": self.hi = self.last - 1
        self.last = (self.lo + self.hi) // 2
        return {"action": "guess", "n": self.last}

def render_observation(obs): return f"round {obs['round']}: {obs['hint']}"

def install():
    "Register the toy arena in bazaarbatna.arenas under the name 'toy'."
    from bazaarbatna import arenas
    arenas.ARENAS["toy"] = __name__
    arenas._loaded["toy"] = SimpleNamespace(name="toy", TASKS=TASKS, make_env=make_env, ACTION_SCHEMA=ACTION_SCHEMA,
        REWARD_TABLE=[], render_observation=render_observation, POLICIES={"expert": Bisect}, POLICY_DOCS={"expert": "bisection"},
        env_module=None, policies_module=None)
