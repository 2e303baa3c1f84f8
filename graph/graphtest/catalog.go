package graphtest

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/envsched/envsched/record"
)

// Sizes of the synthetic vocabularies of Catalog.
const (
	commonWords = 400 // words every environment uses
	envWords    = 300 // words of one environment
	envTools    = 15  // tools of one environment
	sharedTools = 40  // tools several environments offer
)

// Catalog returns n synthetic catalogue tasks spread evenly over envs environments, with the
// structure a real agent-RL catalogue has: each environment has its own vocabulary (Zipf
// distributed) and tools, all share common words and a pool of shared tools, about 10% of the
// tasks are near-duplicates (one word changed) of another task of their environment and about
// 1% restate a task of another environment with its tools. Tasks are named "t%07d" and returned
// in a shuffled order.
func Catalog(n, envs int, seed int64) []record.Task {
	envs = max(1, min(envs, max(n, 1)))
	rng := rand.New(rand.NewPCG(uint64(seed), 0xca7a109))
	common := rand.NewZipf(rng, 1.1, 2, commonWords-1)
	local := rand.NewZipf(rng, 1.05, 2, envWords-1)
	tasks := make([]record.Task, n)
	for i := range tasks {
		e := i % envs
		t := record.Task{Env: fmt.Sprintf("env-%03d", e), Task: fmt.Sprintf("t%07d", i)}
		switch r := rng.Float64(); {
		case r < 0.10 && i >= envs:
			t = nearCopy(rng, t, tasks[i-envs*(1+rng.IntN(min(i/envs, 20)))])
		case r < 0.11 && i > 0:
			t = restate(t, tasks[rng.IntN(i)])
		default:
			t.Text = text(rng, e, common, local)
			t.Tools = tools(rng, e)
		}
		tasks[i] = t
	}
	rng.Shuffle(len(tasks), func(i, j int) { tasks[i], tasks[j] = tasks[j], tasks[i] })
	return tasks
}

func text(rng *rand.Rand, env int, common, local *rand.Zipf) string {
	words := make([]string, 12+rng.IntN(19))
	for i := range words {
		if rng.Float64() < 0.6 {
			words[i] = fmt.Sprintf("e%dw%d", env, local.Uint64())
		} else {
			words[i] = fmt.Sprintf("c%d", common.Uint64())
		}
	}
	return strings.Join(words, " ")
}

func tools(rng *rand.Rand, env int) []string {
	out := make([]string, 1+rng.IntN(3))
	for i := range out {
		out[i] = fmt.Sprintf("env%d_tool_%d", env, rng.IntN(envTools))
	}
	if rng.Float64() < 0.3 {
		out = append(out, fmt.Sprintf("shared_tool_%d", rng.IntN(sharedTools)))
	}
	return out
}

// nearCopy gives t the description of src with one word replaced.
func nearCopy(rng *rand.Rand, t, src record.Task) record.Task {
	words := strings.Fields(src.Text)
	if len(words) > 0 {
		words[rng.IntN(len(words))] = fmt.Sprintf("x%d", rng.IntN(1000))
	}
	t.Text, t.Tools = strings.Join(words, " "), src.Tools
	return t
}

// restate gives t the text and tools of a task of another environment.
func restate(t, src record.Task) record.Task {
	t.Text, t.Tools = src.Text, src.Tools
	return t
}
