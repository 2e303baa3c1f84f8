"""envsched_client: talk to an envsched daemon through its exchange directory.

One file, Python 3.8+ standard library only: copy it next to your trainer. It implements the
trainer's side of PROTOCOL.md (version 1):

* ``EnvschedClient.next_batch()`` writes ``DIR/requests/ID.json`` atomically (a temporary
  ``.ID.json.PID.RANDOM.tmp``, fsync, rename, folder fsync) and waits (polling) for ``DIR/batches/ID.json`` or
  ``DIR/batches/ID.error.json``.
* Request IDs come from a sequence (``PREFIX-000001``, ``PREFIX-000002``, ...). Save
  ``client.state_dict()`` with your checkpoint and ``load_state_dict()`` it on resume: the resumed
  run asks for the same IDs again, and envsched gives every ID the same answer, so the resumed
  run trains on the same batches.
* When the daemon does not answer within the timeout and a fallback task list was given, the
  batch is drawn uniformly from that list (seeded by the ID, so it is reproducible) and a
  WARNING is logged. Without a fallback list a ``BatchTimeout`` is raised.
* ``RolloutWriter`` appends rollout records to ``DIR/rollouts/NAME.jsonl``, whole lines only, one
  write and flush per step.

Example::

    client = EnvschedClient("/data/exchange", prefix="run1")
    batch = client.next_batch(size=64, group_size=8, step=1)
    with client.rollout_writer() as out:
        for task in batch.tasks:
            rewards = run_group(task.env, task.task_id)
            out.write_group(batch, task, rewards, step=1)
        out.flush_step()
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import stat
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

__all__ = [
    "BadAnswerError",
    "Batch",
    "BatchError",
    "BatchTimeout",
    "EnvschedClient",
    "RolloutWriter",
    "Task",
    "batch_metrics",
    "read_status",
    "valid_id",
]

PROTOCOL_VERSION = 1
STATE_VERSION = 1

_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # whole string: fullmatch (re's $ allows a final "\n")

log = logging.getLogger("envsched")


def valid_id(request_id: str) -> bool:
    """Return True when request_id is a valid request ID of PROTOCOL.md.

    1 to 128 characters from ``A-Z a-z 0-9 . _ -``, starting with a letter or digit, and not ending
    in ``.error`` (the answer ``ID.json`` of such an ID would be another ID's error file).
    """
    return bool(_ID_RE.fullmatch(request_id)) and not request_id.endswith(".error")


class BatchError(RuntimeError):
    """envsched answered a request with ``ID.error.json``: the request cannot be served.

    ``request_id`` is the ID, ``message`` envsched's explanation (what is wrong, how to fix it).
    """

    def __init__(self, request_id: str, message: str) -> None:
        super().__init__(f"envsched refused request {request_id}: {message}")
        self.request_id = request_id
        self.message = message


class BatchTimeout(TimeoutError):
    """No answer to a request within the timeout, and no fallback task list was given."""

    def __init__(self, request_id: str, timeout: float, exchange_dir: str) -> None:
        super().__init__(
            f"no answer to request {request_id} from envsched within {timeout:g}s; "
            f"is `envsched run --dir {exchange_dir}` running?"
        )
        self.request_id = request_id


@dataclass(frozen=True)
class Task:
    """One chosen (environment, task) pair of a batch.

    ``info`` holds the other fields envsched sent (rank, score, predicted_mean, reason, ...);
    it is empty for fallback batches.
    """

    env: str
    task_id: str
    info: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def key(self) -> Tuple[str, str]:
        """The pair (env, task_id)."""
        return (self.env, self.task_id)


@dataclass
class Batch:
    """The answer to one request.

    ``fallback`` is True when envsched did not answer in time and the tasks were drawn uniformly
    from the client's fallback list; ``raw`` is the batch file's JSON object (empty then).
    """

    id: str
    step: Optional[int]
    group_size: Optional[int]
    tasks: List[Task]
    fallback: bool = False
    raw: Dict[str, Any] = field(default_factory=dict)


TaskLike = Union[Task, Tuple[str, str], Mapping[str, Any]]


def _as_task(t: TaskLike) -> Task:
    if isinstance(t, Task):
        return t
    if isinstance(t, Mapping):
        return Task(str(t["env"]), str(t["task_id"]))
    env, task_id = t
    return Task(str(env), str(task_id))


def _fsync_dir(path: str) -> None:
    """fsync a folder so that a rename inside it is durable (a no-op where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: str, data: bytes) -> None:
    """Write data to path atomically: ``.NAME.PID.RANDOM.tmp`` in the same folder, fsync, rename,
    folder fsync.

    envsched ignores names that start with ``.`` or end with ``.tmp``, so it never sees half a file.
    The temporary name is unique to the call, so processes writing the same request at once (the
    ranks of one trainer) cannot mix their bytes.
    """
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(folder or ".")


class EnvschedClient:
    """The trainer's side of the envsched exchange directory.

    Args:
        exchange_dir: the ``--dir`` of ``envsched run``.
        prefix: first part of every request ID (``PREFIX-000001``); use one prefix per training run.
        timeout: seconds to wait for an answer before falling back (or raising BatchTimeout).
        poll_interval: the longest pause between looks at ``DIR/batches`` (the first looks come
            sooner: 2 ms, doubling up to it).
        fallback_tasks: tasks to draw from uniformly when envsched does not answer in time;
            ``(env, task_id)`` pairs, ``Task`` objects or mappings with ``env`` and ``task_id``.
        cleanup: delete the request and batch files once the batch is read (the protocol allows
            it; keep them, the default, to inspect what was asked and answered).
        logger: where warnings go (default: the ``envsched`` logger).
    """

    def __init__(
        self,
        exchange_dir: str,
        prefix: str = "step",
        *,
        timeout: float = 120.0,
        poll_interval: float = 0.05,
        fallback_tasks: Optional[Iterable[TaskLike]] = None,
        cleanup: bool = False,
        logger: Optional[logging.Logger] = None,
    ) -> None:
        if not valid_id(prefix) or len(prefix) > 120:
            raise ValueError(f"prefix {prefix!r} must match [A-Za-z0-9][A-Za-z0-9._-]* (at most 120 characters)")
        self.dir = os.fspath(exchange_dir)
        self.prefix = prefix
        self.timeout = float(timeout)
        self.poll_interval = float(poll_interval)
        self.fallback_tasks: List[Task] = [_as_task(t) for t in (fallback_tasks or [])]
        self.cleanup = cleanup
        self.log = logger or log
        self.next_seq = 1
        self.last_batch: Optional[Batch] = None
        self.requests_dir = os.path.join(self.dir, "requests")
        self.batches_dir = os.path.join(self.dir, "batches")
        self.rollouts_dir = os.path.join(self.dir, "rollouts")
        for d in (self.requests_dir, self.batches_dir, self.rollouts_dir):
            os.makedirs(d, exist_ok=True)

    # -- state ---------------------------------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        """Return the client's state (JSON-serialisable) to save with a trainer checkpoint."""
        return {"version": STATE_VERSION, "prefix": self.prefix, "next_seq": self.next_seq}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore state saved by state_dict: the next request gets the ID it had then."""
        if int(state.get("version", STATE_VERSION)) > STATE_VERSION:
            raise ValueError(f"client state version {state['version']} is newer than this client ({STATE_VERSION})")
        if state.get("prefix", self.prefix) != self.prefix:
            self.log.warning("envsched: restoring state of prefix %r into a client with prefix %r; using %r",
                             state["prefix"], self.prefix, state["prefix"])
            self.prefix = str(state["prefix"])
        seq = int(state["next_seq"])
        if seq < 1:
            raise ValueError(f"next_seq {seq} must be at least 1")
        self.next_seq = seq

    def next_id(self) -> str:
        """Return the ID the next call of next_batch will use."""
        return f"{self.prefix}-{self.next_seq:06d}"

    # -- requests ------------------------------------------------------------------------------

    def next_batch(
        self,
        size: Optional[int] = None,
        group_size: Optional[int] = None,
        step: Optional[int] = None,
        *,
        envs: Optional[Sequence[str]] = None,
        exclude_envs: Optional[Sequence[str]] = None,
        allow_repeats: Optional[bool] = None,
        seed: Optional[int] = None,
        timeout: Optional[float] = None,
    ) -> Batch:
        """Ask for the next batch under the next ID of the sequence and wait for the answer.

        The sequence advances only when a batch (or a fallback) is returned, so a call that
        raises can be retried and asks for the same ID. Arguments left None take envsched's
        defaults (PROTOCOL.md, section 5 "Requests").
        """
        request_id = self.next_id()
        body = self.request_body(size, group_size, step, envs, exclude_envs, allow_repeats, seed)
        batch = self.ask(request_id, body, timeout=timeout)
        self.next_seq += 1
        self.last_batch = batch
        return batch

    @staticmethod
    def request_body(
        size: Optional[int] = None,
        group_size: Optional[int] = None,
        step: Optional[int] = None,
        envs: Optional[Sequence[str]] = None,
        exclude_envs: Optional[Sequence[str]] = None,
        allow_repeats: Optional[bool] = None,
        seed: Optional[int] = None,
    ) -> Dict[str, Any]:
        """Build a request object with only the fields that are set."""
        body: Dict[str, Any] = {}
        for key, value in (("size", size), ("group_size", group_size), ("step", step), ("seed", seed)):
            if value is not None:
                body[key] = int(value)
        if envs is not None:
            body["envs"] = [str(e) for e in envs]
        if exclude_envs is not None:
            body["exclude_envs"] = [str(e) for e in exclude_envs]
        if allow_repeats is not None:
            body["allow_repeats"] = bool(allow_repeats)
        return body

    def ask(self, request_id: str, body: Mapping[str, Any], timeout: Optional[float] = None) -> Batch:
        """Write request ``request_id`` (unless already answered) and wait for its answer.

        An ID answered before gets the stored answer: when its batch file is already there it is
        read without writing the request again.
        """
        if not valid_id(request_id):
            raise ValueError(
                f"request ID {request_id!r} does not match [A-Za-z0-9][A-Za-z0-9._-]{{0,127}} "
                "or ends in .error"
            )
        if not os.path.exists(self._batch_path(request_id)):
            data = json.dumps(dict(body), sort_keys=True).encode() + b"\n"
            write_atomic(os.path.join(self.requests_dir, f"{request_id}.json"), data)
        wait = self.timeout if timeout is None else float(timeout)
        answer = self.wait(request_id, wait)
        if answer is None:
            return self._fallback(request_id, body, wait)
        return answer

    def wait(self, request_id: str, timeout: float) -> Optional[Batch]:
        """Poll for the answer to request_id; return the Batch, None on timeout.

        Raises BatchError when envsched wrote ``ID.error.json``, and BadAnswerError when the batch
        or error file is not one envsched can have written (damaged, or written by something else).
        """
        deadline = time.monotonic() + timeout
        pause = min(0.002, self.poll_interval)
        while True:
            batch = self._read_answer(request_id)
            if batch is not None:
                return batch
            now = time.monotonic()
            if now >= deadline:
                return None
            time.sleep(min(pause, deadline - now))
            pause = min(pause * 2, self.poll_interval)  # quick first looks, then every poll_interval

    def _batch_path(self, request_id: str) -> str:
        return os.path.join(self.batches_dir, f"{request_id}.json")

    def _read_answer(self, request_id: str) -> Optional[Batch]:
        path = self._batch_path(request_id)
        raw = _read_answer_file(path)
        if raw is not None:
            try:
                batch = parse_batch(raw, request_id)
            except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as e:
                raise BadAnswerError(path, f"not a batch of PROTOCOL.md ({type(e).__name__}: {e})") from e
            if self.cleanup:
                self._remove(os.path.join(self.requests_dir, f"{request_id}.json"), path)
            return batch
        err_path = os.path.join(self.batches_dir, f"{request_id}.error.json")
        err = _read_answer_file(err_path)
        if err is not None:
            # The request stays answerable: remove it and the error so a corrected retry is fresh.
            self._remove(os.path.join(self.requests_dir, f"{request_id}.json"), err_path)
            raise BatchError(request_id, str(err.get("error", err)))
        return None

    @staticmethod
    def _remove(*paths: str) -> None:
        # The request first: a batch whose request is still there would be written again.
        for p in paths:
            try:
                os.remove(p)
            except FileNotFoundError:
                pass

    def _fallback(self, request_id: str, body: Mapping[str, Any], waited: float) -> Batch:
        if not self.fallback_tasks:
            raise BatchTimeout(request_id, waited, self.dir)
        size = int(body.get("size", len(self.fallback_tasks)))
        rng = random.Random(int.from_bytes(hashlib.sha256(request_id.encode()).digest()[:8], "big"))
        if size <= len(self.fallback_tasks):
            tasks = rng.sample(self.fallback_tasks, size)
        else:
            tasks = [rng.choice(self.fallback_tasks) for _ in range(size)]
        self.log.warning(
            "envsched did not answer request %s within %gs (is `envsched run --dir %s` running?); "
            "FALLING BACK to %d tasks drawn uniformly from %d: this batch is not scheduled",
            request_id, waited, self.dir, len(tasks), len(self.fallback_tasks),
        )
        # Withdraw the request so envsched does not answer a batch nobody reads.
        self._remove(os.path.join(self.requests_dir, f"{request_id}.json"))
        step = body.get("step")
        return Batch(request_id, None if step is None else int(step), body.get("group_size"), tasks, fallback=True)

    # -- metrics -------------------------------------------------------------------------------

    def metrics(self, batch: Optional[Batch] = None) -> Dict[str, float]:
        """``batch_metrics`` of batch (default: the last one next_batch returned) and status.json.

        Empty when no batch was answered yet. Log it with your trainer's logger each step.
        """
        batch = batch if batch is not None else self.last_batch
        if batch is None:
            return {}
        return batch_metrics(batch, read_status(self.dir))

    # -- rollouts ------------------------------------------------------------------------------

    def rollout_writer(self, name: Optional[str] = None, fsync: bool = False) -> "RolloutWriter":
        """Open ``DIR/rollouts/NAME.jsonl`` for appending rollout records.

        The default name is ``PREFIX-<UTC time>-<pid>``: a new file per process, so a trainer
        killed in the middle of a line never appends to that half line.
        """
        if name is None:
            name = f"{self.prefix}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}"
        return RolloutWriter(os.path.join(self.rollouts_dir, f"{name}.jsonl"), fsync=fsync)


class BadAnswerError(ValueError):
    """A file in ``DIR/batches`` that envsched cannot have written (it publishes whole JSON objects).

    Something else wrote or damaged it; remove it (and the request, to ask again).
    """

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}; remove it and ask again")
        self.path = path


# The largest file envsched writes of each kind, with room to spare: an answer of 100,000 tasks
# is about 25 MB, and about 850 MB when every environment name and task id is near the
# 4,096-byte limit (review14: 256 MiB refused such an answer); status.json is read by
# ``envsched status`` only up to 16 MiB. A larger file
# is not envsched's; it was read whole (a 4 GB sparse status.json took 5 GB in every
# ``metrics()`` call) before it was found not to be JSON.
MAX_ANSWER_BYTES = 1 << 30
MAX_STATUS_BYTES = 16 << 20


def _read_answer_file(path: str) -> Optional[Dict[str, Any]]:
    """_read_json for batch and error files: None when absent, BadAnswerError when unreadable."""
    try:
        return _read_json(path, MAX_ANSWER_BYTES)
    except (OSError, ValueError, RecursionError) as e:
        raise BadAnswerError(path, f"cannot be read as a JSON object ({type(e).__name__}: {e})") from e


def _read_json(path: str, max_bytes: int) -> Optional[Dict[str, Any]]:
    """Read a JSON object file published atomically; None when it does not exist.

    Only a regular file is read: the file is opened without blocking and anything else (a FIFO,
    a device, a socket) is a ValueError. envsched publishes regular files only, and ``open`` of a
    FIFO put in their place waited for a writer for ever, past every timeout (the trainer hung
    in ``ask`` and never fell back, or in ``metrics`` on a FIFO status.json).
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "not a regular file"
            raise ValueError(f"{path}: {kind}; envsched writes regular files only")
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise ValueError(f"{path}: {size} bytes, more than the {max_bytes} such a file of envsched's can hold")
        data = f.read(max_bytes + 1)
        if len(data) > max_bytes:  # grown since the fstat
            raise ValueError(f"{path}: more than the {max_bytes} bytes such a file of envsched's can hold")
    obj = json.loads(data)
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: not a JSON object")
    return obj


def parse_batch(raw: Mapping[str, Any], request_id: str) -> Batch:
    """Turn a batch file's JSON object into a Batch."""
    tasks = []
    for t in raw.get("tasks") or []:
        info = {k: v for k, v in t.items() if k not in ("env", "task_id")}
        tasks.append(Task(str(t["env"]), str(t["task_id"]), info))
    step = raw.get("step")
    gs = raw.get("group_size")
    return Batch(
        id=str(raw.get("id", request_id)),
        step=None if step is None else int(step),
        group_size=None if gs is None else int(gs),
        tasks=tasks,
        raw=dict(raw),
    )


METRIC_PREFIX = "envsched/"


def read_status(exchange_dir: str) -> Optional[Dict[str, Any]]:
    """DIR/status.json as a dict; None when there is none or it cannot be read."""
    try:
        return _read_json(os.path.join(exchange_dir, "status.json"), MAX_STATUS_BYTES)
    except (OSError, ValueError, RecursionError):  # RecursionError: nesting too deep to decode
        return None


def batch_metrics(batch: Batch, status: Optional[Mapping[str, Any]] = None) -> Dict[str, float]:
    """envsched's figures for one answered batch, as a flat dict of ``envsched/``-prefixed floats.

    From the batch file (always, unless the batch is a fallback):

    * ``envsched/predicted_degenerate``: mean ``p_degenerate`` of the batch's tasks, the share of
      its groups envsched expects to come back all-equal;
    * ``envsched/predicted_mean``, ``envsched/predicted_variance``: means over its tasks;
    * ``envsched/rollouts_seen``: rollouts envsched had counted when it chose the batch;
    * ``envsched/envs_in_batch``: how many environments the batch draws from;
    * ``envsched/fallback``: 1 when envsched did not answer and the batch was drawn uniformly.

    From ``status`` (DIR/status.json) when it carries ``calibration`` (envsched's own measurement
    of its predictions against the groups that came back):

    * ``envsched/realised_degenerate``, ``envsched/predicted_degenerate_measured``,
      ``envsched/calibration_gap`` (realised − predicted), ``envsched/calibration_groups``: over
      the groups of the last answers (``calibration.recent``);
    * ``envsched/realised_degenerate_overall``, ``envsched/calibration_gap_overall``: over every
      measured group;
    * ``envsched/rollouts_saved_est``: envsched's estimate of the rollouts saved against random
      choice (``calibration.savings.rollouts_saved_est``).

    From ``status`` when it carries ``corrections`` (what envsched corrects with, stored with its
    last answer):

    * ``envsched/exploration_return``, ``envsched/random_return``, ``envsched/coverage_return``:
      the measured factors of the coverage weight, the random share and the coverage of re-tries
      (``corrections.<name>.factor``);
    * ``envsched/rechosen_factor``, ``envsched/never_tried_factor``,
      ``envsched/rechosen_low_factor``, ``envsched/random_factor``: the count factors of
      re-chosen picks, of selection's picks of tasks never tried, of re-chosen picks predicted
      to teach little, and of random slots (absent from a daemon older than it);
      ``envsched/never_tried_offset``: the logit offset of the mean of selection's picks of
      tasks never tried (absent from a daemon older than it).

    Every value is a finite float; a figure that cannot be computed is left out.
    """
    out: Dict[str, float] = {}
    if batch.fallback:
        out[METRIC_PREFIX + "fallback"] = 1.0
        out[METRIC_PREFIX + "envs_in_batch"] = float(len({t.env for t in batch.tasks}))
        return out
    out[METRIC_PREFIX + "fallback"] = 0.0
    for name, key in (("predicted_degenerate", "p_degenerate"), ("predicted_mean", "predicted_mean"),
                      ("predicted_variance", "predicted_variance")):
        vals = [v for v in (_finite(t.info.get(key)) for t in batch.tasks) if v is not None]
        if vals:
            out[METRIC_PREFIX + name] = sum(vals) / len(vals)
    _put(out, "rollouts_seen", batch.raw.get("rollouts_seen"))
    out[METRIC_PREFIX + "envs_in_batch"] = float(len({t.env for t in batch.tasks}))
    calib = status.get("calibration") if isinstance(status, Mapping) else None
    if isinstance(calib, Mapping):
        recent, overall = calib.get("recent"), calib.get("overall")
        if isinstance(recent, Mapping):
            _put(out, "realised_degenerate", recent.get("realised_degenerate"))
            _put(out, "predicted_degenerate_measured", recent.get("predicted_degenerate"))
            _put(out, "calibration_gap", recent.get("degenerate_gap"))
            _put(out, "calibration_groups", recent.get("groups"))
        if isinstance(overall, Mapping):
            _put(out, "realised_degenerate_overall", overall.get("realised_degenerate"))
            _put(out, "calibration_gap_overall", overall.get("degenerate_gap"))
        savings = calib.get("savings")
        if isinstance(savings, Mapping):
            _put(out, "rollouts_saved_est", savings.get("rollouts_saved_est"))
    corr = status.get("corrections") if isinstance(status, Mapping) else None
    if isinstance(corr, Mapping):
        for name in ("exploration_return", "random_return", "coverage_return"):
            ret = corr.get(name)
            if isinstance(ret, Mapping):
                _put(out, name, ret.get("factor"))
        _put(out, "rechosen_factor", corr.get("rechosen_factor"))
        _put(out, "never_tried_factor", corr.get("never_tried_factor"))
        _put(out, "rechosen_low_factor", corr.get("rechosen_low_factor"))
        _put(out, "random_factor", corr.get("random_factor"))
        _put(out, "never_tried_offset", corr.get("never_tried_offset"))
    return out


def _finite(v: Any) -> Optional[float]:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:  # an integer beyond the float range
        return None
    return f if f == f and f not in (float("inf"), float("-inf")) else None


def _put(out: Dict[str, float], name: str, v: Any) -> None:
    f = _finite(v)
    if f is not None:
        out[METRIC_PREFIX + name] = f


class RolloutWriter:
    """Appends rollout records to one JSONL file, whole lines only.

    Records are buffered by ``write``/``write_group`` and reach the file in one ``os.write`` per
    ``flush_step`` (then flushed; fsynced when ``fsync`` is True). envsched counts a line once it
    ends in a newline, so a reader never takes half a record. When the file already ends in half
    a line (a writer killed mid-write), a newline is added first: that half line becomes one
    quarantined bad line instead of swallowing the next record.
    """

    def __init__(self, path: str, fsync: bool = False) -> None:
        self.path = path
        self.fsync = fsync
        self._buf: List[bytes] = []
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        # Without blocking, and only a regular file: envsched reads nothing else, and the open of a
        # FIFO for writing waited for a reader that never comes (the trainer hung in its first step).
        self._fd = -1
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
        except OSError as e:
            if not os.path.exists(path) or stat.S_ISREG(os.stat(path).st_mode):
                raise
            raise ValueError(f"{path} is not a regular file; envsched reads rollouts from regular files only") from e
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise ValueError(f"{path} is not a regular file; envsched reads rollouts from regular files only")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        self._fd = fd
        self._terminate_half_line()

    def _terminate_half_line(self) -> None:
        size = os.fstat(self._fd).st_size
        if size == 0:
            return
        with open(self.path, "rb") as f:
            f.seek(size - 1)
            last = f.read(1)
        if last != b"\n":
            log.warning("envsched: %s ended in half a line; closing it (it will be quarantined)", self.path)
            self._write_all(b"\n")

    def write(self, record: Mapping[str, Any]) -> None:
        """Buffer one rollout record (a JSON object; see PROTOCOL.md, section 4 "Rollouts")."""
        line = json.dumps(dict(record), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        self._buf.append(line.encode("utf-8") + b"\n")

    def write_group(
        self,
        batch: Batch,
        task: Task,
        rewards: Sequence[float],
        step: Optional[int] = None,
        group_id: Optional[str] = None,
    ) -> None:
        """Buffer the rollouts of one group: one record per reward, with deterministic rollout ids.

        ``rollout_id`` is ``BATCHID/ENV/TASK/RANK/i`` (RANK the task's place in the batch), so a
        step replayed after a resume writes the same ids and envsched skips them as duplicates.
        """
        rank = _rank_of(batch, task)
        step = batch.step if step is None else step
        gid = group_id or f"{batch.id}/{rank}"
        for i, r in enumerate(rewards):
            rec: Dict[str, Any] = {
                "env": task.env,
                "task_id": task.task_id,
                "reward": float(r),
                "group_id": gid,
                "rollout_id": f"{batch.id}/{task.env}/{task.task_id}/{rank}/{i}",
            }
            if step is not None:
                rec["step"] = int(step)
            if not batch.fallback:
                rec["request_id"] = batch.id
            self.write(rec)

    def flush_step(self) -> int:
        """Write every buffered record in one write, flush (and fsync); return the number written."""
        n = len(self._buf)
        if n:
            self._write_all(b"".join(self._buf))
            self._buf.clear()
            if self.fsync:
                os.fsync(self._fd)
        return n

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def close(self) -> None:
        """Flush what is buffered and close the file. Idempotent."""
        if self._fd < 0:
            return
        self.flush_step()
        os.close(self._fd)
        self._fd = -1

    def __enter__(self) -> "RolloutWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _rank_of(batch: Batch, task: Task) -> int:
    rank = task.info.get("rank") if task.info else None
    if isinstance(rank, int):
        return rank
    for i, t in enumerate(batch.tasks):
        if t is task:
            return i + 1
    return batch.tasks.index(task) + 1


def task_key(row: Mapping[str, Any]) -> Optional[Tuple[str, str]]:
    """Resolve (env, task_id) of a catalogue row or dataset row with PROTOCOL.md's key aliases.

    Used by the adapters to map envsched's answers back to dataset rows. Returns None when the
    row lacks env or task.
    """
    env = _first(row, ("env", "data_source", "env_class", "environment", "task_name", "tag", "domain",
                       "extra_info.data_source"))
    task = _first(row, ("task_id", "task", "extra_info.task_id", "index", "extra_info.index", "item_id", "id"))
    if not isinstance(env, str) or env == "" or task is None:
        return None
    tid = _id_text(task)
    if tid is None or tid == "":
        return None
    return env, tid


def _first(row: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        value: Any = row
        for part in key.split("."):
            if not isinstance(value, Mapping) or part not in value:
                value = None
                break
            value = value[part]
        if not _absent(value):
            return value
    return None


def _absent(value: Any) -> bool:
    """None, or a float that is NaN or infinite: the daemon reads a parquet row's non-finite
    float as null (catalog/parquet.go), so such a key is absent and the next key is read. (A
    ``task_id`` of NaN beside ``extra_info.index`` named no task here while the daemon took the
    index: the task it chose mapped back to no dataset row.)
    """
    if value is None:
        return True
    if isinstance(value, float) or getattr(getattr(value, "dtype", None), "kind", None) == "f":
        try:
            f = float(value)
        except (TypeError, ValueError):
            return False
        return f != f or f in (float("inf"), float("-inf"))
    return False


def _id_text(value: Any) -> Optional[str]:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if getattr(getattr(value, "dtype", None), "kind", None) == "f":
        # a numpy float other than float64 (a float32 column): the daemon reads its float64 value
        try:
            value = float(value)
        except (TypeError, ValueError):
            return None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return _float_text(value)
    try:  # numpy integers and the like
        return str(int(value)) if int(value) == value else None
    except (TypeError, ValueError, OverflowError):
        return None


def _float_text(x: float) -> str:
    """The task ID envsched makes of a number read as a float (PROTOCOL.md, "Numbers as ids").

    An integral value below 1e21 is written without fraction or exponent (``3.0`` is ``"3"``,
    ``1.5e16`` is ``"15000000000000000"``, ``1.2345678901234568e20`` is
    ``"123456789012345680000"``: the shortest digits, never more); any other value in its
    shortest digits, with an exponent of at least two digits when the exponent is below -4 or at
    least 6 (``2.5``, ``0.0001``, ``1e-05``, ``1.2345675e+06``, ``1e+21``), as the daemon's Go
    ``strconv.FormatFloat(x, 'g', -1, 64)`` writes it. (``repr`` differs from 1e6 to 1e16, and
    ``str(int(x))`` from 2**53 on, so such ids did not map back to their rows.)
    """
    if x == 0:
        return "0"
    d = Decimal(repr(x)).normalize()  # repr: the shortest digits that read back as x
    if x.is_integer() and abs(x) < 1e21:
        return format(d, "f")
    sign, digits, exp = d.as_tuple()
    s = "".join(map(str, digits))
    e = len(s) - 1 + int(exp)  # the decimal exponent of the first digit
    if -4 <= e < 6:
        return format(d, "f")
    mantissa = s[0] + ("." + s[1:] if len(s) > 1 else "")
    return ("-" if sign else "") + mantissa + "e" + ("-" if e < 0 else "+") + "%02d" % abs(e)
