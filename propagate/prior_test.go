package propagate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
)

// wordEnv is one environment of tasks whose text says "refund" (hard) or "lookup" (easy)
// among filler words shared by both kinds. Half the tasks of each kind are rolled out.
type wordEnv struct {
	g      *graph.Graph // with the features of the texts attached
	tasks  []stats.Task
	refund []bool // the task's text says "refund"
	tried  []bool // the task was rolled out
}

// Success probabilities of the two kinds of task.
const (
	pRefund = 0.1
	pLookup = 0.9
)

// newWordEnv makes n tasks, alternately "refund" and "lookup", each with 3 to 5 filler words
// drawn from 30, and rolls out every task whose index mod 4 is 0 or 1 (half of each kind) once
// with a group of 8 at round 1. With edges, each task is tied to the next two (weight 0.5,
// whatever their kind), so that borrowing has something to do.
func newWordEnv(n int, seed uint64, edges bool) wordEnv {
	rng := rand.New(rand.NewPCG(seed, 7))
	nodes := make([]graph.Node, n)
	rows := make([]record.Task, n)
	w := wordEnv{tasks: make([]stats.Task, n), refund: make([]bool, n), tried: make([]bool, n)}
	for i := range n {
		nodes[i] = graph.Node{Task: fmt.Sprintf("t%04d", i)}
		words := []string{"lookup"}
		if w.refund[i] = i%2 == 0; w.refund[i] {
			words[0] = "refund"
		}
		for range 3 + rng.IntN(3) {
			words = append(words, fmt.Sprintf("filler%d", rng.IntN(30)))
		}
		rng.Shuffle(len(words), func(a, b int) { words[a], words[b] = words[b], words[a] })
		rows[i] = record.Task{Env: "support", Task: nodes[i].Task, Text: strings.Join(words, " ")}
	}
	var adj [][]graph.Edge
	if edges {
		adj = make([][]graph.Edge, n)
		for i := range n {
			for _, d := range []int{1, 2} {
				if j := i + d; j < n {
					adj[i] = append(adj[i], graph.Edge{To: int32(j), Weight: 0.5, Sim: 0.5})
					adj[j] = append(adj[j], graph.Edge{To: int32(i), Weight: 0.5, Sim: 0.5})
				}
			}
		}
	}
	w.g = graph.New([]string{"support"}, nodes, adj).WithFeatures(graph.TextFeatures(rows))
	for i := range n {
		if w.tried[i] = i%4 < 2; w.tried[i] {
			p := pLookup
			if w.refund[i] {
				p = pRefund
			}
			var grp stats.Group
			for range 8 {
				w.tasks[i].Add(bernoulli(rng, p), 1, 1, true, &grp, stats.DefaultDecay)
			}
		}
	}
	return w
}

// untriedMeans returns the mean predicted Mean of the untried refund and lookup tasks.
func (w wordEnv) untriedMeans(preds []Prediction) (refund, lookup float64) {
	var nr, nl int
	for i, p := range preds {
		switch {
		case w.tried[i]:
		case w.refund[i]:
			refund += p.Mean
			nr++
		default:
			lookup += p.Mean
			nl++
		}
	}
	return refund / float64(nr), lookup / float64(nl)
}

func (w wordEnv) withoutFeatures() *graph.Graph { return w.g.WithFeatures(nil) }

// TestFeaturePriorTellsWordsApart: tasks never rolled out, in one environment, with no edges.
// Without features every one of them gets the environment's mean; with them, those whose
// text says "refund" are predicted hard and those that say "lookup" easy, as the rolled-out
// tasks with the same words were.
func TestFeaturePriorTellsWordsApart(t *testing.T) {
	w := newWordEnv(200, 1, false)
	p := DefaultParams()
	refund, lookup := w.untriedMeans(mustPredict(t, w.g, w.tasks, 2, p))
	refund0, lookup0 := w.untriedMeans(mustPredict(t, w.withoutFeatures(), w.tasks, 2, p))
	t.Logf("untried tasks' mean: refund %.3f, lookup %.3f with features; %.3f, %.3f without (true %.1f, %.1f)",
		refund, lookup, refund0, lookup0, pRefund, pLookup)
	// each kind closer to its own truth than to the middle
	if refund >= 0.3 || lookup <= 0.7 {
		t.Errorf("with features: untried refund tasks %.3f (want < 0.3), lookup tasks %.3f (want > 0.7)", refund, lookup)
	}
	if math.Abs(refund0-lookup0) > 0.02 {
		t.Errorf("without features, no edges: refund %.3f and lookup %.3f should be about equal (the environment's mean)", refund0, lookup0)
	}
	if refund0 < 0.3 || refund0 > 0.7 {
		t.Errorf("without features the untried tasks get the environment's mean, about 0.5: %.3f", refund0)
	}
}

// TestFeatureRidgeZeroIsNoFeatures: with FeatureRidge 0 the features are ignored, bit for
// bit, over calls that measure drift as well.
func TestFeatureRidgeZeroIsNoFeatures(t *testing.T) {
	p := DefaultParams()
	p.FeatureRidge = 0
	for _, edges := range []bool{false, true} {
		w := newWordEnv(200, 2, edges)
		with, without := newChain(t, p), newChain(t, p)
		rng := rand.New(rand.NewPCG(3, 3))
		for round := int64(2); round <= 4; round++ {
			a := with.call(t, w.g, w.tasks, round)
			b := without.call(t, w.withoutFeatures(), w.tasks, round)
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("edges %v, round %d, node %d: with features %+v, without %+v", edges, round, i, a[i], b[i])
				}
			}
			for i := range 20 { // new rollouts, so that the next call measures drift
				var grp stats.Group
				k := (int(round)*20 + i) % len(w.tasks)
				for range 8 {
					w.tasks[k].Add(bernoulli(rng, 0.5), round, round, true, &grp, p.Decay)
				}
			}
		}
	}
	// the same input with the feature prior on predicts otherwise: the comparison above
	// could fail
	w := newWordEnv(200, 2, true)
	on := mustPredict(t, w.g, w.tasks, 2, DefaultParams())
	off := mustPredict(t, w.withoutFeatures(), w.tasks, 2, DefaultParams())
	if on[3] == off[3] {
		t.Errorf("node 3: the feature prior changed nothing (%+v)", on[3])
	}
}

// TestFeaturePriorIsDeterministic: two fresh Predictors give the same predictions, and so does
// one that fitted other statistics before (the fit starts from zero at every call).
func TestFeaturePriorIsDeterministic(t *testing.T) {
	w := newWordEnv(300, 4, true)
	a, _ := NewPredictor(DefaultParams())
	b, _ := NewPredictor(DefaultParams())
	want := clonePreds(mustCall(t, a, w.g, w.tasks, 2))
	got := mustCall(t, b, w.g, w.tasks, 2)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("node %d: %+v, then %+v", i, want[i], got[i])
		}
	}

	// drift off, so that only the fit could remember the earlier call
	p := DefaultParams()
	p.DriftRate, p.RechosenRate = 0, 0
	fresh, _ := NewPredictor(p)
	used, _ := NewPredictor(p)
	other := newWordEnv(300, 5, true)
	mustCall(t, used, other.g, other.tasks, 7)
	mustCall(t, used, w.g, other.tasks, 3)
	want = clonePreds(mustCall(t, fresh, w.g, w.tasks, 2))
	got = mustCall(t, used, w.g, w.tasks, 2)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("node %d: a fresh Predictor %+v, one that fitted before %+v", i, want[i], got[i])
		}
	}
}

func TestValidateFeatureAndRechosenParams(t *testing.T) {
	bad := map[string]func(*Params){
		"negative feature ridge":  func(p *Params) { p.FeatureRidge = -0.5 },
		"NaN feature ridge":       func(p *Params) { p.FeatureRidge = math.NaN() },
		"infinite feature ridge":  func(p *Params) { p.FeatureRidge = math.Inf(1) },
		"negative re-chosen rate": func(p *Params) { p.RechosenRate = -0.1 },
		"re-chosen rate above 1":  func(p *Params) { p.RechosenRate = 1.1 },
		"NaN re-chosen rate":      func(p *Params) { p.RechosenRate = math.NaN() },
		"negative re-chosen max":  func(p *Params) { p.RechosenMax = -1 },
		"NaN re-chosen max":       func(p *Params) { p.RechosenMax = math.NaN() },
		"infinite re-chosen max":  func(p *Params) { p.RechosenMax = math.Inf(1) },
		"-Inf feature ridge":      func(p *Params) { p.FeatureRidge = math.Inf(-1) },
	}
	for name, set := range bad {
		p := DefaultParams()
		set(&p)
		if err := p.Validate(); !errors.Is(err, ErrParams) {
			t.Errorf("%s: Validate() = %v, want an ErrParams", name, err)
		}
		if pr, err := NewPredictor(p); err == nil || pr != nil {
			t.Errorf("%s: NewPredictor accepted it", name)
		}
	}
	good := map[string]func(*Params){
		"defaults":              func(*Params) {},
		"feature ridge 0":       func(p *Params) { p.FeatureRidge = 0 },
		"re-chosen rate 0":      func(p *Params) { p.RechosenRate = 0 },
		"re-chosen rate 1":      func(p *Params) { p.RechosenRate = 1 },
		"re-chosen max 0":       func(p *Params) { p.RechosenMax = 0 },
		"large feature ridge":   func(p *Params) { p.FeatureRidge = 1e6 },
		"small positive values": func(p *Params) { p.FeatureRidge, p.RechosenRate, p.RechosenMax = 1e-9, 1e-9, 1e-9 },
	}
	for name, set := range good {
		p := DefaultParams()
		set(&p)
		if err := p.Validate(); err != nil {
			t.Errorf("%s: Validate() = %v, want nil", name, err)
		}
	}
}

// TestFeaturePriorSameWhateverTheCPUsAndHistory: the fit, bit for bit, does not depend on the
// number of CPUs nor on what the Predictor fitted before, also when the rows are cut
// (36,000 nodes, about 18,000 rolled out: more than fitRows) and summed in several chunks.
func TestFeaturePriorSameWhateverTheCPUsAndHistory(t *testing.T) {
	p := DefaultParams()
	p.DriftRate, p.RechosenRate = 0, 0 // only the fit could remember earlier calls
	for _, n := range []int{3000, 36000} {
		g, tasks := benchCatalogue(n)
		var ref []Prediction
		var refLogit []float64
		for _, procs := range []int{1, 2, 3, 8} {
			old := runtime.GOMAXPROCS(procs)
			pr, _ := NewPredictor(p)
			got := clonePreds(mustCall(t, pr, g, tasks, 21))
			lg := append([]float64(nil), pr.prior.logit...)
			rows := len(pr.prior.rows)
			runtime.GOMAXPROCS(old)
			if n > 30000 && rows != fitRows {
				t.Fatalf("n=%d: %d rows in the fit, want the cut at %d", n, rows, fitRows)
			}
			if ref == nil {
				ref, refLogit = got, lg
				continue
			}
			for i := range ref {
				if math.Float64bits(lg[i]) != math.Float64bits(refLogit[i]) || got[i] != ref[i] {
					t.Fatalf("n=%d, GOMAXPROCS %d, node %d: logit %v, with GOMAXPROCS 1 %v", n, procs, i, lg[i], refLogit[i])
				}
			}
		}
		big, btasks := benchCatalogue(20000)
		small, stasks := benchCatalogue(500)
		pr, _ := NewPredictor(p)
		mustCall(t, pr, big, btasks, 21)
		mustCall(t, pr, small, stasks, 21)
		got := mustCall(t, pr, g, tasks, 21)
		for i := range ref {
			if got[i] != ref[i] {
				t.Fatalf("n=%d, after fitting other graphs: node %d %+v, fresh %+v", n, i, got[i], ref[i])
			}
		}
	}
}

// TestRowCutKeepsEveryEnvironment: when the rows are cut to the most recently rolled out, an
// environment whose tasks were all rolled out long ago keeps fitEnvRows rows in the fit.
func TestRowCutKeepsEveryEnvironment(t *testing.T) {
	n := fitRows + 2000
	nodes := make([]graph.Node, n)
	rows := make([]record.Task, n)
	tasks := make([]stats.Task, n)
	for i := range nodes {
		env := int32(1)
		if i < 200 {
			env = 0 // "old": rolled out at round 1, all others at round 5
		}
		nodes[i] = graph.Node{Env: env, Task: fmt.Sprintf("t%06d", i)}
		rows[i] = record.Task{Text: fmt.Sprintf("task w%d", i%50)}
		round := int64(5)
		if env == 0 {
			round = 1
		}
		var grp stats.Group
		for range 8 {
			tasks[i].Add(1, round, round, true, &grp, stats.DefaultDecay)
		}
	}
	g := graph.New([]string{"old", "new"}, nodes, nil).WithFeatures(graph.TextFeatures(rows))
	pr, _ := NewPredictor(DefaultParams())
	mustCall(t, pr, g, tasks, 6)
	old := 0
	for _, i := range pr.prior.rows {
		if g.Nodes[i].Env == 0 {
			old++
		}
	}
	if old == 0 {
		t.Fatal("the cut dropped the environment rolled out long ago")
	}
	if len(pr.prior.rows) != fitRows || old != fitEnvRows {
		t.Errorf("%d rows in the fit, %d of the old environment; want %d and %d", len(pr.prior.rows), old, fitRows, fitEnvRows)
	}
}
