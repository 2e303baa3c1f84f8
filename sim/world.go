package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/envsched/envsched/record"
)

// Task is one simulated (environment, task) pair: the skills it needs, its difficulty, and the
// catalogue row a trainer would hand to envsched.
type Task struct {
	Env        int     // index into World.Envs
	Needs      []int   // skills the task needs (indices into the learner's skill levels)
	Difficulty float64 // subtracted from the mean level of Needs
	DupOf      int     // index of the original this task nearly duplicates; -1 when none
	Record     record.Task
	core       string  // what the task asks, shared by its near-duplicates
	hidden     float64 // the part of Difficulty no catalogue text tells (the analyses use it)
}

// World is one seeded draw of the generative model: environments, skills, the training
// catalogue, the held-out tasks and the starting skill levels. A World is read-only once made
// and is shared by every policy of a seed.
type World struct {
	Scenario Scenario
	Seed     uint64
	Envs     []string
	Init     []float64 // starting skill level per skill
	Shared   int       // skills [0, Shared) exist in every environment; the rest belong to one
	Tasks    []Task    // the training catalogue
	HeldOut  []Task    // evaluation tasks, never in the catalogue
	EnvTasks [][]int   // training task indices per environment
	EnvHeld  [][]int   // held-out task indices per environment
}

// envPlan is what the generator decided about one environment before drawing its tasks.
type envPlan struct {
	domain envDomain
	name   string
	focus  []int // shared skills most of its tasks need
	own    []int // skills of this environment alone
	offset float64
	size   int
	dups   bool    // some of its tasks are near-duplicates of others
	easy   float64 // chance that an extreme task is easy (Scenario.ExtremeShare)
}

// NewWorld draws the world of a scenario for a seed. The same scenario and seed always give
// the same world, byte for byte.
func NewWorld(sc Scenario, seed uint64) *World {
	if sc.Real != nil {
		return newRealWorld(sc, seed)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	w := &World{Scenario: sc, Seed: seed, Shared: sc.SharedSkills}
	plans := w.planEnvs(rng)
	words := w.skillWords(plans)
	w.initSkills(rng)
	for e, p := range plans {
		w.Envs = append(w.Envs, p.name)
		w.EnvTasks = append(w.EnvTasks, w.drawTasks(rng, e, p, words, p.size, false))
		w.EnvHeld = append(w.EnvHeld, w.drawTasks(rng, e, p, words, sc.HeldOutPerEnv, true))
	}
	return w
}

func (w *World) planEnvs(rng *rand.Rand) []envPlan {
	sc := w.Scenario
	plans := make([]envPlan, sc.Envs)
	next := sc.SharedSkills
	for e := range plans {
		d := envDomains[e%len(envDomains)]
		name := "sim-" + d.name
		if e >= len(envDomains) {
			name = fmt.Sprintf("%s-%d", name, e/len(envDomains)+1)
		}
		p := envPlan{domain: d, name: name, offset: sc.EnvDiffMean + rng.NormFloat64()*sc.EnvDiffSD}
		p.focus = rng.Perm(sc.SharedSkills)[:sc.FocusSkills]
		for range sc.EnvSkills {
			p.own = append(p.own, next)
			next++
		}
		p.size = envSize(rng, sc)
		p.dups = rng.Float64() < sc.DupEnvShare
		if sc.ExtremeShare > 0 { // drawn only then, so that the other scenarios' worlds stay as they were
			p.easy = 0.1 + 0.8*rng.Float64()
		}
		plans[e] = p
	}
	return plans
}

func envSize(rng *rand.Rand, sc Scenario) int {
	n := int(math.Round(sc.TaskMedian * math.Exp(rng.NormFloat64()*sc.TaskSpread)))
	return min(max(n, sc.MinTasks), sc.MaxTasks)
}

// skillWords gives every skill its word lists: shared skills from the fixed table, the skills
// of one environment from its nouns and a verb.
func (w *World) skillWords(plans []envPlan) []skillWords {
	words := append([]skillWords(nil), sharedSkillWords[:w.Scenario.SharedSkills]...)
	for e, p := range plans {
		for i := range p.own {
			verb := envSkillVerbs[(e*3+i)%len(envSkillVerbs)]
			noun := p.domain.nouns[i%len(p.domain.nouns)]
			stem := strings.TrimPrefix(p.name, "sim-")
			words = append(words, skillWords{
				name:    stem + "-" + verb,
				phrases: []string{verb + " the %s " + noun, "use the " + stem + " console to " + verb + " the %s", verb + " every " + noun + " linked to the %s"},
				words:   []string{verb, noun, stem},
				tools:   []string{stem + "_" + verb + "_" + noun, stem + "_get_" + noun},
			})
		}
	}
	return words
}

func (w *World) initSkills(rng *rand.Rand) {
	sc := w.Scenario
	total := sc.SharedSkills + sc.Envs*sc.EnvSkills
	w.Init = make([]float64, total)
	for s := range w.Init {
		if s < sc.SharedSkills {
			w.Init[s] = rng.NormFloat64() * sc.SkillSD
		} else {
			w.Init[s] = sc.OwnSkillMean + rng.NormFloat64()*sc.SkillSD
		}
	}
}

// drawTasks draws n tasks of environment e and appends them to the catalogue or the held-out
// set; it returns their indices. Held-out tasks are never near-duplicates of training tasks.
func (w *World) drawTasks(rng *rand.Rand, e int, p envPlan, words []skillWords, n int, held bool) []int {
	base := len(w.Tasks)
	if held {
		base = len(w.HeldOut)
	}
	local := make([]Task, 0, n)
	for i := range n {
		t := w.freshTask(rng, e, p, words)
		if !held && p.dups && i > 0 && rng.Float64() < w.Scenario.DupShare {
			src := rng.IntN(len(local))
			t = nearDuplicate(rng, local[src], p)
			if t.DupOf < 0 {
				t.DupOf = base + src
			}
		}
		t.Record.Env = p.name
		t.Record.Task = taskID(held, i)
		local = append(local, t)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = base + i
	}
	if held {
		w.HeldOut = append(w.HeldOut, local...)
	} else {
		w.Tasks = append(w.Tasks, local...)
	}
	return idx
}

func taskID(held bool, i int) string {
	if held {
		return fmt.Sprintf("heldout-%04d", i)
	}
	return fmt.Sprintf("t%04d", i)
}

// freshTask draws the needs, difficulty and text of a new task.
func (w *World) freshTask(rng *rand.Rand, e int, p envPlan, words []skillWords) Task {
	sc := w.Scenario
	needs := drawNeeds(rng, sc, p)
	c := drawComplexity(rng)
	hidden := rng.NormFloat64() * sc.TaskDiffSD
	if sc.ExtremeShare > 0 && rng.Float64() < sc.ExtremeShare {
		if rng.Float64() < p.easy {
			hidden -= sc.ExtremeShift
		} else {
			hidden += sc.ExtremeShift
		}
	}
	d := p.offset + hidden + sc.PerSkillDiff*float64(len(needs)-1) + sc.ComplexityDiff*float64(c)
	textSkills, textC := needs, c
	if sc.TextNoise {
		textSkills = drawNeeds(rng, sc, envPlan{focus: rng.Perm(sc.SharedSkills)[:sc.FocusSkills], own: p.own})
		textC = drawComplexity(rng)
	}
	core, tools := coreText(rng, textSkills, p, words)
	core += constraintText(rng, textC)
	return Task{Env: e, Needs: needs, Difficulty: d, DupOf: -1, core: core, hidden: hidden, Record: record.Task{
		Text:  dress(rng, core, p, words),
		Tools: tools,
	}}
}

// drawComplexity is 0 (40%), 1 (40%) or 2 (20%) constraints.
func drawComplexity(rng *rand.Rand) int {
	switch u := rng.Float64(); {
	case u < 0.4:
		return 0
	case u < 0.8:
		return 1
	}
	return 2
}

// constraintText is c distinct constraint clauses.
func constraintText(rng *rand.Rand, c int) string {
	out := ""
	for _, i := range rng.Perm(len(constraints))[:c] {
		out += " " + constraints[i]
	}
	return out
}

// drawNeeds picks one to three distinct skills: mostly the environment's focus and its own
// skills, now and then any shared skill.
func drawNeeds(rng *rand.Rand, sc Scenario, p envPlan) []int {
	k := 1
	switch u := rng.Float64(); {
	case u > 0.75:
		k = 3
	case u > 0.3:
		k = 2
	}
	needs := make([]int, 0, k)
	for len(needs) < k {
		var s int
		switch u := rng.Float64(); {
		case u < sc.OwnShare && len(p.own) > 0:
			s = p.own[rng.IntN(len(p.own))]
		case u < sc.OwnShare+sc.OffFocusShare:
			s = rng.IntN(sc.SharedSkills)
		default:
			s = p.focus[rng.IntN(len(p.focus))]
		}
		if !contains(needs, s) {
			needs = append(needs, s)
		}
	}
	sort.Ints(needs)
	return needs
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// nearDuplicate is a task that asks for the same thing as src in other words: the same needs
// and core text, a slightly different difficulty, another opener and filler.
func nearDuplicate(rng *rand.Rand, src Task, p envPlan) Task {
	t := src
	jitter := rng.NormFloat64() * 0.15
	t.Difficulty += jitter
	t.hidden += jitter
	t.Record = record.Task{Text: dressCore(rng, src.core, p), Tools: append([]string(nil), src.Record.Tools...)}
	return t
}

// coreText writes what the task asks, one phrase per skill, and the tools offered.
func coreText(rng *rand.Rand, skills []int, p envPlan, words []skillWords) (string, []string) {
	parts := make([]string, 0, len(skills))
	tools := map[string]bool{}
	for _, s := range skills {
		sw := words[s]
		noun := p.domain.nouns[rng.IntN(len(p.domain.nouns))]
		parts = append(parts, fmt.Sprintf(sw.phrases[rng.IntN(len(sw.phrases))], noun))
		tools[sw.tools[rng.IntN(len(sw.tools))]] = true
		if rng.Float64() < 0.5 {
			tools[sw.tools[rng.IntN(len(sw.tools))]] = true
		}
	}
	if rng.Float64() < 0.3 {
		sw := words[rng.IntN(len(sharedSkillWords))%len(words)]
		tools[sw.tools[rng.IntN(len(sw.tools))]] = true
	}
	out := make([]string, 0, len(tools))
	for t := range tools {
		out = append(out, t)
	}
	sort.Strings(out)
	return strings.Join(parts, ", then "), out
}

// dress wraps the core text in an opener and filler, and sometimes a misleading aside.
func dress(rng *rand.Rand, core string, p envPlan, words []skillWords) string {
	if rng.Float64() < 0.25 {
		sw := words[rng.IntN(len(sharedSkillWords))%len(words)]
		core += " (no need to " + sw.words[rng.IntN(len(sw.words))] + " anything)"
	}
	return dressCore(rng, core, p)
}

// dressCore puts an opener before the core text and a filler sentence after it.
func dressCore(rng *rand.Rand, core string, p envPlan) string {
	f := func() string { return fillerWords[rng.IntN(len(fillerWords))] }
	opener := openers[rng.IntN(len(openers))]
	filler := fmt.Sprintf("Keep the %s %s in mind for the %s.", f(), f(), p.domain.nouns[rng.IntN(len(p.domain.nouns))])
	return opener + " " + core + ". " + filler
}

// root is the original of a near-duplicate, or t itself.
func (w *World) root(t int) int {
	if d := w.Tasks[t].DupOf; d >= 0 {
		return d
	}
	return t
}

// Catalog returns the training catalogue as catalogue records, in a stable order.
func (w *World) Catalog() []record.Task {
	out := make([]record.Task, len(w.Tasks))
	for i, t := range w.Tasks {
		out[i] = t.Record
	}
	return out
}
