"""Tests of the verl and TRL adapters against stand-ins of the trainers' base classes."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import textwrap
import unittest
from types import SimpleNamespace
from typing import Any, Dict, List

import fakes
from standin import Daemon, Responder, envsched_bin, tempdir, write_catalog

fakes.install()

import envsched_client as ec  # noqa: E402
import envsched_trl  # noqa: E402
import envsched_verl  # noqa: E402

ROWS = fakes.verl_rows(60)  # 20 tasks in each of alpha, beta, gamma, as in standin.TASKS


def load_like_verl(attr: str) -> Any:
    """Load the adapter file the way verl's load_extern_type does: by path, then getattr."""
    path = envsched_verl.__file__
    spec = importlib.util.spec_from_file_location("custom_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, attr)


def batch_file(d: str, rid: str) -> List[tuple]:
    with open(os.path.join(d, "batches", rid + ".json")) as f:
        return [(t["env"], t["task_id"]) for t in json.load(f)["tasks"]]


def keys_of(indices: List[int]) -> List[tuple]:
    return [ec.task_key(ROWS[i]) for i in indices]


class VerlSamplerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempdir(self)
        self.responder = Responder(self.dir).start()
        self.addCleanup(self.responder.stop)
        self.cfg = {"train_batch_size": 8, "sampler": {"dir": self.dir, "prefix": "v7", "group_size": 4,
                                                       "timeout": 10}}
        self.cls = load_like_verl("EnvschedCurriculumSampler")

    def take(self, it, n: int) -> List[int]:
        return [next(it) for _ in range(n)]

    def test_is_a_curriculum_sampler_yielding_envsched_batches(self) -> None:
        sampler = self.cls(data_source=fakes.RLHFDataset(ROWS, None, self.cfg), data_config=self.cfg)
        self.assertIsInstance(sampler, fakes.AbstractCurriculumSampler)
        self.assertEqual(len(sampler), 56)  # 7 whole batches of 8 in 60 rows
        it = iter(sampler)
        for step in (1, 2):
            rows = self.take(it, 8)
            self.assertEqual(keys_of(rows), batch_file(self.dir, f"v7-{step:06d}"))
        with open(os.path.join(self.dir, "requests", "v7-000002.json")) as f:
            self.assertEqual(json.load(f), {"size": 8, "group_size": 4, "step": 2})
        sampler.update(batch=None)

    def test_checkpoint_resume_same_ids_same_rows(self) -> None:
        ds = fakes.RLHFDataset(ROWS, None, self.cfg)
        sampler = self.cls(data_source=ds, data_config=self.cfg)
        it = iter(sampler)
        self.take(it, 16)
        saved = json.loads(json.dumps(sampler.state_dict()))
        after = [self.take(it, 8) for _ in range(3)]

        resumed = self.cls(data_source=ds, data_config=self.cfg)
        resumed.load_state_dict(saved)
        it2 = iter(resumed)  # torchdata makes a fresh iterator after load_state_dict
        again = [self.take(it2, 8) for _ in range(3)]
        self.assertEqual(again, after)
        self.assertEqual(sorted(self.responder.answered), [f"v7-{i:06d}" for i in range(1, 6)])

    def test_epochs_continue_the_sequence(self) -> None:
        sampler = self.cls(data_source=fakes.RLHFDataset(ROWS, None, self.cfg), data_config=self.cfg)
        first = list(iter(sampler))
        second = list(iter(sampler))
        self.assertEqual((len(first), len(second)), (56, 56))
        self.assertEqual(sampler.client.next_id(), "v7-000015")

    def test_gen_batch_size_is_the_dataloader_batch(self) -> None:
        cfg = dict(self.cfg, gen_batch_size=12)
        sampler = self.cls(data_source=fakes.RLHFDataset(ROWS, None, cfg), data_config=cfg)
        self.assertEqual(len(sampler), 60)
        it = iter(sampler)
        self.assertEqual(keys_of([next(it) for _ in range(12)]), batch_file(self.dir, "v7-000001"))

    def test_verl_without_the_sampler_module_says_which_versions(self) -> None:
        """verl from v0.8.0 has no verl/experimental/dataset/sampler.py (issue 15)."""
        saved = sys.modules.pop("verl.experimental.dataset.sampler")
        sys.modules["verl.experimental.dataset.sampler"] = None  # an import of it fails, as in verl 0.8
        try:
            with self.assertRaisesRegex(ImportError, "v0.5.0 to v0.7.1.*EnvschedDataset"):
                load_like_verl("EnvschedCurriculumSampler")
        finally:
            sys.modules["verl.experimental.dataset.sampler"] = saved

    def test_missing_settings(self) -> None:
        cfg = {"train_batch_size": 8, "sampler": {}}
        old = os.environ.pop("ENVSCHED_DIR", None)
        self.addCleanup(lambda: old is not None and os.environ.__setitem__("ENVSCHED_DIR", old))
        with self.assertRaisesRegex(ValueError, "ENVSCHED_DIR"):
            self.cls(data_source=fakes.RLHFDataset(ROWS, None, cfg), data_config=cfg)


class VerlDatasetTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempdir(self)
        self.responder = Responder(self.dir).start()
        self.addCleanup(self.responder.stop)
        self.ckpt = tempdir(self)
        self.cfg = {"train_batch_size": 6, "shuffle": False,
                    "envsched": {"dir": self.dir, "prefix": "v8", "timeout": 10, "checkpoint_dir": self.ckpt}}
        self.cls = load_like_verl("EnvschedDataset")

    def test_reads_follow_envsched_batches_and_resume(self) -> None:
        ds = self.cls(data_files=ROWS, tokenizer=None, config=self.cfg)
        self.assertIsInstance(ds, fakes.RLHFDataset)
        got = [ds[i] for i in range(12)]  # the dataloader's SequentialSampler: positions in order
        self.assertEqual(keys_of(ds.reads[:6]), batch_file(self.dir, "v8-000001"))
        self.assertEqual(keys_of(ds.reads[6:]), batch_file(self.dir, "v8-000002"))
        self.assertEqual([(g["data_source"], str(g["index"])) for g in got[:6]], batch_file(self.dir, "v8-000001"))

        # verl checkpointed after step 1 and the run restarts: the next read is step 2's batch.
        with open(os.path.join(self.ckpt, "latest_checkpointed_iteration.txt"), "w") as f:
            f.write("1")
        resumed = self.cls(data_files=ROWS, tokenizer=None, config=self.cfg)
        for i in range(6):
            resumed[i]
        self.assertEqual(resumed.reads, ds.reads[6:])
        self.assertEqual(self.responder.answered, {"v8-000001": 1, "v8-000002": 1})


    def test_validation_dataset_stays_plain(self) -> None:
        cfg = dict(self.cfg, train_files="train.parquet", val_files=ROWS[:6])
        val = self.cls(data_files=ROWS[:6], tokenizer=None, config=cfg)
        self.assertEqual([val[i]["index"] for i in range(6)], [0, 0, 0, 1, 1, 1])
        self.assertEqual(val.reads, list(range(6)))
        self.assertEqual(self.responder.answered, {}, "the validation dataset asked envsched")


    def test_validation_dataset_with_listconfig_files_stays_plain(self) -> None:
        """verl hands data.val_files over as given: an OmegaConf ListConfig for a list of files.

        omegaconf is not installed here; ListConfigStandIn has the shape the adapter meets (a
        MutableSequence that is not a list, iterating its items, equal to an equal list).
        """
        val_files = fakes.ListConfigStandIn(["test-a.parquet", "test-b.parquet"])
        cfg = dict(self.cfg, train_files=fakes.ListConfigStandIn(["train.parquet"]), val_files=val_files)
        self.assertNotIsInstance(val_files, (list, tuple))
        self.assertFalse(envsched_verl.is_train_files(val_files, cfg))
        self.assertTrue(envsched_verl.is_train_files(cfg["train_files"], cfg))
        val = self.cls(data_files=val_files, tokenizer=None, config=cfg)
        self.assertFalse(val.envsched_train)
        self.assertEqual(self.responder.answered, {}, "the validation dataset asked envsched")

    def test_validation_rows_score_plainly_and_write_nothing(self) -> None:
        cfg = dict(self.cfg, train_files="train.parquet", val_files=ROWS[:6])
        val = self.cls(data_files=ROWS[:6], tokenizer=None, config=cfg)
        row = val[0]
        self.assertEqual(row["extra_info"]["envsched"], {"validation": True})
        self.assertNotIn("envsched", ROWS[0]["extra_info"], "the dataset's own row was changed")
        fn = val.__class__.__init__.__globals__["compute_score"]  # the module verl loaded by path
        self.assertEqual(fn(row["data_source"], "0", "0", row["extra_info"]), 1.0)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "rollouts", "verl-reward")))

    def test_reads_are_stamped_for_the_reward_wrapper(self) -> None:
        cfg = dict(self.cfg, envsched=dict(self.cfg["envsched"], group_size=4))
        ds = self.cls(data_files=ROWS, tokenizer=None, config=cfg)
        item = ds[0]
        stamp = item["extra_info"]["envsched"]
        self.assertEqual((stamp["env"], stamp["task_id"]), batch_file(self.dir, "v8-000001")[0])
        self.assertEqual({k: stamp[k] for k in ("dir", "step", "slot", "request_id")},
                         {"dir": self.dir, "step": 1, "slot": 0, "request_id": "v8-000001"})
        self.assertEqual(item["extra_info"]["index"], ROWS[ds.reads[0]]["extra_info"]["index"])
        self.assertNotIn("envsched", ROWS[ds.reads[0]]["extra_info"], "the dataset's own row was changed")


class StampedRewardTest(unittest.TestCase):
    """The reward wrapper's own rollout lines (verl_flow.py plays verl between the adapters)."""

    def setUp(self) -> None:
        self.dir = tempdir(self)
        self.responder = Responder(self.dir).start()
        self.addCleanup(self.responder.stop)
        self.ckpt = tempdir(self)

    def lines(self) -> List[Dict[str, Any]]:
        out = []
        folder = os.path.join(self.dir, "rollouts", "verl-reward")
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name)) as f:
                out += [json.loads(line) for line in f]
        return out

    def test_one_line_per_sample_grouped_per_prompt(self) -> None:
        import verl_flow
        res = verl_flow.run(self.dir, steps=2, batch=6, group=4, checkpoint=self.ckpt)
        recs = self.lines()
        self.assertEqual(len(recs), 2 * 6 * 4)
        first = [r for r in recs if r["group_id"] == f"{res['attempt']}/1/0"]
        self.assertEqual(len(first), 4)
        want_key = batch_file(self.dir, "verl-000001")[0]
        for r in first:
            self.assertEqual((r["env"], r["task_id"]), want_key)
            self.assertEqual((r["step"], r["request_id"]), (1, "verl-000001"))
            self.assertIn(r["reward"], (0.0, 1.0))
        self.assertEqual(len({r["rollout_id"] for r in recs}), len(recs))

    def test_replayed_step_counts_again_in_new_groups(self) -> None:
        import verl_flow
        a = verl_flow.run(self.dir, steps=1, batch=6, group=4, checkpoint=self.ckpt)
        b = verl_flow.run(self.dir, steps=1, batch=6, group=4, checkpoint=self.ckpt)  # resumed: replays step 1
        self.assertEqual(a["reads"], b["reads"])
        recs = self.lines()
        self.assertEqual(len(recs), 2 * 6 * 4)
        self.assertEqual({r["request_id"] for r in recs}, {"verl-000001"})
        groups = {r["group_id"] for r in recs}
        self.assertEqual(len(groups), 12)
        self.assertEqual({g.split("/")[0] for g in groups}, {a["attempt"], b["attempt"]})
        self.assertEqual(len({r["rollout_id"] for r in recs}), len(recs))

    def test_two_loads_of_the_wrapper_in_one_process_never_share_an_id(self) -> None:
        """verl's legacy main_ppo loads the reward function file twice (reward_fn, val_reward_fn)."""
        stamp = {"dir": self.dir, "env": "alpha", "task_id": "1", "step": 1, "slot": 0, "request_id": "r",
                 "attempt": "a"}
        first, second = load_like_verl("compute_score"), load_like_verl("compute_score")
        for fn in (first, second, first, second):
            fn("alpha", "x", "x", {"envsched": stamp})
        recs = self.lines()
        self.assertEqual(len(recs), 4)
        self.assertEqual(len({r["rollout_id"] for r in recs}), 4)
        self.assertEqual({r["group_id"] for r in recs}, {"a/1/0"})

    def test_non_finite_score_writes_nothing(self) -> None:
        stamp = {"dir": self.dir, "env": "alpha", "task_id": "1", "step": 1, "slot": 0, "request_id": None,
                 "attempt": "a"}
        sink = envsched_verl.RolloutSink()
        sink.write(stamp, float("nan"))
        sink.write(stamp, 0.5)
        recs = self.lines()
        self.assertEqual(len(recs), 1)
        self.assertNotIn("request_id", recs[0], "a fallback batch has no request to name")


class RewardWrapperTest(unittest.TestCase):
    def write_scorer(self, body: str) -> str:
        path = os.path.join(tempdir(self), "score.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(body))
        return path

    def test_adds_env_and_task_to_float_and_dict_scores(self) -> None:
        fn = load_like_verl("compute_score")
        extra = {"index": 17, "split": "train"}
        token = fn.__globals__["_PROCESS_TOKEN"]  # loaded by path, as verl does: its own module
        self.assertEqual(fn("gsm8k", "42", "42", extra),
                         {"score": 1.0, "data_source": "gsm8k", "task_id": "17", "group_id": token})
        path = self.write_scorer("""
            def my_score(data_source, solution_str, ground_truth, extra_info=None, bonus=0.0):
                return {"score": 0.5 + bonus, "acc": True}
        """)
        got = fn("math", "x", "y", {"task_id": "t-3", "index": 9}, envsched_inner_path=path,
                 envsched_inner_name="my_score", bonus=0.25)
        self.assertEqual(got, {"score": 0.75, "acc": True, "data_source": "math", "task_id": "t-3", "group_id": token})

    def test_validation_rows_stay_numeric(self) -> None:
        fn = load_like_verl("compute_score")
        self.assertEqual(fn("gsm8k", "1", "2", {"index": 3, "split": "test"}), {"score": 0.0})

    def test_verl_dump_lines_carry_env_and_task(self) -> None:
        """Lines as verl's _dump_generations writes them, from the wrapper's reward extra info."""
        fn = load_like_verl("compute_score")
        rows = ROWS[:6]
        results = [fn(r["data_source"], "0", r["reward_model"]["ground_truth"], r["extra_info"]) for r in rows]
        extra: Dict[str, list] = {}
        for res in results:
            for k, v in res.items():
                extra.setdefault(k, []).append(v)
        base = {"input": [f"prompt {i}" for i in range(6)], "output": ["0"] * 6, "gts": ["0"] * 6,
                "score": [r["score"] for r in results], "step": [3] * 6}
        base.update({k: v for k, v in extra.items() if len(v) == 6})
        lines = [json.dumps({k: v[i] for k, v in base.items()}) for i in range(6)]
        for line, row in zip(lines, rows):
            rec = json.loads(line)
            self.assertEqual(ec.task_key(rec), ec.task_key(row))
            self.assertIn("score", rec)


class TRLSamplerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempdir(self)
        self.responder = Responder(self.dir).start()
        self.addCleanup(self.responder.stop)
        self.client = ec.EnvschedClient(self.dir, prefix="trl", timeout=10)
        args = SimpleNamespace(num_generations=4, num_iterations=1, steps_per_generation=2,
                               generation_batch_size=12, gradient_accumulation_steps=2,
                               per_device_train_batch_size=6)
        self.trainer = envsched_trl.EnvschedGRPOTrainer(model=None, args=args, train_dataset=ROWS,
                                                        reward_funcs=[], envsched_client=self.client)

    def test_repeat_sampler_shape(self) -> None:
        self.assertIsInstance(self.trainer, fakes.GRPOTrainer)
        sampler = self.trainer._get_train_sampler()
        self.assertEqual(sampler.batch_size, 3)
        it = iter(sampler)
        chunk = [next(it) for _ in range(3 * 4 * 2)]  # 3 prompts x 4 generations, twice
        distinct = chunk[::4][:3]
        self.assertEqual(keys_of(distinct), batch_file(self.dir, "trl-000001"))
        self.assertEqual(chunk[:12], [i for i in distinct for _ in range(4)])
        self.assertEqual(chunk[12:], chunk[:12], "a generation batch is repeated steps_per_generation times")
        self.assertEqual(len(sampler), 20 * 3 * 4 * 2)

    def test_trl_before_generation_batches_is_refused(self) -> None:
        # A GRPOConfig of TRL before v0.18.0 has no generation_batch_size or steps_per_generation:
        # v0.14.0 generated num_generations completions of each sampled row itself, v0.16.0
        # repeated a batch num_iterations times only. The sampler's shape would be guessed wrong
        # (batches trained gradient_accumulation_steps times over), so it is refused by name.
        args = SimpleNamespace(num_generations=4, num_iterations=1, gradient_accumulation_steps=2,
                               per_device_train_batch_size=6)
        trainer = envsched_trl.EnvschedGRPOTrainer(model=None, args=args, train_dataset=ROWS, reward_funcs=[],
                                                   envsched_client=self.client)
        with self.assertRaisesRegex(RuntimeError, "TRL v0.18.0 or later"):
            trainer._get_train_sampler()
        self.assertEqual(self.responder.answered, {}, "nothing was asked of envsched")

    def test_epochs_and_restart_use_position_ids(self) -> None:
        sampler = self.trainer._get_train_sampler()
        first = list(iter(sampler))
        sampler.set_epoch(0)  # a resumed run walks epoch 0 again: same IDs, same batches
        self.assertEqual(list(iter(sampler)), first)
        list(iter(sampler))  # epoch 1
        self.assertIn("trl-000040", self.responder.answered)
        self.assertTrue(all(n == 1 for n in self.responder.answered.values()))

    def test_logging_reward_writes_rollouts(self) -> None:
        def reward(prompts, completions, **kw):
            return [1.0 if c == "ok" else 0.0 for c in completions]

        wrapped = envsched_trl.logging_reward(reward, self.client, name="trl-rewards")
        cols = {"data_source": ["alpha", "alpha", "beta"], "extra_info": [{"index": 1}, {"index": 1}, {"index": 2}]}
        out = wrapped(prompts=["p"] * 3, completions=["ok", "no", "ok"], trainer_state=SimpleNamespace(global_step=4),
                      **cols)
        self.assertEqual(out, [1.0, 0.0, 1.0])
        with open(os.path.join(self.dir, "rollouts", "trl-rewards.jsonl")) as f:
            recs = [json.loads(line) for line in f]
        self.assertEqual(recs[0], {"env": "alpha", "task_id": "1", "reward": 1.0, "step": 5})
        self.assertEqual(len(recs), 3)


class TRLAsyncAndIterableTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempdir(self)
        self.client = ec.EnvschedClient(self.dir, prefix="trl", timeout=10)

    def test_async_reward_function_stays_async_and_logs(self) -> None:
        import asyncio
        import inspect

        async def reward(prompts, completions, **kw):
            await asyncio.sleep(0)
            return [1.0 if c == "ok" else 0.0 for c in completions]

        wrapped = envsched_trl.logging_reward(reward, self.client, name="async-rewards")
        # TRL v0.27.0 sorts reward functions with asyncio.iscoroutinefunction; v1.9.0 with inspect's.
        self.assertTrue(inspect.iscoroutinefunction(wrapped))
        out = asyncio.run(wrapped(prompts=["p", "p"], completions=["ok", "no"],
                                  data_source=["alpha", "alpha"], extra_info=[{"index": 1}, {"index": 1}]))
        self.assertEqual(out, [1.0, 0.0])
        with open(os.path.join(self.dir, "rollouts", "async-rewards.jsonl")) as f:
            self.assertEqual([json.loads(line)["reward"] for line in f], [1.0, 0.0])

    def test_iterable_dataset_is_refused_loudly(self) -> None:
        args = SimpleNamespace(num_generations=4)
        with self.assertRaisesRegex(TypeError, "iterable dataset.*never choose"):
            envsched_trl.EnvschedGRPOTrainer(model=None, args=args, train_dataset=fakes.IterableDataset(ROWS),
                                             reward_funcs=[], envsched_client=self.client)
        with self.assertRaisesRegex(TypeError, "iterable dataset"):  # by position, as GRPOTrainer allows
            envsched_trl.EnvschedGRPOTrainer(None, args, fakes.IterableDataset(ROWS), [], envsched_client=self.client)
        envsched_trl.EnvschedGRPOTrainer(model=None, args=args, train_dataset=ROWS, reward_funcs=[],
                                         envsched_client=self.client)  # a map-style dataset is fine


CALIBRATION = {"overall": {"groups": 400, "predicted_degenerate": 0.2, "realised_degenerate": 0.25,
                           "degenerate_gap": 0.05, "predicted_mean": 0.5, "realised_mean": 0.48},
               "recent": {"groups": 120, "predicted_degenerate": 0.18, "realised_degenerate": 0.15,
                          "degenerate_gap": -0.03, "predicted_mean": 0.5, "realised_mean": 0.5},
               "recent_answers": 20, "savings": {"source": "env_means", "rollouts_saved_est": 512.5}}


class MetricsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempdir(self)
        self.responder = Responder(self.dir).start()
        self.addCleanup(self.responder.stop)

    def write_status(self, **extra: Any) -> None:
        body = {"version": "0.1.0", "rollouts": 10, **extra}
        ec.write_atomic(os.path.join(self.dir, "status.json"), json.dumps(body).encode())

    def test_batch_metrics_from_batch_and_status(self) -> None:
        client = ec.EnvschedClient(self.dir, prefix="m", timeout=10)
        self.assertEqual(client.metrics(), {})
        batch = client.next_batch(size=6, group_size=4)
        tasks = batch.raw["tasks"]
        self.write_status()  # no calibration yet: predicted figures only
        m = client.metrics()
        self.assertAlmostEqual(m["envsched/predicted_degenerate"], sum(t["p_degenerate"] for t in tasks) / 6)
        self.assertEqual(m["envsched/envs_in_batch"], float(len({t["env"] for t in tasks})))
        self.assertEqual(m["envsched/rollouts_seen"], 0.0)
        self.assertEqual(m["envsched/fallback"], 0.0)
        self.assertNotIn("envsched/realised_degenerate", m)
        self.assertTrue(all(k.startswith("envsched/") and isinstance(v, float) for k, v in m.items()))
        self.write_status(calibration=CALIBRATION)
        m = client.metrics()
        self.assertEqual((m["envsched/realised_degenerate"], m["envsched/calibration_gap"],
                          m["envsched/realised_degenerate_overall"], m["envsched/rollouts_saved_est"]),
                         (0.15, -0.03, 0.25, 512.5))
        self.assertNotIn("envsched/coverage_return", m)
        self.write_status(calibration=CALIBRATION, corrections={
            "exploration_return": {"factor": 0.75, "groups": 219.1, "reference_groups": 1058.1},
            "random_return": {"factor": 0.5}, "coverage_return": {"factor": 0.25}, "rechosen_factor": 1.125,
            "never_tried_factor": 0.625, "rechosen_low_factor": 0.8125, "random_factor": 1.75,
            "never_tried_offset": -0.375})
        m = client.metrics()
        self.assertEqual((m["envsched/exploration_return"], m["envsched/random_return"], m["envsched/coverage_return"],
                          m["envsched/rechosen_factor"], m["envsched/never_tried_factor"],
                          m.get("envsched/rechosen_low_factor"), m.get("envsched/random_factor"),
                          m.get("envsched/never_tried_offset"), m["envsched/rollouts_saved_est"]),
                         (0.75, 0.5, 0.25, 1.125, 0.625, 0.8125, 1.75, -0.375, 512.5))

    def test_fallback_batch_says_so(self) -> None:
        client = ec.EnvschedClient(tempdir(self), prefix="fb", timeout=0.05, fallback_tasks=[("a", "1"), ("b", "2")])
        client.next_batch(size=2)  # nobody answers in that folder
        self.assertEqual(client.metrics(), {"envsched/fallback": 1.0, "envsched/envs_in_batch": 2.0})

    def test_verl_tracking_logs_envsched_metrics_per_step(self) -> None:
        cfg = {"train_batch_size": 6, "shuffle": False,
               "envsched": {"dir": self.dir, "prefix": "vm", "timeout": 10, "checkpoint_dir": tempdir(self)}}
        ds = load_like_verl("EnvschedDataset")(data_files=ROWS, tokenizer=None, config=cfg)
        self.write_status(calibration=CALIBRATION)
        for i in range(12):
            ds[i]
        tracking = sys.modules["verl.utils.tracking"].Tracking()
        tracking.log({"actor/loss": 0.5, "envsched/fallback": 7.0}, step=1)
        tracking.log({"actor/loss": 0.4}, step=1)  # a second call for the same step adds nothing
        tracking.log(data={"actor/loss": 0.3}, step=2)
        (s1, d1), (_, d1b), (s2, d2) = tracking.logged
        self.assertEqual((s1, s2), (1, 2))
        with open(os.path.join(self.dir, "batches", "vm-000001.json")) as f:
            tasks = json.load(f)["tasks"]
        self.assertAlmostEqual(d1["envsched/predicted_degenerate"], sum(t["p_degenerate"] for t in tasks) / 6)
        self.assertEqual(d1["envsched/realised_degenerate"], 0.15)
        self.assertEqual(d1["envsched/fallback"], 7.0, "the trainer's own key wins")
        self.assertEqual(d1b, {"actor/loss": 0.4})
        self.assertIn("envsched/predicted_degenerate", d2)

    def test_trl_log_adds_envsched_metrics(self) -> None:
        client = ec.EnvschedClient(self.dir, prefix="tm", timeout=10)
        args = SimpleNamespace(num_generations=4)
        trainer = envsched_trl.EnvschedGRPOTrainer(model=None, args=args, train_dataset=ROWS, reward_funcs=[],
                                                   envsched_client=client)
        client.next_batch(size=3)
        trainer.log({"loss": 1.0})
        trainer.log({"eval_loss": 2.0})
        self.assertIn("envsched/predicted_degenerate", trainer.logged[0])
        self.assertEqual(trainer.logged[1], {"eval_loss": 2.0})


@unittest.skipUnless(envsched_bin(), "ENVSCHED_BIN not set: the real daemon is tested from Go (clients/python e2e)")
class RealDaemonAdapterTest(unittest.TestCase):
    def test_verl_sampler_against_daemon(self) -> None:
        d = tempdir(self)
        write_catalog(d)
        daemon = Daemon(d)
        self.addCleanup(daemon.stop)
        cfg = {"train_batch_size": 6, "sampler": {"dir": d, "prefix": "real-v7", "group_size": 4, "timeout": 30}}
        sampler = load_like_verl("EnvschedCurriculumSampler")(data_source=fakes.RLHFDataset(ROWS, None, cfg),
                                                              data_config=cfg)
        it = iter(sampler)
        rows = [next(it) for _ in range(12)]
        self.assertEqual(keys_of(rows[:6]), batch_file(d, "real-v7-000001"))
        self.assertEqual(keys_of(rows[6:]), batch_file(d, "real-v7-000002"))
        self.assertEqual(len(set(keys_of(rows[:6]))), 6)


    def test_metrics_with_the_real_daemons_calibration(self) -> None:
        d = tempdir(self)
        write_catalog(d)
        daemon = Daemon(d)
        self.addCleanup(daemon.stop)
        client = ec.EnvschedClient(d, prefix="met", timeout=30)
        with client.rollout_writer() as out:
            for step in (1, 2):
                batch = client.next_batch(size=6, group_size=4, step=step)
                for i, task in enumerate(batch.tasks):
                    out.write_group(batch, task, [1.0, 1.0, 1.0, 1.0] if i % 2 else [1.0, 0.0, 1.0, 0.0], step=step)
                out.flush_step()
        client.next_batch(size=1, group_size=4, step=3)  # its barrier reads both steps' groups
        import time
        deadline = time.monotonic() + 30
        status = ec.read_status(d)  # status.json is rewritten just after the answer is published
        while (status or {}).get("last_request") != "met-000003" and time.monotonic() < deadline:
            time.sleep(0.02)
            status = ec.read_status(d)
        m = client.metrics()
        self.assertEqual(status["calibration"]["overall"]["groups"], 12, status.get("calibration"))
        self.assertEqual(m["envsched/realised_degenerate_overall"], 0.5)
        for key in ("envsched/predicted_degenerate", "envsched/realised_degenerate", "envsched/calibration_gap",
                    "envsched/rollouts_saved_est", "envsched/rollouts_seen"):
            self.assertIn(key, m)
        self.assertEqual(m["envsched/rollouts_seen"], 48.0)


if __name__ == "__main__":
    unittest.main()
