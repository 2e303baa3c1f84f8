"""Unit tests of the acceptance harness's figures and worlds (run by acceptance_test.go)."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import worlds  # noqa: E402


def _tasks():
    """A small catalogue: 3 environments of 10 tasks."""
    rows = []
    for e in range(3):
        for i in range(10):
            tools = [f"{v}_x" for v in ("get", "book", "cancel")[: 1 + (i + e) % 3]]
            rows.append(worlds.Task(f"b{e % 2}-env{e}", str(i), "user: hi " * (1 + i % 4), tools, f"b{e % 2}"))
    worlds._derive(rows)
    return rows


def _run(policy, seed, curve, degenerate=(), groups=()):
    return harness.Run("w", policy, seed, curve=list(curve), degenerate=list(degenerate), groups=list(groups))


class Figures(unittest.TestCase):
    def test_parse_seeds(self):
        self.assertEqual(harness.parse_seeds("1-3,7,2"), [1, 2, 3, 7])
        self.assertEqual(harness.parse_seeds("5"), [5])

    def test_first_reach_and_median(self):
        self.assertEqual(harness.first_reach([0.9, 0.1, 0.5, 0.6], 0.5), 2)  # step 0 never counts
        self.assertIsNone(harness.first_reach([0.1, 0.2], 0.5))
        self.assertEqual(harness.median_step([3, None, 5]), 5)
        self.assertIsNone(harness.median_step([None, None, 4]))

    def test_headline_from_curves(self):
        runs = [_run("random", 1, [0.1, 0.2, 0.3], [1, 1], [2, 2]), _run("random", 2, [0.1, 0.4, 0.2], [2, 0], [2, 2]),
                _run("envsched", 1, [0.1, 0.35, 0.25], [0, 1], [2, 2]),
                _run("envsched", 2, [0.1, 0.3, 0.5], [0, 0], [2, 2])]
        h = harness.headline(runs, at=2)
        self.assertAlmostEqual(h["envsched"]["at_step"], 0.375)  # median of 0.25 and 0.5
        self.assertEqual(h["envsched"]["beats_random_best"], 1)  # seed 2: 0.5 > 0.4; seed 1: 0.25 < 0.3
        self.assertEqual(h["envsched"]["reach_random_best"], 1.5)  # seed 1 at 1, seed 2 at 2
        self.assertAlmostEqual(h["envsched"]["degenerate"], 1 / 8)
        self.assertAlmostEqual(h["random"]["degenerate"], 4 / 8)

    def test_headline_task_weighted(self):
        runs = [_run("random", 1, [0.1, 0.2], [0], [1]), _run("envsched", 1, [0.1, 0.3], [0], [1])]
        runs[0].curve_tasks, runs[1].curve_tasks = [0.1, 0.5], [0.1, 0.4]
        self.assertEqual(harness.headline(runs, at=1)["envsched"]["beats_random_best"], 1)
        self.assertEqual(harness.headline(runs, at=1, weigh="curve_tasks")["envsched"]["beats_random_best"], 0)

    def test_calibration_split(self):
        picks = [harness.Pick(1, "a", "never_tried", 0.5, 0.5, True, 1.0),
                 harness.Pick(1, "b", "rechosen", 0.1, 0.5, False, 0.5),
                 harness.Pick(12, "b", "rechosen", 0.3, 0.5, True, 0.0)]
        rows = {(r["phase"], r["channel"]): r for r in harness.calibration(picks, "channel")}
        self.assertEqual(rows[("all", "rechosen")]["picks"], 2)
        self.assertAlmostEqual(rows[("all", "rechosen")]["predicted_degenerate"], 0.2)
        self.assertAlmostEqual(rows[("all", "rechosen")]["realised_degenerate"], 0.5)
        self.assertAlmostEqual(rows[("1-10", "never_tried")]["share"], 0.5)
        self.assertNotIn(("11+", "never_tried"), rows)


class History(unittest.TestCase):
    def test_history_policy_rechooses_only_unequal_groups(self):
        h = harness.HistoryPolicy(range(10), seed=1)
        first = h.choose(1, 4)
        self.assertEqual(len(set(first)), 4)
        h.record(1, first, [[1, 0, 1, 0], [1, 1, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]])
        second = h.choose(2, 4)
        self.assertEqual(second[:2], [first[0], first[2]])  # most spread first
        self.assertNotIn(first[1], second)  # all-equal: not again while untried tasks are left
        self.assertNotIn(first[3], second)
        h.record(2, second, [[1, 0, 1, 0]] * 2 + [[1, 1, 1, 1]] * 2)
        h.record(3, h.choose(3, 4), [[0, 0, 0, 0]] * 4)
        self.assertEqual(len(set(h.choose(4, 10))), 10)  # untried exhausted: fills with the rest


class Reasons(unittest.TestCase):
    def test_history_contradictions(self):
        h = harness.History()
        a, b = ("e1", "1"), ("e1", "2")
        self.assertIsNone(h.reason_problem(1, a, "new environment; env prior"))
        self.assertIsNotNone(h.reason_problem(1, a, "high predicted variance"))  # never rolled out
        h.record(1, [a])
        self.assertIsNotNone(h.reason_problem(2, a, "never tried; env prior"))
        self.assertIsNotNone(h.reason_problem(2, b, "new environment; env prior"))
        self.assertIsNone(h.reason_problem(2, b, "never tried; neighbours' evidence"))
        self.assertIsNotNone(h.reason_problem(2, a, "not chosen before"))
        self.assertIsNone(h.reason_problem(5, a, "stale: not chosen for 4 steps"))
        self.assertIsNotNone(h.reason_problem(5, a, "stale: not chosen for 3 steps"))
        self.assertIsNone(h.reason_problem(5, a, "random slot"))


class Worlds(unittest.TestCase):
    def test_split_holds_out_each_env(self):
        tasks = _tasks()
        train, held = worlds.split(tasks, 3)
        self.assertEqual(sorted(train + held), list(range(len(tasks))))
        self.assertEqual({tasks[i].env for i in held}, {t.env for t in tasks})
        self.assertEqual(worlds.split(tasks, 3), (train, held))

    def test_learner_is_deterministic_and_learns(self):
        tasks = _tasks()
        for world in worlds.WORLDS:
            a, b = worlds.new_learner(world, tasks, 7), worlds.new_learner(world, tasks, 7)
            self.assertEqual([a.p(i) for i in range(len(tasks))], [b.p(i) for i in range(len(tasks))])
            self.assertEqual(a.rollout(3, 1, 8), b.rollout(3, 1, 8))
            self.assertNotEqual(a.heldout([0, 1, 10]), a.heldout_tasks([0, 1, 10]))  # 2 envs, 1+2 tasks
            before = a.heldout(range(len(tasks)))
            for step in range(1, 6):  # groups of mixed rewards on every task: a strong signal
                a.update(step, [(i, [1.0, 0.0, 1.0, 0.0]) for i in range(len(tasks))], len(tasks))
            self.assertGreater(a.heldout(range(len(tasks))), before, world)

    def test_degenerate_groups_teach_nothing(self):
        tasks = _tasks()
        for world in worlds.WORLDS:
            a, b = worlds.new_learner(world, tasks, 1), worlds.new_learner(world, tasks, 1)
            a.update(1, [(i, [1.0] * 4) for i in range(len(tasks))], len(tasks))
            b.update(1, [], len(tasks))  # the same step without any group: only drift
            self.assertEqual(a.level, b.level, world)
            a.update(2, [(0, [1.0, 0.0, 0.0, 0.0])], len(tasks))
            b.update(2, [], len(tasks))
            self.assertNotEqual(a.level, b.level, world)

    def test_missing_catalogue(self):
        with self.assertRaises(worlds.CatalogueMissing):
            worlds.load_catalogue(os.path.join(tempfile.gettempdir(), "surely-absent-catalogue.jsonl"))

    def test_features_from_text(self):
        t = worlds.Task("ace-x", "1", "user: a system: b user: c", ["get_a", "GorillaFileSystem"], "acebench")
        f = worlds.features(t)
        self.assertEqual(f["turns"], 3.0)
        self.assertEqual(f["tools"], 2.0)
        self.assertEqual(worlds.action_word("GorillaFileSystem"), "gorilla")
        self.assertEqual(worlds.action_word("math.factorial"), "math")


def _agent_tasks():
    """Graded (acebench), binary (bfcl) and irrelevance tasks, single- and multi-turn."""
    rows = [worlds.Task("ace-normal_x", str(i), "user: a user: b" if i % 2 else "do it", ["get_a", "book_b"], "acebench")
            for i in range(6)]
    rows += [worlds.Task("bfcl-simple", str(i), "call it", ["get_a", "cancel_c"], "bfcl-v3") for i in range(6)]
    rows += [worlds.Task("bfcl-irrelevance", str(i), "no tool fits", ["get_a"], "bfcl-v3") for i in range(6)]
    worlds._derive(rows)
    return rows


class AgentWorlds(unittest.TestCase):
    def test_agentic_rewards_graded_only_where_benchmarks_grade(self):
        tasks = _agent_tasks()
        a = worlds.new_learner("agentic", tasks, 2)
        values = {t.env: set() for t in tasks}
        for step in range(1, 40):
            for i, t in enumerate(tasks):
                values[t.env].update(a.rollout(i, step, 8))
        self.assertTrue(values["ace-normal_x"] - {0.0, 1.0}, values["ace-normal_x"])  # fractions of sub-goals
        self.assertLessEqual(values["bfcl-simple"], {0.0, 1.0})
        self.assertEqual(len(a.plans[12]), 1)  # irrelevance: one sub-goal, abstaining
        self.assertEqual(a.plans[12], [a.abstain])
        self.assertEqual(len(a.plans[1]), 6)  # 3 turns (features: 1 + 2 "user:"), dialogue and action each
        self.assertEqual(a.plans[0], [a.action_base + x for x in tasks[0].actions])  # single-turn: its actions
        for i, t in enumerate(tasks):  # p is the mean of the rewards rollout() draws
            mean = sum(sum(a.rollout(i, s, 8)) for s in range(1, 301)) / 2400
            self.assertAlmostEqual(mean, a.p(i), delta=0.05, msg=t.env)

    def test_agentic_interference(self):
        tasks = _agent_tasks()
        a = worlds.new_learner("agentic", tasks, 3)
        simple = [i for i, t in enumerate(tasks) if t.env == "bfcl-simple"]
        other = [a.env_of["ace-normal_x"], a.abstain]
        before = [a.level[k] for k in other]
        groups = [(i, a.rollout(i, 1, 8)) for i in simple]
        self.assertTrue(any(min(g) != max(g) for _, g in groups))
        a.update(1, groups, len(groups))
        self.assertGreater(a.level[a.env_of["bfcl-simple"]], a.start[a.env_of["bfcl-simple"]])
        for k, b in zip(other, before):  # forgetting pulls towards the start too: compare with no training
            self.assertLess(a.level[k], b - a.forget * (b - a.start[k]) - 1e-9)

    def test_plateau_flips_teach_nothing(self):
        tasks = _tasks()
        a, b = worlds.new_learner("plateau", tasks, 4), worlds.new_learner("plateau", tasks, 4)
        a.base[0] = b.base[0] = -30.0  # never solved: every unequal group is the grader's doing
        for step in range(1, 200):
            g = a.rollout(0, step, 8)
            if min(g) != max(g):
                a.update(step, [(0, g)], 1)
                b.update(step, [], 1)
                self.assertEqual(a.level, b.level)
                return
        self.fail("no flipped group in 200 steps")

    def test_giants_nothing_transfers_between_environments(self):
        tasks = _tasks()
        a = worlds.new_learner("giants", tasks, 6)
        env0 = [i for i, t in enumerate(tasks) if t.env == tasks[0].env]
        others = [i for i in range(len(tasks)) if i not in env0]
        before = [a.p(i) for i in others]
        a.update(1, [(i, [1.0, 0.0, 1.0, 0.0]) for i in env0], len(env0))
        self.assertGreater(a.heldout(env0), worlds.new_learner("giants", tasks, 6).heldout(env0))
        self.assertEqual([a.p(i) for i in others], before)

    def test_plateau_is_bimodal(self):
        tasks = worlds.subset(_tasks() * 1, 3, 10)
        a = worlds.new_learner("plateau", tasks, 5)
        ps = [a.p(i) for i in range(len(tasks))]
        extreme = sum(1 for p in ps if p < 0.05 or p > 0.95)
        self.assertGreaterEqual(extreme, len(ps) // 2, ps)


if __name__ == "__main__":
    unittest.main()
