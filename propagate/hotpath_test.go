package propagate

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/stats"
)

// chooseRowsBySort is chooseRows as it was written first: a comparison sort by round, latest
// first, ties by node; the counting sort must give the same rows in the same order.
func chooseRowsBySort(g *graph.Graph, tasks []stats.Task, own []evidence) []int32 {
	var rows []int32
	for i := range tasks {
		if tasks[i].Rollouts > 0 && own[i].a+own[i].b > 0 {
			rows = append(rows, int32(i))
		}
	}
	if len(rows) <= fitRows {
		return rows
	}
	slices.SortFunc(rows, func(x, y int32) int {
		if c := cmp.Compare(tasks[y].Round, tasks[x].Round); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	perEnv := make([]int, len(g.Envs))
	var kept, rest []int32
	for _, i := range rows {
		if e := g.Nodes[i].Env; perEnv[e] < fitEnvRows && len(kept) < fitRows {
			perEnv[e]++
			kept = append(kept, i)
		} else {
			rest = append(rest, i)
		}
	}
	out := append(kept, rest[:fitRows-len(kept)]...)
	slices.Sort(out)
	return out
}

// The rows of the fit are the same whether the rounds span few values (counting sort) or
// very many (comparison sort), with ties, one environment short of rows and rounds far from 0.
func TestChooseRowsSameAsBySort(t *testing.T) {
	const n = 4 * fitRows
	g := graphtest.Random(n, 7, 2, 1)
	cases := []struct {
		name  string
		round func(rng *rand.Rand, i int) int64
	}{
		{"few rounds, many ties", func(rng *rand.Rand, _ int) int64 { return 1 + rng.Int64N(40) }},
		{"one round", func(*rand.Rand, int) int64 { return 5 }},
		{"rounds far from zero", func(rng *rand.Rand, _ int) int64 { return 1e12 + rng.Int64N(3000) }},
		{"rounds spanning more than the rows", func(rng *rand.Rand, _ int) int64 { return rng.Int64N(1e9) }},
		{"newest in one environment", func(rng *rand.Rand, i int) int64 {
			if g.Nodes[i].Env == 0 {
				return 1000
			}
			return rng.Int64N(900)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			tasks := make([]stats.Task, n)
			own := make([]evidence, n)
			for i := range tasks {
				if rng.IntN(2) == 0 && g.Nodes[i].Env != 3 || rng.IntN(400) == 0 {
					tasks[i].Rollouts, tasks[i].Round = 8, c.round(rng, i)
					own[i] = evidence{float32(rng.IntN(9)), 1}
				}
			}
			if want := chooseRowsBySort(g, tasks, own); len(want) != fitRows {
				t.Fatalf("%d rows of the fit: the case does not cut", len(want))
			}
			var fp featurePrior
			for range 2 { // the second call reuses the scratch of the first
				fp.chooseRows(g, tasks, own)
				if want := chooseRowsBySort(g, tasks, own); !slices.Equal(fp.rows, want) {
					t.Fatalf("rows differ from the comparison sort's: %d vs %d rows", len(fp.rows), len(want))
				}
			}
		})
	}
}

// baselineNodes finds the same nodes and baselines as a pass over every node: duplicates (the
// last wins), non-finite baselines, tasks not in the graph, and a graph whose nodes are not
// in sorted order; with no hints, and with hints (State.Nodes) right, wrong (another node, a
// node out of range, negative) or missing (fewer hints than baselines).
func TestBaselineNodesSameAsScan(t *testing.T) {
	g := graphtest.Random(2000, 5, 4, 3)
	shuffled := graph.New(g.Envs, slices.Clone(g.Nodes), nil)
	rand.New(rand.NewPCG(9, 9)).Shuffle(len(shuffled.Nodes), func(i, j int) {
		shuffled.Nodes[i], shuffled.Nodes[j] = shuffled.Nodes[j], shuffled.Nodes[i]
	})
	for _, gg := range []*graph.Graph{g, shuffled} {
		for seed := range uint64(20) {
			rng := rand.New(rand.NewPCG(seed, 4))
			var base []Baseline
			for k := range 300 {
				nd := gg.Nodes[rng.IntN(gg.Len())]
				b := Baseline{Env: gg.Envs[nd.Env], Task: nd.Task, Rollouts: int64(k), Sum: float64(k), Mean: 0.5}
				switch rng.IntN(20) {
				case 0:
					b.Sum = math.NaN()
				case 1:
					b.Mean = math.Inf(1)
				case 2:
					if seed%2 == 0 {
						b.Task += "-gone"
					}
				}
				base = append(base, b)
			}
			want := baselineNodesByScan(gg, base)
			for _, hints := range [][]int{nil, baselineHints(rng, gg, base)} {
				got := baselineNodes(gg, base, hints)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("seed %d, %d hints: %d baselines found, %d by the scan, or in another order", seed, len(hints), len(got), len(want))
				}
			}
		}
	}
}

// baselineHints hints the nodes of base in g: most right, some another node, out of range or
// negative, and the last tenth left without a hint.
func baselineHints(rng *rand.Rand, g *graph.Graph, base []Baseline) []int {
	hints := make([]int, 0, len(base))
	for _, b := range base[:len(base)*9/10] {
		i := -1
		for j, nd := range g.Nodes {
			if nd.Task == b.Task && g.Envs[nd.Env] == b.Env {
				i = j
			}
		}
		switch rng.IntN(8) {
		case 0:
			i = rng.IntN(g.Len())
		case 1:
			i = g.Len() + rng.IntN(3)
		case 2:
			i = -1 - rng.IntN(3)
		}
		hints = append(hints, i)
	}
	return hints
}

// groupLL gives, bit for bit, what each correction of the grid gives when applied alone.
func TestGroupLLIsEachCorrectionsOwn(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	out := make([]float64, len(dispersionGrid))
	for range 500 {
		n := int64(2 + rng.IntN(15))
		k := rng.Int64N(n + 1)
		mean, count, centre := rng.Float64(), 0.1+rng.Float64()*50, rng.NormFloat64()
		groupLL(out, k, n, mean, count, centre)
		for j, g := range dispersionGrid {
			m, c := g.apply(mean, count, centre)
			if want := betaBinomialLL(k, n, c*m, c*(1-m)); math.Float64bits(out[j]) != math.Float64bits(want) {
				t.Fatalf("k %d n %d mean %g count %g centre %g, correction %v: %v, want %v", k, n, mean, count, centre, g, out[j], want)
			}
		}
	}
}

// betaBinomialLL is lbeta(k+a, n−k+b) − lbeta(a, b) to within rounding: by products for
// small groups, from tiny to huge a and b, and by log-gammas beyond (the same bits).
func TestBetaBinomialLLIsTheLogGammaForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	logUniform := func(lo, hi float64) float64 {
		return math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
	}
	for range 20000 {
		n := int64(1 + rng.IntN(20))
		k := rng.Int64N(n + 1)
		a, b := logUniform(1e-6, 1e7), logUniform(1e-6, 1e7)
		if rng.IntN(10) == 0 {
			a = logUniform(1e14, 1e16)
		}
		got, want := betaBinomialLL(k, n, a, b), lbeta(float64(k)+a, float64(n-k)+b)-lbeta(a, b)
		if n > 16 || a+b >= 1e15 {
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("k %d n %d a %g b %g: %v, want the log-gamma form's %v", k, n, a, b, got, want)
			}
			continue
		}
		// against a sum of logarithms (accurate to about n·1e-16 per term), and the
		// log-gamma form within what its cancellation loses: a few ulps of Lgamma(a+b+n)
		ref := 0.0
		for j := range k {
			ref += math.Log(a + float64(j))
		}
		for j := range n - k {
			ref += math.Log(b + float64(j))
		}
		for j := range n {
			ref -= math.Log(a + b + float64(j))
		}
		if tol := 1e-12 * math.Max(1, math.Abs(ref)); math.IsNaN(got) || math.Abs(got-ref) > tol {
			t.Fatalf("k %d n %d a %g b %g: %v, want the sum of logs' %v (±%g)", k, n, a, b, got, ref, tol)
		}
		lg := func(x float64) float64 { v, _ := math.Lgamma(x); return math.Abs(v) }
		if tol := 1e-12 + 1e-15*(lg(a)+lg(b)+lg(a+b+float64(n))); math.Abs(got-want) > tol {
			t.Fatalf("k %d n %d a %g b %g: %v, want the log-gamma form's %v (±%g)", k, n, a, b, got, want, tol)
		}
	}
}

// BenchmarkGroupsLL is the dispersion correction's share of a request: the log-likelihoods of
// 512 returned groups of 8 under every correction of the grid, by products (betaBinomialLL,
// as the predictor does) and by the log-gamma form it replaced.
func BenchmarkGroupsLL(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	groups := make([]group, 512)
	for i := range groups {
		groups[i] = group{b: Baseline{Pred: 0.05 + 0.9*rng.Float64(), Count: 2 + 30*rng.Float64(), Centre: rng.NormFloat64()},
			k: rng.Int64N(9), n: 8}
	}
	out := make([]float64, len(dispersionGrid))
	lgammaForm := func(gr group) {
		for j, g := range dispersionGrid {
			m, c := g.apply(gr.b.Pred, gr.b.Count, gr.b.Centre)
			a, bb := c*m, c*(1-m)
			out[j] = lbeta(float64(gr.k)+a, float64(gr.n-gr.k)+bb) - lbeta(a, bb)
		}
	}
	b.Run("one-group", func(b *testing.B) {
		for b.Loop() {
			for _, gr := range groups {
				groupLL(out, gr.k, gr.n, gr.b.Pred, gr.b.Count, gr.b.Centre)
			}
		}
	})
	// the whole measure into the channels of 20 environments and the global one: a log per
	// group and correction added in order (as before), against products and one log per channel
	channels := func() (map[string]*Likelihood, *Likelihood) {
		env := map[string]*Likelihood{}
		for e := range 20 {
			env[fmt.Sprint(e)] = newLikelihood()
		}
		return env, newLikelihood()
	}
	b.Run("sum-of-logs", func(b *testing.B) {
		env, global := channels()
		for b.Loop() {
			for i, gr := range groups {
				groupLL(out, gr.k, gr.n, gr.b.Pred, gr.b.Count, gr.b.Centre)
				env[fmt.Sprint(i%20)].addLL(out)
				global.addLL(out)
			}
		}
	})
	b.Run("products", func(b *testing.B) {
		var ratio, logs []float64
		env, global := channels()
		G := len(dispersionGrid)
		for b.Loop() {
			ratio, logs = groupsRatios(groups, ratio, logs)
			sums := map[*Likelihood]*llSums{}
			for i := range groups {
				for _, l := range []*Likelihood{env[fmt.Sprint(i%20)], global} {
					if sums[l] == nil {
						sums[l] = newLLSums()
					}
					sums[l].add(ratio[i*G:(i+1)*G], logs[i*G:(i+1)*G])
				}
			}
			for l, s := range sums {
				s.addTo(l.LL)
			}
		}
	})
	b.Run("log-gamma", func(b *testing.B) {
		for b.Loop() {
			for _, gr := range groups {
				lgammaForm(gr)
			}
		}
	})
}

// llSums, the product of many groups' likelihood ratios and one logarithm, is the sum of the
// groups' log-likelihoods (betaBinomialLL of each correction, added in order, as
// measureDispersion added them before)
// to within rounding: for ordinary groups, for thousands of unlikely groups whose product
// leaves float64's range many times over, for likelihoods too small to multiply (kept as
// logarithms), and for groups beyond 16 rollouts or of huge counts (log-gammas).
func TestLLSumsIsTheSumOfLogs(t *testing.T) {
	G := len(dispersionGrid)
	cases := []struct {
		name  string
		group func(rng *rand.Rand) (k, n int64, mean, count float64)
		many  int
	}{
		{"ordinary", func(rng *rand.Rand) (int64, int64, float64, float64) {
			n := int64(2 + rng.IntN(15))
			return rng.Int64N(n + 1), n, rng.Float64(), 0.1 + rng.Float64()*50
		}, 300},
		{"unlikely, underflowing products", func(rng *rand.Rand) (int64, int64, float64, float64) {
			return 16, 16, 1e-4 + 1e-3*rng.Float64(), 1e6 * (1 + rng.Float64()) // each ≈ 1e-50 or less
		}, 400},
		{"likelihoods near the least float64 products", func(rng *rand.Rand) (int64, int64, float64, float64) {
			return 1 + rng.Int64N(15), 16, rng.Float64(), 1e-150 * (1 + rng.Float64())
		}, 200},
		{"large groups and counts", func(rng *rand.Rand) (int64, int64, float64, float64) {
			if rng.IntN(2) == 0 {
				n := int64(17 + rng.IntN(40))
				return rng.Int64N(n + 1), n, rng.Float64(), 1 + rng.Float64()*20
			}
			return rng.Int64N(9), 8, rng.Float64(), 1e15 * (1 + rng.Float64())
		}, 300},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(c.many)))
			want := make([]float64, G)
			ratio, logs := make([]float64, G), make([]float64, G)
			s := newLLSums()
			for range c.many {
				k, n, mean, count := c.group(rng)
				centre := rng.NormFloat64()
				for j, g := range dispersionGrid {
					m, c := g.apply(mean, count, centre)
					want[j] += betaBinomialLL(k, n, c*m, c*(1-m))
				}
				groupRatios(ratio, logs, nil, k, n, mean, count, centre)
				s.add(ratio, logs)
			}
			got := make([]float64, G)
			s.addTo(got)
			for j := range got {
				if tol := 1e-12 * max(1, math.Abs(want[j])) * float64(c.many); !(math.Abs(got[j]-want[j]) <= tol) {
					t.Fatalf("correction %v: %v, want the sum of logs' %v (±%g)", dispersionGrid[j], got[j], want[j], tol)
				}
			}
		})
	}
}
