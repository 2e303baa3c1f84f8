package propagate

import (
	"math"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/stats"
	"gonum.org/v1/gonum/floats"
)

// featurePrior is the prior mean of every node when the graph carries catalogue features: a
// weighted ridge regression of the logit of each rolled-out node's decayed evidence on its
// words, tools and tags, its environment and an intercept, fitted afresh at every call. It
// tells a task never rolled out what tasks with the same words did, feature by feature, which
// the environment mean cannot: "refund" may be hard and "look up" easy in the same
// environment.
//
// The regression minimises Σ w_i (y_i − x_i·β)² + λ‖β‖², with y_i = ln((a_i+½)/(b_i+½)) and
// w_i = n_i/(n_i + fitHalfCount), n_i = a_i + b_i, by conjugate gradients started from zero:
// the same statistics give the same fit, whatever was fitted before.
type featurePrior struct {
	ok    bool
	logit []float64 // fitted logit per node

	rows           []int32   // nodes in the fit
	w, y, u        []float64 // per row: weight, target, scratch
	beta, r, p, ap []float64 // per unknown: the fit, the residual, the direction, A times it
}

// fitHalfCount is the evidence, in rollouts, at which a node weighs half as much as a node
// with endless evidence: eight rollouts tell a logit only roughly.
const fitHalfCount = 8

// fitIters bounds the conjugate-gradient iterations; fitTol is the relative residual at which
// they stop.
const (
	fitIters = 200
	fitTol   = 1e-6
)

// fit fits the regression for the call in progress (own holds the decayed evidence) and fills
// logit for every node. Without features it does nothing and ok stays false.
func (fp *featurePrior) fit(g *graph.Graph, tasks []stats.Task, own []evidence, lambda float64) {
	fp.ok = false
	if g.Feat == nil || lambda <= 0 || g.Feat.Len() != g.Len() {
		return
	}
	fp.ok = true
	F, E := g.Feat.Dim, len(g.Envs)
	dim := F + E + 1
	fp.rows = fp.rows[:0]
	fp.w, fp.y = fp.w[:0], fp.y[:0]
	for i := range tasks {
		a, b := float64(own[i].a), float64(own[i].b)
		if tasks[i].Rollouts == 0 || a+b <= 0 {
			continue
		}
		fp.rows = append(fp.rows, int32(i))
		fp.w = append(fp.w, (a+b)/(a+b+fitHalfCount))
		fp.y = append(fp.y, math.Log((a+0.5)/(b+0.5)))
	}
	fp.u = resize(fp.u, len(fp.rows))
	for _, s := range []*[]float64{&fp.beta, &fp.r, &fp.p, &fp.ap} {
		*s = resize(*s, dim)
		clear(*s)
	}
	// r = b − Aβ with β = 0: b = Xᵀ W y
	for k := range fp.rows {
		fp.u[k] = fp.w[k] * fp.y[k]
	}
	fp.xt(g, fp.u, fp.r)
	copy(fp.p, fp.r)
	rr := floats.Dot(fp.r, fp.r)
	stop := fitTol * fitTol * rr
	for it := 0; it < fitIters && rr > stop && rr > 0; it++ {
		fp.apply(g, fp.p, fp.ap, lambda)
		alpha := rr / floats.Dot(fp.p, fp.ap)
		floats.AddScaled(fp.beta, alpha, fp.p)
		floats.AddScaled(fp.r, -alpha, fp.ap)
		next := floats.Dot(fp.r, fp.r)
		floats.AddScaledTo(fp.p, fp.r, next/rr, fp.p)
		rr = next
	}
	fp.logit = resize(fp.logit, g.Len())
	for i := range fp.logit {
		fp.logit[i] = xrow(g, i, fp.beta, F, E)
	}
}

// apply sets out = (Xᵀ W X + λ I) v.
func (fp *featurePrior) apply(g *graph.Graph, v, out []float64, lambda float64) {
	F, E := g.Feat.Dim, len(g.Envs)
	for k, i := range fp.rows {
		fp.u[k] = fp.w[k] * xrow(g, int(i), v, F, E)
	}
	fp.xt(g, fp.u, out)
	for k := range out {
		out[k] += lambda * v[k]
	}
}

// xt sets out = Xᵀ u over the rows of the fit.
func (fp *featurePrior) xt(g *graph.Graph, u, out []float64) {
	F, E := g.Feat.Dim, len(g.Envs)
	clear(out)
	for k, i := range fp.rows {
		for _, f := range g.Feat.Row(int(i)) {
			out[f] += u[k]
		}
		out[F+int(g.Nodes[i].Env)] += u[k]
		out[F+E] += u[k]
	}
}

// xrow is x_i·v: the node's features, its environment and the intercept.
func xrow(g *graph.Graph, i int, v []float64, F, E int) float64 {
	s := v[F+int(g.Nodes[i].Env)] + v[F+E]
	for _, f := range g.Feat.Row(i) {
		s += v[f]
	}
	return s
}
