//go:build analysis

package sim

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestAnalysisTuneCalibration compares variants of envsched's prediction parameters on the
// tuning seeds 1000-1019 (never on the report seeds): per scenario and variant the median
// step-40 score, the share of seeds ahead of random's best, the degenerate share and the
// calibration gap of each channel in steps 1-10 and after. A measurement, not a test:
//
//	TUNE='base:;start:start=0.5' TUNE_SCENARIOS=default,bimodal [TUNE_STEPS=10] \
//	  nice -n 19 go test -tags analysis -run AnalysisTuneCalibration -v -timeout 2h ./sim/
//
// Keys: start (DispersionStart), bymean, bycount and fixedexplore (0 or 1), memory, prior, kappa;
// the corrections shipped off: stuck, driftcentre, mincredit, randomowed (0 or 1), overlap; and
// selection's weights: coverage, randomshare, simpenalty, transfer, fresh. The first
// variant is the reference the others are compared with, seed by seed.
func TestAnalysisTuneCalibration(t *testing.T) {
	spec := os.Getenv("TUNE")
	if spec == "" {
		t.Skip("set TUNE to the variants to compare")
	}
	scenarios := strings.Split(envOr("TUNE_SCENARIOS", "default,bimodal,real-catalog,noise,drift,small-envs"), ",")
	variants := parseVariants(t, spec)
	for _, name := range scenarios {
		sc, err := ScenarioFor(name, envOr("TUNE_REAL", "../../shared/data/catalog-real.jsonl"))
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		steps, err := strconv.Atoi(envOr("TUNE_STEPS", "120"))
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Scenario: sc, Seeds: 20, SeedBase: 1000, Steps: steps, BatchSize: 64, GroupSize: 8, Workers: 2}
		var random []Trace
		randomBest := math.NaN()
		if steps >= 40 {
			cfg.Policies = []string{"random"}
			rnd, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			random = rnd.Traces["random"]
			randomBest = median(mapTraces(random, best))
		}
		var ref []Trace // the first variant's traces: the others are compared with them, seed by seed
		for _, v := range variants {
			p := v.params
			cfg.Policies, cfg.Envsched = []string{"envsched"}, &p
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			trs := res.Traces["envsched"]
			cal, _ := poolCalibration(trs)
			if steps < 40 { // steps 1-10 only: their calibration
				c := cal[0]
				fmt.Printf("TUNE %-13s %-12s steps 1-%d gaps new/re/rnd %.3f %.3f %.3f (new: %.3f / %.3f)\n", name, v.name, steps,
					math.Abs(c[ChannelNew].Gap()), math.Abs(c[ChannelRechosen].Gap()), math.Abs(c[ChannelRandom].Gap()),
					c[ChannelNew].PredictedMean(), c[ChannelNew].Realised())
				continue
			}
			at40 := median(mapTraces(trs, func(tr Trace) float64 { return tr.Score[40] }))
			var gaps []string
			worst := 0.0
			for ph := range 2 {
				for ch := range numChannels {
					g := math.Abs(cal[ph][ch].Gap())
					gaps = append(gaps, fmt.Sprintf("%.3f", g))
					lim := 0.05
					if ph == 0 {
						lim = 0.08
					}
					worst = max(worst, g-lim)
				}
			}
			if ref == nil {
				ref = trs
			}
			d40, se40 := pairedDiff(trs, ref, func(tr Trace) float64 { return tr.Score[40] })
			t40, st40 := pairedDiff(trs, ref, func(tr Trace) float64 { return tr.TaskScore[40] })
			degRatio := median(mapTraces(trs, degShare(cfg.Steps))) / median(mapTraces(random, degShare(cfg.Steps)))
			fmt.Printf("TUNE %-13s %-12s per task: ahead %3.0f%% @40 vs %s %+.4f±%.4f | degenerate %.2fx random's\n",
				name, v.name, 100*beatsShare(trs, random, 40, func(tr Trace) []float64 { return tr.TaskScore }),
				variants[0].name, t40, st40, degRatio)
			dAll, seAll := pairedDiff(trs, ref, meanScore)
			fmt.Printf("TUNE %-13s %-12s @40 %.4f margin %+.4f ahead %3.0f%% deg %.3f | vs %s: @40 %+.4f±%.4f, mean %+.4f±%.4f | gaps 1-10 new/re/rnd %s | 11-120 %s | worst over goal %+.3f\n",
				name, v.name, at40, at40-randomBest, 100*beatsShare(trs, random, 40, func(tr Trace) []float64 { return tr.Score }),
				median(mapTraces(trs, degShare(cfg.Steps))), variants[0].name, d40, se40, dAll, seAll,
				strings.Join(gaps[:3], " "), strings.Join(gaps[3:], " "), worst)
		}
	}
}

// meanScore is a trace's held-out score averaged over every step: less noisy than one step's.
func meanScore(tr Trace) float64 {
	s := 0.0
	for _, x := range tr.Score[1:] {
		s += x
	}
	return s / float64(len(tr.Score)-1)
}

// pairedDiff is the mean over seeds of f(a) − f(b), seed by seed, and its standard error.
func pairedDiff(a, b []Trace, f func(Trace) float64) (float64, float64) {
	n := float64(len(a))
	var s, ss float64
	for i := range a {
		d := f(a[i]) - f(b[i])
		s += d
		ss += d * d
	}
	m := s / n
	return m, math.Sqrt(max(ss/n-m*m, 0) / max(n-1, 1))
}

type tuneVariant struct {
	name   string
	params EnvschedParams
}

// parseVariants reads "name:key=value,key=value;name2:…".
func parseVariants(t *testing.T, spec string) []tuneVariant {
	var out []tuneVariant
	for _, part := range strings.Split(spec, ";") {
		name, kvs, _ := strings.Cut(part, ":")
		p := DefaultEnvschedParams()
		for _, kv := range strings.Split(kvs, ",") {
			if kv == "" {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("variant %s: %s: %v", name, kv, err)
			}
			switch k {
			case "start":
				p.Predict.DispersionStart = x
			case "bymean":
				p.Predict.DispersionByMean = x != 0
			case "bycount":
				p.Predict.DispersionByCount = x != 0
			case "fixedexplore":
				p.FixedExploration = x != 0
			case "memory":
				p.Predict.DispersionMemory = x
			case "prior":
				p.Predict.DispersionPrior = x
			case "kappa":
				p.Predict.Kappa = x
			case "stuck":
				p.Predict.DispersionStuck = x != 0
			case "driftcentre":
				p.Predict.DriftCentre = x != 0
			case "overlap":
				p.Select.Overlap = x
			case "mincredit":
				p.Select.MinCredit = x != 0
			case "randomowed":
				p.Select.RandomOwed = x != 0
			case "coverage":
				p.Select.CoverageWeight = x
			case "randomshare":
				p.Select.RandomShare = x
			case "simpenalty":
				p.Select.SimPenalty = x
			case "transfer":
				p.Select.Transfer = x
			case "fresh":
				p.Select.Fresh = x
			default:
				t.Fatalf("variant %s: unknown key %s", name, k)
			}
		}
		out = append(out, tuneVariant{name, p})
	}
	return out
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
