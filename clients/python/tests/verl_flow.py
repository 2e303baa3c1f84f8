"""Plays verl's side around envsched's dataset and reward wrapper, with stand-ins of verl's classes.

What verl does between the two adapters, and nothing else: its dataloader reads
``EnvschedDataset`` positions 0, 1, 2, ... (``data.shuffle=False``), each prompt is repeated
``rollout.n`` times (``DataProto.repeat(interleave=True)``: the G samples share one extra_info
dict, which the reward manager then changes in place, adding ``num_turns``), and the reward
manager calls ``compute_score(data_source, solution_str, ground_truth, extra_info)`` per sample
(verl/workers/reward_manager/naive.py, tags v0.5.0 to v0.7.0 and main at b178a3c; the reward
loop's naive manager, verl/experimental/reward_loop/reward_manager/naive.py on main, calls it the
same way from a thread pool). Nothing here writes verl's rollout dump: the wrapper's own lines
are all envsched reads.

Run as a script (the Go tests do)::

    python3 verl_flow.py DIR --steps 2 --batch 6 --group 4 [--checkpoint CKDIR] [--responder]

prints one JSON object: the lines the wrapper wrote and the request IDs asked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import fakes  # noqa: E402

fakes.install()

import envsched_verl  # noqa: E402


def solution(attempt: str, step: int, slot: int, sample: int) -> str:
    """A deterministic answer per sample: right ("<index>") about half the time."""
    h = hashlib.sha256(f"{attempt}/{step}/{slot}/{sample}".encode()).digest()
    return "right" if h[0] % 2 else "wrong"


def run(exchange_dir: str, steps: int, batch: int, group: int, checkpoint: Optional[str],
        rows: Optional[List[Dict[str, Any]]] = None, prefix: str = "verl") -> Dict[str, Any]:
    """Read `steps` steps of EnvschedDataset and score `group` samples of each prompt."""
    rows = rows if rows is not None else fakes.verl_rows(60)
    cfg = {"train_batch_size": batch, "shuffle": False, "train_files": "train.parquet",
           "val_files": "test.parquet",
           "envsched": {"dir": exchange_dir, "prefix": prefix, "timeout": 60, "group_size": group,
                        "checkpoint_dir": checkpoint}}
    cls = envsched_verl.EnvschedDataset
    ds = cls(data_files=rows, tokenizer=None, config=cfg)
    score = envsched_verl.compute_score
    for step in range(steps):
        for slot in range(batch):
            item = ds[step * batch + slot]
            extra = item["extra_info"]  # one dict shared by the prompt's samples, as after repeat
            for sample in range(group):
                extra["num_turns"] = 1
                gt = "right"
                score(item["data_source"], solution(ds._es_attempt, step, slot, sample), gt, extra)
    return {"attempt": ds._es_attempt, "reads": ds.reads}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--batch", type=int, default=6)
    p.add_argument("--group", type=int, default=4)
    p.add_argument("--checkpoint", default=None)
    p.add_argument("--responder", action="store_true", help="answer requests with the stand-in responder")
    a = p.parse_args()
    responder = None
    if a.responder:
        from standin import Responder
        responder = Responder(a.dir, tasks=[(r["data_source"], str(r["extra_info"]["index"]))
                                            for r in fakes.verl_rows(60)]).start()
    try:
        out = run(a.dir, a.steps, a.batch, a.group, a.checkpoint)
    finally:
        if responder is not None:
            responder.stop()
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
