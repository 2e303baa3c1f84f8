#!/usr/bin/env python3
"""harness: an acceptance test of envsched written apart from its simulator.

It plays a GRPO trainer against the real ``envsched run`` binary through the file protocol
(PROTOCOL.md), as a new user would (the stdlib client of clients/python, the daemon's defaults),
on the real tasks of catalog-real.jsonl, with a learner of its own (worlds.py), and compares the
daemon with random choice and an oracle that knows every task's true success chance:

    python3 bench/acceptance/harness.py --bin ./envsched --seeds 1-10 --world sharp,chain

Per world it prints the held-out score at step 40 and the best in the run, the step at which
random's best is reached, the share of degenerate groups (all rewards equal), and the daemon's
calibration split by channel (never tried / re-chosen / random slot) and by the answer's
``reason``: mean predicted ``p_degenerate`` against the share of those groups that came back
all-equal. It also checks the protocol as it goes: every batch honoured (size, group size, step,
distinct tasks of the catalogue), every rollout counted once in status.json, a clean exit.

Without the catalogue file it exits with status 4 and a message saying so (the smoke test then
skips). Python 3.8+, standard library only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))

import worlds  # noqa: E402
from envsched_client import EnvschedClient, read_status  # noqa: E402

DEFAULT_CATALOGUE = os.path.join(ROOT, "..", "shared", "data", "catalog-real.jsonl")
POLICIES = ("envsched", "random", "oracle", "history", "known")
DEFAULT_POLICIES = ("envsched", "random", "oracle")
EXIT_NO_CATALOGUE = 4
EARLY = 10  # "steps 1-10": the phase with few rollouts
DEFAULT_BATCH, DEFAULT_GROUP = 64, 8  # the trainer's shape unless the world or a flag says otherwise


@dataclass
class Pick:
    """One task of one envsched answer and what its group turned out to be."""

    step: int
    reason: str
    channel: str  # never_tried, rechosen or random_slot (the daemon's ledger channels)
    pred_deg: float
    pred_mean: float
    deg: bool
    mean: float
    extra: Dict[str, float] = field(default_factory=dict)  # the answer's score parts, for --picks-out


@dataclass
class Run:
    """One policy on one seed of one world."""

    world: str
    policy: str
    seed: int
    curve: List[float] = field(default_factory=list)  # held-out score after step 0..steps (envs weighed equally)
    curve_tasks: List[float] = field(default_factory=list)  # the same with held-out tasks weighed equally
    degenerate: List[int] = field(default_factory=list)  # degenerate groups per step
    groups: List[int] = field(default_factory=list)  # groups per step
    picks: List[Pick] = field(default_factory=list)
    violations: List[str] = field(default_factory=list)
    reason_problems: List[str] = field(default_factory=list)  # reasons the history contradicts
    answer_ms: List[float] = field(default_factory=list)
    status: Dict[str, Any] = field(default_factory=dict)
    rollouts_written: int = 0
    exit_code: Optional[int] = None
    chosen_log: List[Dict[str, Any]] = field(default_factory=list)  # --picks-out: one dict per chosen task


@dataclass
class Config:
    """What one harness invocation runs."""

    bin: str
    catalogue: str
    worlds: List[str]
    policies: List[str]
    seeds: List[int]
    steps: int
    batch: int  # 0: the world's own (shape)
    group: int  # 0: the world's own (shape)
    envs: int = 0  # smoke: only the first envs environments (0: all)
    per_env: int = 0  # smoke: at most per_env tasks each
    keep: str = ""  # keep the exchange folders under this folder
    picks_out: str = ""  # append every chosen task's line (truth and answer) to this JSONL file
    timeout: float = 600.0
    crash_at: int = 0  # kill -9 the daemon (and start another) just before this step's request
    daemon_flags: List[str] = field(default_factory=list)  # extra flags of envsched run (none: defaults)
    veto: str = ""  # diagnosis (accept16): "stuck" or "none", with veto_ask tasks asked for
    veto_ask: int = 0

    def shape(self, world: str) -> Tuple[int, int]:
        """The batch and group size world runs with: the ones given, else the world's own
        (trapworlds.SHAPES), else B = 64, G = 8."""
        import trapworlds

        b, g = trapworlds.SHAPES.get(world, (DEFAULT_BATCH, DEFAULT_GROUP))
        return self.batch or b, self.group or g

    def for_world(self, world: str) -> "Config":
        """This configuration with the batch and group size of world filled in."""
        b, g = self.shape(world)
        return dataclasses.replace(self, batch=b, group=g, veto_ask=(3 * b if self.veto else 0))


# -- policies ----------------------------------------------------------------------------------


def choose_random(train: Sequence[int], seed: int, step: int, size: int) -> List[int]:
    """size distinct training tasks drawn uniformly, keyed by (seed, step)."""
    return random.Random(f"random-policy/{seed}/{step}").sample(list(train), size)


def choose_oracle(learner: Any, train: Sequence[int], seed: int, step: int, size: int,
                  group: int) -> List[int]:
    """The size training tasks most likely to give a group with unequal rewards, from their true
    success chances (ties broken by a hash)."""
    def informative(i: int) -> Tuple[float, float]:
        return (learner.informative(i, group), worlds.unit("oracle", seed, step, i))

    return sorted(train, key=informative, reverse=True)[:size]


def choose_known(learner: Any, hist: "HistoryPolicy", train: Sequence[int], seed: int, step: int,
                 size: int, group: int) -> List[int]:
    """A reference for any scheduler that learns a task only by trying it: it knows the true
    chance of unequal rewards of every task it tried before, and of the untried ones only their
    mean (over a sample of 256 of them); it takes the tried tasks more likely than that mean to
    give unequal rewards, most likely first, and fills the rest with untried tasks at random."""
    untried = [i for i in train if i not in hist.last]
    rng = random.Random(f"known-policy/{seed}/{step}")
    sample = rng.sample(untried, min(256, len(untried)))
    bar = sum(learner.informative(i, group) for i in sample) / len(sample) if sample else 0.0
    tried = [(learner.informative(i, group), i) for i in hist.last]
    good = sorted((x for x in tried if x[0] > bar), key=lambda x: (-x[0], worlds.unit("known", seed, step, x[1])))
    chosen = [i for _, i in good[:size]]
    chosen += rng.sample(untried, min(size - len(chosen), len(untried)))
    if len(chosen) < size:
        taken = set(chosen)
        chosen += rng.sample([i for i in train if i not in taken], size - len(chosen))
    return chosen


class HistoryPolicy:
    """A reference that sees only what a trainer sees: each step, the tasks whose last group had
    unequal rewards, most spread first (k(n-k) of its last group, then the older step, then a
    hash), and untried tasks drawn at random for the rest; a task whose last group was all-equal
    is not chosen again while untried tasks are left."""

    def __init__(self, train: Sequence[int], seed: int) -> None:
        self.train, self.seed = list(train), seed
        self.last: Dict[int, Tuple[float, int]] = {}  # task -> (spread of its last group, step)

    def choose(self, step: int, size: int) -> List[int]:
        live = sorted((i for i, (s, _) in self.last.items() if s > 0),
                      key=lambda i: (-self.last[i][0], self.last[i][1], worlds.unit("history", self.seed, step, i)))
        chosen = live[:size]
        untried = [i for i in self.train if i not in self.last]
        rng = random.Random(f"history-policy/{self.seed}/{step}")
        chosen += rng.sample(untried, min(size - len(chosen), len(untried)))
        if len(chosen) < size:
            rest = [i for i in self.train if i in self.last and i not in set(chosen)]
            chosen += rng.sample(rest, size - len(chosen))
        return chosen

    def record(self, step: int, chosen: Sequence[int], groups: Sequence[Sequence[float]]) -> None:
        """What the step's groups showed."""
        for i, g in zip(chosen, groups):
            m = sum(g) / len(g)
            self.last[i] = (m * (1.0 - m) if min(g) != max(g) else 0.0, step)


# -- the daemon --------------------------------------------------------------------------------


class Daemon:
    """A running ``envsched run --dir DIR`` with its defaults; output goes to DIR/daemon.log."""

    def __init__(self, binary: str, folder: str, flags: Sequence[str] = ()) -> None:
        self.binary, self.folder, self.flags = binary, folder, list(flags)
        self.log_path = os.path.join(folder, "daemon.log")
        self._log = open(self.log_path, "ab")
        self.proc = self._start()

    def _start(self) -> "subprocess.Popen[bytes]":
        # ENVSCHED_* variables would set flags: left out, so that only --daemon-flag changes a default.
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENVSCHED_")}
        return subprocess.Popen([self.binary, "run", "--dir", self.folder] + self.flags, stdout=self._log,
                                stderr=subprocess.STDOUT, env=env)

    def crash(self) -> None:
        """kill -9 the daemon and start a new one on the same folder."""
        self.proc.kill()
        self.proc.wait()
        self.proc = self._start()

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM, wait, return the exit code (killed after timeout: then -9)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode

    def tail(self, n: int = 20) -> str:
        """The last n lines of the daemon's output."""
        with open(self.log_path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-n:]).decode("utf-8", "replace")


def write_catalogue(folder: str, tasks: Sequence[worlds.Task], train: Sequence[int]) -> None:
    """The training tasks' real rows into folder/catalog/real.jsonl, atomically."""
    cat = os.path.join(folder, "catalog")
    os.makedirs(cat, exist_ok=True)
    tmp = os.path.join(cat, ".real.jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for i in train:
            f.write(json.dumps(tasks[i].row(), ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(cat, "real.jsonl"))


def check_batch(batch: Any, step: int, cfg: Config, index: Dict[Tuple[str, str], int], written: int) -> List[str]:
    """What in an answer breaks the request it answers (empty when it is honoured), written being
    the rollout lines the trainer wrote before the request (the barrier: all of them are seen)."""
    bad = []
    if batch.raw.get("rollouts_seen") != written:
        bad.append(f"step {step}: rollouts_seen {batch.raw.get('rollouts_seen')}, {written} written before the request")
    keys = [t.key for t in batch.tasks]
    if len(keys) != cfg.batch:
        bad.append(f"step {step}: {len(keys)} tasks for size {cfg.batch}")
    if len(set(keys)) != len(keys):
        bad.append(f"step {step}: a task repeated without allow_repeats")
    if batch.step != step or batch.group_size != cfg.group:
        bad.append(f"step {step}: answer says step {batch.step}, group size {batch.group_size}")
    unknown = [k for k in keys if k not in index]
    if unknown:
        bad.append(f"step {step}: tasks not in the catalogue: {unknown[:3]}")
    ranks = [t.info.get("rank") for t in batch.tasks]
    if ranks != list(range(1, len(keys) + 1)):
        bad.append(f"step {step}: ranks are not 1..{len(keys)}")
    return bad


def wait_status(folder: str, answered: int, timeout: float) -> Dict[str, Any]:
    """status.json once it reports at least `answered` requests answered (or the last one read)."""
    deadline = time.monotonic() + timeout
    status: Dict[str, Any] = {}
    while time.monotonic() < deadline:
        status = read_status(folder) or {}
        if int(status.get("requests_answered", 0)) >= answered:
            break
        time.sleep(0.05)
    return status


def count_problems(run: Run) -> List[str]:
    """What status.json says that contradicts what the trainer wrote: every rollout counted once,
    none quarantined, every group measured once by the calibration ledger."""
    st, bad = run.status, []
    for key, want in (("rollouts", run.rollouts_written), ("duplicates", 0), ("quarantined", 0)):
        if st.get(key) != want:
            bad.append(f"status.json {key} {st.get(key)}, want {want}")
    groups = ((st.get("calibration") or {}).get("overall") or {}).get("groups")
    if groups != len(run.picks):
        bad.append(f"status.json calibration.overall.groups {groups}, want {len(run.picks)}")
    return bad


# -- one run -----------------------------------------------------------------------------------


def play(cfg: Config, world: str, policy: str, seed: int, tasks: Sequence[worlds.Task]) -> Run:
    """Train a fresh learner of world on seed for cfg.steps steps with policy."""
    train, held = worlds.split(tasks, seed)
    learner = worlds.new_learner(world, tasks, seed)
    run = Run(world, policy, seed, curve=[learner.heldout(held)], curve_tasks=[learner.heldout_tasks(held)])
    if policy == "envsched":
        _play_daemon(cfg, run, learner, tasks, train, held)
    else:
        hist = HistoryPolicy(train, seed)
        for step in range(1, cfg.steps + 1):
            if policy == "random":
                chosen = choose_random(train, seed, step, cfg.batch)
            elif policy == "history":
                chosen = hist.choose(step, cfg.batch)
            elif policy == "known":
                chosen = choose_known(learner, hist, train, seed, step, cfg.batch, cfg.group)
            else:
                chosen = choose_oracle(learner, train, seed, step, cfg.batch, cfg.group)
            hist.record(step, chosen, _train_step(run, learner, held, step, chosen, cfg))
    return run


def _train_step(run: Run, learner: Any, held: Sequence[int], step: int, chosen: Sequence[int],
                cfg: Config) -> List[List[float]]:
    truth = [(learner.p(i), learner.informative(i, cfg.group)) for i in chosen] if cfg.picks_out else []
    groups = [learner.rollout(i, step, cfg.group) for i in chosen]
    learner.update(step, list(zip(chosen, groups)), cfg.batch)
    run.degenerate.append(sum(1 for g in groups if min(g) == max(g)))
    run.groups.append(len(groups))
    run.curve.append(learner.heldout(held))
    run.curve_tasks.append(learner.heldout_tasks(held))
    for i, g, (p, inf) in zip(chosen, groups, truth):
        t = learner.tasks[i]
        run.chosen_log.append({"step": step, "env": t.env, "task_id": t.task_id, "true_p": round(p, 4),
                               "true_informative": round(inf, 4), "mean": sum(g) / len(g),
                               "degenerate": min(g) == max(g)})
    return groups


def write_picks(path: str, run: Run) -> None:
    """Append run's chosen tasks to path (JSONL): world, policy, seed, step, env, task_id, the
    task's true expected reward and chance of unequal rewards before the step, the group's mean
    and whether it was all-equal; for envsched also the answer's reason, p_degenerate,
    predicted_mean and channel."""
    with open(path, "a", encoding="utf-8") as f:
        for n, row in enumerate(run.chosen_log):
            row = dict(row, world=run.world, policy=run.policy, seed=run.seed)
            if run.policy == "envsched" and n < len(run.picks):
                p = run.picks[n]
                row.update(reason=p.reason, channel=p.channel, p_degenerate=p.pred_deg, predicted_mean=p.pred_mean,
                           **p.extra)
            f.write(json.dumps(row) + "\n")


def _play_daemon(cfg: Config, run: Run, learner: Any, tasks: Sequence[worlds.Task],
                 train: Sequence[int], held: Sequence[int]) -> None:
    folder = tempfile.mkdtemp(prefix=f"acceptance-{run.world}-{run.seed}-")
    index = {tasks[i].key: i for i in train}
    write_catalogue(folder, tasks, train)
    daemon = Daemon(cfg.bin, folder, cfg.daemon_flags)
    failed = True
    try:
        _drive(cfg, run, learner, folder, index, held, daemon)
        run.status = wait_status(folder, cfg.steps + 1, 30.0)
        run.violations += count_problems(run)
        failed = False
    finally:
        run.exit_code = daemon.stop()
        if run.exit_code != 0:
            run.violations.append(f"envsched run exited {run.exit_code}: {daemon.tail()}")
        if failed:
            # The run raised (no answer, the daemon gone): its folder, daemon.log and database
            # are what can tell why, so they are kept, not deleted.
            print(f"# {run.world} seed {run.seed}: the run failed; its folder (daemon.log, database) is kept at {folder}",
                  file=sys.stderr, flush=True)
        else:
            _dispose(cfg, run, folder)


class History:
    """What the trainer knows of each task before a step: rolled out, when last chosen."""

    def __init__(self) -> None:
        self.tried: set = set()
        self.envs_tried: set = set()
        self.last_chosen: Dict[Tuple[str, str], int] = {}
        self.pooled: Dict[Tuple[str, str], List[float]] = {}  # task -> [sum of rewards, rollouts] (--veto own)

    def reason_problem(self, step: int, key: Tuple[str, str], reason: str) -> Optional[str]:
        """Why reason cannot be true of task key at step given the history; None when it can be.

        Checks the reasons of batcher.reason that state a fact the trainer can see: never tried,
        new environment, not chosen before, stale for N steps (one request per step).
        """
        tried, env_tried, last = key in self.tried, key[0] in self.envs_tried, self.last_chosen.get(key)
        if reason == "random slot" or reason.startswith("repeat"):
            return None
        if reason.startswith("never tried") and tried:
            return f"step {step} {key}: {reason!r} but the task has rollouts"
        if reason.startswith("new environment") and env_tried:
            return f"step {step} {key}: {reason!r} but its environment has rollouts"
        if not tried and not (reason.startswith("never tried") or reason.startswith("new environment")):
            return f"step {step} {key}: {reason!r} for a task never rolled out"
        if tried and not env_tried:
            return f"step {step} {key}: harness history broken"
        if reason == "not chosen before" and last is not None:
            return f"step {step} {key}: {reason!r} but it was chosen at step {last}"
        if reason.startswith("stale: not chosen for "):
            n = reason[len("stale: not chosen for "):].split(" ")[0]
            if last is None or str(step - last) != n:
                return f"step {step} {key}: {reason!r} but last chosen at step {last}"
        return None

    def record(self, step: int, keys: Sequence[Tuple[str, str]]) -> None:
        """The tasks of step's answer were rolled out."""
        for k in keys:
            self.tried.add(k)
            self.envs_tried.add(k[0])
            self.last_chosen[k] = step


def _drive(cfg: Config, run: Run, learner: Any, folder: str, index: Dict[Tuple[str, str], int],
           held: Sequence[int], daemon: Daemon) -> None:
    client = EnvschedClient(folder, prefix=f"{run.world}-s{run.seed}", timeout=cfg.timeout)
    hist = History()
    with client.rollout_writer(name="trainer") as out:
        for step in range(1, cfg.steps + 1):
            if step == cfg.crash_at:
                daemon.crash()
            t0 = time.monotonic()
            batch = _next_batch(client, daemon, cfg, step)
            run.answer_ms.append(1000.0 * (time.monotonic() - t0))
            vetoed: List[Any] = []
            if cfg.veto:
                # the answer as asked for (veto_ask tasks) is checked before the veto keeps B of them
                run.violations += check_batch(batch, step, dataclasses.replace(cfg, batch=cfg.veto_ask),
                                              index, run.rollouts_written)
                batch, vetoed = _veto(cfg, batch, learner, index, hist)
                # rolled out for envsched to see (its statistics as if it had them), not trained on
                for task in vetoed:
                    rewards = learner.rollout(index[task.key], step, cfg.group)
                    out.write_group(batch, task, rewards, step=step)
                    acc = hist.pooled.setdefault(task.key, [0.0, 0])
                    acc[0] += sum(rewards)
                    acc[1] += len(rewards)
            else:
                run.violations += check_batch(batch, step, cfg, index, run.rollouts_written)
            chosen = [index[t.key] for t in batch.tasks if t.key in index]
            groups = _train_step(run, learner, held, step, chosen, cfg)
            for task, rewards in zip(batch.tasks, groups):
                run.picks.append(_pick(step, task, rewards, task.key in hist.tried))
                problem = hist.reason_problem(step, task.key, run.picks[-1].reason)
                if problem:
                    run.reason_problems.append(problem)
                out.write_group(batch, task, rewards, step=step)
                acc = hist.pooled.setdefault(task.key, [0.0, 0])
                acc[0] += sum(rewards)
                acc[1] += len(rewards)
            hist.record(step, [t.key for t in batch.tasks] + [t.key for t in vetoed])
            run.rollouts_written += out.flush_step()
        # One more request: its barrier counts the last step's rollouts before status.json says so.
        _next_batch(client, daemon, cfg, cfg.steps + 1)


# How often a wait for an answer looks whether the daemon is still running.
LIVENESS_SLICE = 5.0


class DaemonDied(RuntimeError):
    """envsched run exited while the trainer waited for an answer."""


class NoAnswer(TimeoutError):
    """envsched run, still running, gave no answer within --timeout."""


def _veto(cfg: Config, batch: Any, learner: Any, index: Dict[Tuple[str, str], int],
          hist: "History") -> Tuple[Any, List[Any]]:
    """Diagnosis only (--veto, accept16): the answer was asked for cfg.veto_ask tasks; keep the
    first cfg.batch of them by rank, skipping (with --veto stuck) tasks tried before whose true
    chance is below 0.03 or above 0.97 (what the `known` reference knows of tried tasks), with
    --veto none skipping nothing (the control of the larger request). Returns the batch kept and
    the tasks skipped before its last one: the trainer rolls those out for envsched to see (their
    groups teach next to nothing) but does not train on them, so envsched's statistics are those
    of the run in which it had chosen them."""
    kept, vetoed = [], []
    for t in batch.tasks:
        if len(kept) == cfg.batch:
            break
        p = learner.p(index[t.key])
        own = hist.pooled.get(t.key)
        if (cfg.veto == "stuck" and t.key in hist.tried and (p < 0.03 or p > 0.97)) or \
                (cfg.veto == "own" and own and not 0.15 < own[0] / own[1] < 0.85):
            vetoed.append(t)
            continue
        kept.append(t)
    if len(kept) < cfg.batch:
        raise RuntimeError(f"--veto: {len(kept)} tasks kept of {len(batch.tasks)}, fewer than {cfg.batch}")
    return (dataclasses.replace(batch, tasks=kept) if dataclasses.is_dataclass(batch) else _Kept(batch, kept)), vetoed


class _Kept:
    """A batch with only some of its tasks (when the client's Batch is not a dataclass)."""

    def __init__(self, batch: Any, tasks: List[Any]) -> None:
        self._b, self.tasks = batch, tasks

    def __getattr__(self, name: str) -> Any:
        return getattr(self._b, name)


def _next_batch(client: Any, daemon: Daemon, cfg: Config, step: int) -> Any:
    """client.next_batch for step, waiting up to cfg.timeout, but in slices: a daemon that exited
    (a full disk and a failed fsync stop it, by design) is said at once, with its exit code and
    the end of its log, not after cfg.timeout as a BatchTimeout that cannot tell the two apart."""
    request_id = client.next_id()
    body = client.request_body(cfg.veto_ask or cfg.batch, cfg.group, step)
    deadline = time.monotonic() + cfg.timeout
    batch, first = None, True
    while batch is None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise NoAnswer(f"no answer to {request_id} in {cfg.timeout:g} s; envsched run (pid "
                           f"{daemon.proc.pid}) is still running; its log ends:\n{daemon.tail()}")
        if first:
            # writes the request (the one write of it) and waits the first slice
            first = False
            try:
                batch = client.ask(request_id, body, timeout=min(left, LIVENESS_SLICE))
            except TimeoutError:
                batch = None
        else:
            batch = client.wait(request_id, min(left, LIVENESS_SLICE))
        if batch is None and daemon.proc.poll() is not None:
            raise DaemonDied(f"envsched run exited {daemon.proc.returncode} before answering {request_id} "
                             f"(step {step}); its log ends:\n{daemon.tail()}")
    client.next_seq += 1
    client.last_batch = batch
    return batch


def _pick(step: int, task: Any, rewards: Sequence[float], tried: bool) -> Pick:
    reason = str(task.info.get("reason", ""))
    channel = "random_slot" if reason == "random slot" else ("rechosen" if tried else "never_tried")
    extra = {k: float(task.info[k]) for k in ("score", "exploit", "coverage", "penalty", "predicted_variance")
             if isinstance(task.info.get(k), (int, float))}
    return Pick(step, reason, channel, float(task.info.get("p_degenerate", 0.0)),
                float(task.info.get("predicted_mean", 0.0)), min(rewards) == max(rewards),
                sum(rewards) / len(rewards), extra)


def _dispose(cfg: Config, run: Run, folder: str) -> None:
    if cfg.keep:
        os.makedirs(cfg.keep, exist_ok=True)
        dest = os.path.join(cfg.keep, os.path.basename(folder))
        shutil.move(folder, dest)
    else:
        shutil.rmtree(folder, ignore_errors=True)


# -- figures -----------------------------------------------------------------------------------


def first_reach(curve: Sequence[float], target: float) -> Optional[int]:
    """The first step (>= 1) whose held-out score is at least target; None when none is."""
    for s in range(1, len(curve)):
        if curve[s] >= target:
            return s
    return None


def median_step(steps: Sequence[Optional[int]]) -> Optional[float]:
    """The median of steps where None (never) counts as beyond every number; None when the median
    itself is never."""
    inf = float("inf")
    m = statistics.median([inf if s is None else float(s) for s in steps])
    return None if m == inf else m


def headline(runs: Sequence[Run], at: int, weigh: str = "curve") -> Dict[str, Dict[str, Any]]:
    """Per policy: median held-out at step `at` and best, step reaching random's best (median),
    seeds whose step `at` beats random's best, degenerate shares (whole run, steps 1-10). weigh
    names the held-out curve: "curve" (environments weighed equally) or "curve_tasks"."""
    def curve(r: Run) -> List[float]:
        return getattr(r, weigh)

    random_best = {r.seed: max(curve(r)[1:]) for r in runs if r.policy == "random"}
    out: Dict[str, Dict[str, Any]] = {}
    for policy in sorted({r.policy for r in runs}, key=POLICIES.index):
        rs = [r for r in runs if r.policy == policy]
        at_step = [curve(r)[min(at, len(curve(r)) - 1)] for r in rs]
        row: Dict[str, Any] = {
            "seeds": len(rs),
            "start": statistics.median(curve(r)[0] for r in rs),
            "at_step": statistics.median(at_step),
            "best": statistics.median(max(curve(r)[1:]) for r in rs),
            "degenerate": _share(sum(sum(r.degenerate) for r in rs), sum(sum(r.groups) for r in rs)),
            "degenerate_early": _share(sum(sum(r.degenerate[:EARLY]) for r in rs),
                                       sum(sum(r.groups[:EARLY]) for r in rs)),
        }
        if random_best:
            reach = [first_reach(curve(r), random_best[r.seed]) for r in rs if r.seed in random_best]
            row["reach_random_best"] = median_step(reach)
            row["beats_random_best"] = sum(1 for r, v in zip(rs, at_step) if r.seed in random_best
                                           and v > random_best[r.seed])
            row["margin"] = statistics.median(v - random_best[r.seed] for r, v in zip(rs, at_step)
                                              if r.seed in random_best)
        out[policy] = row
    return out


def _answer_times(runs: Sequence[Run]) -> Dict[str, float]:
    """Request written to batch read, in ms: the first answer of each run (it ingests the
    catalogue and builds the graph) apart from the others."""
    first = [r.answer_ms[0] for r in runs if r.answer_ms]
    rest = sorted(m for r in runs for m in r.answer_ms[1:])
    if not first:
        return {}
    out = {"first_median": statistics.median(first), "first_max": max(first)}
    if rest:
        out.update(median=statistics.median(rest), p99=rest[min(len(rest) - 1, int(0.99 * len(rest)))],
                   max=rest[-1])
    return out


def _share(num: float, den: float) -> Optional[float]:
    return num / den if den else None


def calibration(picks: Sequence[Pick], key: str) -> List[Dict[str, Any]]:
    """Picks split by key ("channel" or "reason") and phase (steps 1-10, 11+, all): count, share
    of picks, mean predicted p_degenerate, realised degenerate share, mean predicted and realised
    reward."""
    rows = []
    for phase, sel in (("1-10", lambda p: p.step <= EARLY), ("11+", lambda p: p.step > EARLY), ("all", None)):
        ps = [p for p in picks if sel is None or sel(p)]
        for name in sorted({getattr(p, key) for p in ps}):
            g = [p for p in ps if getattr(p, key) == name]
            rows.append({"phase": phase, key: name, "picks": len(g), "share": len(g) / len(ps),
                         "predicted_degenerate": statistics.fmean(p.pred_deg for p in g),
                         "realised_degenerate": statistics.fmean(1.0 if p.deg else 0.0 for p in g),
                         "predicted_mean": statistics.fmean(p.pred_mean for p in g),
                         "realised_mean": statistics.fmean(p.mean for p in g)})
    return rows


def ledger_check(run: Run) -> Dict[str, Any]:
    """The daemon's own counts (status.json) against what the harness wrote and measured."""
    st = run.status
    cal = st.get("calibration") or {}
    overall = cal.get("overall") or {}
    picks = run.picks
    measured = {
        "rollouts_written": run.rollouts_written,
        "status_rollouts": st.get("rollouts"),
        "duplicates": st.get("duplicates"),
        "quarantined": st.get("quarantined"),
        "groups": len(picks),
        "status_groups": overall.get("groups"),
        "realised_degenerate": round(statistics.fmean(1.0 if p.deg else 0.0 for p in picks), 4) if picks else None,
        "status_realised_degenerate": overall.get("realised_degenerate"),
        "predicted_degenerate": round(statistics.fmean(p.pred_deg for p in picks), 4) if picks else None,
        "status_predicted_degenerate": overall.get("predicted_degenerate"),
        "channels": {},
    }
    for name, body in (cal.get("channels") or {}).items():
        mine = [p for p in picks if p.channel == name]
        measured["channels"][name] = {
            "groups": len(mine), "status_groups": body.get("groups"),
            "realised_degenerate": round(statistics.fmean(1.0 if p.deg else 0.0 for p in mine), 4) if mine else 0,
            "status_realised_degenerate": body.get("realised_degenerate")}
    return measured


def summarise(cfg: Config, runs: Sequence[Run]) -> Dict[str, Any]:
    """Every figure the table prints, per world, computed from the runs."""
    out: Dict[str, Any] = {"config": {k: v for k, v in cfg.__dict__.items()}, "worlds": {}}
    for world in cfg.worlds:
        rs = [r for r in runs if r.world == world]
        picks = [p for r in rs if r.policy == "envsched" for p in r.picks]
        daemon_runs = [r for r in rs if r.policy == "envsched"]
        ms = [m for r in daemon_runs for m in r.answer_ms]
        b, g = cfg.shape(world)
        out["worlds"][world] = {
            "batch": b, "group": g,
            "headline": headline(rs, min(40, cfg.steps)),
            "headline_tasks": headline(rs, min(40, cfg.steps), "curve_tasks"),
            "by_channel": calibration(picks, "channel") if picks else [],
            "by_reason": calibration(picks, "reason") if picks else [],
            "ledger": [ledger_check(r) for r in daemon_runs],
            "violations": [v for r in rs for v in r.violations],
            "reason_problems": [v for r in rs for v in r.reason_problems],
            "answer_ms": _answer_times(daemon_runs),
            # unrounded: the headline is computed from these numbers, and a reader (the smoke
            # test) recomputing it from rounded ones could not decide a near tie
            "curves": {f"{r.policy}/{r.seed}": list(r.curve) for r in rs},
            "curves_tasks": {f"{r.policy}/{r.seed}": list(r.curve_tasks) for r in rs},
        }
    return out


# -- the table ---------------------------------------------------------------------------------


_ABSENT = object()


def _f(v: Any, fmt: str = "{:.3f}") -> str:
    if v is _ABSENT:
        return "-"
    if v is None:
        return "never"
    return fmt.format(v)


def table(summary: Dict[str, Any]) -> str:
    """The summary as plain text tables, one block per world."""
    cfg = summary["config"]
    lines = []
    for world, w in summary["worlds"].items():
        h = w["headline"]
        at = min(40, cfg["steps"])
        flags = " ".join(cfg["daemon_flags"]) or "none (defaults)"
        lines.append(f"world {world}: seeds {cfg['seeds']}, B={w['batch']}, G={w['group']}, "
                     f"{cfg['steps']} steps (medians over seeds; degenerate shares pooled); "
                     f"envsched run flags: {flags}")
        pols = list(h)
        lines.append("  " + f"{'':44}" + "".join(f"{p:>12}" for p in pols))
        rows = [("held-out at step 0", "start", "{:.3f}"), (f"held-out at step {at}", "at_step", "{:.3f}"),
                (f"best in {cfg['steps']} steps", "best", "{:.3f}"),
                ("step reaching random's best", "reach_random_best", "{:.1f}"),
                (f"seeds where step {at} beats random's best", "beats_random_best", "{:d}"),
                (f"margin step {at} - random's best (median)", "margin", "{:+.3f}"),
                ("degenerate groups, whole run", "degenerate", "{:.1%}"),
                (f"degenerate groups, steps 1-{EARLY}", "degenerate_early", "{:.1%}")]
        for label, key, fmt in rows:
            lines.append("  " + f"{label:44}" + "".join(f"{_f(h[p].get(key, _ABSENT), fmt):>12}" for p in pols))
        ht = w["headline_tasks"]
        lines.append("  the same with every held-out task weighed equally (large environments count most):")
        for label, key, fmt in rows[:6]:
            lines.append("  " + f"{label:44}" + "".join(f"{_f(ht[p].get(key, _ABSENT), fmt):>12}" for p in pols))
        for key in ("channel", "reason"):
            lines += _calibration_lines(w["by_" + key], key)
        lines += _ledger_lines(w["ledger"])
        a = w["answer_ms"]
        if a:
            lines.append(f"  answer time (request written to batch read, niced harness): first answer median "
                         f"{a['first_median']:.0f} ms, max {a['first_max']:.0f} ms; later answers median "
                         f"{a.get('median', 0):.0f} ms, p99 {a.get('p99', 0):.0f} ms, max {a.get('max', 0):.0f} ms")
        lines.append(f"  protocol violations: {len(w['violations'])}" +
                     "".join(f"\n    {v}" for v in w["violations"][:10]))
        lines.append(f"  reasons the trainer's history contradicts: {len(w['reason_problems'])}" +
                     "".join(f"\n    {v}" for v in w["reason_problems"][:10]))
        lines.append("")
    return "\n".join(lines)


def _calibration_lines(rows: Sequence[Dict[str, Any]], key: str) -> List[str]:
    if not rows:
        return []
    out = [f"  envsched's picks by {key}: share of picks, predicted vs realised degenerate (mean reward)"]
    for r in rows:
        out.append(f"    {r['phase']:>5} {r[key]:32} {r['picks']:6d} {r['share']:6.1%}   "
                   f"pred {r['predicted_degenerate']:.3f} real {r['realised_degenerate']:.3f}   "
                   f"(mean pred {r['predicted_mean']:.3f} real {r['realised_mean']:.3f})")
    return out


def _ledger_lines(ledgers: Sequence[Dict[str, Any]]) -> List[str]:
    out = []
    for lg in ledgers:
        out.append(f"  status.json: rollouts {lg['status_rollouts']} of {lg['rollouts_written']} written, "
                   f"duplicates {lg['duplicates']}, quarantined {lg['quarantined']}; ledger groups "
                   f"{lg['status_groups']} of {lg['groups']}, realised degenerate {lg['status_realised_degenerate']} "
                   f"(harness {lg['realised_degenerate']}), predicted {lg['status_predicted_degenerate']} "
                   f"(harness {lg['predicted_degenerate']})")
    return out


# -- command line ------------------------------------------------------------------------------


def parse_seeds(text: str) -> List[int]:
    """"1-10", "1,3,5" or "1-3,7" into a sorted list of distinct seeds."""
    seeds = set()
    for part in text.split(","):
        part = part.strip()
        if "-" in part[1:]:
            lo, hi = part.split("-", 1) if not part.startswith("-") else (part, part)
            seeds.update(range(int(lo), int(hi) + 1))
        elif part:
            seeds.add(int(part))
    if not seeds:
        raise argparse.ArgumentTypeError(f"no seeds in {text!r}")
    return sorted(seeds)


def parse_args(argv: Sequence[str]) -> Tuple[Config, argparse.Namespace]:
    """Flags into a Config (see --help)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "envsched"), help="the envsched binary")
    ap.add_argument("--catalog", default=DEFAULT_CATALOGUE, help="the real catalogue (catalog-real.jsonl)")
    ap.add_argument("--world", default=",".join(worlds.WORLDS), help=f"worlds, of {','.join(worlds.WORLDS)}")
    ap.add_argument("--policies", default=",".join(DEFAULT_POLICIES),
                    help=f"policies, of {','.join(POLICIES)} (default {','.join(DEFAULT_POLICIES)})")
    ap.add_argument("--seeds", default="1-10", type=parse_seeds, help="seeds: 1-10, 1,2,5 (default 1-10)")
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--batch-size", type=int, default=0,
                    help="tasks per batch (default: the world's own, 64 unless it names one)")
    ap.add_argument("--group-size", type=int, default=0,
                    help="rollouts per task (default: the world's own, 8 unless it names one)")
    ap.add_argument("--smoke", action="store_true",
                    help="a quick check: 4 environments of at most 30 tasks, B=8, G=4, 6 steps unless given")
    ap.add_argument("--envs", type=int, default=0, help="use only the first N environments (0: all)")
    ap.add_argument("--per-env", type=int, default=0, help="at most N tasks per environment (0: all)")
    ap.add_argument("--keep", default="", help="move the exchange folders here instead of deleting them")
    ap.add_argument("--json-out", default="", help="write the summary as JSON to this file as well")
    ap.add_argument("--picks-out", default="", help="append every chosen task (its truth, and envsched's answer "
                    "for it) to this JSONL file, for diagnosis")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for one answer")
    ap.add_argument("--crash-at", type=int, default=0,
                    help="kill -9 envsched just before this step's request and start it again (0: never); "
                         "the run must train the same curve as without")
    ap.add_argument("--daemon-flag", action="append", default=[], metavar="FLAG",
                    help="an extra flag for envsched run, repeatable (--daemon-flag=--kappa=0.5); "
                         "without any, the daemon runs with its defaults, as the outside check does")
    ap.add_argument("--veto", default="", choices=["", "stuck", "own", "none"],
                    help="diagnosis only: ask for 3 x the batch and keep the first B by rank, skipping tasks tried "
                         "before whose true chance is below 0.03 or above 0.97 (stuck), whose pooled reward so far is at most 0.15 "
                         "or at least 0.85 (own: what the trainer saw), or nothing (none)")
    a = ap.parse_args(argv)
    if a.smoke:
        a.envs, a.per_env = a.envs or 4, a.per_env or 30
        if "--steps" not in argv:
            a.steps = 6
        if "--batch-size" not in argv:
            a.batch_size = 8
        if "--group-size" not in argv:
            a.group_size = 4
    cfg = Config(bin=a.bin, catalogue=a.catalog, worlds=_names(a.world, worlds.WORLDS, ap),
                 policies=_names(a.policies, POLICIES, ap), seeds=a.seeds, steps=a.steps, batch=a.batch_size,
                 group=a.group_size, envs=a.envs, per_env=a.per_env, keep=a.keep, timeout=a.timeout,
                 crash_at=a.crash_at, daemon_flags=a.daemon_flag, picks_out=a.picks_out, veto=a.veto)
    if cfg.steps < 1 or cfg.batch < 0 or cfg.group < 0 or cfg.group == 1:
        ap.error("--steps and --batch-size must be at least 1, --group-size at least 2")
    return cfg, a


def _names(text: str, allowed: Sequence[str], ap: argparse.ArgumentParser) -> List[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        ap.error(f"unknown {bad or text!r}: choose from {', '.join(allowed)}")
    return names


def main(argv: Sequence[str]) -> int:
    cfg, a = parse_args(argv)
    try:
        tasks = worlds.load_catalogue(cfg.catalogue)
    except worlds.CatalogueMissing:
        print(f"SKIP: the catalogue {cfg.catalogue} is not there (see ../shared/data/README.md); "
              "nothing was run", file=sys.stderr)
        return EXIT_NO_CATALOGUE
    if cfg.envs or cfg.per_env:
        tasks = worlds.subset(tasks, cfg.envs or 10**9, cfg.per_env or 10**9)
    if "envsched" in cfg.policies and not os.access(cfg.bin, os.X_OK):
        print(f"error: no envsched binary at {cfg.bin} (go build -o envsched . at the repository's root)",
              file=sys.stderr)
        return 2
    runs = []
    for world in cfg.worlds:
        for seed in cfg.seeds:
            for policy in cfg.policies:
                t0 = time.monotonic()
                runs.append(play(cfg.for_world(world), world, policy, seed, tasks))
                if cfg.picks_out:
                    write_picks(cfg.picks_out, runs[-1])
                    runs[-1].chosen_log = []
                print(f"# {world} seed {seed} {policy}: {time.monotonic() - t0:.1f}s", file=sys.stderr, flush=True)
    summary = summarise(cfg, runs)
    print(table(summary))
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(summary, f, indent=1)
    return 1 if any(w["violations"] or w["reason_problems"] for w in summary["worlds"].values()) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
