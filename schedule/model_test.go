package schedule

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// modelWorld drives random commits into a real database, with a Scheduler that follows them
// (its in-memory model) beside loaders that read everything (the truth).
type modelWorld struct {
	t     *testing.T
	rng   *rand.Rand
	path  string
	db    *storage.DB
	keep  *EdgeKeeper
	s     *Scheduler
	tasks []record.Task // catalogue rows committed so far
	n     int           // requests answered
	kept  int           // answers that kept the stored fit of the feature prior
	fit   int64         // the rollouts of the stored fit (propagate.WarmStart.Rollouts)
}

var modelWords = []string{"refund", "order", "flight", "hotel", "booking", "cancel", "status",
	"weather", "search", "file", "rename", "merge", "sort", "list", "customer", "invoice"}

func (w *modelWorld) open() {
	w.t.Helper()
	db, err := storage.Open(w.path, storage.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.db, w.keep = db, NewEdgeKeeper(graph.Options{})
	p := modelPredict(db)
	w.s = newScheduler(w.t, db, Options{Size: 6, GroupSize: 2, BuildGraph: DefaultBuildGraph, Predict: &p})
}

// modelPredict are the prediction parameters of the model test: the defaults, with the feature
// prior kept between refits (propagate.Params.PriorRefit), so that answers that keep the
// stored fit are compared too.
func modelPredict(db *storage.DB) propagate.Params {
	p := propagate.DefaultParams()
	p.Decay, p.PriorRefit = db.Config().Decay, 0.1
	return p
}

// restart closes the database and opens it again, as a killed daemon's successor does: the
// model is rebuilt from the file.
func (w *modelWorld) restart() {
	w.t.Helper()
	storagetest.MustCheck(w.t, w.db, "")
	if err := w.db.Close(); err != nil {
		w.t.Fatal(err)
	}
	w.open()
}

func (w *modelWorld) text() string {
	n := 2 + w.rng.IntN(4)
	out := ""
	for range n {
		out += modelWords[w.rng.IntN(len(modelWords))] + " "
	}
	return out
}

// catalogue adds new described tasks or rewords known ones.
func (w *modelWorld) catalogue() storage.Batch {
	var b storage.Batch
	for range 1 + w.rng.IntN(5) {
		if len(w.tasks) > 0 && w.rng.IntN(3) == 0 {
			x := w.tasks[w.rng.IntN(len(w.tasks))]
			x.Text = w.text()
			b.Tasks = append(b.Tasks, x)
			continue
		}
		x := record.Task{Env: fmt.Sprintf("env-%d", w.rng.IntN(3)), Task: fmt.Sprintf("t%03d", w.rng.IntN(400)),
			Text: w.text(), Tools: []string{modelWords[w.rng.IntN(4)]}}
		b.Tasks = append(b.Tasks, x)
	}
	w.tasks = append(w.tasks, b.Tasks...)
	return b
}

// rollouts of known tasks and of tasks the catalogue does not describe (yet), with and
// without steps.
func (w *modelWorld) rollouts() storage.Batch {
	var b storage.Batch
	for range 1 + w.rng.IntN(20) {
		r := record.Rollout{Env: fmt.Sprintf("env-%d", w.rng.IntN(4)), Task: fmt.Sprintf("t%03d", w.rng.IntN(400)),
			Reward: float64(w.rng.IntN(2))}
		if len(w.tasks) > 0 && w.rng.IntN(2) == 0 {
			x := w.tasks[w.rng.IntN(len(w.tasks))]
			r.Env, r.Task = x.Env, x.Task
		}
		if w.rng.IntN(2) == 0 {
			r.Step, r.HasStep = int64(w.n+w.rng.IntN(2)), true
		}
		b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: r})
	}
	return b
}

var errHook = errors.New("hook fails on purpose")

// step does one random thing to the database.
func (w *modelWorld) step() string {
	switch op := w.rng.IntN(10); {
	case op < 2:
		b := w.catalogue()
		b.Adjacency = w.keep.OnTasks
		w.commit(&b)
		return "catalogue"
	case op < 6:
		b := w.rollouts()
		b.Adjacency = w.keep.OnTasks
		w.commit(&b)
		return "rollouts"
	case op < 8:
		w.n++
		if _, err := w.s.Answer(fmt.Sprintf("r%d", w.n), nil); err != nil {
			var bad *RequestError
			if !errors.As(err, &bad) { // too few tasks early on is an answer, not a failure
				w.t.Fatal(err)
			}
			return "answer"
		}
		var ws propagate.WarmStart
		if data, err := w.db.PredictorState(); err == nil && data != nil {
			if st, err := DecodeState(data); err == nil {
				ws = st.Warm
			}
		}
		if ws.Rollouts > 0 && ws.Rollouts == w.fit {
			w.kept++
		}
		w.fit = ws.Rollouts
		return "answer"
	case op < 9:
		// a commit that fails in its last step: nothing of it may reach the model
		b := w.rollouts()
		c := w.catalogue()
		w.tasks = w.tasks[:len(w.tasks)-len(c.Tasks)]
		b.Tasks = c.Tasks
		b.Adjacency = func(*storage.Reader, []record.Task, []record.Task) ([]storage.NodeEdges, error) {
			return nil, errHook
		}
		if _, err := w.db.Commit(&b); !errors.Is(err, errHook) {
			w.t.Fatalf("failing commit: %v", err)
		}
		w.keep.Reset()
		return "failed commit"
	default:
		w.restart()
		return "restart"
	}
}

func (w *modelWorld) commit(b *storage.Batch) {
	w.t.Helper()
	if _, err := w.db.Commit(b); err != nil {
		w.t.Fatal(err)
	}
}

// check compares the Scheduler's model with a state read whole from the database.
func (w *modelWorld) check(what string) {
	w.t.Helper()
	got, err := w.s.load.load()
	if err != nil {
		w.t.Fatalf("after %s: %v", what, err)
	}
	want, err := (&loader{db: w.db, build: DefaultBuildGraph}).load()
	if err != nil {
		w.t.Fatalf("after %s: %v", what, err)
	}
	if !slices.Equal(keysOf(got.g), keysOf(want.g)) {
		w.t.Fatalf("after %s: model nodes %v, database %v", what, keysOf(got.g), keysOf(want.g))
	}
	if !reflect.DeepEqual(got.tasks, want.tasks) {
		w.t.Fatalf("after %s: model statistics differ from the database's:\n%v\n%v", what, got.tasks, want.tasks)
	}
	if fmt.Sprint(edgeSet(got.g)) != fmt.Sprint(edgeSet(want.g)) {
		w.t.Fatalf("after %s: model edges differ", what)
	}
	if got.counters != want.counters || got.lastStep != want.lastStep {
		w.t.Fatalf("after %s: counters %+v step %d, database %+v step %d", what, got.counters, got.lastStep, want.counters, want.lastStep)
	}
	// the predictor state this process holds is the stored one, and predicts as it does (the
	// feature prior kept from it or fitted from it)
	data, err := w.db.PredictorState()
	if err != nil {
		w.t.Fatal(err)
	}
	stored, err := DecodeState(data)
	if err != nil {
		w.t.Fatal(err)
	}
	held := w.s.saved.predictState()
	hinted := held
	held.Nodes = nil // the node hints are the process's, not stored
	if !reflect.DeepEqual(held, stored) {
		w.t.Fatalf("after %s: the scheduler holds another predictor state than the stored one", what)
	}
	p := modelPredict(w.db)
	{ // the hints change no prediction
		pa, _ := propagate.NewPredictor(p)
		pb, _ := propagate.NewPredictor(p)
		a, na, err1 := pa.Predict(got.g, got.tasks, got.lastStep+1, hinted)
		b, nb, err2 := pb.Predict(got.g, got.tasks, got.lastStep+1, stored)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) || !reflect.DeepEqual(na, nb) {
			w.t.Fatalf("after %s: predictions with the node hints differ (%v, %v)", what, err1, err2)
		}
	}
	for _, st := range []propagate.State{{}, stored} {
		pa, _ := propagate.NewPredictor(p)
		pb, _ := propagate.NewPredictor(p)
		a, na, err1 := pa.Predict(got.g, got.tasks, got.lastStep+1, st)
		b, nb, err2 := pb.Predict(want.g, want.tasks, want.lastStep+1, st)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) || !reflect.DeepEqual(na, nb) {
			w.t.Fatalf("after %s: predictions differ (%v, %v)", what, err1, err2)
		}
	}
}

// The in-memory model of a following Scheduler equals the database after random catalogue
// commits, rollouts (of known and of new tasks), answers, commits that fail and restarts.
func TestModelEqualsTheDatabase(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			w := &modelWorld{t: t, rng: rand.New(rand.NewPCG(seed, 7)), path: filepath.Join(t.TempDir(), "envsched.db")}
			w.open()
			defer func() { w.db.Close() }()
			ops := map[string]int{}
			for range 120 {
				what := w.step()
				ops[what]++
				if w.rng.IntN(3) == 0 { // changes also pile up between loads
					w.check(what)
				}
			}
			if w.kept == 0 {
				t.Error("no answer kept the stored fit: the test did not compare kept fits")
			}
			t.Logf("%d answers kept the stored fit", w.kept)
			for _, op := range []string{"catalogue", "rollouts", "answer", "failed commit", "restart"} {
				if ops[op] == 0 {
					t.Errorf("no %s in this run: the test did not try it", op)
				}
			}
			storagetest.MustCheck(t, w.db, "")
		})
	}
}
