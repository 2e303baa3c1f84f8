#!/usr/bin/env python3
"""A toy agent-RL trainer that lets envsched choose its tasks. Standard library only.

It plays the part of a GRPO trainer without any ML: every task has a hidden difficulty, the
learner has a skill per environment, and a rollout succeeds with probability
sigmoid(skill - difficulty). A training step improves an environment's skill in proportion to
the reward variance of the groups it trained on: a group that all solved or all failed teaches
nothing, as in GRPO. envsched's job is to pick the tasks whose groups are informative.

It talks to envsched only through envsched_client (clients/python), and checkpoints the
client's state with its own, so it can be killed at any moment and resumed: the resumed run asks
for the same request IDs and gets the same batches.

    envsched run --dir /tmp/exchange &
    python3 examples/python_trainer/train.py --dir /tmp/exchange --steps 30
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import os
import random
import sys
import time
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))

import envsched_client as ec  # noqa: E402

ENVS = ("web-shop", "travel-desk", "sql-agent", "calendar")
LEARNING_RATE = 0.8


class World:
    """The hidden truth: a difficulty per task, fixed by the seed."""

    def __init__(self, seed: int, tasks_per_env: int) -> None:
        rng = random.Random(f"world-{seed}")
        self.difficulty: Dict[Tuple[str, str], float] = {}
        for e, env in enumerate(ENVS):
            for i in range(tasks_per_env):
                # Environments differ in how hard they are; tasks spread around that.
                self.difficulty[(env, str(i))] = (e - 1.5) * 0.8 + rng.gauss(0, 1.5)

    def catalogue(self) -> str:
        lines = []
        for (env, tid), d in sorted(self.difficulty.items()):
            tools = [f"{env}.search", f"{env}.act"] if d > 0 else [f"{env}.search"]
            lines.append(json.dumps({"env": env, "task_id": tid, "text": f"{env} task {tid}: do the thing",
                                     "tools": tools}))
        return "\n".join(lines) + "\n"


def p_success(skill: float, difficulty: float) -> float:
    return 1.0 / (1.0 + math.exp(difficulty - skill))


def evaluate(world: World, skills: Dict[str, float]) -> float:
    """Held-out score: expected success over every task."""
    ps = [p_success(skills[env], d) for (env, _), d in world.difficulty.items()]
    return sum(ps) / len(ps)


def save_checkpoint(path: str, state: dict) -> None:
    ec.write_atomic(path, json.dumps(state, sort_keys=True).encode())


def load_checkpoint(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def parse_args(argv: List[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", required=True, help="the exchange directory of `envsched run --dir`")
    p.add_argument("--steps", type=int, default=30, help="training steps in all (default 30)")
    p.add_argument("--batch-size", type=int, default=8, help="tasks per step (default 8)")
    p.add_argument("--group-size", type=int, default=4, help="rollouts per task (default 4)")
    p.add_argument("--tasks-per-env", type=int, default=25, help="tasks in each of the 4 environments")
    p.add_argument("--checkpoint", default=None,
                   help="checkpoint file, resumed from when present (default DIR/toy-checkpoint.json: a fresh --dir "
                        "starts a fresh run); a checkpoint of a run against another --dir is refused")
    p.add_argument("--checkpoint-every", type=int, default=5, help="steps between checkpoints (default 5)")
    p.add_argument("--prefix", default="toy", help="request ID prefix (default toy)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=60, help="seconds to wait for a batch before the uniform fallback")
    p.add_argument("--batch-log", help="append one JSON line per batch received (id, step, tasks) to this file")
    p.add_argument("--uniform", action="store_true",
                   help="baseline: choose tasks uniformly at random instead of asking envsched")
    p.add_argument("--step-delay", type=float, default=0.0, help="seconds to sleep per step (to watch it, or kill it)")
    return p.parse_args(argv)


def main(argv: List[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args(argv)
    if args.checkpoint is None:
        args.checkpoint = os.path.join(args.dir, "toy-checkpoint.json")
    world = World(args.seed, args.tasks_per_env)
    catalog = os.path.join(args.dir, "catalog", "toy.jsonl")
    if not os.path.exists(catalog):
        os.makedirs(os.path.dirname(catalog), exist_ok=True)
        ec.write_atomic(catalog, world.catalogue().encode())
        print(f"wrote the catalogue: {len(world.difficulty)} tasks in {len(ENVS)} environments -> {catalog}")

    client = ec.EnvschedClient(args.dir, prefix=args.prefix, timeout=args.timeout,
                               fallback_tasks=list(world.difficulty))
    step, skills = 0, {env: 0.0 for env in ENVS}
    exchange = os.path.abspath(args.dir)
    if os.path.exists(args.checkpoint):
        ckpt = load_checkpoint(args.checkpoint)
        if ckpt.get("dir", exchange) != exchange:
            print(f"error: {args.checkpoint} is the checkpoint of a run against --dir {ckpt['dir']}, not {exchange}: "
                  f"resume with that --dir, or start a new run with another --checkpoint", file=sys.stderr)
            return 2
        step, skills = ckpt["step"], ckpt["skills"]
        client.load_state_dict(ckpt["envsched"])
        print(f"resumed from {args.checkpoint} at step {step} (next request {client.next_id()})")
        if step >= args.steps:
            print(f"the checkpoint is at step {step} of --steps {args.steps}: nothing to do "
                  f"(raise --steps to train on, or use another --checkpoint to start again)")

    saved = step if os.path.exists(args.checkpoint) else 0  # the step of the checkpoint on disk
    try:
        with client.rollout_writer() as rollouts:
            while step < args.steps:
                step += 1
                batch = next_batch(client, world, args, step)
                log_batch(args.batch_log, batch)
                degenerate = train_step(world, skills, batch, rollouts, args, step)
                print(f"step {step:3d}  batch {batch.id}{' (FALLBACK)' if batch.fallback else ''}  "
                      f"degenerate groups {degenerate}/{len(batch.tasks)}  held-out {evaluate(world, skills):.3f}",
                      flush=True)
                if step % args.checkpoint_every == 0 or step == args.steps:
                    save_checkpoint(args.checkpoint, {"step": step, "skills": skills,
                                                      "envsched": client.state_dict(), "dir": exchange})
                    saved = step
                if args.step_delay:
                    time.sleep(args.step_delay)
    except KeyboardInterrupt:  # Ctrl-C, as the README's walkthrough asks: say how to resume, not a traceback
        where = f"the checkpoint {args.checkpoint} is at step {saved}" if saved else "no checkpoint was written yet"
        print(f"interrupted at step {step}: {where}; run the same command again to resume "
              f"(it starts after step {saved})", file=sys.stderr)
        return 130
    print(f"done: {step} steps, held-out score {evaluate(world, skills):.3f}")
    return 0


def next_batch(client: ec.EnvschedClient, world: World, args: argparse.Namespace, step: int) -> ec.Batch:
    """envsched's batch for this step, or with --uniform a uniform draw (seeded by the step)."""
    if not args.uniform:
        return client.next_batch(size=args.batch_size, group_size=args.group_size, step=step)
    rng = random.Random(f"uniform-{args.seed}-{step}")
    tasks = [ec.Task(e, t) for e, t in rng.sample(sorted(world.difficulty), args.batch_size)]
    return ec.Batch(f"uniform-{step:06d}", step, args.group_size, tasks, fallback=True)


def train_step(world: World, skills: Dict[str, float], batch: ec.Batch, rollouts: ec.RolloutWriter,
               args: argparse.Namespace, step: int) -> int:
    """Roll out every task of the batch, write the rollouts, update the skills; return the
    number of degenerate groups. Rewards depend only on (seed, step, skills), so a step replayed
    after a resume gives the same rewards (and the same rollout ids, which envsched skips)."""
    rng = random.Random(int.from_bytes(hashlib.sha256(f"{args.seed}/{step}".encode()).digest()[:8], "big"))
    gains: Dict[str, float] = {env: 0.0 for env in ENVS}
    degenerate = 0
    for task in batch.tasks:
        p = p_success(skills[task.env], world.difficulty.get(task.key, 0.0))
        rewards = [1.0 if rng.random() < p else 0.0 for _ in range(args.group_size)]
        rollouts.write_group(batch, task, rewards, step=step)
        mean = sum(rewards) / len(rewards)
        variance = mean * (1 - mean)
        degenerate += variance == 0
        gains[task.env] += LEARNING_RATE * variance / len(batch.tasks)
    rollouts.flush_step()  # whole lines, once per step
    for env, g in gains.items():
        skills[env] += g
    return degenerate


def log_batch(path: str, batch: ec.Batch) -> None:
    if not path:
        return
    line = json.dumps({"id": batch.id, "step": batch.step, "fallback": batch.fallback,
                       "tasks": [[t.env, t.task_id] for t in batch.tasks]})
    with open(path, "a") as f:
        f.write(line + "\n")
        f.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
