"""worlds: the acceptance harness's own model of an agent learning on real tasks.

Written apart from the simulator in ``sim/`` (which was designed alongside the scheduler) so that
envsched is measured on a world it was not tuned on. Python 3 standard library only.

A *world* is the catalogue's tasks (their real text and tools), split per environment into
training tasks (written to the exchange directory's catalogue) and held-out tasks (never shown
to the scheduler), plus a learner: skills per source benchmark, per environment and per tool
action (the first word of a tool's name: ``get``, ``cancel``, ``calculate``, ...), and task
difficulty from the task's real text features (number of tools, dialogue turns, text length,
multi-turn environments). Three learner assumptions are offered (``WORLDS``):

* ``sharp``: success is a logistic function of (skill sum - difficulty) with a per-task
  sharpness; in every environment a share of the tasks (drawn per environment) is sharp, so at
  the start most of them are almost always or almost never solved, and flip as skills grow, as
  tasks of agent benchmarks do. Training tasks also gain a memory of their own (which never helps
  held-out tasks).
* ``chain``: a task is a chain of tool calls that must all succeed; each call succeeds with a
  logistic chance from the source, environment and action skills, raised to a power that grows
  with the dialogue's turns. Tasks with many calls start near 0 and one-call tasks near 1. No task
  memory; skills forget faster and drift.

* ``tools``: skills are the tools themselves (each tool name that at least two tasks list) and
  the environment; a task's chance is a steep logistic function of its environment's skill plus
  the mean skill of its tools, minus its difficulty. A skill's gain within one step saturates
  hyperbolically in the signal it gets, so many informative groups on the same tools add little
  and what a batch covers matters as much as whether its groups are informative. Added after the
  first two worlds' results, to probe that mechanism (named in issue 13 from the outside check),
  with its constants set, like theirs, on random choice alone.

* ``agentic``, ``plateau`` and ``giants`` live in agentworlds.py (their learners differ in kind: an explicit
  REINFORCE gradient over hidden sub-goal decisions, graded rewards, interference, a flaky
  grader, no transfer between environments of 105x different sizes); ``lookalike``,
  ``unlock`` and ``seesaw`` in trapworlds.py (similarity that misleads and rewards of 0, 0.5 and
  1; long-tailed difficulty, prerequisites and sudden unlocks; forgetting by conflicting
  environments; the first two with their own batch and group size);
  ``new_learner`` makes the learner of any world.

All learn GRPO-style without standard-deviation normalisation (a group's signal is its reward
variance, zero for an all-equal group), averaged over the batch, and forget towards their start.
Every random draw is keyed by (seed, purpose, ...), so two policies on one seed get the same world
and the same luck for the same task at the same step and success chance.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

WORLDS = ("sharp", "chain", "tools", "agentic", "plateau", "giants",  # the last three: agentworlds.py
          "lookalike", "unlock", "seesaw")  # trapworlds.py

_TOKEN_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_MIN_ACTION_TASKS = 5  # an action word shared by fewer tasks is the skill "other"
_MAX_ACTIONS = 4  # a task needs at most this many action skills (its catalogue's most common)
_MAX_TOOLS = 8  # tools world: a task needs at most this many tool skills


class CatalogueMissing(FileNotFoundError):
    """The catalogue file is absent: the harness cannot run on real tasks and says so."""


@dataclass
class Task:
    """One catalogue row and what the learner derives from it.

    ``features`` holds ``tools`` (count), ``turns`` (dialogue turns, at least 1), ``length``
    (text length / 600, at most 1) and ``multi`` (1 for a multi-turn environment or benchmark).
    ``actions`` are indices of action skills (at most _MAX_ACTIONS, most common first).
    """

    env: str
    task_id: str
    text: str
    tools: List[str]
    source: str
    features: Dict[str, float] = field(default_factory=dict)
    actions: List[int] = field(default_factory=list)
    tool_skills: List[int] = field(default_factory=list)  # tools world: indices of shared tools

    @property
    def key(self) -> Tuple[str, str]:
        """The pair (env, task_id) the protocol names the task by."""
        return (self.env, self.task_id)

    def row(self) -> Dict[str, object]:
        """The catalogue line written for envsched: the real fields, nothing the learner knows."""
        return {"env": self.env, "task_id": self.task_id, "text": self.text, "tools": self.tools,
                "source": self.source}


def load_catalogue(path: str) -> List[Task]:
    """Read a catalogue in the layout of catalog-real.jsonl (env, task_id, text, tools, source).

    Raises CatalogueMissing when the file is absent and ValueError on a line that is not a task.
    """
    if not os.path.exists(path):
        raise CatalogueMissing(path)
    tasks = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                tasks.append(_task_of(json.loads(line), path, n))
    if not tasks:
        raise ValueError(f"{path}: no tasks")
    _derive(tasks)
    return tasks


def _task_of(obj: Dict[str, object], path: str, n: int) -> Task:
    env, tid = obj.get("env"), obj.get("task_id")
    if not isinstance(env, str) or not env or tid is None:
        raise ValueError(f"{path}:{n}: a task needs env and task_id")
    tools = [t for t in obj.get("tools") or [] if isinstance(t, str)]
    return Task(env, str(tid), str(obj.get("text") or ""), tools, str(obj.get("source") or env.split("-")[0]))


def subset(tasks: Sequence[Task], envs: int, per_env: int) -> List[Task]:
    """The first per_env tasks of each of the first envs environments (catalogue order).

    For the smoke mode; the action skills are derived again on the subset.
    """
    order: List[str] = []
    kept: Dict[str, List[Task]] = {}
    for t in tasks:
        if t.env not in kept:
            if len(order) == envs:
                continue
            order.append(t.env)
            kept[t.env] = []
        if len(kept[t.env]) < per_env:
            kept[t.env].append(Task(t.env, t.task_id, t.text, t.tools, t.source))
    out = [t for e in order for t in kept[e]]
    _derive(out)
    return out


def action_word(tool: str) -> Optional[str]:
    """The first word of a tool name, lower case (``get_user_details`` -> ``get``,
    ``GorillaFileSystem`` -> ``gorilla``, ``math.factorial`` -> ``math``); None without a word."""
    toks = _TOKEN_RE.findall(tool)
    return toks[0].lower() if toks else None


def _derive(tasks: List[Task]) -> None:
    """Fill every task's features and action skills (skill 0 is "other")."""
    words = [sorted({w for w in map(action_word, t.tools) if w}) for t in tasks]
    count: Dict[str, int] = {}
    for ws in words:
        for w in ws:
            count[w] = count.get(w, 0) + 1
    common = sorted((w for w, c in count.items() if c >= _MIN_ACTION_TASKS), key=lambda w: (-count[w], w))
    index = {w: i + 1 for i, w in enumerate(common)}
    for t, ws in zip(tasks, words):
        ids = sorted({index.get(w, 0) for w in ws}, key=lambda i: (i == 0, i))
        t.actions = ids[:_MAX_ACTIONS] or [0]
        t.features = features(t)
    _derive_tools(tasks)


def _derive_tools(tasks: List[Task]) -> None:
    """Fill every task's tool skills: the tools (lower case) at least two tasks list, at most
    _MAX_TOOLS of them, the most widely listed first; skill indices start at 0."""
    count: Dict[str, int] = {}
    for t in tasks:
        for name in {x.lower() for x in t.tools}:
            count[name] = count.get(name, 0) + 1
    shared = sorted((n for n, c in count.items() if c >= 2), key=lambda n: (-count[n], n))
    index = {n: i for i, n in enumerate(shared)}
    for t in tasks:
        ids = sorted({index[x.lower()] for x in t.tools if x.lower() in index})
        t.tool_skills = ids[:_MAX_TOOLS]


def features(t: Task) -> Dict[str, float]:
    """The task's difficulty features from its real text and tools (see Task)."""
    multi = 1.0 if ("multi_turn" in t.env or "multi_step" in t.env or t.source.startswith("tau")) else 0.0
    turns = 1 + t.text.lower().count("user:") + 2 * multi
    return {"tools": float(len(t.tools)), "turns": float(turns), "length": min(1.0, len(t.text) / 600.0),
            "multi": multi}


def unit(*keys: object) -> float:
    """A uniform number in [0, 1) determined by keys alone."""
    h = hashlib.blake2b("\x1f".join(map(str, keys)).encode(), digest_size=8).digest()
    return (struct.unpack("<Q", h)[0] >> 11) / float(1 << 53)


def gauss(*keys: object) -> float:
    """A standard normal number determined by keys alone (Box-Muller)."""
    u1, u2 = unit(*keys, "g1"), unit(*keys, "g2")
    return math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)


def sigmoid(x: float) -> float:
    """The logistic function, safe for any finite x."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def split(tasks: Sequence[Task], seed: int, share: float = 0.15) -> Tuple[List[int], List[int]]:
    """Indices of training and held-out tasks: share of each environment held out (at least 1,
    and at least 1 left to train), drawn per seed."""
    by_env: Dict[str, List[int]] = {}
    for i, t in enumerate(tasks):
        by_env.setdefault(t.env, []).append(i)
    train, held = [], []
    for env, idx in by_env.items():
        rng = random.Random(f"split/{seed}/{env}")
        order = sorted(idx, key=lambda i: rng.random())
        k = min(max(1, round(share * len(idx))), len(idx) - 1)
        held.extend(order[:k])
        train.extend(order[k:])
    return sorted(train), sorted(held)


@dataclass
class Params:
    """A world's learner constants (fixed per world; never per policy or seed)."""

    difficulty: float  # base difficulty
    per_tool: float  # difficulty per log2(1 + tools)
    per_turn: float  # difficulty per dialogue turn beyond the first
    per_length: float  # difficulty per unit of text length (600 characters)
    per_multi: float  # difficulty of multi-turn environments
    residual: float  # task residual's standard deviation
    env_sd: float  # environment skill's standard deviation at the start
    action_sd: float  # action skill's standard deviation at the start
    rate: float  # learning rate
    ceiling: float  # skills' gains fade as they rise this far above their start
    forget: float  # share of the distance to the start lost per step
    walk: float  # standard deviation of the skills' random walk per step
    memory: float  # a training task's own memory gain per unit of signal (sharp only)
    steep: float = 1.0  # tools: the slope of every task's logistic curve
    saturation: float = 0.0  # tools: a skill's gain per step is rate * g / (1 + g / saturation)


# Set from random choice alone on seeds 1001-1002, before envsched was run on these worlds: random
# wastes about half its groups or more, the held-out score starts near 0.35-0.5 and random's curve
# flattens within 120 steps. Never changed after seeing envsched's results.
PARAMS = {
    "sharp": Params(difficulty=-0.5, per_tool=0.25, per_turn=0.2, per_length=0.5, per_multi=0.4, residual=1.4,
                    env_sd=0.6, action_sd=0.5, rate=0.3, ceiling=0.6, forget=0.02, walk=0.0, memory=0.15),
    "chain": Params(difficulty=-1.8, per_tool=0.0, per_turn=0.0, per_length=0.8, per_multi=0.3, residual=2.0,
                    env_sd=0.9, action_sd=1.2, rate=1.6, ceiling=1.0, forget=0.035, walk=0.02, memory=0.0),
    "tools": Params(difficulty=-0.4, per_tool=0.2, per_turn=0.2, per_length=0.5, per_multi=0.4, residual=1.2,
                    env_sd=0.6, action_sd=0.6, rate=5.0, ceiling=1.0, forget=0.02, walk=0.0, memory=0.0,
                    steep=2.5, saturation=0.05),
}


def new_learner(world: str, tasks: Sequence[Task], seed: int):
    """The learner of world on seed: a Learner, or one of agentworlds.py's. Every learner has
    p(i) (expected reward now), informative(i, g), rollout(i, step, g), update(step, groups,
    batch), heldout(held), heldout_tasks(held) and a skill list ``level``."""
    if world in PARAMS:
        return Learner(world, tasks, seed)
    import agentworlds  # here: agentworlds imports this module

    if world in agentworlds.AGENT_WORLDS:
        return agentworlds.new(world, tasks, seed)
    import trapworlds

    if world in trapworlds.TRAP_WORLDS:
        return trapworlds.new(world, tasks, seed)
    raise ValueError(f"unknown world {world!r}: choose one of {', '.join(WORLDS)}")


class Learner:
    """The policy being trained in one world on one seed.

    Skills are one array: index 0.. for sources, then environments, then action words. ``p(i)`` is
    the true success chance of task i now; ``update(step, groups)`` applies one training step.
    """

    def __init__(self, world: str, tasks: Sequence[Task], seed: int) -> None:
        if world not in PARAMS:
            raise ValueError(f"unknown world {world!r}: choose one of {', '.join(WORLDS)}")
        self.world, self.tasks, self.seed, self.prm = world, tasks, seed, PARAMS[world]
        self._index_skills()
        self.start = [self._start_level(k) for k in range(self.n_skills)]
        self.level = list(self.start)
        self.memory = [0.0] * len(tasks)
        self.hard = [self._hardness(i) for i in range(len(tasks))]
        self.sharp = [self._sharpness(i) for i in range(len(tasks))]

    def _index_skills(self) -> None:
        sources = sorted({t.source for t in self.tasks})
        envs = sorted({t.env for t in self.tasks})
        self.src_of = {s: i for i, s in enumerate(sources)}
        self.env_of = {e: len(sources) + i for i, e in enumerate(envs)}
        self.action_base = len(sources) + len(envs)
        self.n_skills = self.action_base + 1 + max(a for t in self.tasks for a in t.actions)
        self.kinds = ["source"] * len(sources) + ["env"] * len(envs)
        self.kinds += ["action"] * (self.n_skills - self.action_base)
        self.tool_base = self.n_skills
        if self.world == "tools":
            self.n_skills += 1 + max((k for t in self.tasks for k in t.tool_skills), default=0)
            self.kinds += ["action"] * (self.n_skills - self.tool_base)

    def _start_level(self, k: int) -> float:
        sd = {"source": 0.3, "env": self.prm.env_sd, "action": self.prm.action_sd}[self.kinds[k]]
        return sd * gauss(self.world, self.seed, "skill", k)

    def _hardness(self, i: int) -> float:
        t, p = self.tasks[i], self.prm
        f = t.features
        d = p.difficulty + p.per_tool * math.log2(1 + f["tools"]) + p.per_turn * (f["turns"] - 1)
        d += p.per_length * f["length"] + p.per_multi * f["multi"]
        return d + p.residual * gauss(self.world, self.seed, "residual", t.env, t.task_id)

    def _sharpness(self, i: int) -> float:
        """sharp: 4 for a share of each environment's tasks (share drawn per environment in
        0.3-0.9), else 1.2. chain: the exponent of each call, 1 + 0.35 per turn beyond the first."""
        t = self.tasks[i]
        if self.world == "chain":
            return 1.0 + 0.35 * (t.features["turns"] - 1)
        share = 0.3 + 0.6 * unit(self.world, self.seed, "sharp-share", t.env)
        return 4.0 if unit(self.world, self.seed, "sharp", t.env, t.task_id) < share else 1.2

    def skills_of(self, i: int) -> List[Tuple[int, float]]:
        """(skill, weight) pairs of task i: source 1, environment 1, actions 1/n each."""
        t = self.tasks[i]
        w = 1.0 / len(t.actions)
        return [(self.src_of[t.source], 1.0), (self.env_of[t.env], 1.0)] + \
            [(self.action_base + a, w) for a in t.actions]

    def p(self, i: int) -> float:
        """True success chance of task i now (held-out tasks have no memory)."""
        if self.world == "chain":
            return self._p_chain(i)
        if self.world == "tools":
            return self._p_tools(i)
        t = self.tasks[i]
        a = self.level[self.src_of[t.source]] + self.level[self.env_of[t.env]]
        a += sum(self.level[self.action_base + x] for x in t.actions) / len(t.actions)
        return sigmoid(self.sharp[i] * (a - self.hard[i]) + self.memory[i])

    def _p_tools(self, i: int) -> float:
        t = self.tasks[i]
        z = self.level[self.env_of[t.env]] - self.hard[i]
        if t.tool_skills:
            z += sum(self.level[self.tool_base + k] for k in t.tool_skills) / len(t.tool_skills)
        return sigmoid(self.prm.steep * z)

    def _call_chances(self, i: int) -> List[float]:
        t = self.tasks[i]
        base = self.level[self.src_of[t.source]] + self.level[self.env_of[t.env]] - self.hard[i]
        return [sigmoid(base + self.level[self.action_base + a]) for a in t.actions]

    def _p_chain(self, i: int) -> float:
        p = 1.0
        for q in self._call_chances(i):
            p *= q
        return p ** self.sharp[i]

    def informative(self, i: int, g: int) -> float:
        """The chance that a group of g rollouts of task i has unequal rewards."""
        p = self.p(i)
        return 1.0 - p ** g - (1.0 - p) ** g

    def rollout(self, i: int, step: int, g: int) -> List[float]:
        """g binary rewards of task i at step; the luck is keyed by (seed, step, task, index)."""
        p, t = self.p(i), self.tasks[i]
        return [1.0 if unit(self.world, self.seed, "roll", step, t.env, t.task_id, j) < p else 0.0
                for j in range(g)]

    def update(self, step: int, groups: Sequence[Tuple[int, Sequence[float]]], batch: int) -> None:
        """One training step on groups (task index, rewards), averaged over batch groups."""
        grad = [0.0] * self.n_skills
        for i, rewards in groups:
            m = sum(rewards) / len(rewards)
            sig = 4.0 * m * (1.0 - m)  # reward variance, scaled into [0, 1]
            if sig > 0:
                self._accumulate(i, sig, grad)
                self.memory[i] += self.prm.memory * sig
        for k in range(self.n_skills):
            self.level[k] += self._change(step, k, grad[k] / batch)

    def _accumulate(self, i: int, sig: float, grad: List[float]) -> None:
        if self.world == "chain":
            qs, t = self._call_chances(i), self.tasks[i]
            e = self.sharp[i]
            for a, q in zip(t.actions, qs):
                share = e * (1.0 - q)
                grad[self.action_base + a] += sig * share
                grad[self.src_of[t.source]] += sig * share / len(qs)
                grad[self.env_of[t.env]] += sig * share / len(qs)
            return
        if self.world == "tools":
            t = self.tasks[i]
            grad[self.env_of[t.env]] += sig
            for k in t.tool_skills:
                grad[self.tool_base + k] += sig / len(t.tool_skills)
            return
        for k, w in self.skills_of(i):
            grad[k] += sig * w * min(self.sharp[i], 2.0)

    def _change(self, step: int, k: int, g: float) -> float:
        p = self.prm
        above = max(0.0, self.level[k] - self.start[k])
        if p.saturation:
            g = g / (1.0 + g / p.saturation)  # many groups on one skill in one step add little
        gain = p.rate * g * math.exp(-above / p.ceiling)
        walk = p.walk * gauss(self.world, self.seed, "walk", step, k) if p.walk else 0.0
        return gain - p.forget * (self.level[k] - self.start[k]) + walk

    def heldout(self, held: Sequence[int]) -> float:
        """Mean true success chance over each environment's held-out tasks, environments weighed
        equally."""
        return heldout_by_env(self.tasks, self.p, held)

    def heldout_tasks(self, held: Sequence[int]) -> float:
        """Mean true success chance over all held-out tasks, each task weighed equally (so the
        large environments count most, as in a benchmark's overall score)."""
        return sum(self.p(i) for i in held) / len(held)


def heldout_by_env(tasks: Sequence[Task], p, held: Sequence[int]) -> float:
    """Mean of p(i) over each environment's held-out tasks, environments weighed equally: the
    held-out score of every world's learner."""
    by_env: Dict[str, List[float]] = {}
    for i in held:
        by_env.setdefault(tasks[i].env, []).append(p(i))
    return sum(sum(v) / len(v) for v in by_env.values()) / len(by_env)
