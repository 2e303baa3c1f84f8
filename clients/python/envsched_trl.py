"""TRL adapter for envsched: a GRPOTrainer whose prompts envsched chooses, step by step.

The file loads without TRL or torch; ``EnvschedGRPOTrainer`` is built on first use. Keep
``envsched_client.py`` in the same folder.

Usage::

    from envsched_trl import EnvschedGRPOTrainer, logging_reward
    client = EnvschedClient("/data/exchange", prefix="trl-run1")
    trainer = EnvschedGRPOTrainer(model=..., args=GRPOConfig(...), train_dataset=ds,
                                  reward_funcs=[logging_reward(my_reward, client)],
                                  envsched_client=client)

Needs TRL v0.18.0 or later (``require_generation_batch``). The dataset rows need an env and a task id by PROTOCOL.md's keys (``env``/``data_source`` and
``task_id``/``extra_info.index``, ...). ``_get_train_sampler`` returns an EnvschedRepeatSampler:
the same shape as TRL's RepeatSampler (each prompt ``num_generations`` times in a row, each
generation batch repeated ``num_iterations * steps_per_generation`` times), but every generation
batch is a batch envsched chose. Request IDs follow the position in the run (``PREFIX-000001``
is the first generation batch), so every process asks for the same IDs and gets the same
batches, and a resumed run, whose dataloader skips the batches already trained on, asks for
those IDs again and gets the stored answers.
"""

from __future__ import annotations

import inspect
import logging
import os
import sys
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import envsched_client as ec  # noqa: E402
from envsched_verl import RowIndex  # noqa: E402

log = logging.getLogger("envsched")


class EnvschedRepeatSampler:
    """Yields dataset indices like TRL's RepeatSampler, with batches chosen by envsched.

    Args:
        data_source: the training dataset (rows are mappings, e.g. a ``datasets.Dataset``).
        client: the EnvschedClient to ask; the sampler sets its sequence, so that the IDs follow
            the position in the run.
        mini_repeat_count: rollouts per prompt (TRL's num_generations).
        batch_size: distinct prompts per generation batch.
        repeat_count: how often each generation batch is yielded again.

    An epoch asks for ``len(data_source) // batch_size`` generation batches; epoch e (0-based,
    set by ``set_epoch``, which HF Trainer calls, or counted by ``__iter__``) uses the IDs from
    ``e * that + 1`` on.
    """

    def __init__(self, data_source: Any, client: ec.EnvschedClient, mini_repeat_count: int, batch_size: int,
                 repeat_count: int = 1) -> None:
        self.index = RowIndex(data_source)
        self.client = client
        if not client.fallback_tasks:
            client.fallback_tasks = [ec.Task(e, t) for e, t in self.index.tasks()]
        self.mini_repeat_count = int(mini_repeat_count)
        self.batch_size = int(batch_size)
        self.repeat_count = int(repeat_count)
        self.num_batches = max(1, self.index.n // self.batch_size)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        """Make the next ``__iter__`` walk epoch ``epoch`` (its request IDs)."""
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return self.num_batches * self.batch_size * self.mini_repeat_count * self.repeat_count

    def __iter__(self) -> Iterator[int]:
        epoch, self.epoch = self.epoch, self.epoch + 1
        self.client.load_state_dict({"prefix": self.client.prefix, "next_seq": epoch * self.num_batches + 1})
        for _ in range(self.num_batches):
            step = self.client.next_seq
            batch = self.client.next_batch(size=self.batch_size, group_size=self.mini_repeat_count, step=step)
            indices = self.index.indices(batch, self.batch_size)
            for _ in range(self.repeat_count):
                for i in indices:
                    for _ in range(self.mini_repeat_count):
                        yield i


class EnvschedGRPOMixin:
    """Put before GRPOTrainer in the bases: replaces ``_get_train_sampler``.

    Takes the keyword argument ``envsched_client`` (an EnvschedClient), or builds one from
    ENVSCHED_DIR and ENVSCHED_PREFIX.
    """

    def __init__(self, *args: Any, envsched_client: Optional[ec.EnvschedClient] = None, **kwargs: Any) -> None:
        if envsched_client is None:
            directory = os.environ.get("ENVSCHED_DIR")
            if not directory:
                raise ValueError("envsched: pass envsched_client= or set ENVSCHED_DIR")
            envsched_client = ec.EnvschedClient(directory, prefix=os.environ.get("ENVSCHED_PREFIX", "trl"))
        self.envsched_client = envsched_client
        refuse_iterable(kwargs.get("train_dataset"))
        super().__init__(*args, **kwargs)
        refuse_iterable(getattr(self, "train_dataset", None))  # also when passed by position

    def log(self, logs: Dict[str, Any], *args: Any, **kwargs: Any) -> None:
        """TRL's ``log`` with envsched's figures of the last batch added to training logs.

        The ``envsched/`` metrics (``EnvschedClient.metrics``) go to every logger the trainer
        reports to (wandb, TensorBoard, ...); evaluation logs (keys ``eval_...``) are left alone.
        """
        if isinstance(logs, dict) and not any(str(k).startswith("eval_") for k in logs):
            for k, v in self.envsched_client.metrics().items():
                logs.setdefault(k, v)
        return super().log(logs, *args, **kwargs)  # type: ignore[misc]

    def _get_train_sampler(self, dataset: Any = None) -> Any:
        if dataset is None:
            dataset = self.train_dataset  # type: ignore[attr-defined]
        args = self.args  # type: ignore[attr-defined]
        gens = int(self.num_generations)  # type: ignore[attr-defined]
        require_generation_batch(args)
        steps_per_generation = int(args.steps_per_generation)
        generation_batch_size = int(args.generation_batch_size)
        return sampler_class()(dataset, self.envsched_client, mini_repeat_count=gens,
                               batch_size=generation_batch_size // gens,
                               repeat_count=int(getattr(self, "num_iterations", 1)) * steps_per_generation)


def require_generation_batch(args: Any) -> None:
    """Raise RuntimeError unless ``args`` is a GRPOConfig of TRL v0.18.0 or later.

    The sampler has the shape of TRL's own from v0.18.0 to v1.9.0: ``generation_batch_size //
    num_generations`` prompts, each ``num_generations`` times in a row, repeated ``num_iterations
    * steps_per_generation`` times (GRPOConfig sets both fields). Earlier GRPOTrainers sample
    otherwise: v0.14.0 has no sampler of its own and generates ``num_generations`` completions of
    each prompt itself (a repeated prompt was rolled out ``num_generations`` squared times), v0.15.0
    repeats prompts without generation batches, and v0.16.0 and v0.17.0 count the batch over all
    processes and, in v0.16.0, repeat it only ``num_iterations`` times. Guessed from
    ``gradient_accumulation_steps`` there, the batches were trained more often than TRL would.
    """
    if getattr(args, "generation_batch_size", None) is None or getattr(args, "steps_per_generation", None) is None:
        raise RuntimeError(
            "envsched: EnvschedGRPOTrainer needs TRL v0.18.0 or later (its GRPOConfig has generation_batch_size "
            "and steps_per_generation, which set the shape of the batches envsched chooses); this GRPOConfig has "
            "neither: upgrade TRL (pip install -U trl)")


def refuse_iterable(dataset: Any) -> None:
    """Raise TypeError for a dataset TRL cannot give a sampler: envsched would never be asked.

    With an iterable dataset (``datasets.IterableDataset``, a streaming dataset, or any
    ``torch.utils.data.IterableDataset``) the dataloader is built without calling
    ``_get_train_sampler``: by transformers' ``Trainer.get_train_dataloader`` under TRL v0.14.0,
    by ``get_train_dataloader`` in trl/trainer/grpo_trainer.py from v0.20.0 to v0.29.0 (it sets a
    sampler only ``if not isinstance(train_dataset, torch.utils.data.IterableDataset)``), and
    through transformers' ``_get_dataloader`` from v1.0.0 to v1.9.0, where v1.9.0 reorders the
    stream itself. Training would run on the stream's own order while envsched waits for
    requests that never come. A dataset with rows that can be
    indexed (``datasets.Dataset``, a list) works.
    """
    if dataset is None:
        return
    names = {c.__name__ for c in type(dataset).__mro__}
    indexable = hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")
    if "IterableDataset" in names or "IterableDatasetDict" in names or not indexable:
        raise TypeError(
            f"envsched: the training dataset is a {type(dataset).__name__}, an iterable dataset; TRL gives "
            "such a dataset no sampler, so envsched would never choose a batch. Load it as a map-style "
            "datasets.Dataset (e.g. load_dataset(..., streaming=False), or Dataset.from_list(list(ds))) "
            "or use TRL's GRPOTrainer without envsched.")


def sampler_class() -> type:
    """EnvschedRepeatSampler as a torch Sampler subclass when torch is installed."""
    try:
        from torch.utils.data import Sampler  # type: ignore
    except ImportError:
        return EnvschedRepeatSampler
    return type("EnvschedRepeatSampler", (EnvschedRepeatSampler, Sampler), {})


def logging_reward(reward_fn: Callable[..., Any], client: ec.EnvschedClient,
                   name: Optional[str] = None) -> Callable[..., Any]:
    """Wrap a TRL reward function so that its rewards are also written as envsched rollouts.

    TRL calls reward functions with ``prompts``, ``completions`` and every dataset column as
    keyword lists; env and task come from those columns (PROTOCOL.md's keys), the step from
    ``trainer_state.global_step`` when TRL passes it. Lines are flushed once per call.

    An ``async def`` reward function gives an ``async def`` wrapper: TRL (from v0.27.0) runs the
    coroutine functions among its reward functions in an event loop of its own
    (``asyncio.iscoroutinefunction`` in trl/trainer/grpo_trainer.py, v0.27.0 to v1.9.0), so the
    wrapper must stay one. Writes are serialised: TRL may run several async reward functions at
    once.
    """
    writer = client.rollout_writer(name)
    lock = threading.Lock()

    def record(rewards: Any, kwargs: Dict[str, Any]) -> None:
        state = kwargs.get("trainer_state")
        step = getattr(state, "global_step", None)
        columns = {k: v for k, v in kwargs.items() if isinstance(v, list) and len(v) == len(rewards)}
        with lock:
            for i, r in enumerate(rewards):
                if r is None:
                    continue
                key = ec.task_key({k: v[i] for k, v in columns.items()})
                if key is None:
                    continue
                rec: Dict[str, Any] = {"env": key[0], "task_id": key[1], "reward": float(r)}
                if step is not None:
                    rec["step"] = int(step) + 1
                writer.write(rec)
            writer.flush_step()

    if inspect.iscoroutinefunction(reward_fn):
        async def wrapped_async(prompts: List[Any], completions: List[Any], **kwargs: Any) -> List[float]:
            rewards = await reward_fn(prompts=prompts, completions=completions, **kwargs)
            record(rewards, kwargs)
            return rewards

        wrapped_async.__name__ = getattr(reward_fn, "__name__", "reward")
        return wrapped_async

    def wrapped(prompts: List[Any], completions: List[Any], **kwargs: Any) -> List[float]:
        rewards = reward_fn(prompts=prompts, completions=completions, **kwargs)
        record(rewards, kwargs)
        return rewards

    wrapped.__name__ = getattr(reward_fn, "__name__", "reward")
    return wrapped


def _make_trainer_class() -> type:
    from trl import GRPOTrainer  # type: ignore

    class EnvschedGRPOTrainer(EnvschedGRPOMixin, GRPOTrainer):
        """TRL's GRPOTrainer with envsched choosing each generation batch."""

    return EnvschedGRPOTrainer


_built: Dict[str, type] = {}


def __getattr__(name: str) -> Any:
    """Build EnvschedGRPOTrainer on first access (this imports TRL)."""
    if name == "EnvschedGRPOTrainer":
        if name not in _built:
            _built[name] = _make_trainer_class()
        return _built[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["EnvschedGRPOTrainer", "EnvschedGRPOMixin", "EnvschedRepeatSampler", "logging_reward", "refuse_iterable",
           "sampler_class"]
