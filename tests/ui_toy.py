"A tiny bazaar-like arena for the UI tests."
from dataclasses import dataclass, asdict
from types import SimpleNamespace
from bazaarbatna.core import (ActionSchema, Field, ActionError, StepResult, Transcript, INVALID_ACTION_PENALTY,
                              MAX_INVALID_ACTIONS, version_hash, make_rng)

@dataclass
class Task:
    name: str; max_rounds: int = 5; difficulty: str = "easy"; summary: str = "haggle"
    def describe(self): return asdict(self)

TASKS = {"haggle": Task("haggle"), "quick": Task("quick", 2)}
ACTION_SCHEMA = ActionSchema({"offer": (Field("price", "number", lo=0.01, hi=1e7),), "accept": (), "walk": ()},
                             common=(Field("message", "string", required=False, max_len=200),))

class Env:
    def __init__(self, task, seed=0, opponent=None, human_seller=False):
        self.task, self.seed, self.opponent, self.human_seller = task, seed, opponent, human_seller
        self.opponent_version = version_hash({"toy": 1})
    def reset(self, seed=None):
        if seed is not None: self.seed = seed
        self.ask, self.floor, self.round, self.invalid, self.done, self.last_offer = 600.0, 400.0 + self.seed, 0, 0, False, None
        self.transcript = Transcript({"arena": "toy", "task": self.task.name, "seed": self.seed, "opponent_version": self.opponent_version, "currency": "INR"})
        self.transcript.add(0, "seller", "ask", self.ask, "Pure brass! Only today at this price.")
        return self._obs()
    def _obs(self):
        return {"round": self.round, "max_rounds": self.task.max_rounds, "ask": self.ask, "budget": 500, "currency": "INR",
                "listing": {"title": "Brass Lamp"}, "valid_actions": [] if self.done else (["offer", "walk"] if self.last_offer is None else ["offer", "accept", "walk"])}
    def _bad(self, e):
        self.invalid += 1
        self.transcript.add(self.round, "buyer", "invalid", data={"error": e.to_dict()})
        return StepResult(self._obs(), INVALID_ACTION_PENALTY, False, {"reward_components": {"invalid": INVALID_ACTION_PENALTY}, "error": e.to_dict()})
    def step(self, action):
        try:
            a = ACTION_SCHEMA.parse(action)
            if a["action"] == "offer" and a["price"] > 500: raise ActionError("out_of_range", "price", "price is above your budget 500")
            if a["action"] == "accept" and self.last_offer is None: raise ActionError("invalid_now", "action", "nothing to accept yet")
        except ActionError as e: return self._bad(e)
        self.round += 1
        self.transcript.add(self.round, "buyer", a["action"], a.get("price"), a.get("message", ""))
        if a["action"] == "walk": return self._end(False, 0.0, "walked")
        if a["action"] == "accept":
            self.price = self.ask; return self._end(True, (500 - self.ask) / 100, "accepted")
        self.last_offer = a["price"]
        if a["price"] >= self.floor:
            self.price = a["price"]; self.transcript.add(self.round, "seller", "accept", a["price"], "Theek hai, done.")
            return self._end(True, (500 - a["price"]) / 100, "deal")
        self.ask = max(self.floor, self.ask - 50)
        self.transcript.add(self.round, "seller", "counter", self.ask, "I have 3 other offers, final price " + str(int(self.ask)))
        if self.round >= self.task.max_rounds: return self._end(False, 0.0, "expired")
        return StepResult(self._obs(), 0.0, False, {"reward_components": {"shaping": 0.0}})
    def _end(self, deal, u, reason):
        self.done = True
        ep = {"deal": deal, "utility": u, "rounds": self.round, "reason": reason}
        if deal: ep["price"] = self.price
        return StepResult(self._obs(), u, True, {"reward_components": {"utility": u}, "episode": ep})
    def snapshot(self): return {k: v for k, v in self.__dict__.items() if k != "transcript"}
    def restore(self, s): self.__dict__.update(s)

def make_env(task, seed=0, **kw):
    if task not in TASKS: raise ValueError(f"unknown task {task!r}; valid: {sorted(TASKS)}")
    return Env(TASKS[task], seed, **kw)

class Stepper:
    "Offers 300, then +40 a round."
    name = "stepper"
    def reset(self, seed): self.n = 0
    def act(self, obs): self.n += 1; return {"action": "offer", "price": 260 + 40 * self.n, "message": f"{260+40*self.n} chalega?"}

class Junk:
    name = "junk"
    def reset(self, seed): pass
    def act(self, obs): return "please sell it to me"

def install(name="toyb"):
    from bazaarbatna import arenas
    arenas.ARENAS[name] = __name__
    arenas._loaded[name] = SimpleNamespace(name=name, TASKS=TASKS, make_env=make_env, ACTION_SCHEMA=ACTION_SCHEMA, REWARD_TABLE=[],
        render_observation=lambda o: f"Round {o['round']}: ask {o['ask']}", POLICIES={"expert": Stepper, "junk": Junk},
        POLICY_DOCS={"expert": "steps up", "junk": "prose"}, REFERENCES={}, env_module=None, policies_module=None)
    return name
