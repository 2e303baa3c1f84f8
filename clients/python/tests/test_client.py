"""Tests of envsched_client against a stand-in responder and, with ENVSCHED_BIN, the real daemon."""

from __future__ import annotations

import json
import logging
import os
import signal
import unittest

from standin import TASKS, Daemon, Responder, envsched_bin, tempdir, write_catalog

import envsched_client as ec


class RequestTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempdir(self)
        self.responder = Responder(self.dir).start()
        self.addCleanup(self.responder.stop)

    def test_batch_and_request_file(self) -> None:
        c = ec.EnvschedClient(self.dir, prefix="run1", timeout=10)
        b = c.next_batch(size=5, group_size=4, step=1, envs=["alpha"], allow_repeats=False)
        self.assertEqual(b.id, "run1-000001")
        self.assertEqual(len(b.tasks), 5)
        self.assertFalse(b.fallback)
        self.assertEqual(b.tasks[0].info["rank"], 1)
        with open(os.path.join(self.dir, "requests", "run1-000001.json")) as f:
            self.assertEqual(json.load(f), {"size": 5, "group_size": 4, "step": 1, "envs": ["alpha"],
                                            "allow_repeats": False})
        self.assertEqual(c.next_id(), "run1-000002")
        leftovers = [n for n in os.listdir(os.path.join(self.dir, "requests")) if n.startswith(".")]
        self.assertEqual(leftovers, [], "a temporary request file was left behind")

    def test_resume_asks_same_ids_and_gets_same_batches(self) -> None:
        c = ec.EnvschedClient(self.dir, prefix="run", timeout=10)
        c.next_batch(size=3)
        saved = json.loads(json.dumps(c.state_dict()))  # as a checkpoint would store it
        first = [c.next_batch(size=3) for _ in range(3)]

        resumed = ec.EnvschedClient(self.dir, prefix="run", timeout=10)
        resumed.load_state_dict(saved)
        again = [resumed.next_batch(size=3) for _ in range(3)]
        self.assertEqual([b.id for b in again], [b.id for b in first])
        self.assertEqual([b.tasks for b in again], [b.tasks for b in first])
        self.assertTrue(all(n == 1 for n in self.responder.answered.values()),
                        "an ID already answered was asked of envsched again")

    def test_error_file_raises_and_sequence_stays(self) -> None:
        c = ec.EnvschedClient(self.dir, prefix="err", timeout=10)
        with self.assertRaises(ec.BatchError) as cm:
            c.next_batch(size=5000)
        self.assertIn("more than 1000", cm.exception.message)
        self.assertEqual(c.next_id(), "err-000001", "a refused request must not advance the sequence")
        self.assertFalse(os.path.exists(os.path.join(self.dir, "batches", "err-000001.error.json")))

    def test_cleanup_removes_request_then_batch(self) -> None:
        c = ec.EnvschedClient(self.dir, prefix="cl", timeout=10, cleanup=True)
        c.next_batch(size=2)
        self.assertEqual(os.listdir(os.path.join(self.dir, "requests")), [])
        self.assertEqual(os.listdir(os.path.join(self.dir, "batches")), [])


class FallbackTest(unittest.TestCase):
    def test_fallback_is_loud_uniform_and_reproducible(self) -> None:
        d = tempdir(self)
        c = ec.EnvschedClient(d, prefix="fb", timeout=0.05, fallback_tasks=TASKS)
        with self.assertLogs("envsched", level=logging.WARNING) as logs:
            b = c.next_batch(size=6, step=3)
        self.assertTrue(b.fallback)
        self.assertEqual(len(set(t.key for t in b.tasks)), 6)
        self.assertTrue(all(t.key in set(TASKS) for t in b.tasks))
        self.assertIn("FALLING BACK", logs.output[0])
        self.assertEqual(b.step, 3)
        self.assertEqual(os.listdir(os.path.join(d, "requests")), [], "the unanswered request was not withdrawn")
        # The same ID falls back to the same tasks.
        c2 = ec.EnvschedClient(d, prefix="fb", timeout=0.05, fallback_tasks=TASKS)
        with self.assertLogs("envsched", level=logging.WARNING):
            self.assertEqual(c2.next_batch(size=6).tasks, b.tasks)

    def test_timeout_without_fallback(self) -> None:
        c = ec.EnvschedClient(tempdir(self), timeout=0.05)
        with self.assertRaises(ec.BatchTimeout):
            c.next_batch()
        self.assertEqual(c.next_id(), "step-000001")


class RolloutWriterTest(unittest.TestCase):
    def test_whole_lines_per_step(self) -> None:
        d = tempdir(self)
        c = ec.EnvschedClient(d, prefix="w")
        batch = ec.Batch("w-000001", 1, 2, [ec.Task("alpha", "3", {"rank": 1}), ec.Task("beta", "4", {"rank": 2})])
        with c.rollout_writer("trainer") as w:
            w.write_group(batch, batch.tasks[0], [1.0, 0.0])
            w.write_group(batch, batch.tasks[1], [True, 0.5])
            path = w.path
            self.assertEqual(os.path.getsize(path), 0, "records reached the file before flush_step")
            self.assertEqual(w.flush_step(), 4)
        with open(path, "rb") as f:
            data = f.read()
        self.assertTrue(data.endswith(b"\n"))
        recs = [json.loads(line) for line in data.splitlines()]
        self.assertEqual(recs[0], {"env": "alpha", "task_id": "3", "reward": 1.0, "group_id": "w-000001/1",
                                   "rollout_id": "w-000001/alpha/3/1/0", "step": 1, "request_id": "w-000001"})
        self.assertEqual(recs[2]["reward"], 1.0)
        self.assertEqual(len({r["rollout_id"] for r in recs}), 4)

    def test_half_line_is_closed(self) -> None:
        d = tempdir(self)
        path = os.path.join(d, "r.jsonl")
        with open(path, "wb") as f:
            f.write(b'{"env":"a","task_id":"1","reward":1}\n{"env":"a","ta')
        with self.assertLogs("envsched", level=logging.WARNING):
            w = ec.RolloutWriter(path)
        w.write({"env": "a", "task_id": "2", "reward": 0})
        w.close()
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
        self.assertEqual(lines[1], b'{"env":"a","ta')
        self.assertEqual(json.loads(lines[2])["task_id"], "2")

    def test_nan_reward_refused(self) -> None:
        w = ec.RolloutWriter(os.path.join(tempdir(self), "r.jsonl"))
        with self.assertRaises(ValueError):
            w.write({"env": "a", "task_id": "1", "reward": float("nan")})
        w.close()


class WriteAtomicTest(unittest.TestCase):
    def test_writers_of_one_request_do_not_mix(self) -> None:
        """Ranks of one trainer write the same request at once: the file is always whole."""
        import threading

        d = tempdir(self)
        path = os.path.join(d, "r.json")
        body = json.dumps({"size": 64, "pad": "x" * 100000}).encode()
        seen: list = []

        def write() -> None:
            for _ in range(50):
                ec.write_atomic(path, body)

        def read() -> None:
            for _ in range(200):
                try:
                    with open(path, "rb") as f:
                        seen.append(f.read() == body)
                except FileNotFoundError:
                    pass

        threads = [threading.Thread(target=write) for _ in range(4)] + [threading.Thread(target=read)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertTrue(all(seen), "a reader saw a partial or mixed request")
        self.assertEqual(os.listdir(d), ["r.json"], "temporary files were left")


class IdsAndKeysTest(unittest.TestCase):
    def test_valid_id(self) -> None:
        self.assertTrue(ec.valid_id("step-000001"))
        self.assertTrue(ec.valid_id("a" * 128))
        self.assertTrue(ec.valid_id("step-1.errors") and ec.valid_id("error"))
        self.assertTrue(ec.valid_id("x.error.1"))
        # "step-1\n": re's $ matches before a final newline, so it passed, and the client wrote a
        # request file the daemon refuses, and a prefix that made every ID such a name.
        for bad in ("", "-x", ".x", "a/b", "a b", "a" * 129, "step-1.error", "x.error", "step-1\n", "a" * 128 + "\n"):
            self.assertFalse(ec.valid_id(bad), bad)
        client = ec.EnvschedClient(tempdir(self), prefix="p")
        with self.assertRaises(ValueError):
            client.ask("x.error", {})  # its batch file would be x's error file
        with self.assertRaises(ValueError):
            ec.EnvschedClient(tempdir(self), prefix="../x")
        with self.assertRaises(ValueError):
            ec.EnvschedClient(tempdir(self), prefix="run\n")

    def test_task_key_aliases(self) -> None:
        cases = [
            ({"env": "a", "task_id": "x"}, ("a", "x")),
            ({"data_source": "gsm8k", "extra_info": {"index": 17, "split": "train"}}, ("gsm8k", "17")),
            ({"data_source": "m", "index": 3.0}, ("m", "3")),
            ({"env": None, "data_source": "d", "id": 2.5}, ("d", "2.5")),
            ({"extra_info": {"data_source": "e", "task_id": "t"}}, ("e", "t")),
            ({"env": "a"}, None),
            ({"task_id": "1"}, None),
            ({"env": "a", "task_id": True}, None),
            # a non-finite float is null to the daemon (a parquet row's NaN): the next key counts
            ({"data_source": "d", "task_id": float("nan"), "extra_info": {"index": 5}}, ("d", "5")),
            ({"data_source": "d", "task_id": float("-inf"), "index": 6}, ("d", "6")),
            ({"env": float("nan"), "data_source": "d", "task_id": 1}, ("d", "1")),
            ({"env": "a", "task_id": float("nan")}, None),
        ]
        for row, want in cases:
            self.assertEqual(ec.task_key(row), want, row)

    def test_float_ids_as_the_daemon_names_them(self) -> None:
        # What the daemon's numberText (record/values.go) makes of these numbers, so that a row
        # whose id is a float maps back from the batch's task_id (it did not from 1e6 to 1e21).
        cases = [
            (2.5, "2.5"), (3.0, "3"), (-0.0, "0"), (0.1, "0.1"), (0.0001, "0.0001"), (1e-05, "1e-05"),
            (1.5e-07, "1.5e-07"), (123456.5, "123456.5"), (1234567.5, "1.2345675e+06"),
            (-123456789.125, "-1.23456789125e+08"), (1.5e16, "15000000000000000"),
            (9007199254740993.0, "9007199254740992"), (1.2345678901234568e20, "123456789012345680000"),
            (1e21, "1e+21"), (1e22, "1e+22"), (-2.5e300, "-2.5e+300"), (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
        ]
        for x, want in cases:
            self.assertEqual(ec.task_key({"env": "a", "task_id": x}), ("a", want), x)

        class Float32:  # numpy.float32(2.1) as the client sees it: not a float, a dtype of kind "f"
            class dtype:
                kind = "f"

            def __init__(self, x: float) -> None:
                self.x = x

            def __float__(self) -> float:
                return self.x

            def __int__(self) -> int:
                return int(self.x)

            def __eq__(self, other: object) -> bool:
                return self.x == other

        # The daemon reads a float32 parquet column as its float64 value (catalog/parquet.go);
        # a non-integral one was no task at all, an integral one beyond 2**53 its exact digits.
        for x, want in ((2.0999999046325684, "2.0999999046325684"), (3.0, "3"),
                        (1.0000000200408773e20, "100000002004087730000")):
            self.assertEqual(ec.task_key({"env": "a", "task_id": Float32(x)}), ("a", want), x)

    def test_state_version_checked(self) -> None:
        c = ec.EnvschedClient(tempdir(self))
        with self.assertRaises(ValueError):
            c.load_state_dict({"version": 99, "prefix": "step", "next_seq": 3})




class HostileFilesTest(unittest.TestCase):
    """Files in DIR that envsched cannot have written never crash the trainer with a stray error."""

    def setUp(self) -> None:
        self.dir = tempdir(self)
        for sub in ("requests", "batches"):
            os.makedirs(os.path.join(self.dir, sub), exist_ok=True)

    def _status(self, text: str) -> None:
        with open(os.path.join(self.dir, "status.json"), "w") as f:
            f.write(text)

    def test_metrics_survive_hostile_status(self) -> None:
        b = ec.Batch("x", 1, 8, [ec.Task("a", "1", {"p_degenerate": 0.5})], raw={"rollouts_seen": 10 ** 400})
        cases = {
            "nested too deep": "[" * 100000 + "]" * 100000,
            "integer beyond float": '{"calibration": {"recent": {"groups": 1' + "0" * 400 + "}}}",
        }
        for name, text in cases.items():
            with self.subTest(name):
                self._status(text)
                m = ec.batch_metrics(b, ec.read_status(self.dir))
                self.assertEqual(m["envsched/predicted_degenerate"], 0.5)
                self.assertNotIn("envsched/rollouts_seen", m)
                self.assertNotIn("envsched/calibration_groups", m)

    def test_hostile_batch_file_is_a_clear_error(self) -> None:
        c = ec.EnvschedClient(self.dir, prefix="run", timeout=1)
        path = os.path.join(self.dir, "batches", "run-000001.json")
        cases = {
            "nested too deep": "[" * 100000 + "]" * 100000,
            "not JSON": "{half",
            "tasks not a list of objects": '{"id": "run-000001", "tasks": "abc"}',
            "task without env": '{"id": "run-000001", "tasks": [{"task_id": "1"}]}',
            "step not a number": '{"id": "run-000001", "step": "x", "tasks": []}',
            "step infinite": '{"id": "run-000001", "step": 1e999, "tasks": []}',
        }
        for name, text in cases.items():
            with self.subTest(name):
                with open(path, "w") as f:
                    f.write(text)
                with self.assertRaises(ec.BadAnswerError) as cm:
                    c.wait("run-000001", 0.1)
                self.assertIn("run-000001.json", str(cm.exception))
        os.remove(path)
        os.mkdir(path)  # a folder where the batch belongs
        with self.assertRaises(ec.BadAnswerError):
            c.wait("run-000001", 0.1)

    def test_oversized_answer_or_status_is_not_read(self) -> None:
        # A status.json or batch file larger than envsched writes was read whole before it was
        # parsed (a 4 GB sparse status.json: 5 GB in every metrics() call). Such a file is not
        # envsched's: status is None and a batch file a BadAnswerError, valid JSON or not.
        self._status('{"pad": "' + "x" * (ec.MAX_STATUS_BYTES + 1) + '"}')
        self.assertIsNone(ec.read_status(self.dir))
        self._status('{"pad": "x"}')
        self.assertEqual(ec.read_status(self.dir), {"pad": "x"})
        c = ec.EnvschedClient(self.dir, prefix="big", timeout=1)
        body = '{"id": "big-000001", "step": 1, "tasks": [], "pad": "' + "x" * 4096 + '"}'
        with open(os.path.join(self.dir, "batches", "big-000001.json"), "w") as f:
            f.write(body)
        self.addCleanup(setattr, ec, "MAX_ANSWER_BYTES", getattr(ec, "MAX_ANSWER_BYTES", None))
        ec.MAX_ANSWER_BYTES = 1024  # as small as the file is large beside a real bound
        with self.assertRaises(ec.BadAnswerError) as cm:
            c.wait("big-000001", 0.1)
        self.assertIn("bytes", str(cm.exception))

    def test_fifo_answer_or_status_does_not_hang(self) -> None:
        # A FIFO where the batch or status.json belongs: open() waited for a writer for ever,
        # past the client's timeout (no fallback, no error), and metrics() likewise.
        if not hasattr(os, "mkfifo") or not hasattr(signal, "SIGALRM"):
            self.skipTest("no FIFOs or no SIGALRM here")

        def hung(signum: int, frame: object) -> None:
            raise AssertionError("hung opening a FIFO")

        old = signal.signal(signal.SIGALRM, hung)
        self.addCleanup(signal.signal, signal.SIGALRM, old)
        self.addCleanup(signal.alarm, 0)
        c = ec.EnvschedClient(self.dir, prefix="fifo", timeout=0.2, fallback_tasks=[("a", "1")])
        os.mkfifo(os.path.join(self.dir, "batches", "fifo-000001.json"))
        signal.alarm(5)
        with self.assertRaises(ec.BadAnswerError) as cm:
            c.ask("fifo-000001", {"size": 1})
        self.assertIn("FIFO", str(cm.exception))
        os.mkfifo(os.path.join(self.dir, "status.json"))
        self.assertIsNone(ec.read_status(self.dir))
        os.makedirs(os.path.join(self.dir, "rollouts"), exist_ok=True)
        os.mkfifo(os.path.join(self.dir, "rollouts", "w.jsonl"))
        with self.assertRaises(ValueError):
            c.rollout_writer("w")
        signal.alarm(0)


@unittest.skipUnless(envsched_bin(), "ENVSCHED_BIN not set: the real daemon is tested from Go (clients/python e2e)")
class RealDaemonTest(unittest.TestCase):
    def test_round_trip(self) -> None:
        d = tempdir(self)
        write_catalog(d)
        daemon = Daemon(d)
        self.addCleanup(daemon.stop)
        c = ec.EnvschedClient(d, prefix="real", timeout=30)
        b = c.next_batch(size=6, group_size=4, step=1)
        self.assertEqual(len(b.tasks), 6)
        self.assertTrue(all(t.key in set(TASKS) for t in b.tasks), b.tasks)
        for key in ("rank", "score", "predicted_mean", "predicted_variance", "p_degenerate", "reason"):
            self.assertIn(key, b.tasks[0].info)
        with c.rollout_writer() as w:
            for t in b.tasks:
                w.write_group(b, t, [1, 0, 0, 1])
        b2 = c.next_batch(size=6, group_size=4, step=2)  # the barrier: the rollouts above are in
        self.assertGreaterEqual(b2.raw["rollouts_seen"], 24)
        with self.assertRaises(ec.BatchError):
            c.next_batch(size=6, envs=["no-such-env"])

    def test_float_ids_map_back(self) -> None:
        # Catalogue rows whose ids are floats: each task the daemon answers is one task_key names.
        d = tempdir(self)
        rows = [{"env": "f", "task_id": x} for x in (2.5, 3.0, 1234567.5, 1.5e16, 1.2345678901234568e20, 1e22, 1e-05)]
        os.makedirs(os.path.join(d, "catalog"))
        with open(os.path.join(d, "catalog", "floats.jsonl"), "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in rows))
        daemon = Daemon(d)
        self.addCleanup(daemon.stop)
        c = ec.EnvschedClient(d, prefix="floats", timeout=30)
        b = c.next_batch(size=len(rows), group_size=4)
        self.assertEqual({t.key for t in b.tasks}, {ec.task_key(r) for r in rows})


if __name__ == "__main__":
    unittest.main()
