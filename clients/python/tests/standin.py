"""Stand-ins for the tests: a tiny envsched responder, and a real daemon when ENVSCHED_BIN is set.

The responder plays envsched's side of PROTOCOL.md just enough for the client's unit tests: it
answers each ``requests/ID.json`` with ``batches/ID.json`` (tasks chosen by a hash of the ID, so
the same ID always gets the same answer) or, for a size above 1000, with ``ID.error.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import envsched_client  # noqa: E402

TASKS: List[Tuple[str, str]] = [(env, str(i)) for env in ("alpha", "beta", "gamma") for i in range(20)]


class Responder:
    """Answers requests in an exchange directory from a thread until stop()."""

    def __init__(self, exchange_dir: str, tasks: List[Tuple[str, str]] = TASKS, delay: float = 0.0) -> None:
        self.dir = exchange_dir
        self.tasks = tasks
        self.delay = delay
        self.answered: Dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> "Responder":
        os.makedirs(os.path.join(self.dir, "requests"), exist_ok=True)
        os.makedirs(os.path.join(self.dir, "batches"), exist_ok=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            for name in sorted(os.listdir(os.path.join(self.dir, "requests"))):
                if name.startswith(".") or name.endswith(".tmp") or not name.endswith(".json"):
                    continue
                rid = name[: -len(".json")]
                if rid in self.answered:
                    continue
                if self.delay:
                    time.sleep(self.delay)
                self._answer(rid)
            time.sleep(0.005)

    def _answer(self, rid: str) -> None:
        with open(os.path.join(self.dir, "requests", rid + ".json")) as f:
            req = json.loads(f.read() or "{}")
        self.answered[rid] = self.answered.get(rid, 0) + 1
        size = int(req.get("size", 4))
        if size > 1000:
            body = {"id": rid, "error": f"size {size} is more than 1000"}
            envsched_client.write_atomic(os.path.join(self.dir, "batches", rid + ".error.json"),
                                         json.dumps(body).encode())
            return
        rng = random.Random(hashlib.sha256(rid.encode()).digest())
        chosen = rng.sample(self.tasks, min(size, len(self.tasks)))
        batch = {
            "id": rid, "policy": "standin/1", "step": int(req.get("step", 1)), "size": size,
            "group_size": int(req.get("group_size", 8)), "rollouts_seen": 0, "envs": {},
            "tasks": [{"env": e, "task_id": t, "rank": i + 1, "score": 0.5, "predicted_mean": 0.5,
                       "predicted_variance": 0.25, "p_degenerate": 0.01, "exploit": 0.25,
                       "coverage": 0.25, "penalty": 0.0, "reason": "stand-in"}
                      for i, (e, t) in enumerate(chosen)],
        }
        envsched_client.write_atomic(os.path.join(self.dir, "batches", rid + ".json"),
                                     json.dumps(batch).encode())


def envsched_bin() -> Optional[str]:
    """The envsched binary named by ENVSCHED_BIN, or None."""
    path = os.environ.get("ENVSCHED_BIN")
    return path if path and os.path.exists(path) else None


class Daemon:
    """A real ``envsched run --dir DIR`` process (needs ENVSCHED_BIN)."""

    def __init__(self, exchange_dir: str, *args: str) -> None:
        binary = envsched_bin()
        if binary is None:
            raise RuntimeError("ENVSCHED_BIN is not set")
        self.dir = exchange_dir
        self.log = open(os.path.join(tempfile.gettempdir(), f"envsched-{os.getpid()}-{id(self)}.log"), "w+")
        self.proc = subprocess.Popen([binary, "run", "--dir", exchange_dir, "--status-interval", "200ms", *args],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not os.path.exists(os.path.join(exchange_dir, "status.json")):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.log.seek(0)
                raise RuntimeError(f"envsched run did not start: {self.log.read()}")
            time.sleep(0.02)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(30)
        self.log.close()
        return rc

    def output(self) -> str:
        with open(self.log.name) as f:
            return f.read()


def write_catalog(exchange_dir: str, tasks: List[Tuple[str, str]] = TASKS) -> None:
    """Write a JSONL catalogue of tasks into DIR/catalog atomically."""
    os.makedirs(os.path.join(exchange_dir, "catalog"), exist_ok=True)
    lines = "".join(json.dumps({"env": e, "task_id": t, "text": f"task {t} of {e}"}) + "\n" for e, t in tasks)
    envsched_client.write_atomic(os.path.join(exchange_dir, "catalog", "tasks.jsonl"), lines.encode())


def tempdir(test) -> str:
    """A temporary folder removed when the test ends."""
    d = tempfile.mkdtemp(prefix="envsched-py-")
    test.addCleanup(shutil.rmtree, d, True)
    return d
