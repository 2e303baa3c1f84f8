package batcher

import (
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateRecorded = flag.Bool("update-recorded", false, "rewrite testdata/recorded.txt from this tree's batches")

// recordedCase is one request over one world with one set of parameters.
type recordedCase struct {
	name  string
	world int // index into the worlds
	req   Request
	p     func(*Params)
	// credit keeps MinCredit on. The cases recorded before it came (all but the last) run
	// with it off, so that they hold the older rule to its old batches bit for bit.
	credit bool
}

// digestBatch hashes every number and flag of a batch, bit for bit.
func digestBatch(b Batch) string {
	h := sha256.New()
	put := func(x uint64) { h.Write(binary.LittleEndian.AppendUint64(nil, x)) }
	for _, pk := range b.Picks {
		put(uint64(pk.Node))
		for _, x := range []float64{pk.Score, pk.Exploit, pk.Coverage, pk.Penalty} {
			put(math.Float64bits(x))
		}
		fmt.Fprintf(h, "%s|%v|%v;", pk.Reason, pk.Random, pk.Repeat)
	}
	for _, q := range b.Quotas {
		put(uint64(q.Eligible))
		put(math.Float64bits(q.Share))
		put(uint64(q.Min))
		put(uint64(q.Max))
		put(uint64(q.Slots))
	}
	put(uint64(b.Eligible))
	return fmt.Sprintf("%x", h.Sum(nil))[:24]
}

func recordedCases(worlds []world) []recordedCase {
	var cases []recordedCase
	step := func(w world, d int64) int64 { return w.step + d }
	for wi, w := range worlds {
		env0 := w.g.Envs[0]
		retired := make([]bool, w.g.Len())
		for i := range retired {
			retired[i] = i%7 == 3
		}
		for _, c := range []recordedCase{
			{name: "default", req: Request{Size: 64, GroupSize: 8, Step: step(w, 0), Seed: 1}},
			{name: "512", req: Request{Size: 512, GroupSize: 8, Step: step(w, 1), Seed: 2}},
			{name: "late step", req: Request{Size: 200, GroupSize: 8, Step: step(w, 900), Seed: 3}},
			{name: "one env", req: Request{Size: 30, GroupSize: 4, Step: step(w, 2), Seed: 4, Envs: []string{env0}}},
			{name: "exclude", req: Request{Size: 100, GroupSize: 8, Step: step(w, 3), Seed: 5, ExcludeEnvs: []string{env0}}},
			{name: "retired", req: Request{Size: 150, GroupSize: 8, Step: step(w, 4), Seed: 6, Retired: retired}},
			{name: "repeats", req: Request{Size: 3*w.g.Len() + 7, GroupSize: 8, Step: step(w, 5), Seed: 7, AllowRepeats: true}},
			{name: "all", req: Request{Size: w.g.Len(), GroupSize: 8, Step: step(w, 6), Seed: 8}},
			{name: "strong penalty", req: Request{Size: 256, GroupSize: 8, Step: step(w, 7), Seed: 9},
				p: func(p *Params) { p.SimPenalty = 50 }},
			{name: "penalty, no coverage", req: Request{Size: 256, GroupSize: 8, Step: step(w, 7), Seed: 10},
				p: func(p *Params) { p.SimPenalty = 3; p.CoverageWeight = 0 }},
			{name: "no transfer, tau 3", req: Request{Size: 128, GroupSize: 8, Step: step(w, 8), Seed: 11},
				p: func(p *Params) { p.Transfer = 0; p.StaleRounds = 3 }},
			{name: "tau 1e9", req: Request{Size: 128, GroupSize: 8, Step: step(w, 8), Seed: 11},
				p: func(p *Params) { p.StaleRounds = 1e9 }},
			{name: "spread, quota size 0, random 0.3", req: Request{Size: 300, GroupSize: 6, Step: step(w, 9), Seed: 12},
				p: func(p *Params) { p.Exploit = ExploitSpread; p.QuotaSize = 0; p.RandomShare = 0.3 }},
			{name: "informative, no random", req: Request{Size: 90, GroupSize: 2, Step: step(w, 0), Seed: 13},
				p: func(p *Params) { p.Exploit = ExploitInformative; p.RandomShare = 0 }},
			{name: "max share 1", req: Request{Size: 400, GroupSize: 8, Step: step(w, 1), Seed: 14},
				p: func(p *Params) { p.MaxShare = 1; p.MinShare = 0 }},
			{name: "step before choices", req: Request{Size: 64, GroupSize: 8, Step: 1, Seed: 15}},
		} {
			c.world = wi
			cases = append(cases, c)
		}
	}
	for wi, w := range worlds {
		retired := make([]bool, w.g.Len())
		for i := range retired {
			retired[i] = i%5 == 1
		}
		for _, c := range []recordedCase{
			{name: "credit, default", req: Request{Size: 64, GroupSize: 8, Step: w.step, Seed: 21}},
			{name: "credit, 13 slots", req: Request{Size: 13, GroupSize: 8, Step: w.step + 1, Seed: 22}},
			{name: "credit, retired", req: Request{Size: 150, GroupSize: 8, Step: w.step + 4, Seed: 23, Retired: retired}},
			{name: "credit, repeats", req: Request{Size: 3*w.g.Len() + 7, GroupSize: 8, Step: w.step + 5, Seed: 24, AllowRepeats: true}},
			{name: "credit, min share 1", req: Request{Size: 37, GroupSize: 8, Step: w.step + 2, Seed: 25},
				p: func(p *Params) { p.MinShare = 1 }},
		} {
			c.world, c.credit = wi, true
			cases = append(cases, c)
		}
	}
	return cases
}

// TestSelectionAsRecorded holds every batch of a set of worlds, requests and parameters to
// the one recorded in testdata/recorded.txt, bit for bit: the selection's ways of saving work
// (its memo of staleness, its pruned candidate heaps) may change what it costs, never what it
// chooses. One Selector serves all cases in turn, as the daemon's does, so that buffers kept
// from a call with other parameters are covered too.
func TestSelectionAsRecorded(t *testing.T) {
	worlds := []world{
		randomWorld(t, 300, 3, 1, 0.5),
		randomWorld(t, 2000, 7, 2, 0.8),
		randomWorld(t, 5000, 20, 3, 0.3),
		randomWorld(t, 40, 5, 4, 1),
		randomWorld(t, 30_000, 12, 5, 0.6), // large enough for rounds split over the CPUs
	}
	var sel Selector
	var lines []string
	for _, c := range recordedCases(worlds) {
		w := worlds[c.world]
		p := DefaultParams()
		p.MinCredit = c.credit
		if c.p != nil {
			c.p(&p)
		}
		b, err := sel.Select(w.g, w.preds, w.tasks, c.req, p)
		got := "error: " + fmt.Sprint(err)
		if err == nil {
			got = digestBatch(b)
		}
		lines = append(lines, fmt.Sprintf("world %d %s: %s", c.world, c.name, got))
	}
	path := filepath.Join("testdata", "recorded.txt")
	if *updateRecorded {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(want) != len(lines) {
		t.Fatalf("%d cases, %d recorded", len(lines), len(want))
	}
	for i := range lines {
		if lines[i] != want[i] {
			t.Errorf("got  %s\nwant %s", lines[i], want[i])
		}
	}
}

// A shuffle without a copy holds what a copied pool would, through the point where it copies.
func TestShuffleIsACopiedPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{1, 2, 70, 3000} {
		base := make([]int32, n)
		for i := range base {
			base[i] = int32(3 * i)
		}
		pool, sh := slices.Clone(base), shuffle{base: base}
		for t0 := range n {
			j := t0 + rng.IntN(n-t0)
			pool[t0], pool[j] = pool[j], pool[t0]
			sh.swap(t0, j)
			if got := sh.at(t0); got != pool[t0] {
				t.Fatalf("n %d, draw %d: %d, want %d", n, t0, got, pool[t0])
			}
		}
		for k := range pool {
			if sh.at(k) != pool[k] {
				t.Fatalf("n %d: position %d holds %d, want %d", n, k, sh.at(k), pool[k])
			}
		}
		if n >= 3000 && sh.full == nil {
			t.Fatalf("n %d: never copied", n)
		}
		if base[n-1] != int32(3*(n-1)) {
			t.Fatal("the shuffle wrote into its base")
		}
	}
}
