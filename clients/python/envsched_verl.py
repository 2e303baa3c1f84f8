"""verl adapters for envsched: a dataset (verl v0.5.0 on), a curriculum sampler (v0.5.0 to v0.7.1),
and a reward-function wrapper that sends every scored sample to envsched.

The file loads without verl: the classes that subclass verl's are built on first use (module
``__getattr__``), and import verl then. Keep ``envsched_client.py`` in the same folder.

Settings (each also from an environment variable) live in the data config:

==================  ========================  ==================================================
key                 environment variable      meaning
==================  ========================  ==================================================
``dir``             ``ENVSCHED_DIR``          the exchange directory of ``envsched run --dir``
``prefix``          ``ENVSCHED_PREFIX``       request ID prefix, one per run (default ``verl``)
``timeout``         ``ENVSCHED_TIMEOUT``      seconds to wait before the uniform fallback (120)
``group_size``      ``ENVSCHED_GROUP_SIZE``   rollouts per task (set it to rollout.n)
``checkpoint_dir``  ``ENVSCHED_CHECKPOINT``   dataset only: verl's ``trainer.default_local_dir``
==================  ========================  ==================================================

Any verl from v0.5.0 (legacy or V1 trainer; dataset and reward wrapper; settings under
``data.envsched``)::

    data.custom_cls.path=/path/to/envsched_verl.py data.custom_cls.name=EnvschedDataset
    data.shuffle=False data.dataloader_num_workers=0
    +data.envsched.dir=/data/exchange '+data.envsched.checkpoint_dir=${trainer.default_local_dir}'
    custom_reward_function.path=/path/to/envsched_verl.py custom_reward_function.name=compute_score

The dataset stamps each row's ``extra_info`` with where it sits (step, slot, request, attempt);
the wrapper ``compute_score`` then writes envsched's own rollout line per sample into
``DIR/rollouts/verl-reward/`` (see ``RolloutSink``), whatever keys verl dumps. Your own scorer
goes in ``+custom_reward_function.reward_kwargs.envsched_inner_path`` and ``envsched_inner_name``
(verl's default scorer otherwise).

verl v0.5.0 to v0.7.1, legacy trainer only (sampler; settings under ``data.sampler``)::

    data.sampler.class_path=/path/to/envsched_verl.py
    data.sampler.class_name=EnvschedCurriculumSampler
    +data.sampler.dir=/data/exchange +data.sampler.group_size=8
    data.dataloader_num_workers=0
    trainer.rollout_data_dir=DIR/rollouts/verl  (and the same custom_reward_function)

Without a stamp the wrapper returns ``data_source``, ``task_id`` and ``group_id`` as reward extra
info, which the legacy trainer's dump writes into every line.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import random
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import envsched_client as ec  # noqa: E402

log = logging.getLogger("envsched")

Key = Tuple[str, str]

_ENV = {"dir": "ENVSCHED_DIR", "prefix": "ENVSCHED_PREFIX", "timeout": "ENVSCHED_TIMEOUT",
        "group_size": "ENVSCHED_GROUP_SIZE", "checkpoint_dir": "ENVSCHED_CHECKPOINT"}


def settings(section: Any) -> Dict[str, Any]:
    """Read the adapter settings from a config section (a dict or DictConfig) and the environment."""
    out: Dict[str, Any] = {}
    for key, var in _ENV.items():
        value = _get(section, key)
        if value is None:
            value = os.environ.get(var)
        out[key] = value
    if not out["dir"]:
        raise ValueError("envsched: set the exchange directory (config key `dir` or ENVSCHED_DIR)")
    out["prefix"] = out["prefix"] or "verl"
    out["timeout"] = float(out["timeout"] or 120)
    out["group_size"] = None if out["group_size"] in (None, "") else int(out["group_size"])
    return out


def _get(cfg: Any, key: str, default: Any = None) -> Any:
    if cfg is None:
        return default
    try:  # a DictConfig in struct mode may refuse unknown keys
        value = cfg.get(key) if hasattr(cfg, "get") else getattr(cfg, key, None)
    except Exception:
        return default
    return default if value is None else value


def batch_size_of(data_config: Any) -> int:
    """The dataloader's batch size in verl: ``data.gen_batch_size`` if set, else ``train_batch_size``."""
    size = int(_get(data_config, "gen_batch_size", 0) or _get(data_config, "train_batch_size", 0))
    if size <= 0:
        raise ValueError("envsched: data.train_batch_size must be set")
    return size


class RowIndex:
    """Maps (env, task_id) to the dataset rows that hold it, with PROTOCOL.md's key aliases."""

    def __init__(self, rows: Any) -> None:
        self.rows: Dict[Key, List[int]] = {}
        self.keys: List[Optional[Key]] = []
        self.n = 0
        for i, row in enumerate(rows):
            self.n = i + 1
            key = ec.task_key(row) if isinstance(row, Mapping) else None
            self.keys.append(key)
            if key is not None:
                self.rows.setdefault(key, []).append(i)
        if not self.rows:
            raise ValueError("envsched: no dataset row has an env (data_source) and a task id (extra_info.index)")

    def tasks(self) -> List[Key]:
        """Every (env, task_id) of the dataset, for the client's uniform fallback."""
        return list(self.rows)

    def indices(self, batch: ec.Batch, size: int) -> List[int]:
        """Dataset row indices of a batch's tasks, exactly size of them.

        A task with several rows takes them in turn; tasks the dataset lacks, and a batch shorter
        than size, are filled with rows drawn by a generator seeded from the batch ID (logged).
        """
        out: List[int] = []
        used: Dict[Key, int] = {}
        missing = 0
        for t in batch.tasks:
            rows = self.rows.get(t.key)
            if not rows:
                missing += 1
                continue
            k = used.get(t.key, 0)
            out.append(rows[k % len(rows)])
            used[t.key] = k + 1
        rng = random.Random(int.from_bytes(hashlib.sha256(batch.id.encode()).digest()[:8], "big"))
        if missing or len(out) < size:
            log.warning("envsched: batch %s: %d tasks not in the dataset, %d rows short; filling with random rows",
                        batch.id, missing, max(0, size - len(out)))
        while len(out) < size:
            out.append(rng.randrange(self.n))
        return out[:size]


def dataset_rows(dataset: Any) -> Any:
    """The raw rows of a verl dataset (RLHFDataset keeps them in ``dataframe``)."""
    for attr in ("dataframe", "rows", "data"):
        rows = getattr(dataset, attr, None)
        if rows is not None:
            return rows
    raise TypeError(f"envsched: cannot find the rows of {type(dataset).__name__} (no .dataframe)")


class SamplerCore:
    """The verl-independent part of EnvschedCurriculumSampler.

    Each epoch has ``len(data_source) // train_batch_size`` steps; each step asks envsched for
    ``train_batch_size`` tasks under the next ID and yields their dataset row indices. The state
    (the ID sequence and the place in the epoch) goes into verl's dataloader checkpoint through
    ``state_dict``, so a resumed run asks for the same IDs and gets the same batches.
    """

    def __init__(self, data_source: Any, data_config: Any) -> None:
        s = settings(_get(data_config, "sampler"))
        self.batch_size = batch_size_of(data_config)
        self.index = RowIndex(dataset_rows(data_source))
        self.group_size = s["group_size"]
        self.client = ec.EnvschedClient(s["dir"], prefix=s["prefix"], timeout=s["timeout"],
                                        fallback_tasks=self.index.tasks())
        self.steps_per_epoch = max(1, self.index.n // self.batch_size)
        self.epoch_pos = 0  # steps of the current epoch already asked for
        self.steps = StepMetrics(s["dir"])
        install_tracking_hook(self.steps)

    def __len__(self) -> int:
        return self.steps_per_epoch * self.batch_size

    def __iter__(self) -> Iterator[int]:
        while self.epoch_pos < self.steps_per_epoch:
            seq = self.client.next_seq
            batch = self.client.next_batch(size=self.batch_size, group_size=self.group_size, step=seq)
            self.steps.record(seq, batch)
            self.epoch_pos += 1
            yield from self.index.indices(batch, self.batch_size)
        self.epoch_pos = 0

    def update(self, batch: Any) -> None:
        """Called by verl after each step. envsched learns from the rollout files instead."""

    def state_dict(self) -> Dict[str, Any]:
        """The client's ID sequence and the place in the epoch, for verl's dataloader checkpoint."""
        return {"client": self.client.state_dict(), "epoch_pos": self.epoch_pos}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore state_dict's result: the next step asks for the ID it asked for then."""
        self.client.load_state_dict(state["client"])
        self.epoch_pos = int(state.get("epoch_pos", 0)) % self.steps_per_epoch


class DatasetCore:
    """The verl-independent part of EnvschedDataset (verl v0.5.0 on, ``data.shuffle=False``).

    The dataloader reads positions 0, 1, 2, … in order; position p of the process is slot
    p % train_batch_size of step start + p // train_batch_size + 1, whose batch envsched
    chooses. ``start`` is the last step of verl's latest checkpoint (read from
    ``latest_checkpointed_iteration.txt`` in ``checkpoint_dir``), so a resumed run asks for the
    same IDs again. Its attributes start with ``_es_`` (or are ``envsched_client``) so that they
    do not clash with the dataset's own.
    """

    def setup_envsched(self, rows: Any, data_config: Any) -> None:
        """Initialise from the dataset's rows and the data config (call after the rows exist)."""
        s = settings(_get(data_config, "envsched"))
        self._es_dir = s["dir"]
        self._es_batch_size = batch_size_of(data_config)
        self._es_index = RowIndex(rows)
        self._es_group_size = s["group_size"]
        self.envsched_client = ec.EnvschedClient(s["dir"], prefix=s["prefix"], timeout=s["timeout"],
                                        fallback_tasks=self._es_index.tasks())
        self._es_start_step = latest_checkpoint_step(s["checkpoint_dir"])
        self._es_attempt = attempt_token()
        self.envsched_steps = StepMetrics(s["dir"])
        install_tracking_hook(self.envsched_steps)
        self._es_reads = 0
        self._es_cached: Tuple[int, Optional[ec.Batch], List[int]] = (-1, None, [])

    def next_read(self) -> "Read":
        """The next read: its dataset row and where it sits (step, slot, request, attempt).

        Asks envsched for a new step's batch when the read starts one.
        """
        step = self._es_start_step + self._es_reads // self._es_batch_size + 1
        slot = self._es_reads % self._es_batch_size
        if self._es_cached[0] != step:
            self.envsched_client.load_state_dict({"prefix": self.envsched_client.prefix, "next_seq": step})
            batch = self.envsched_client.next_batch(size=self._es_batch_size, group_size=self._es_group_size, step=step)
            self._es_cached = (step, batch, self._es_index.indices(batch, self._es_batch_size))
            self.envsched_steps.record(step, batch)
        self._es_reads += 1
        _, batch, rows = self._es_cached
        row = rows[slot]
        request_id = None if batch is None or batch.fallback else batch.id
        return Read(row, step, slot, request_id, self._es_attempt, self._es_index.keys[row])

    def row_for_next_read(self) -> int:
        """The dataset row of the next read (see next_read)."""
        return self.next_read().row

    def stamp(self, item: Any, read: "Read") -> Any:
        """Return item (a row as the dataset returns it) with ``extra_info.envsched`` set to read.

        extra_info is copied, never changed in place: the dataset's own rows stay as they are.
        The reward wrapper reads the stamp and writes envsched's rollout line for each sample.
        """
        if not isinstance(item, dict) or read.key is None:
            return item
        extra = item.get("extra_info")
        extra = dict(extra) if isinstance(extra, Mapping) else {}
        extra[STAMP_KEY] = {"dir": self._es_dir, "env": read.key[0], "task_id": read.key[1], "step": read.step,
                            "slot": read.slot, "request_id": read.request_id, "attempt": read.attempt}
        out = dict(item)
        out["extra_info"] = extra
        return out


def stamp_validation(item: Any) -> Any:
    """Return item with ``extra_info.envsched = {"validation": True}`` (extra_info copied).

    The reward wrapper then leaves the score as the scorer returned it: no rollout line (a
    validation sample is not a training rollout) and no extra keys (verl averages every reward
    extra key over validation samples, and strings there would break it).
    """
    if not isinstance(item, dict):
        return item
    extra = item.get("extra_info")
    extra = dict(extra) if isinstance(extra, Mapping) else {}
    extra[STAMP_KEY] = {"validation": True}
    out = dict(item)
    out["extra_info"] = extra
    return out


class Read(NamedTuple):
    """One read of the dataset: its row and where it sits in the run."""

    row: int
    step: int
    slot: int
    request_id: Optional[str]  # None for a fallback batch (envsched did not answer)
    attempt: str
    key: Optional[Key]


STAMP_KEY = "envsched"


def attempt_token() -> str:
    """A name for this run of the trainer process: UTC time, pid and random bits.

    A step replayed after a resume is read under a new token, so its groups are not mixed with
    those of the interrupted attempt.
    """
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}-{os.urandom(3).hex()}"


class StepMetrics:
    """The batches of the last steps, turned into envsched's metrics when the trainer logs a step.

    verl logs a step's metrics (``Tracking.log(data, step)``) after the step's batch was read,
    so the figures of step s are those of the batch asked for step s, with status.json as it is
    then (realised figures include the groups of the steps before).
    """

    KEEP = 64

    def __init__(self, exchange_dir: str) -> None:
        self.dir = exchange_dir
        self._batches: Dict[int, ec.Batch] = {}

    def record(self, step: int, batch: ec.Batch) -> None:
        """Remember the batch of step (and forget steps long past)."""
        self._batches[int(step)] = batch
        for old in [k for k in self._batches if k <= step - self.KEEP]:
            del self._batches[old]

    def take(self, step: Any) -> Dict[str, float]:
        """The metrics of step, once: later calls for the same step return {}."""
        try:
            batch = self._batches.pop(int(step))
        except (KeyError, TypeError, ValueError):
            return {}
        return ec.batch_metrics(batch, ec.read_status(self.dir))


_metric_source: List[Optional[StepMetrics]] = [None]


def install_tracking_hook(source: StepMetrics) -> bool:
    """Add envsched's metrics to what verl's ``Tracking.log(data, step)`` logs; False without verl.

    ``verl.utils.tracking.Tracking`` is the one logger of verl's trainers (console, wandb,
    TensorBoard, mlflow, ...; ``log(self, data, step, backend=None)`` in v0.5.0 and on main). Its
    ``log`` is wrapped once per process: each call merges the ``envsched/`` figures of that step
    from the latest training dataset or sampler into ``data`` (keys already there win).
    """
    _metric_source[0] = source
    try:
        from verl.utils.tracking import Tracking  # type: ignore
    except ImportError:
        return False
    if getattr(Tracking.log, "_envsched", False):
        return True
    original = Tracking.log

    def log(self: Any, data: Any, step: Any, *args: Any, **kwargs: Any) -> Any:
        src = _metric_source[0]
        extra = src.take(step) if src is not None else {}
        if extra and isinstance(data, Mapping):
            data = {**extra, **data}
        return original(self, data, step, *args, **kwargs)

    log._envsched = True  # type: ignore[attr-defined]
    log.__doc__ = original.__doc__
    Tracking.log = log
    return True


def is_train_files(files: Any, data_config: Any) -> bool:
    """Whether files are the config's ``train_files`` (not ``val_files``); True when unknown.

    A file list may be a string, a list or tuple, or any other iterable of paths: verl hands
    over ``data.train_files`` and ``data.val_files`` as given, an OmegaConf ``ListConfig`` when
    the config lists several files.
    """
    val = _path_list(_get(data_config, "val_files"))
    train = _path_list(_get(data_config, "train_files"))
    mine = _path_list(files)
    if mine and val and mine == val and mine != train:
        return False
    return True


def _path_list(v: Any) -> List[str]:
    """Paths as a list of strings: a string is one path, a mapping none, an iterable its items."""
    if v is None or isinstance(v, Mapping):
        return []
    if isinstance(v, (str, bytes, os.PathLike)):
        return [os.fsdecode(v)]
    try:
        return [str(x) for x in v]
    except TypeError:
        return [str(v)]


def latest_checkpoint_step(checkpoint_dir: Optional[str]) -> int:
    """The step in verl's ``latest_checkpointed_iteration.txt`` under checkpoint_dir (0 if none)."""
    if not checkpoint_dir:
        return 0
    path = os.path.join(checkpoint_dir, "latest_checkpointed_iteration.txt")
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except FileNotFoundError:
        return 0


# -- the reward-function wrapper -------------------------------------------------------------------


_VALIDATION_SPLITS = ("test", "val", "validation")


def with_env_and_task(score_fn: Callable[..., Any]) -> Callable[..., Dict[str, Any]]:
    """Wrap a verl ``compute_score(data_source, solution_str, ground_truth, extra_info, ...)``.

    Two ways, chosen per sample by what extra_info holds:

    * **Stamped** (the row came from EnvschedDataset, any verl from v0.5.0, legacy or V1
      trainer): the wrapper appends envsched's own rollout line for this sample to
      ``DIR/rollouts/verl-reward/HOST-PID.jsonl`` (env, task_id, reward, step, request_id,
      group_id, rollout_id; see ``RolloutSink``) and returns the scorer's result unchanged, so
      nothing depends on which keys verl dumps. Keep ``trainer.rollout_data_dir`` out of
      ``DIR/rollouts`` then, or each rollout would arrive twice.
    * **Stamped as validation** (a validation row of EnvschedDataset): the result unchanged, no
      line.
    * **Not stamped** (the sampler adapter, verl v0.5.0 to v0.7.1, legacy trainer): the result
      gains ``data_source``, ``task_id`` and ``group_id`` (this process's token) as reward extra
      info, which the legacy trainer's ``trainer.rollout_data_dir`` dump writes into every line
      for envsched to read. Rows whose ``extra_info.split`` is ``test``, ``val`` or
      ``validation`` get no extra keys: verl averages every reward extra key over validation
      samples, and strings there would break it.
    """

    def wrapped(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None,
                **kwargs: Any) -> Dict[str, Any]:
        result = score_fn(data_source, solution_str, ground_truth, extra_info, **kwargs)
        out: Dict[str, Any] = dict(result) if isinstance(result, Mapping) else {"score": float(result)}
        stamp = extra_info.get(STAMP_KEY) if isinstance(extra_info, Mapping) else None
        if isinstance(stamp, Mapping):
            if not stamp.get("validation"):
                _SINK.write(stamp, out.get("score"))
            return dict(result) if isinstance(result, Mapping) else result
        if isinstance(extra_info, Mapping) and extra_info.get("split") in _VALIDATION_SPLITS:
            return out  # validation metrics average every extra key: keep them numeric there
        out["data_source"] = data_source
        key = ec.task_key({"data_source": data_source, "extra_info": extra_info if isinstance(extra_info, Mapping) else {}})
        out["task_id"] = key[1] if key else ""
        out["group_id"] = _PROCESS_TOKEN
        return out

    wrapped.__name__ = getattr(score_fn, "__name__", "compute_score")
    wrapped.__doc__ = score_fn.__doc__
    return wrapped


_PROCESS_TOKEN = attempt_token()


class RolloutSink:
    """Writes envsched rollout lines for stamped samples, from any thread of any process.

    Each process appends to its own file, ``DIR/rollouts/verl-reward/HOST-PID.jsonl`` (a forked
    child opens its own), one whole line per sample, flushed at once. The line's group is the
    read's attempt, step and slot: the samples of one prompt in one step form one group, and a
    step replayed after a resume (a new attempt token) forms new groups. Its ``rollout_id``
    (attempt, step, slot, pid, the sink's random bits, a sequence number) is unique to the
    sample, so a copy of the file read again is skipped, but every sample written counts once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writers: Dict[Tuple[str, int], ec.RolloutWriter] = {}
        self._seq = 0
        self._warned = False
        # verl may load this file more than once in one process (by path, as a new module, for
        # each reward manager): each sink names its rollouts with bits of its own.
        self._token = os.urandom(3).hex()

    def line(self, stamp: Mapping[str, Any], score: Any, pid: int, seq: int) -> Optional[Dict[str, Any]]:
        """The rollout record of one stamped sample; None when the score is not a finite number."""
        try:
            reward = float(score)
        except (TypeError, ValueError):
            return None
        if reward != reward or reward in (float("inf"), float("-inf")):
            return None
        rec: Dict[str, Any] = {"env": str(stamp["env"]), "task_id": str(stamp["task_id"]), "reward": reward,
                               "step": int(stamp["step"]),
                               "group_id": f"{stamp['attempt']}/{stamp['step']}/{stamp['slot']}",
                               "rollout_id": f"{stamp['attempt']}/{stamp['step']}/{stamp['slot']}/{pid}-{self._token}.{seq}"}
        if stamp.get("request_id"):
            rec["request_id"] = str(stamp["request_id"])
        return rec

    def write(self, stamp: Mapping[str, Any], score: Any) -> None:
        """Append the line of one sample to this process's file."""
        pid = os.getpid()
        with self._lock:
            self._seq += 1
            rec = self.line(stamp, score, pid, self._seq)
            if rec is None:
                if not self._warned:
                    log.warning("envsched: a score of %r is not a finite number; that sample is not sent", score)
                    self._warned = True
                return
            writer = self._writer(str(stamp["dir"]), pid)
            writer.write(rec)
            writer.flush_step()

    def _writer(self, directory: str, pid: int) -> ec.RolloutWriter:
        w = self._writers.get((directory, pid))
        if w is None:
            host = "".join(c if c.isalnum() or c in "._-" else "_" for c in os.uname().nodename) or "host"
            w = ec.RolloutWriter(os.path.join(directory, "rollouts", "verl-reward", f"{host}-{pid}.jsonl"))
            self._writers[(directory, pid)] = w
        return w


_SINK = RolloutSink()


def _load_function(path: str, name: str) -> Callable[..., Any]:
    spec = importlib.util.spec_from_file_location(f"envsched_inner_{abs(hash(path))}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"envsched: cannot load reward function file {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


_inner_cache: Dict[Tuple[str, str], Callable[..., Any]] = {}


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  envsched_inner_path: Optional[str] = None, envsched_inner_name: str = "compute_score",
                  **kwargs: Any) -> Dict[str, Any]:
    """verl's ``custom_reward_function`` entry: the inner scorer's result plus data_source and task_id.

    The inner scorer is ``envsched_inner_name`` from the file ``envsched_inner_path`` (pass them
    in ``custom_reward_function.reward_kwargs``), or verl's ``default_compute_score``.
    """
    if envsched_inner_path:
        key = (envsched_inner_path, envsched_inner_name)
        if key not in _inner_cache:
            _inner_cache[key] = _load_function(*key)
        inner = _inner_cache[key]
    else:
        from verl.utils.reward_score import default_compute_score as inner  # type: ignore
    return with_env_and_task(inner)(data_source, solution_str, ground_truth, extra_info, **kwargs)


# -- classes that subclass verl's, built on first use ---------------------------------------------


def _make_sampler_class() -> type:
    try:
        from verl.experimental.dataset.sampler import AbstractCurriculumSampler  # type: ignore
    except ImportError as e:
        raise ImportError(
            "envsched: EnvschedCurriculumSampler needs verl's verl/experimental/dataset/sampler.py, which "
            "verl has from v0.5.0 to v0.7.1 (legacy trainer); with this verl use EnvschedDataset "
            "(data.custom_cls) and the reward wrapper instead, which work from v0.5.0 on") from e

    class EnvschedCurriculumSampler(SamplerCore, AbstractCurriculumSampler):
        """verl (v0.5.0 to v0.7.1, legacy trainer) curriculum sampler whose batches envsched chooses (see SamplerCore)."""

        def __init__(self, data_source: Any, data_config: Any) -> None:
            SamplerCore.__init__(self, data_source, data_config)

    return EnvschedCurriculumSampler


def _make_dataset_class() -> type:
    from verl.utils.dataset.rl_dataset import RLHFDataset  # type: ignore

    class EnvschedDataset(DatasetCore, RLHFDataset):
        """verl (v0.5.0 on) dataset whose read order envsched chooses (see DatasetCore)."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            RLHFDataset.__init__(self, *args, **kwargs)
            config = getattr(self, "config", kwargs.get("config"))
            files = kwargs.get("data_files", args[0] if args else None)
            # verl builds the validation dataset with the same class: it stays a plain RLHFDataset.
            self.envsched_train = is_train_files(files, config)
            if self.envsched_train:
                self.setup_envsched(dataset_rows(self), config)

        def __getitem__(self, item: int) -> Any:
            if not self.envsched_train:
                return stamp_validation(RLHFDataset.__getitem__(self, item))
            read = self.next_read()
            return self.stamp(RLHFDataset.__getitem__(self, read.row), read)

    return EnvschedDataset


_LAZY: Dict[str, Callable[[], type]] = {
    "EnvschedCurriculumSampler": _make_sampler_class,
    "EnvschedDataset": _make_dataset_class,
}
_built: Dict[str, type] = {}


def __getattr__(name: str) -> Any:
    """Build EnvschedCurriculumSampler / EnvschedDataset on first access (this imports verl)."""
    if name in _LAZY:
        if name not in _built:
            _built[name] = _LAZY[name]()
        return _built[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["EnvschedCurriculumSampler", "EnvschedDataset", "RowIndex", "SamplerCore", "DatasetCore",
           "compute_score", "with_env_and_task", "settings", "latest_checkpoint_step"]
