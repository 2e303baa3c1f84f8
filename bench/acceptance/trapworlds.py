"""trapworlds: three learner models for the acceptance harness that set traps for a scheduler of
GRPO rollouts, written by a third engineer playing the outsider (from README.md, PROTOCOL.md,
issue 13, SEED.md, the catalogue's README and public knowledge of agent RL: GRPO, DAPO's dynamic
sampling, curriculum learning; without reading sim/, propagate/, batcher/ or schedule/).

Each world also names the trainer's shape it is meant for (``SHAPES``: batch size B and group
size G, the same 512 rollouts a step as the harness's default B = 64, G = 8), because real
trainers vary them; ``--batch-size`` and ``--group-size`` still override it.

* ``lookalike`` (B = 128, G = 4): similarity misleads. A task is a tool call: pick the right
  tool, then fill in its arguments. Every task has a hidden argument complexity (level 0-3:
  flat values, a list, a nested object, several nested objects), drawn per task with shares
  drawn per environment, and nothing in its text or tools tells it: tasks that list the same
  tools in the same environment with near-identical text are as different as any two. The
  rewards have three levels, as partial-credit graders give: 0 (wrong tool), 0.5 (right tool,
  wrong arguments) and 1. So a task stuck at level 3 behind an easy tool choice returns groups
  of all 0.5: a mean of one half with no variance at all, the opposite of what a 0/1 reading
  of the mean predicts. Skills: each environment's and each tool action's (tool choice), and
  each (action, level) pair's (arguments); training level c also prepares level c + 1 a little.
* ``unlock`` (B = 32, G = 16): long-tailed difficulty and sudden unlocks. Skills are the tool
  actions and, for multi-turn tasks, a composition skill of each benchmark; a task needs all of
  its skills (its chance is a steep logistic of the weakest one less its difficulty, whose
  residual has a long exponential tail), so most tasks start never solved and a multi-action
  task waits for every prerequisite. Each skill learns in a latent value that shows only a
  little at first and then all at once when it crosses the skill's own threshold (grokking-like):
  a whole cluster of tasks, every task using that action, flips from never solved to solvable
  within a few steps, long after a scheduler saw them all-equal. Only the bottleneck skill of a
  task (its weakest) learns from its groups.
* ``seesaw`` (B = 64, G = 8): forgetting by conflict. Besides each environment's and each tool
  action's skill, the policy has a shared style, a few numbers every task depends on through
  its environment's leaning: calling a tool against abstaining (irrelevance environments lean
  the other way from every other), asking the user against acting at once (multi-turn against
  single-turn environments), and one leaning drawn per environment. Training an environment
  moves the style its way, which lowers the environments that lean the other way: what was
  solved is lost (tasks seen always solved fail again) unless the batch keeps the balance, and
  the held-out score weighs environments equally.

All three learn by REINFORCE on each rollout's hidden decisions (advantage = reward - the group's
mean, GRPO without the standard-deviation normalisation), so an all-equal group teaches nothing,
averaged over the batch, and forget towards their start. Every random draw is keyed
(worlds.unit, worlds.gauss), so two policies on one seed see the same world and the same luck.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import List, Sequence, Tuple

import agentworlds
import worlds

TRAP_WORLDS = ("lookalike", "unlock", "seesaw")

# The trainer's shape each world is meant for: (batch size, group size); seesaw takes the
# harness's default (64, 8).
SHAPES = {"lookalike": (128, 4), "unlock": (32, 16)}

_LEVELS = 4  # lookalike: argument complexity levels


def _exponential(*keys: object) -> float:
    """A standard exponential number determined by keys alone."""
    return -math.log(1.0 - worlds.unit(*keys))


# -- lookalike ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LookalikeParams:
    """The lookalike world's constants (see PARAMS_LOOKALIKE)."""

    tool_bias: float  # tool choice logit of a one-tool task at the start
    per_tool: float  # less per log2(1 + tools listed): choosing among many tools is harder
    tool_residual: float  # task residual of the tool choice
    level_hard: Tuple[float, ...]  # argument difficulty of each complexity level
    arg_residual: float  # task residual of the arguments
    steep: float  # slope of the arguments' logistic curve
    skill_sd: float  # spread of every skill at the start
    carry: float  # share of a level's gain that also goes to the next level
    rate: float
    ceiling: float
    forget: float


# Set on random choice alone (B = 128, G = 4, seeds 1001-1002), before envsched ran on this
# world, and never changed after: random wastes 50-55% of its groups (42-44% in steps 1-10; a
# group of all 0.5 counts as wasted), the held-out score rises from 0.54-0.58 to 0.63-0.66 in 120
# steps, still rising (+0.006 over steps 100-120). First try; only the levels' start shares were
# looked at before (44% of random's first groups all-equal).
PARAMS_LOOKALIKE = LookalikeParams(tool_bias=3.0, per_tool=0.6, tool_residual=1.0,
                                   level_hard=(-2.5, 0.0, 2.5, 5.0), arg_residual=1.0, steep=1.5,
                                   skill_sd=0.5, carry=0.3, rate=6.0, ceiling=2.0, forget=0.005)


class LookalikeLearner(agentworlds._Base):
    """The ``lookalike`` world (module doc). Skills: environments, then tool actions, then
    (action, level) argument skills."""

    world = "lookalike"

    def __init__(self, tasks: Sequence[worlds.Task], seed: int, prm: LookalikeParams = PARAMS_LOOKALIKE) -> None:
        super().__init__(tasks, seed)
        self.prm, self.rate, self.ceiling, self.forget = prm, prm.rate, prm.ceiling, prm.forget
        envs = sorted({t.env for t in tasks})
        self.env_of = {e: k for k, e in enumerate(envs)}
        self.n_actions = 1 + max(a for t in tasks for a in t.actions)
        self.tool_base = len(envs)
        self.arg_base = self.tool_base + self.n_actions
        n = self.arg_base + self.n_actions * _LEVELS
        self.start = [prm.skill_sd * worlds.gauss(self.world, seed, "skill", k) for k in range(n)]
        self.level = list(self.start)
        self.levels = [self._complexity(t) for t in tasks]
        self.tool_hard = [self._tool_hardness(t) for t in tasks]
        self.arg_hard = [prm.level_hard[c] + prm.arg_residual * worlds.gauss(self.world, seed, "arg", t.env, t.task_id)
                         for t, c in zip(tasks, self.levels)]

    def _complexity(self, t: worlds.Task) -> int:
        """The task's hidden argument level: drawn per task, with shares drawn per environment
        (flat Dirichlet), independent of its text and tools."""
        w = [_exponential(self.world, self.seed, "shares", t.env, c) for c in range(_LEVELS)]
        u, acc = worlds.unit(self.world, self.seed, "level", t.env, t.task_id) * sum(w), 0.0
        for c, wc in enumerate(w):
            acc += wc
            if u < acc:
                return c
        return _LEVELS - 1

    def _tool_hardness(self, t: worlds.Task) -> float:
        p = self.prm
        d = -p.tool_bias + p.per_tool * math.log2(1 + t.features["tools"])
        return d + p.tool_residual * worlds.gauss(self.world, self.seed, "tool", t.env, t.task_id)

    def _arg_skills(self, i: int) -> List[int]:
        c = self.levels[i]
        return [self.arg_base + a * _LEVELS + c for a in self.tasks[i].actions]

    def chances(self, i: int) -> Tuple[float, float]:
        """(right tool, right arguments given the right tool) for task i now."""
        t = self.tasks[i]
        acts = t.actions
        zt = self.level[self.env_of[t.env]] + sum(self.level[self.tool_base + a] for a in acts) / len(acts)
        za = sum(self.level[k] for k in self._arg_skills(i)) / len(acts) - self.arg_hard[i]
        return worlds.sigmoid(zt - self.tool_hard[i]), worlds.sigmoid(self.prm.steep * za)

    def _dist(self, i: int) -> Tuple[float, float, float]:
        """P(reward 0), P(0.5), P(1)."""
        qt, qa = self.chances(i)
        return 1.0 - qt, qt * (1.0 - qa), qt * qa

    def p(self, i: int) -> float:
        """The task's expected reward now."""
        _, half, full = self._dist(i)
        return 0.5 * half + full

    def informative(self, i: int, g: int) -> float:
        """The chance that a group of g rollouts has unequal rewards."""
        return 1.0 - sum(x ** g for x in self._dist(i))

    def rollout(self, i: int, step: int, g: int) -> List[float]:
        """g rewards of task i at step, each 0, 0.5 or 1."""
        qt, qa = self.chances(i)
        t, out = self.tasks[i], []
        for j in range(g):
            if worlds.unit(self.world, self.seed, "roll-tool", step, t.env, t.task_id, j) >= qt:
                out.append(0.0)
            else:
                ok = worlds.unit(self.world, self.seed, "roll-args", step, t.env, t.task_id, j) < qa
                out.append(1.0 if ok else 0.5)
        return out

    def update(self, step: int, groups: Sequence[Tuple[int, Sequence[float]]], batch: int) -> None:
        """One REINFORCE step: the reward tells each rollout's decisions (0: wrong tool; 0.5:
        right tool, wrong arguments; 1: both right)."""
        grad = [0.0] * len(self.level)
        for i, rewards in groups:
            self._accumulate(i, rewards, grad)
        self._apply(grad, batch)

    def _accumulate(self, i: int, rewards: Sequence[float], grad: List[float]) -> None:
        mean, (qt, qa), t = sum(rewards) / len(rewards), self.chances(i), self.tasks[i]
        n, g = len(t.actions), len(rewards)
        for r in rewards:
            adv = r - mean
            if adv == 0:
                continue
            dt = adv * ((1.0 if r >= 0.5 else 0.0) - qt) / g
            grad[self.env_of[t.env]] += dt
            for a in t.actions:
                grad[self.tool_base + a] += dt / n
            if r < 0.5:
                continue
            da = adv * self.prm.steep * ((1.0 if r >= 1.0 else 0.0) - qa) / g
            for k in self._arg_skills(i):
                grad[k] += da / n
                if self.levels[i] + 1 < _LEVELS:
                    grad[k + 1] += self.prm.carry * da / n


# -- unlock ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnlockParams:
    """The unlock world's constants (see PARAMS_UNLOCK)."""

    base: float  # difficulty of a one-tool task with no residual
    per_tool: float  # per log2(1 + tools listed)
    per_multi: float  # multi-turn tasks
    tail: float  # mean of the difficulty's exponential residual (the long tail)
    steep: float  # slope of every task's logistic curve
    skill_sd: float  # spread of the skills at the start
    lead: float  # what the latent value shows at once (per unit)
    jump: float  # what it shows when it crosses the threshold
    sharpness: float  # how suddenly it does
    threshold: float  # mean threshold (each skill's drawn in 0.5-1.5 times it)
    rate: float
    ceiling: float
    forget: float


# Set on random choice alone (B = 32, G = 16, seeds 1001-1002), before envsched ran on this
# world, and never changed after: random wastes 52-55% of its groups (50-52% in steps 1-10), the
# held-out score rises from 0.39-0.40 to 0.63-0.65 in 120 steps, still rising (+0.02 over steps
# 100-120), in jumps (seed 1002: +0.057 over steps 80-100). Tries: base 0.5 left 97% of the tasks
# below 0.1 (92% of random's first groups all-equal); base -2.0 with rate 20 and threshold 1.5
# flattened by step 100 (+0.005 over 100-120) and wasted 64-66%; rate 6 was as slow as 10 with
# threshold 2.5.
PARAMS_UNLOCK = UnlockParams(base=-2.0, per_tool=0.3, per_multi=1.0, tail=1.5, steep=3.0, skill_sd=0.5,
                             lead=0.3, jump=2.5, sharpness=6.0, threshold=2.5, rate=10.0, ceiling=4.0,
                             forget=0.003)


class UnlockLearner(agentworlds._BinaryRewards):
    """The ``unlock`` world (module doc). ``level`` holds the latent values: tool actions, then
    each source's composition skill; what a skill shows is shown()."""

    world = "unlock"

    def __init__(self, tasks: Sequence[worlds.Task], seed: int, prm: UnlockParams = PARAMS_UNLOCK) -> None:
        super().__init__(tasks, seed)
        self.prm, self.rate, self.ceiling, self.forget = prm, prm.rate, prm.ceiling, prm.forget
        n_actions = 1 + max(a for t in tasks for a in t.actions)
        sources = sorted({t.source for t in tasks})
        self.comp_of = {s: n_actions + k for k, s in enumerate(sources)}
        n = n_actions + len(sources)
        self.start = [0.0] * n
        self.level = list(self.start)
        self.origin = [prm.skill_sd * worlds.gauss(self.world, seed, "skill", k) for k in range(n)]
        self.threshold = [prm.threshold * (0.5 + worlds.unit(self.world, seed, "threshold", k)) for k in range(n)]
        self.needs = [self._needs(t) for t in tasks]
        self.hard = [self._hardness(t) for t in tasks]

    def _needs(self, t: worlds.Task) -> List[int]:
        out = list(t.actions)
        if t.features["multi"]:
            out.append(self.comp_of[t.source])
        return out

    def _hardness(self, t: worlds.Task) -> float:
        p = self.prm
        d = p.base + p.per_tool * math.log2(1 + t.features["tools"]) + p.per_multi * t.features["multi"]
        return d + p.tail * _exponential(self.world, self.seed, "tail", t.env, t.task_id)

    def shown(self, k: int) -> float:
        """What skill k shows now: its origin, a little of its latent value at once, and a jump
        as the latent value crosses the skill's threshold (no jump shows at latent 0)."""
        p, x = self.prm, self.level[k]
        s0 = worlds.sigmoid(-p.sharpness * self.threshold[k])
        jump = (worlds.sigmoid(p.sharpness * (x - self.threshold[k])) - s0) / (1.0 - s0)
        return self.origin[k] + p.lead * x + p.jump * jump

    def _bottleneck(self, i: int) -> Tuple[int, float]:
        """The task's weakest needed skill and what it shows."""
        return min(((k, self.shown(k)) for k in self.needs[i]), key=lambda kv: (kv[1], kv[0]))

    def p(self, i: int) -> float:
        """The task's success chance now."""
        return worlds.sigmoid(self.prm.steep * (self._bottleneck(i)[1] - self.hard[i]))

    def update(self, step: int, groups: Sequence[Tuple[int, Sequence[float]]], batch: int) -> None:
        """One REINFORCE step: the bottleneck skill's latent value moves by mean(advantage *
        (reward - p)) times the slope (the gradient taken as if the skill showed it all)."""
        grad = [0.0] * len(self.level)
        for i, rewards in groups:
            mean, p = sum(rewards) / len(rewards), self.p(i)
            g = self.prm.steep * sum((r - mean) * (r - p) for r in rewards) / len(rewards)
            grad[self._bottleneck(i)[0]] += g
        self._apply(grad, batch)


# -- seesaw ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeesawParams:
    """The seesaw world's constants (see PARAMS_SEESAW)."""

    difficulty: float  # base difficulty
    per_tool: float  # per log2(1 + tools listed)
    per_multi: float  # multi-turn tasks
    residual: float  # task residual's standard deviation
    steep: float  # slope of every task's logistic curve
    skill_sd: float  # spread of the environment and action skills at the start
    lean: float  # size of the environments' leanings
    style_rate: float  # the style's learning rate against the skills'
    rate: float
    ceiling: float
    forget: float


# Set on random choice alone (B = 64, G = 8, seeds 1001-1002), before envsched ran on this world,
# and never changed after: random wastes 54-58% of its groups (37-44% in steps 1-10), the held-out
# score rises from 0.42-0.43 to 0.63-0.69 in 120 steps, still rising (+0.013-0.018 over steps
# 100-120), while a few environments fall (seed 1001: bfcl-irrelevance 0.59 to 0.00,
# ace-normal_multi_turn_user_adjust 0.37 to 0.00, ace-special_irrelevant 0.38 to 0.05). Tries:
# rate 6 learned too fast and wasted 77-82% (steep 1.5) or 63-71% (steep 2.5); rate 2.5 with
# leanings of 1.5 wasted 65-69% and flattened.
PARAMS_SEESAW = SeesawParams(difficulty=-0.5, per_tool=0.3, per_multi=0.8, residual=1.5, steep=1.5,
                             skill_sd=0.5, lean=1.0, style_rate=1.0, rate=2.0, ceiling=1.5, forget=0.003)

_STYLE = 3  # seesaw: the style's numbers (call against abstain, ask against act, drawn)


class SeesawLearner(agentworlds._BinaryRewards):
    """The ``seesaw`` world (module doc). Skills: environments, tool actions, then the style."""

    world = "seesaw"

    def __init__(self, tasks: Sequence[worlds.Task], seed: int, prm: SeesawParams = PARAMS_SEESAW) -> None:
        super().__init__(tasks, seed)
        self.prm, self.rate, self.ceiling, self.forget = prm, prm.rate, prm.ceiling, prm.forget
        envs = sorted({t.env for t in tasks})
        self.env_of = {e: k for k, e in enumerate(envs)}
        n_actions = 1 + max(a for t in tasks for a in t.actions)
        self.action_base, self.style_base = len(envs), len(envs) + n_actions
        n = self.style_base + _STYLE
        self.start = [prm.skill_sd * worlds.gauss(self.world, seed, "skill", k) for k in range(self.style_base)]
        self.start += [0.0] * _STYLE
        self.level = list(self.start)
        multi = {t.env: t.features["multi"] for t in tasks}
        self.leaning = {e: self._leaning(e, multi[e]) for e in envs}
        self.hard = [self._hardness(t) for t in tasks]
        assert len(self.level) == n

    def _leaning(self, env: str, multi: float) -> List[float]:
        """The environment's leaning on each of the style's numbers."""
        p = self.prm
        call = -1.0 if "irrelevan" in env else 0.3
        ask = 0.6 if multi else -0.4
        drawn = 0.6 * worlds.gauss(self.world, self.seed, "lean", env)
        return [p.lean * call, p.lean * ask, p.lean * drawn]

    def _hardness(self, t: worlds.Task) -> float:
        p, f = self.prm, t.features
        d = p.difficulty + p.per_tool * math.log2(1 + f["tools"]) + p.per_multi * f["multi"]
        return d + p.residual * worlds.gauss(self.world, self.seed, "residual", t.env, t.task_id)

    def skills_of(self, i: int) -> List[Tuple[int, float]]:
        """(skill, weight): the environment 1, its actions 1 together, the style by the
        environment's leaning."""
        t = self.tasks[i]
        out = [(self.env_of[t.env], 1.0)] + [(self.action_base + a, 1.0 / len(t.actions)) for a in t.actions]
        return out + [(self.style_base + k, v) for k, v in enumerate(self.leaning[t.env])]

    def p(self, i: int) -> float:
        """The task's success chance now."""
        z = sum(self.level[k] * w for k, w in self.skills_of(i)) - self.hard[i]
        return worlds.sigmoid(self.prm.steep * z)

    def update(self, step: int, groups: Sequence[Tuple[int, Sequence[float]]], batch: int) -> None:
        """One REINFORCE step: every skill moves by mean(advantage * (reward - p)) times its
        weight in the task (the style by the environment's leaning, so it moves the trained
        environment's way, whatever that does to the others)."""
        grad = [0.0] * len(self.level)
        for i, rewards in groups:
            mean, p = sum(rewards) / len(rewards), self.p(i)
            g = self.prm.steep * sum((r - mean) * (r - p) for r in rewards) / len(rewards)
            for k, w in self.skills_of(i):
                grad[k] += g * w * (self.prm.style_rate if k >= self.style_base else 1.0)
        self._apply_style(grad, batch)

    def _apply_style(self, grad: List[float], batch: int) -> None:
        """_apply for the skills; the style is not faded (it has no start to rise above, and
        moves both ways), only pulled back towards 0 by forgetting."""
        style = grad[self.style_base:]
        self._apply(grad[:self.style_base] + [0.0] * _STYLE, batch)
        for k, g in enumerate(style):
            self.level[self.style_base + k] += self.rate * g / batch


def new(world: str, tasks: Sequence[worlds.Task], seed: int):
    """The learner of one of TRAP_WORLDS."""
    return {"lookalike": LookalikeLearner, "unlock": UnlockLearner, "seesaw": SeesawLearner}[world](tasks, seed)
