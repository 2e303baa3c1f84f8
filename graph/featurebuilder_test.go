package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/envsched/envsched/record"
)

// referenceFeatures is TextFeatures as first written, over taskFeatures (the names the graph's
// similarity reads): the definition the FeatureBuilder must reproduce, ids and order included.
func referenceFeatures(tasks []record.Task) *Features {
	f := &Features{off: make([]int32, 1, len(tasks)+1)}
	vocab := map[string]int32{}
	for _, t := range tasks {
		for _, rf := range taskFeatures(t, 1, 1) {
			id, ok := vocab[rf.name]
			if !ok {
				id = int32(len(vocab))
				vocab[rf.name] = id
			}
			f.ids = append(f.ids, id)
		}
		f.off = append(f.off, int32(len(f.ids)))
	}
	f.Dim = len(vocab)
	return f
}

// The FeatureBuilder gives the reference's Features exactly (ids, rows, their order, Dim) on
// random tasks over several blocks, whatever the number of CPUs: words in mixed case, with
// punctuation, one-letter words, numbers and non-ASCII letters; tools and tags repeated, with
// spaces, empty, and named like words of the text.
func TestFeatureBuilderIsTheReference(t *testing.T) {
	words := []string{"Refund", "order", "ORDER", "the", "a", "42", "x9", "café", "Ünïcode", "search,", "search", "b2b", "—", "über"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(n int) []string {
		var out []string
		for range n {
			out = append(out, words[rng.IntN(len(words))])
		}
		return out
	}
	var tasks []record.Task
	for i := range 2*featureBlock + 77 {
		task := record.Task{Env: "e", Task: fmt.Sprint(i), Text: strings.Join(pick(rng.IntN(12)), " ")}
		for _, n := range pick(rng.IntN(4)) {
			task.Tools = append(task.Tools, []string{n, " " + n, "", "  "}[rng.IntN(4)])
		}
		for _, n := range pick(rng.IntN(3)) {
			task.Tags = append(task.Tags, []string{n, n + " ", ""}[rng.IntN(3)])
		}
		tasks = append(tasks, task)
	}
	want := referenceFeatures(tasks)
	for _, procs := range []int{1, 2, 5} {
		old := runtime.GOMAXPROCS(procs)
		got := TextFeatures(tasks)
		runtime.GOMAXPROCS(old)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("GOMAXPROCS %d: Dim %d NNZ %d; the reference has Dim %d NNZ %d", procs, got.Dim, got.NNZ(), want.Dim, want.NNZ())
		}
	}
	// the number of tasks announced is a capacity only: none, too few, exact, too many
	for _, n := range []int{0, len(tasks) / 3, len(tasks), 3 * len(tasks)} {
		b := NewFeatureBuilder(n)
		for _, task := range tasks {
			b.Add(task)
		}
		if got := b.Features(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%d tasks announced: Dim %d NNZ %d; the reference has Dim %d NNZ %d", n, got.Dim, got.NNZ(), want.Dim, want.NNZ())
		}
	}
	if want.Dim < 20 || want.NNZ() < 3*len(tasks) {
		t.Errorf("the tasks have too few features to test (Dim %d, NNZ %d)", want.Dim, want.NNZ())
	}
}
