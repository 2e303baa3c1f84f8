"""Unit tests of the acceptance harness's figures and worlds (run by acceptance_test.go)."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import trapworlds  # noqa: E402
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

    def test_known_policy_takes_tried_tasks_above_the_untried_mean(self):
        class Learner:  # informative chance by task: 0-4 tried, 5-19 untried at 0.3
            def informative(self, i, group):
                return {0: 0.9, 1: 0.1, 2: 0.5, 3: 0.0, 4: 0.31}.get(i, 0.3)

        h = harness.HistoryPolicy(range(20), seed=1)
        h.record(1, [0, 1, 2, 3, 4], [[1, 0]] * 5)
        chosen = harness.choose_known(Learner(), h, range(20), seed=1, step=2, size=6, group=2)
        self.assertEqual(chosen[:3], [0, 2, 4])  # above the untried mean, most informative first
        self.assertEqual(len(set(chosen)), 6)
        self.assertTrue(all(i >= 5 for i in chosen[3:]))  # the rest untried
        self.assertEqual(chosen, harness.choose_known(Learner(), h, range(20), seed=1, step=2, size=6, group=2))

    def test_veto_keeps_the_first_batch_by_rank_without_the_skipped(self):
        class Learner:  # true chance by task index
            def p(self, i):
                return [0.01, 0.5, 0.99, 0.02, 0.6, 0.4][i]

        class T:
            def __init__(self, key):
                self.key = key

        class B:
            def __init__(self, tasks):
                self.tasks = tasks

        keys = [("e", str(i)) for i in range(6)]
        index = {k: i for i, k in enumerate(keys)}
        h = harness.History()
        h.record(1, [keys[0], keys[1], keys[2]])  # 3 (p = 0.02) never tried: kept
        h.pooled = {keys[0]: [0.0, 8], keys[1]: [1.0, 8], keys[2]: [4.0, 8]}
        batch = B([T(k) for k in keys])
        cfg = harness.Config(bin="", catalogue="", worlds=[], policies=[], seeds=[], steps=1, batch=3, group=8)
        got = {}
        for veto in ("none", "stuck", "own"):
            kept, skipped = harness._veto(dataclasses_replace(cfg, veto=veto), batch, Learner(), index, h)
            got[veto] = ([t.key[1] for t in kept.tasks], [t.key[1] for t in skipped])
        self.assertEqual(got["none"], (["0", "1", "2"], []))
        self.assertEqual(got["stuck"], (["1", "3", "4"], ["0", "2"]))  # tried and p outside 0.03-0.97
        self.assertEqual(got["own"], (["2", "3", "4"], ["0", "1"]))  # pooled 0/8 and 1/8 so far
        with self.assertRaises(RuntimeError):  # fewer left than the batch: said, not a short batch
            harness._veto(dataclasses_replace(cfg, veto="stuck", batch=5), batch, Learner(), index, h)


def dataclasses_replace(cfg, **kw):
    import dataclasses

    return dataclasses.replace(cfg, **kw)


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


class Waiting(unittest.TestCase):
    """A daemon that exits while the trainer waits is said at once, with its log; one that runs
    and does not answer is said after --timeout (giants seed 1004's BatchTimeout could not tell
    the two apart)."""

    def _setup(self, exit_code):
        import time as _t
        from envsched_client import EnvschedClient
        d = tempfile.mkdtemp()
        for sub in ("requests", "batches", "rollouts", "catalog"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        client = EnvschedClient(d, prefix="w-s1", timeout=1.0)
        log = os.path.join(d, "daemon.log")
        with open(log, "w") as f:
            f.write("ERROR write: no space left on device\n")

        class Proc:
            pid = 4242
            returncode = exit_code

            def poll(self):
                return exit_code

        daemon = harness.Daemon.__new__(harness.Daemon)
        daemon.proc, daemon.log_path = Proc(), log
        cfg = harness.Config(bin="", catalogue="", worlds=[], policies=[], seeds=[], steps=1, batch=4, group=2,
                             timeout=30.0)
        return client, daemon, cfg, _t

    def test_exited_daemon_is_said_within_a_slice(self):
        client, daemon, cfg, t = self._setup(1)
        old, harness.LIVENESS_SLICE = harness.LIVENESS_SLICE, 0.05
        try:
            t0 = t.monotonic()
            with self.assertRaises(harness.DaemonDied) as cm:
                harness._next_batch(client, daemon, cfg, 3)
            self.assertLess(t.monotonic() - t0, 5.0)  # not cfg.timeout (30 s)
            self.assertIn("exited 1", str(cm.exception))
            self.assertIn("no space left", str(cm.exception))
        finally:
            harness.LIVENESS_SLICE = old

    def test_running_daemon_without_answer_times_out(self):
        client, daemon, cfg, _ = self._setup(None)
        cfg.timeout = 0.2
        old, harness.LIVENESS_SLICE = harness.LIVENESS_SLICE, 0.05
        try:
            with self.assertRaises(harness.NoAnswer) as cm:
                harness._next_batch(client, daemon, cfg, 3)
            self.assertIn("still running", str(cm.exception))
        finally:
            harness.LIVENESS_SLICE = old


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


def _twins(n=40):
    """n tasks of one environment that look the same: the same tools, the same text."""
    rows = [worlds.Task("bfcl-simple", str(i), "book a flight to Paris", ["book_flight", "get_weather"], "bfcl-v3")
            for i in range(n)]
    rows += [worlds.Task("tau-retail", str(i), "user: cancel my order", ["cancel_order"], "tau-bench") for i in range(n)]
    worlds._derive(rows)
    return rows


class TrapWorlds(unittest.TestCase):
    def test_shapes(self):
        cfg, _ = harness.parse_args(["--world", "lookalike,unlock,sharp"])
        self.assertEqual((cfg.batch, cfg.group), (0, 0))  # no flag: each world's own
        self.assertEqual(cfg.shape("lookalike"), (128, 4))
        self.assertEqual(cfg.shape("unlock"), (32, 16))
        self.assertEqual(cfg.shape("sharp"), (64, 8))
        w = cfg.for_world("unlock")
        self.assertEqual((w.batch, w.group, w.steps), (32, 16, cfg.steps))
        cfg, _ = harness.parse_args(["--world", "unlock", "--batch-size", "48"])
        self.assertEqual(cfg.shape("unlock"), (48, 16))  # a flag overrides the world
        cfg, _ = harness.parse_args(["--world", "unlock", "--smoke"])
        self.assertEqual(cfg.shape("unlock"), (8, 4))
        for budget in trapworlds.SHAPES.values():  # the same rollouts a step as B = 64, G = 8
            self.assertEqual(budget[0] * budget[1], 512)

    def test_shape_reaches_the_runs(self):
        cfg, _ = harness.parse_args(["--world", "unlock", "--policies", "random", "--steps", "2"])
        run = harness.play(cfg.for_world("unlock"), "unlock", "random", 1, _twins())
        self.assertEqual(run.groups, [32, 32])  # B = 32 of the 68 training tasks each step

    def test_lookalike_rewards_have_three_levels(self):
        tasks = _twins()
        a = worlds.new_learner("lookalike", tasks, 2)
        seen = set()
        for i in range(len(tasks)):
            for step in range(1, 30):
                seen.update(a.rollout(i, step, 4))
        self.assertEqual(seen, {0.0, 0.5, 1.0})
        for i in (0, 5, 50):  # p is the mean of the rewards rollout() draws
            mean = sum(sum(a.rollout(i, s, 8)) for s in range(1, 401)) / 3200
            self.assertAlmostEqual(mean, a.p(i), delta=0.04)

    def test_lookalike_twins_differ(self):
        tasks = _twins()
        a = worlds.new_learner("lookalike", tasks, 3)
        for env in ("bfcl-simple", "tau-retail"):
            idx = [i for i, t in enumerate(tasks) if t.env == env]
            self.assertGreaterEqual(len({a.levels[i] for i in idx}), 3, env)  # same text and tools
            ps = [a.p(i) for i in idx]
            self.assertGreater(max(ps) - min(ps), 0.4, env)
        b = worlds.new_learner("lookalike", tasks, 4)  # levels are the seed's, not the text's
        self.assertNotEqual(a.levels, b.levels)

    def test_lookalike_half_credit_groups_are_all_equal(self):
        tasks = _twins()
        a = worlds.new_learner("lookalike", tasks, 5)
        a.tool_hard[0], a.arg_hard[0] = -30.0, 30.0  # the tool is always right, the arguments never
        self.assertAlmostEqual(a.p(0), 0.5, places=6)
        self.assertLess(a.informative(0, 4), 1e-6)  # a mean of one half, and no variance
        self.assertEqual(a.rollout(0, 1, 4), [0.5] * 4)
        before = list(a.level)
        a.update(1, [(0, [0.5] * 4)], 1)
        b = worlds.new_learner("lookalike", tasks, 5)
        b.update(1, [], 1)
        self.assertEqual([x - y for x, y in zip(a.level, before)], [x - y for x, y in zip(b.level, b.start)])

    def test_lookalike_level_carries_to_the_next_only(self):
        tasks = _twins()
        a = worlds.new_learner("lookalike", tasks, 6)
        i = next(i for i, t in enumerate(tasks) if a.levels[i] == 1 and len(t.actions) == 1)
        k = a._arg_skills(i)[0]
        a.update(1, [(i, [1.0, 0.5, 1.0, 0.5])], 1)  # right tool each time: only the arguments learn
        moved = {j for j, (x, y) in enumerate(zip(a.level, a.start)) if abs(x - y) > 1e-12}
        self.assertEqual(moved, {k, k + 1})
        self.assertGreater(a.level[k + 1] - a.start[k + 1], 0.0)
        self.assertAlmostEqual(a.level[k + 1] - a.start[k + 1], a.prm.carry * (a.level[k] - a.start[k]))

    def test_unlock_jumps_at_the_threshold(self):
        a = worlds.new_learner("unlock", _twins(), 7)
        k = a.needs[0][0]
        thr, prm = a.threshold[k], a.prm
        a.level[k] = 0.0
        self.assertAlmostEqual(a.shown(k), a.origin[k])
        shown = []
        for x in (0.0, 0.5 * thr, thr - 0.5, thr + 0.5):
            a.level[k] = x
            shown.append(a.shown(k))
        self.assertLess(shown[1] - shown[0], prm.lead * 0.5 * thr + 0.05 * prm.jump)  # little before
        self.assertGreater(shown[3] - shown[2], 0.8 * prm.jump)  # all at once across it

    def test_unlock_waits_for_every_prerequisite(self):
        tasks = _twins()
        a = worlds.new_learner("unlock", tasks, 8)
        i = next(i for i, t in enumerate(tasks) if t.env == "tau-retail")  # multi-turn: action + composition
        self.assertEqual(len(a.needs[i]), 2)
        weak, strong = sorted(a.needs[i], key=a.shown)
        a.hard[i] = a.shown(weak) + 2.0  # never solved now
        before = a.p(i)
        a.level[strong] += 10.0  # the other skill far past its threshold: nothing changes
        self.assertEqual(a.p(i), before)
        a.level[weak] += 2.0 * a.threshold[weak]  # the bottleneck unlocks
        self.assertGreater(a.p(i), 0.5)
        self.assertLess(before, 0.01)

    def test_unlock_only_the_bottleneck_learns(self):
        tasks = _twins()
        a = worlds.new_learner("unlock", tasks, 9)
        i = next(i for i, t in enumerate(tasks) if t.env == "tau-retail")
        weak = min(a.needs[i], key=lambda k: (a.shown(k), k))
        a.update(1, [(i, [1.0, 0.0] * 8)], 1)
        moved = {j for j, x in enumerate(a.level) if x != 0.0}
        self.assertEqual(moved, {weak})

    def test_seesaw_training_one_environment_unlearns_its_opposite(self):
        rows = [worlds.Task("bfcl-simple", str(i), "call it", ["book_b"], "bfcl-v3") for i in range(6)]
        rows += [worlds.Task("bfcl-irrelevance", str(i), "no tool fits", ["cancel_c"], "bfcl-v3") for i in range(6)]
        worlds._derive(rows)  # no tool action in common: only the style links them

        def dot(a):
            return sum(x * y for x, y in zip(a.leaning["bfcl-simple"], a.leaning["bfcl-irrelevance"]))

        a = next((a for a in (worlds.new_learner("seesaw", rows, s) for s in range(1, 40)) if dot(a) < -0.1), None)
        self.assertIsNotNone(a, "no seed where the two environments lean apart")
        self.assertLess(a.leaning["bfcl-irrelevance"][0], 0.0)  # abstaining leans against calling
        self.assertGreater(a.leaning["bfcl-simple"][0], 0.0)
        simple, irrelevant = list(range(6)), list(range(6, 12))
        k = irrelevant[0]
        a.hard[k] = a.hard[k] - 4.0  # solved at the start: nearly every group all 1
        self.assertGreater(a.p(k), 0.97)
        before = [a.p(i) for i in irrelevant]
        untrained = a.heldout(simple)
        for step in range(1, 60):  # train only bfcl-simple, on groups that teach
            a.update(step, [(i, [1.0, 0.0] * 4) for i in simple], len(simple))
        self.assertGreater(a.heldout(simple), untrained)
        after = [a.p(i) for i in irrelevant]
        self.assertTrue(all(x < y for x, y in zip(after, before)), (before, after))
        self.assertLess(a.p(k), 0.8)  # what was solved is lost: groups of it are unequal again

    def test_seesaw_style_moves_with_the_trained_leaning(self):
        tasks = _agent_tasks()
        a = worlds.new_learner("seesaw", tasks, 11)
        i = next(i for i, t in enumerate(tasks) if t.env == "bfcl-irrelevance")
        a.update(1, [(i, [1.0, 0.0] * 4)], 1)
        moved = [a.level[a.style_base + k] for k in range(3)]
        lean = a.leaning["bfcl-irrelevance"]
        for m, v in zip(moved, lean):  # the style moved along the environment's leaning
            self.assertEqual(m > 0, v > 0)
        self.assertAlmostEqual(moved[0] / moved[1], lean[0] / lean[1])


if __name__ == "__main__":
    unittest.main()
