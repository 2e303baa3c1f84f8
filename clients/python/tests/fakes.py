"""Small stand-ins of verl's and TRL's base classes, installed into sys.modules for the tests.

They copy the shape the adapters rely on (constructor signatures, the abstract methods, the
attributes read), not the trainers' behaviour.
"""

from __future__ import annotations

import abc
from collections.abc import MutableSequence
import sys
import types
from typing import Any, Dict, List


def _module(name: str, **attrs: Any) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


class Sampler:
    """torch.utils.data.Sampler: a base with no behaviour."""


class AbstractSampler(Sampler, abc.ABC):
    """verl.experimental.dataset.sampler.AbstractSampler."""

    @abc.abstractmethod
    def __init__(self, data_source: Any, data_config: Any) -> None: ...


class AbstractCurriculumSampler(AbstractSampler):
    """verl.experimental.dataset.sampler.AbstractCurriculumSampler."""

    @abc.abstractmethod
    def update(self, batch: Any) -> None: ...


class RLHFDataset:
    """verl.utils.dataset.rl_dataset.RLHFDataset: rows in ``dataframe``, one dict per read.

    ``data_files`` here is the list of rows itself (verl reads parquet files).
    """

    def __init__(self, data_files: List[Dict[str, Any]], tokenizer: Any, config: Any, processor: Any = None,
                 max_samples: int = -1) -> None:
        self.config = config
        self.dataframe = list(data_files)
        self.reads: List[int] = []

    def __len__(self) -> int:
        return len(self.dataframe)

    def __getitem__(self, item: int) -> Dict[str, Any]:
        self.reads.append(item)
        row = dict(self.dataframe[item])
        row["index"] = row.get("extra_info", {}).get("index", 0)
        return row


def default_compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None,
                          **kwargs: Any) -> float:
    """verl.utils.reward_score.default_compute_score: exact match."""
    return 1.0 if solution_str.strip() == str(ground_truth) else 0.0


class Tracking:
    """verl.utils.tracking.Tracking: ``log(self, data, step, backend=None)`` (v0.5.0, main)."""

    def __init__(self) -> None:
        self.logged: List[Any] = []

    def log(self, data: Dict[str, Any], step: int, backend: Any = None) -> None:
        self.logged.append((step, dict(data)))


class IterableDataset:
    """datasets.IterableDataset: rows only by iteration (no __getitem__, no __len__)."""

    def __init__(self, rows: List[Dict[str, Any]]) -> None:
        self._rows = rows

    def __iter__(self) -> Any:
        return iter(self._rows)


class GRPOTrainer:
    """trl.GRPOTrainer: keeps what _get_train_sampler reads, and records log calls."""

    def __init__(self, model: Any = None, args: Any = None, train_dataset: Any = None, reward_funcs: Any = None) -> None:
        self.model = model
        self.args = args
        self.train_dataset = train_dataset
        self.reward_funcs = reward_funcs
        self.num_generations = args.num_generations
        self.num_iterations = getattr(args, "num_iterations", 1)
        self.logged: List[Dict[str, Any]] = []

    def log(self, logs: Dict[str, float], start_time: Any = None) -> None:
        self.logged.append(dict(logs))


class ListConfigStandIn(MutableSequence):
    """Stands in for omegaconf.ListConfig, which is not installed here.

    What the adapter meets of it: a MutableSequence (not a list or tuple subclass) whose
    iteration yields its items and which compares equal to a list with the same items.
    """

    def __init__(self, items: List[Any]) -> None:
        self._items = list(items)

    def __getitem__(self, i: Any) -> Any:
        return self._items[i]

    def __setitem__(self, i: Any, v: Any) -> None:
        self._items[i] = v

    def __delitem__(self, i: Any) -> None:
        del self._items[i]

    def __len__(self) -> int:
        return len(self._items)

    def insert(self, i: int, v: Any) -> None:
        self._items.insert(i, v)

    def __eq__(self, other: Any) -> bool:
        return list(self) == list(other) if isinstance(other, (list, MutableSequence)) else NotImplemented


def install() -> None:
    """Put the stand-ins where the adapters import them from."""
    _module("verl")
    _module("verl.experimental")
    _module("verl.experimental.dataset")
    _module("verl.experimental.dataset.sampler", AbstractSampler=AbstractSampler,
            AbstractCurriculumSampler=AbstractCurriculumSampler)
    _module("verl.utils")
    _module("verl.utils.dataset")
    _module("verl.utils.dataset.rl_dataset", RLHFDataset=RLHFDataset)
    _module("verl.utils.reward_score", default_compute_score=default_compute_score)
    _module("verl.utils.tracking", Tracking=Tracking)
    _module("trl", GRPOTrainer=GRPOTrainer)


def verl_rows(n: int) -> List[Dict[str, Any]]:
    """n rows shaped like a verl training file: data_source, prompt, reward_model, extra_info."""
    envs = ("alpha", "beta", "gamma")
    return [{"data_source": envs[i % 3], "prompt": [{"role": "user", "content": f"question {i}"}],
             "ability": "math", "reward_model": {"style": "rule", "ground_truth": str(i)},
             "extra_info": {"index": i // 3, "split": "train"}} for i in range(n)]
