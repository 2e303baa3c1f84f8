package storage_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// calibDB is a database on a real file that a test can close and open again.
type calibDB struct {
	t    *testing.T
	path string
	db   *storage.DB
}

func newCalibDB(t *testing.T, tasks ...string) *calibDB {
	t.Helper()
	c := &calibDB{t: t, path: filepath.Join(t.TempDir(), "envsched.db")}
	c.db = openAt(t, c.path, storage.Options{})
	t.Cleanup(func() {
		storagetest.MustCheck(t, c.db, "")
		c.db.Close()
	})
	var rows []record.Task
	for _, task := range tasks {
		rows = append(rows, record.Task{Env: "e", Task: task})
	}
	commit(t, c.db, &storage.Batch{Tasks: rows})
	return c
}

// reopen closes the database and opens its file again, as a restarted daemon would.
func (c *calibDB) reopen() {
	c.t.Helper()
	storagetest.MustCheck(c.t, c.db, "")
	if err := c.db.Close(); err != nil {
		c.t.Fatal(err)
	}
	c.db = openAt(c.t, c.path, storage.Options{})
}

// pick is one chosen task of a test answer.
type pick struct {
	task   string
	p, m   float64
	random bool
}

func (c *calibDB) answer(id string, step int64, g int, picks ...pick) {
	c.t.Helper()
	a := storage.AnswerRecord{ID: id, Step: step, Answer: []byte(id), GroupSize: g}
	for i, pk := range picks {
		a.Chosen = append(a.Chosen, storage.TaskKey{Env: "e", Task: pk.task})
		a.Predictions = append(a.Predictions, ledger.Prediction{Env: "e", Task: pk.task, Rank: i + 1,
			PDegenerate: pk.p, Mean: pk.m, Random: pk.random})
	}
	if err := c.db.StoreAnswerRecord(a); err != nil {
		c.t.Fatal(err)
	}
}

func (c *calibDB) roll(rs ...storage.Rollout) {
	c.t.Helper()
	commit(c.t, c.db, &storage.Batch{Rollouts: rs})
}

func (c *calibDB) cal() ledger.Ledger {
	c.t.Helper()
	cal, err := c.db.Calibration(20)
	if err != nil {
		c.t.Fatal(err)
	}
	return cal
}

// ro is one rollout of task in env e answering request req (when not "") at step (when not 0).
func ro(task string, reward float64, req string, step int64, id string) storage.Rollout {
	return storage.Rollout{Rollout: record.Rollout{Env: "e", Task: task, Reward: reward, Step: step,
		HasStep: step != 0, RequestID: req, RolloutID: id}}
}

// keyed sets the group key of rollouts.
func keyed(key string, rs []storage.Rollout) []storage.Rollout {
	for i := range rs {
		rs[i].Group = key
	}
	return rs
}

// group returns n rollouts of task with the given rewards, ids prefixed with prefix.
func group(task, req string, step int64, prefix string, rewards ...float64) []storage.Rollout {
	out := make([]storage.Rollout, len(rewards))
	for i, r := range rewards {
		out[i] = ro(task, r, req, step, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func cellEq(got, want ledger.Cell) bool {
	return got.Groups == want.Groups && got.Degenerate == want.Degenerate && got.Rollouts == want.Rollouts &&
		near(got.PredDegenerate, want.PredDegenerate) && near(got.PredMean, want.PredMean) && near(got.RealMean, want.RealMean)
}

// TestCalibrationGroupInPartsAcrossReopen measures a group that arrives in two commits with a
// restart between them: nothing is counted before its last rollout, and it is counted once
// with the channel, prediction and bin of its answer, whichever way its rollouts name the
// answer (request id, step alone, or neither).
func TestCalibrationGroupInPartsAcrossReopen(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  string
		step int64
	}{{"request id", "r1", 0}, {"step alone", "", 3}, {"neither", "", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCalibDB(t, "a", "b")
			c.answer("r1", 3, 4, pick{"a", 0.3, 0.5, false}, pick{"b", 0.9, 0.1, true})
			c.roll(group("a", tc.req, tc.step, "a1", 1, 1)...)
			c.reopen()
			if got := c.cal().Totals; got.Measured != 0 || got.Opened != 2 {
				t.Fatalf("after half a group: totals %+v; want 2 opened, 0 measured", got)
			}
			c.roll(append(group("a", tc.req, tc.step, "a2", 1, 1), group("b", tc.req, tc.step, "b", 0, 1, 0, 0)...)...)
			c.reopen()
			cal := c.cal()
			cells := cal.Cells["e"]
			if cells == nil {
				t.Fatalf("no cells for env e: %+v", cal)
			}
			wantA := ledger.Cell{Groups: 1, Degenerate: 1, PredDegenerate: 0.3, PredMean: 0.5, RealMean: 1, Rollouts: 4}
			wantB := ledger.Cell{Groups: 1, PredDegenerate: 0.9, PredMean: 0.1, RealMean: 0.25, Rollouts: 4}
			if !cellEq(cells[ledger.Untried], wantA) || !cellEq(cells[ledger.Random], wantB) || cells[ledger.Rechosen].Groups != 0 {
				t.Errorf("cells %+v; want never tried %+v, random %+v", *cells, wantA, wantB)
			}
			if !cellEq(cal.Bins[ledger.Untried][3], wantA) || !cellEq(cal.Bins[ledger.Random][9], wantB) {
				t.Errorf("bins: never tried %+v, random %+v; want the groups in bins 3 and 9", cal.Bins[ledger.Untried], cal.Bins[ledger.Random])
			}
			if len(cal.Answers) != 1 || cal.Answers[0].Request != "r1" || cal.Answers[0].Groups != 2 || cal.Answers[0].Picks != 2 {
				t.Errorf("answers %+v; want r1 with 2 picks and 2 groups", cal.Answers)
			}
			if cal.Totals != (ledger.Totals{Opened: 2, Measured: 2}) {
				t.Errorf("totals %+v; want 2 opened and measured", cal.Totals)
			}
		})
	}
}

// TestCalibrationMatching covers what may happen to the rollouts of a chosen task: each case
// gives the totals and measured cell it must leave.
func TestCalibrationMatching(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(c *calibDB)
		want ledger.Totals
		// groups and degenerate groups measured per channel (never tried, re-chosen, random)
		groups, degenerate [3]int64
	}{
		{"another request's rollouts are unmatched", func(c *calibDB) {
			c.answer("r1", 1, 2, pick{task: "a"})
			c.roll(group("a", "other", 0, "x", 1, 1)...)
		}, ledger.Totals{Opened: 1, Unmatched: 2}, [3]int64{}, [3]int64{}},
		{"another step's rollouts are unmatched", func(c *calibDB) {
			c.answer("r1", 5, 2, pick{task: "a"})
			c.roll(group("a", "", 4, "x", 1, 1)...)
		}, ledger.Totals{Opened: 1, Unmatched: 2}, [3]int64{}, [3]int64{}},
		{"a group sent twice is measured once", func(c *calibDB) {
			c.answer("r1", 1, 2, pick{task: "a"})
			c.roll(group("a", "r1", 0, "x", 0, 1)...)
			c.reopen()
			c.roll(group("a", "r1", 0, "x", 0, 1)...)
		}, ledger.Totals{Opened: 1, Measured: 1}, [3]int64{1, 0, 0}, [3]int64{}},
		{"rollouts beyond the group size are not counted", func(c *calibDB) {
			c.answer("r1", 1, 2, pick{task: "a"})
			c.roll(group("a", "r1", 0, "x", 1, 1, 0, 0)...)
		}, ledger.Totals{Opened: 1, Measured: 1}, [3]int64{1, 0, 0}, [3]int64{1, 0, 0}},
		{"a failed commit counts nothing", func(c *calibDB) {
			c.answer("r1", 1, 2, pick{task: "a"})
			bad := append(group("a", "r1", 0, "x", 1, 1), ro("a", math.NaN(), "r1", 0, "nan"))
			if _, err := c.db.Commit(&storage.Batch{Rollouts: bad}); err == nil {
				c.t.Fatal("a NaN reward committed")
			}
		}, ledger.Totals{Opened: 1}, [3]int64{}, [3]int64{}},
		{"a task rolled out before is re-chosen", func(c *calibDB) {
			c.roll(ro("a", 1, "", 0, "before"))
			c.answer("r1", 1, 2, pick{task: "a"}, pick{task: "b"})
			c.roll(append(group("a", "r1", 0, "x", 1, 1), group("b", "r1", 0, "y", 0, 1)...)...)
		}, ledger.Totals{Opened: 2, Measured: 2}, [3]int64{1, 1, 0}, [3]int64{0, 1, 0}},
		{"group size one opens nothing", func(c *calibDB) {
			c.answer("r1", 1, 1, pick{task: "a"})
			c.roll(group("a", "r1", 0, "x", 1)...)
		}, ledger.Totals{}, [3]int64{}, [3]int64{}},
		{"a task twice in one answer is measured twice", func(c *calibDB) {
			c.answer("r1", 1, 2, pick{task: "a"}, pick{task: "a", random: true})
			c.roll(group("a", "r1", 0, "x", 1, 1, 1, 0)...)
		}, ledger.Totals{Opened: 2, Measured: 2}, [3]int64{1, 0, 1}, [3]int64{1, 0, 0}},
		{"a task twice in one answer: interleaved groups fill their own predictions", func(c *calibDB) {
			c.answer("r1", 1, 2, pick{task: "a"}, pick{task: "a", random: true})
			g1, g2 := keyed("g1", group("a", "r1", 0, "x", 1, 1)), keyed("g2", group("a", "r1", 0, "y", 0, 1))
			c.roll(g1[0], g2[0], g1[1], g2[1])
		}, ledger.Totals{Opened: 2, Measured: 2}, [3]int64{1, 0, 1}, [3]int64{1, 0, 0}},
		{"a group begun again under a new key replaces the unfinished one", func(c *calibDB) {
			c.answer("r1", 1, 3, pick{task: "a"})
			c.roll(keyed("try-1", group("a", "r1", 0, "x", 1, 1))...) // the trainer crashed here
			c.reopen()
			c.roll(keyed("try-2", group("a", "r1", 0, "y", 0, 1, 1))...)
			c.roll(keyed("try-1", group("a", "r1", 0, "z", 1))...) // the first attempt's straggler
		}, ledger.Totals{Opened: 1, Measured: 1, Restarted: 1}, [3]int64{1, 0, 0}, [3]int64{}},
		{"the oldest open prediction expires", func(c *calibDB) {
			for i := range ledger.MaxOpen + 1 {
				c.answer(fmt.Sprint("r", i), int64(i+1), 2, pick{task: "a"})
			}
		}, ledger.Totals{Opened: ledger.MaxOpen + 1, Expired: 1}, [3]int64{}, [3]int64{}},
		{"late rollouts measure their own answer", func(c *calibDB) {
			c.answer("r1", 1, 2, pick{task: "a"})
			c.answer("r2", 2, 2, pick{task: "a"})
			c.roll(group("a", "r1", 0, "x", 1, 1)...)
			c.reopen()
			c.roll(group("a", "r2", 0, "y", 0, 1)...)
		}, ledger.Totals{Opened: 2, Measured: 2}, [3]int64{2, 0, 0}, [3]int64{1, 0, 0}},
		{"rollouts naming nothing fill the oldest prediction first", func(c *calibDB) {
			c.answer("r1", 1, 2, pick{task: "a"})
			c.answer("r2", 2, 2, pick{task: "a"})
			c.roll(group("a", "", 0, "x", 1, 1, 0)...)
		}, ledger.Totals{Opened: 2, Measured: 1}, [3]int64{1, 0, 0}, [3]int64{1, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCalibDB(t, "a", "b")
			tc.run(c)
			c.reopen()
			cal := c.cal()
			if cal.Totals != tc.want {
				t.Errorf("totals %+v; want %+v", cal.Totals, tc.want)
			}
			ov := cal.Overall()
			for ch := range ov {
				if ov[ch].Groups != tc.groups[ch] || ov[ch].Degenerate != tc.degenerate[ch] {
					t.Errorf("channel %s: %d groups, %d degenerate; want %d, %d", ledger.Channel(ch),
						ov[ch].Groups, ov[ch].Degenerate, tc.groups[ch], tc.degenerate[ch])
				}
			}
		})
	}
}

// TestCalibrationLastAnswers checks that the ledger of the last answers is the answers' own,
// each counted where its groups came back.
func TestCalibrationLastAnswers(t *testing.T) {
	c := newCalibDB(t, "a", "b")
	c.answer("r1", 1, 2, pick{"a", 0.2, 0.5, false})
	c.answer("r2", 2, 2, pick{"b", 0.6, 0.5, false})
	c.answer("r3", 3, 2, pick{"a", 0.4, 0.5, false})
	c.roll(append(group("b", "r2", 0, "y", 1, 1), group("a", "r3", 0, "z", 0, 1)...)...)
	cal, err := c.db.Calibration(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(cal.Answers) != 2 || cal.Answers[0].Request != "r2" || cal.Answers[1].Request != "r3" {
		t.Fatalf("last two answers %+v; want r2, r3", cal.Answers)
	}
	want := ledger.Cell{Groups: 2, Degenerate: 1, PredDegenerate: 1.0, PredMean: 1, RealMean: 1.5, Rollouts: 4}
	if got := cal.Recent(); !cellEq(got, want) {
		t.Errorf("recent %+v; want %+v", got, want)
	}
}

// TestCalibrationRandomArrival is a random-operations test: groups of several answers arrive
// shuffled, split at random places into commits, with duplicates resent and restarts in
// between. Every complete group must be measured exactly once, with its own outcome.
func TestCalibrationRandomArrival(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			tasks := []string{"a", "b", "c", "d", "e", "f"}
			c := newCalibDB(t, tasks...)
			const g = 4
			var rs []storage.Rollout
			var want ledger.Cell
			for i := range ledger.MaxOpen { // all answered before any rollout: none expires
				id := fmt.Sprint("r", i)
				var picks []pick
				for _, task := range tasks[:2+rng.IntN(4)] {
					picks = append(picks, pick{task, rng.Float64(), rng.Float64(), false})
					rewards := make([]float64, g)
					for j := range rewards {
						rewards[j] = float64(rng.IntN(2))
					}
					rs = append(rs, group(task, id, 0, id+task, rewards...)...)
					want.Add(ledger.Pending{GroupSize: g, N: g, Min: minOf(rewards), Max: maxOf(rewards),
						Sum: rewards[0] + rewards[1] + rewards[2] + rewards[3], PDegenerate: picks[len(picks)-1].p,
						Mean: picks[len(picks)-1].m}.Outcome())
				}
				c.answer(id, int64(i+1), g, picks...)
			}
			rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
			for len(rs) > 0 {
				n := 1 + rng.IntN(min(len(rs), 9))
				part := rs[:n]
				if rng.IntN(3) == 0 { // resend some already sent
					part = append(part[:n:n], rs[:rng.IntN(n)+1]...)
				}
				c.roll(part...)
				rs = rs[n:]
				if rng.IntN(4) == 0 {
					c.reopen()
				}
			}
			c.reopen()
			cal := c.cal()
			if got := cal.Total(); !cellEq(got, want) {
				t.Errorf("measured %+v; want %+v", got, want)
			}
			if cal.Totals.Measured != cal.Totals.Opened || cal.Totals.Unmatched != 0 {
				t.Errorf("totals %+v; want every prediction measured, nothing unmatched", cal.Totals)
			}
		})
	}
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// TestCalibrationAnswerIsAllOrNothing: an answer whose prediction names a task it did not
// choose is refused whole: no answer, no prediction, no count.
func TestCalibrationAnswerIsAllOrNothing(t *testing.T) {
	c := newCalibDB(t, "a", "b")
	a := storage.AnswerRecord{ID: "r1", Step: 1, Answer: []byte("r1"), GroupSize: 2,
		Chosen:      []storage.TaskKey{{Env: "e", Task: "a"}},
		Predictions: []ledger.Prediction{{Env: "e", Task: "a", Rank: 1}, {Env: "e", Task: "b", Rank: 2}}}
	if err := c.db.StoreAnswerRecord(a); err == nil {
		t.Fatal("an answer predicting a task it did not choose was stored")
	}
	if _, err := c.db.Answer("r1"); err == nil {
		t.Error("the refused answer is stored")
	}
	if cal := c.cal(); cal.Totals != (ledger.Totals{}) || len(cal.Answers) != 0 {
		t.Errorf("a refused answer left %+v", cal)
	}
}

// TestCalibrationSurvivesCompaction: a compacted copy holds the same ledger, open predictions
// included, and goes on measuring.
func TestCalibrationSurvivesCompaction(t *testing.T) {
	c := newCalibDB(t, "a", "b")
	c.answer("r1", 1, 2, pick{"a", 0.2, 0.5, false}, pick{"b", 0.6, 0.5, true})
	c.roll(group("a", "r1", 0, "x", 1, 1)...)
	c.roll(ro("b", 0, "r1", 0, "y-0"))
	dst := filepath.Join(t.TempDir(), "compact.db")
	if err := c.db.Compact(dst); err != nil {
		t.Fatal(err)
	}
	before := c.cal()
	cp := &calibDB{t: t, path: dst, db: openAt(t, dst, storage.Options{})}
	defer cp.db.Close()
	if got := cp.cal(); !reflect.DeepEqual(got, before) {
		t.Fatalf("compacted ledger %+v; want %+v", got, before)
	}
	cp.roll(ro("b", 1, "r1", 0, "y-1"))
	if got := cp.cal().Totals; got != (ledger.Totals{Opened: 2, Measured: 2}) {
		t.Errorf("after the last rollout on the copy: %+v; want both measured", got)
	}
	storagetest.MustCheck(t, cp.db, "")
}
