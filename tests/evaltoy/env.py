"The evaltoy env: a seller asks 100 and drops 10 a round to a hidden floor; the buyer waits or accepts."
import os, time
from dataclasses import dataclass, asdict
from bazaarbatna.core import (ActionError, ActionSchema, StepResult, Transcript, INVALID_ACTION_PENALTY,
                              MAX_INVALID_ACTIONS, make_rng, version_hash)

@dataclass
class ToyTask:
    name: str
    patience: int = 6
    difficulty: str = "easy"
    summary: str = "wait for the price to drop, then accept"
    def describe(self): return asdict(self)

TASKS = {"short": ToyTask("short", 3), "long": ToyTask("long", 6, "medium")}
ACTION_SCHEMA = ActionSchema({"accept": (), "wait": ()})
REWARD_TABLE = [{"component": "utility", "when": "end", "range": "[0, 1]", "formula": "(100 - price) / (100 - floor)"}]

def render_observation(obs): return f"round {obs['round']}: ask {obs['ask']}"

class ToyEnv:
    def __init__(self, task, seed=0):
        self.task, self.seed = task, seed
        self.delay = float(os.environ.get("EVALTOY_DELAY", "0"))   # seconds per step, to make runs slow enough to kill
        self.opponent_version = version_hash({"toy": task.patience})
    def reset(self, seed=None):
        self.seed = self.seed if seed is None else seed
        self.floor, self.ask, self.round, self.invalid = make_rng(self.seed, "toy").randint(50, 70), 100, 0, 0
        self.transcript = Transcript({"arena": "evaltoy", "task": self.task.name, "seed": self.seed, "opponent_version": self.opponent_version})
        self.transcript.add(0, "seller", "ask", float(self.ask))
        return self._obs()
    def _obs(self): return {"ask": self.ask, "round": self.round}
    def snapshot(self): return (self.ask, self.round, self.invalid)
    def restore(self, s): self.ask, self.round, self.invalid = s
    def _end(self, r, deal, u, reason, **info):
        return StepResult(self._obs(), r, True, {"reward_components": {"utility": r}, **info,
                          "episode": {"deal": deal, "utility": u, "rounds": self.round, "reason": reason}})
    def step(self, action):
        if self.delay: time.sleep(self.delay)
        try: a = ACTION_SCHEMA.parse(action)
        except ActionError as e:
            self.invalid += 1
            self.transcript.add(self.round, "buyer", "invalid", data={"error": e.to_dict()})
            if self.invalid >= MAX_INVALID_ACTIONS: return self._end(INVALID_ACTION_PENALTY, False, 0.0, "timeout", error=e.to_dict())
            return StepResult(self._obs(), INVALID_ACTION_PENALTY, False,
                              {"reward_components": {"invalid": INVALID_ACTION_PENALTY}, "error": e.to_dict()})
        self.round += 1
        if a["action"] == "accept":
            self.transcript.add(self.round, "buyer", "accept", float(self.ask))
            u = (100 - self.ask) / (100 - self.floor)
            return self._end(u, True, u, "accepted")
        self.transcript.add(self.round, "buyer", "wait")
        self.ask = max(self.floor, self.ask - 10)
        self.transcript.add(self.round, "seller", "ask", float(self.ask))
        if self.round >= self.task.patience: return self._end(0.0, False, 0.0, "expired")
        return StepResult(self._obs(), 0.0, False, {"reward_components": {}})

def make_env(task: str, seed: int = 0, **overrides):
    if task not in TASKS: raise ValueError(f"unknown task {task!r}; valid: {sorted(TASKS)}")
    return ToyEnv(TASKS[task], seed)
