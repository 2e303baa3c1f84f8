"""verl adapters for envsched: a curriculum sampler (verl up to v0.7), a dataset (verl v0.8 on),
and a reward-function wrapper that puts env and task into verl's rollout dumps.

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

verl up to v0.7 (sampler; the settings go under ``data.sampler``)::

    data.sampler.class_path=/path/to/envsched_verl.py
    data.sampler.class_name=EnvschedCurriculumSampler
    +data.sampler.dir=/data/exchange +data.sampler.group_size=8
    data.dataloader_num_workers=0

verl v0.8 on (dataset; the settings go under ``data.envsched``)::

    data.custom_cls.path=/path/to/envsched_verl.py data.custom_cls.name=EnvschedDataset
    data.shuffle=False data.dataloader_num_workers=0
    +data.envsched.dir=/data/exchange +data.envsched.checkpoint_dir=${trainer.default_local_dir}

Rollouts reach envsched through verl's own dumps: set ``trainer.rollout_data_dir=DIR/rollouts/verl``
and ``custom_reward_function.path=/path/to/envsched_verl.py custom_reward_function.name=compute_score``
(your own scorer goes in ``+custom_reward_function.reward_kwargs.envsched_inner_path`` and
``envsched_inner_name``; verl's default scorer otherwise). Every dumped line then carries
``data_source`` and ``task_id`` beside ``score`` and ``step``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import random
import sys
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

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
        self.n = 0
        for i, row in enumerate(rows):
            self.n = i + 1
            key = ec.task_key(row) if isinstance(row, Mapping) else None
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

    def __len__(self) -> int:
        return self.steps_per_epoch * self.batch_size

    def __iter__(self) -> Iterator[int]:
        while self.epoch_pos < self.steps_per_epoch:
            seq = self.client.next_seq
            batch = self.client.next_batch(size=self.batch_size, group_size=self.group_size, step=seq)
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
    """The verl-independent part of EnvschedDataset (verl v0.8 on, ``data.shuffle=False``).

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
        self._es_batch_size = batch_size_of(data_config)
        self._es_index = RowIndex(rows)
        self._es_group_size = s["group_size"]
        self.envsched_client = ec.EnvschedClient(s["dir"], prefix=s["prefix"], timeout=s["timeout"],
                                        fallback_tasks=self._es_index.tasks())
        self._es_start_step = latest_checkpoint_step(s["checkpoint_dir"])
        self._es_reads = 0
        self._es_cached: Tuple[int, List[int]] = (-1, [])

    def row_for_next_read(self) -> int:
        """The dataset row of the next read, asking envsched for a new step's batch when due."""
        step = self._es_start_step + self._es_reads // self._es_batch_size + 1
        slot = self._es_reads % self._es_batch_size
        if self._es_cached[0] != step:
            self.envsched_client.load_state_dict({"prefix": self.envsched_client.prefix, "next_seq": step})
            batch = self.envsched_client.next_batch(size=self._es_batch_size, group_size=self._es_group_size, step=step)
            self._es_cached = (step, self._es_index.indices(batch, self._es_batch_size))
        self._es_reads += 1
        return self._es_cached[1][slot]


def is_train_files(files: Any, data_config: Any) -> bool:
    """Whether files are the config's ``train_files`` (not ``val_files``); True when unknown."""
    def as_list(v: Any) -> List[str]:
        if v is None:
            return []
        if isinstance(v, str):
            return [v]
        try:
            return [str(x) for x in v]
        except TypeError:
            return [str(v)]

    val = as_list(_get(data_config, "val_files"))
    train = as_list(_get(data_config, "train_files"))
    mine = as_list(files) if isinstance(files, (str, list, tuple)) else []
    if mine and val and mine == val and mine != train:
        return False
    return True


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

    The wrapped function returns a dict with ``score`` plus ``data_source`` and ``task_id``
    (extra_info's task_id or index, as a string), and keeps any other keys the scorer returned.
    verl puts these keys into its reward extra info, and ``trainer.rollout_data_dir`` writes
    them into every dumped line, which envsched then reads unchanged. Rows whose
    ``extra_info.split`` is ``test``, ``val`` or ``validation`` get no extra keys: verl averages
    every reward extra key over validation samples, and strings there would break it.
    """

    def wrapped(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None,
                **kwargs: Any) -> Dict[str, Any]:
        result = score_fn(data_source, solution_str, ground_truth, extra_info, **kwargs)
        out: Dict[str, Any] = dict(result) if isinstance(result, Mapping) else {"score": float(result)}
        if isinstance(extra_info, Mapping) and extra_info.get("split") in _VALIDATION_SPLITS:
            return out  # validation metrics average every extra key: keep them numeric there
        out["data_source"] = data_source
        key = ec.task_key({"data_source": data_source, "extra_info": extra_info if isinstance(extra_info, Mapping) else {}})
        out["task_id"] = key[1] if key else ""
        return out

    wrapped.__name__ = getattr(score_fn, "__name__", "compute_score")
    wrapped.__doc__ = score_fn.__doc__
    return wrapped


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
    from verl.experimental.dataset.sampler import AbstractCurriculumSampler  # type: ignore

    class EnvschedCurriculumSampler(SamplerCore, AbstractCurriculumSampler):
        """verl (up to v0.7) curriculum sampler whose batches envsched chooses (see SamplerCore)."""

        def __init__(self, data_source: Any, data_config: Any) -> None:
            SamplerCore.__init__(self, data_source, data_config)

    return EnvschedCurriculumSampler


def _make_dataset_class() -> type:
    from verl.utils.dataset.rl_dataset import RLHFDataset  # type: ignore

    class EnvschedDataset(DatasetCore, RLHFDataset):
        """verl (v0.8 on) dataset whose read order envsched chooses (see DatasetCore)."""

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
                return RLHFDataset.__getitem__(self, item)
            return RLHFDataset.__getitem__(self, self.row_for_next_read())

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
