package propagate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/graph/graphtest"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
	"gonum.org/v1/gonum/floats"
)

// Vocabulary of the benchmark's catalogue: each environment has its own words, all share
// common ones (both Zipf distributed, as in graphtest.Catalog), 10 environments.
const (
	benchEnvs        = 10
	benchEnvWords    = 300
	benchCommonWords = 400
)

// benchCatalogue returns a graph of n nodes (graphtest.Random, 10 environments, about 10
// edges a node) with catalogue features attached: 20 to 40 distinct words a node, 60% from
// its environment's vocabulary and 40% common, some 3,400 words in all. Half the nodes, at
// random, were rolled out: 1 to 4 groups of 8 at rounds 1 to 20, with a success probability
// set by the node's first words, so that the fit has something to find.
func benchCatalogue(n int) (*graph.Graph, []stats.Task) {
	g := graphtest.Random(n, benchEnvs, 10, 1)
	rng := rand.New(rand.NewPCG(uint64(n), 11))
	common := rand.NewZipf(rng, 1.1, 2, benchCommonWords-1)
	local := rand.NewZipf(rng, 1.05, 2, benchEnvWords-1)
	effect := make(map[string]float64)
	rows := make([]record.Task, n)
	tasks := make([]stats.Task, n)
	for i, nd := range g.Nodes {
		k := 20 + rng.IntN(21)
		seen := make(map[string]bool, k)
		words := make([]string, 0, k)
		for len(words) < k {
			var w string
			if rng.Float64() < 0.6 {
				w = fmt.Sprintf("e%dw%d", nd.Env, local.Uint64())
			} else {
				w = fmt.Sprintf("c%d", common.Uint64())
			}
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
		rows[i] = record.Task{Env: g.Envs[nd.Env], Task: nd.Task, Text: strings.Join(words, " ")}
		if rng.IntN(2) == 0 {
			continue
		}
		logit := 0.0
		for _, w := range words[:5] {
			e, ok := effect[w]
			if !ok {
				e = rng.NormFloat64() * 0.7
				effect[w] = e
			}
			logit += e
		}
		p := 1 / (1 + math.Exp(-logit))
		for range 1 + rng.IntN(4) {
			round := 1 + rng.Int64N(20)
			var grp stats.Group
			for range 8 {
				tasks[i].Add(bernoulli(rng, p), round, round, true, &grp, stats.DefaultDecay)
			}
		}
	}
	return g.WithFeatures(graph.TextFeatures(rows)), tasks
}

// BenchmarkPredictFeatures times Predictor.Predict on the same graph and statistics with the
// feature prior (default parameters) and without (the graph's features left off), as a
// scheduler calls it: one Predictor, called again and again. With features it reports the
// feature rows' mean length, the catalogue's features, the fit's unknowns and its relative
// residual at the end (at most fitTol when the conjugate gradients converged before their
// iteration cap). The "ids=3" case gives every task three words of its own (order numbers,
// file names), as real catalogues have: the catalogue's vocabulary grows by 3 per task, the
// fit only by those of the rolled-out tasks.
func BenchmarkPredictFeatures(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		g, tasks := benchCatalogue(n)
		rows := make([]record.Task, n)
		for i := range rows {
			var sb strings.Builder
			for _, f := range g.Feat.Row(i) {
				fmt.Fprintf(&sb, "w%d ", f)
			}
			for k := range 3 {
				fmt.Fprintf(&sb, "id%dx%d ", i, k)
			}
			rows[i] = record.Task{Text: sb.String()}
		}
		withIDs := g.WithFeatures(graph.TextFeatures(rows))
		for _, mode := range []string{"features=true", "features=true/ids=3", "features=false"} {
			gg, feat := g, mode != "features=false"
			switch mode {
			case "features=false":
				gg = g.WithFeatures(nil)
			case "features=true/ids=3":
				gg = withIDs
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, mode), func(b *testing.B) {
				pr, err := NewPredictor(DefaultParams())
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := pr.Predict(gg, tasks, 21, State{}); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, _, err := pr.Predict(gg, tasks, 21, State{}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if feat {
					b.ReportMetric(float64(gg.Feat.NNZ())/float64(n), "feat/node")
					b.ReportMetric(float64(gg.Feat.Dim), "features")
					b.ReportMetric(float64(pr.prior.nf+len(g.Envs)+1), "unknowns")
					b.ReportMetric(relResidual(&pr.prior, gg), "relres")
				}
			})
		}
	}
}

// relResidual is ‖r‖/‖b‖ of the last fit of fp: its final residual over b = Xᵀ W y.
func relResidual(fp *featurePrior, g *graph.Graph) float64 {
	for k := range fp.rows {
		fp.u[k] = fp.w[k] * fp.y[k]
	}
	rhs := make([]float64, len(fp.r))
	fp.xt(g, fp.u, rhs)
	return math.Sqrt(floats.Dot(fp.r, fp.r) / floats.Dot(rhs, rhs))
}

// BenchmarkPredictFeaturesSteps is the scheduler's loop: between two predictions a step of
// 512 tasks, 8 rollouts each, arrives; "warm" starts each fit from the one before
// (State.Warm with the last WarmStart, as the scheduler does through its stored state),
// "cold" from zero. Both see the same statistics. It reports the fit's iterations per call.
func BenchmarkPredictFeaturesSteps(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, warm := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/warm=%v", n, warm), func(b *testing.B) {
				g, tasks := benchCatalogue(n)
				rng := rand.New(rand.NewPCG(3, 4))
				pr, err := NewPredictor(DefaultParams())
				if err != nil {
					b.Fatal(err)
				}
				round := int64(21)
				if _, _, err := pr.Predict(g, tasks, round, State{}); err != nil {
					b.Fatal(err)
				}
				iters := 0
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					round++
					for range 512 {
						i := rng.IntN(n)
						var grp stats.Group
						for range 8 {
							tasks[i].Add(float64(rng.IntN(2)), round, round, true, &grp, stats.DefaultDecay)
						}
					}
					var st State
					if warm {
						st.Warm = pr.WarmStart()
					}
					b.StartTimer()
					if _, _, err := pr.Predict(g, tasks, round, st); err != nil {
						b.Fatal(err)
					}
					iters += pr.FitIterations()
				}
				b.ReportMetric(float64(iters)/float64(b.N), "iters/op")
				b.ReportMetric(relResidual(&pr.prior, g), "relres")
			})
		}
	}
}
