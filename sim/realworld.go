package sim

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"unicode"

	"github.com/envsched/envsched/record"
)

// DefaultRealCatalog is where the real-catalog scenario reads the catalogue of real agent
// benchmark tasks, relative to the repository's root (the file is not part of the project:
// see ../shared/data/README.md).
const DefaultRealCatalog = "../shared/data/catalog-real.jsonl"

// ErrNoRealCatalog is returned by RealCatalogScenario when the file is absent.
var ErrNoRealCatalog = errors.New("real catalogue not found")

// RealCatalogScenario returns the real-catalog scenario: the environments, task texts and
// tools of the catalogue at path (one JSON object a line with env, task_id, text and tools),
// and a learner of this package's own making on them. What makes two tasks alike is what
// they share: a task needs its environment's own skill and up to three skills named by the
// words of its tools and text that several tasks share, so that tasks with common tools and
// words train and need the same skills. Difficulty is an environment offset, a part no text
// tells, a part that grows with the number of tools and the length of the text, and, as in
// agent benchmarks, half the tasks pushed to nearly always or nearly never solved at the
// start (Scenario.ExtremeShare). The file is read once; the seed draws the rest.
func RealCatalogScenario(path string) (Scenario, error) {
	rows, err := readRealCatalog(path)
	if err != nil {
		return Scenario{}, err
	}
	sc := DefaultScenario()
	sc.Name, sc.Real = "real-catalog", rows
	sc.ExtremeShare, sc.ExtremeShift = 0.5, 2.5
	return sc, nil
}

// realRow is one line of the real catalogue.
type realRow struct {
	Env   string   `json:"env"`
	Task  string   `json:"task_id"`
	Text  string   `json:"text"`
	Tools []string `json:"tools"`
}

func readRealCatalog(path string) ([]record.Task, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoRealCatalog, path)
	}
	if err != nil {
		return nil, fmt.Errorf("open real catalogue: %w", err)
	}
	defer f.Close()
	var out []record.Task
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for line := 1; sc.Scan(); line++ {
		var r realRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("real catalogue %s line %d: %w", path, line, err)
		}
		if r.Env == "" || r.Task == "" {
			return nil, fmt.Errorf("real catalogue %s line %d: env and task_id are required", path, line)
		}
		out = append(out, record.Task{Env: r.Env, Task: r.Task, Text: r.Text, Tools: r.Tools})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read real catalogue %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("real catalogue %s: no tasks", path)
	}
	return out, nil
}

// realSkills is how many shared-word skills the real world has at most; realMinDF and
// realMaxShare bound how many tasks a word must name to be one.
const (
	realSkills   = 400
	realMinDF    = 5
	realMaxShare = 0.2
)

// newRealWorld draws the world of a real-catalog scenario for a seed.
func newRealWorld(sc Scenario, seed uint64) *World {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	w := &World{Scenario: sc, Seed: seed}
	envIdx := map[string]int{}
	for _, r := range sc.Real {
		if _, ok := envIdx[r.Env]; !ok {
			envIdx[r.Env] = len(w.Envs)
			w.Envs = append(w.Envs, r.Env)
		}
	}
	toks := make([]realTokens, len(sc.Real))
	for i, r := range sc.Real {
		toks[i] = tokensOf(r)
	}
	skill := pickSkills(toks)
	w.Shared = len(skill)
	w.Init = make([]float64, len(skill)+len(w.Envs))
	for s := range w.Init {
		w.Init[s] = rng.NormFloat64() * sc.SkillSD
		if s >= len(skill) {
			w.Init[s] += sc.OwnSkillMean
		}
	}
	offset, easy := make([]float64, len(w.Envs)), make([]float64, len(w.Envs))
	for e := range w.Envs {
		offset[e] = sc.EnvDiffMean + rng.NormFloat64()*sc.EnvDiffSD
		easy[e] = 0.1 + 0.8*rng.Float64()
	}
	byEnv := make([][]Task, len(w.Envs))
	for i, r := range sc.Real {
		e := envIdx[r.Env]
		byEnv[e] = append(byEnv[e], w.realTask(rng, r, toks[i], skill, e, offset[e], easy[e]))
	}
	for e, tasks := range byEnv {
		w.splitHeldOut(rng, e, tasks)
	}
	return w
}

// realTask is one task of the real catalogue with the needs and difficulty this seed draws.
func (w *World) realTask(rng *rand.Rand, r record.Task, tk realTokens, skill map[string]int, e int, offset, easy float64) Task {
	sc := w.Scenario
	needs := []int{w.Shared + e}
	for _, t := range tk.tools {
		if s, ok := skill[t]; ok && len(needs) < 3 && !slices.Contains(needs, s) {
			needs = append(needs, s)
		}
	}
	for _, t := range tk.words {
		if s, ok := skill[t]; ok && len(needs) < 4 && !slices.Contains(needs, s) {
			needs = append(needs, s)
			break
		}
	}
	slices.Sort(needs)
	hidden := rng.NormFloat64() * sc.TaskDiffSD
	if rng.Float64() < sc.ExtremeShare {
		if rng.Float64() < easy {
			hidden -= sc.ExtremeShift
		} else {
			hidden += sc.ExtremeShift
		}
	}
	complexity := min(2, 0.5*math.Log2(1+float64(len(r.Tools)))+float64(len(r.Text))/400)
	d := offset + hidden + sc.PerSkillDiff*float64(len(needs)-1) + sc.ComplexityDiff*complexity
	return Task{Env: e, Needs: needs, Difficulty: d, DupOf: -1, hidden: hidden, Record: r}
}

// splitHeldOut keeps a seeded 15% of an environment's tasks (at least 2, at most
// HeldOutPerEnv) for evaluation and the rest as its training catalogue.
func (w *World) splitHeldOut(rng *rand.Rand, e int, tasks []Task) {
	n := min(w.Scenario.HeldOutPerEnv, max(2, int(math.Round(0.15*float64(len(tasks))))))
	n = min(n, len(tasks)-1)
	held := make([]bool, len(tasks))
	for _, i := range rng.Perm(len(tasks))[:n] {
		held[i] = true
	}
	var train, eval []int
	for i, t := range tasks {
		if held[i] {
			eval = append(eval, len(w.HeldOut))
			w.HeldOut = append(w.HeldOut, t)
			continue
		}
		train = append(train, len(w.Tasks))
		w.Tasks = append(w.Tasks, t)
	}
	w.EnvTasks = append(w.EnvTasks, train)
	w.EnvHeld = append(w.EnvHeld, eval)
}

// realTokens are the words of a task's tool names and of its text, lower case, in order of
// first appearance.
type realTokens struct{ tools, words []string }

func tokensOf(r record.Task) realTokens {
	var tk realTokens
	for _, tool := range r.Tools {
		for _, t := range splitWords(tool, 3) {
			if !slices.Contains(tk.tools, t) {
				tk.tools = append(tk.tools, t)
			}
		}
	}
	for _, t := range splitWords(r.Text, 4) {
		if !realStop[t] && !slices.Contains(tk.words, t) {
			tk.words = append(tk.words, t)
		}
	}
	return tk
}

// splitWords splits s into lower-case words of letters of at least minLen, also at a lower-
// to upper-case change (camelCase tool names).
func splitWords(s string, minLen int) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) >= minLen {
			out = append(out, strings.ToLower(string(cur)))
		}
		cur = cur[:0]
	}
	prevLower := false
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r)
	}
	flush()
	return out
}

// pickSkills makes skills of the words that at least realMinDF tasks and at most a
// realMaxShare of them name, the realSkills most common, numbered in order of frequency.
func pickSkills(toks []realTokens) map[string]int {
	df := map[string]int{}
	for _, tk := range toks {
		seen := map[string]bool{}
		for _, t := range append(append([]string(nil), tk.tools...), tk.words...) {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	type wc struct {
		w string
		n int
	}
	var cands []wc
	for t, n := range df {
		if n >= realMinDF && float64(n) <= realMaxShare*float64(len(toks)) {
			cands = append(cands, wc{t, n})
		}
	}
	slices.SortFunc(cands, func(a, b wc) int {
		if c := cmp.Compare(b.n, a.n); c != 0 {
			return c
		}
		return cmp.Compare(a.w, b.w)
	})
	out := map[string]int{}
	for i, c := range cands[:min(len(cands), realSkills)] {
		out[c.w] = i
	}
	return out
}

// realStop are common words that name no skill.
var realStop = map[string]bool{
	"that": true, "this": true, "with": true, "from": true, "have": true, "your": true, "will": true,
	"would": true, "what": true, "they": true, "them": true, "their": true, "there": true, "then": true,
	"when": true, "which": true, "also": true, "some": true, "like": true, "just": true, "want": true,
	"need": true, "please": true, "could": true, "should": true, "about": true, "into": true, "only": true,
	"more": true, "other": true, "been": true, "were": true, "does": true, "here": true, "than": true,
	"user": true, "system": true, "know": true, "make": true, "sure": true, "help": true, "each": true,
}
