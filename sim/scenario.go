package sim

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/envsched/envsched/record"
)

// ErrUnknownScenario is returned by ScenarioByName for a name it does not know.
var ErrUnknownScenario = errors.New("unknown scenario")

// Scenario is the set of knobs of the generative model and the learner. The presets are the
// scenarios of the benchmark; the README ("The simulated world and what it assumes") describes them.
type Scenario struct {
	Name string

	Envs          int     // environments
	TaskMedian    float64 // median tasks per environment (log-normal sizes)
	TaskSpread    float64 // σ of the log of the size
	MinTasks      int     // smallest environment
	MaxTasks      int     // largest environment
	HeldOutPerEnv int     // held-out evaluation tasks per environment

	SharedSkills  int     // skills shared by every environment (at most len(sharedSkillWords))
	EnvSkills     int     // skills of one environment alone, per environment
	FocusSkills   int     // shared skills an environment draws most needs from
	OwnShare      float64 // chance that a need is one of the environment's own skills
	OffFocusShare float64 // chance that a need is any shared skill
	SkillSD       float64 // σ of starting skill levels
	OwnSkillMean  float64 // mean starting level of environment-specific skills

	EnvDiffMean  float64 // mean environment difficulty offset
	EnvDiffSD    float64 // σ of environment difficulty offsets
	TaskDiffSD   float64 // σ of task difficulty within an environment
	PerSkillDiff float64 // extra difficulty per needed skill beyond the first
	// ComplexityDiff is the extra difficulty per constraint clause (0 to 2 per task, in the text)
	ComplexityDiff float64
	Slope          float64 // κ in p = logistic(κ·(mean level − difficulty) + memory)

	DupEnvShare float64 // share of environments with near-duplicate tasks
	DupShare    float64 // in such an environment, share of tasks that are near-duplicates
	TextNoise   bool    // catalogue text and tools describe random skills, not the needed ones
	// ExtremeShare is the share of tasks whose difficulty is moved by ±ExtremeShift, so that
	// at the start they are nearly always or nearly never solved (0: none). Which way is
	// drawn per task, with a chance of "easy" drawn per environment uniformly in [0.1, 0.9];
	// no catalogue text tells it.
	ExtremeShare float64
	ExtremeShift float64
	// Real is the catalogue of the real-catalog scenario (see RealCatalogScenario); nil for
	// the generated worlds.
	Real []record.Task

	Learn LearnParams
}

// LearnParams are the constants of the GRPO-like learner.
type LearnParams struct {
	Rate     float64 // skill gain per unit of saturated signal
	Sat      float64 // signal at which a skill's gain in one step saturates (redundant groups)
	Ceiling  float64 // level above the start at which gains have fallen by a factor e
	TaskRate float64 // memorisation of a trained task per unit of signal (does not transfer)
	Forget   float64 // per step, untrained skills move this share back towards the start
	Noise    float64 // relative noise of every gain
	Drift    float64 // σ of the per-step random walk of every skill (policy drift)
}

// DefaultScenario is about 20 environments of unequal sizes, a few thousand tasks in all.
func DefaultScenario() Scenario {
	return Scenario{
		Name: "default", Envs: 20, TaskMedian: 120, TaskSpread: 0.8, MinTasks: 20, MaxTasks: 400,
		HeldOutPerEnv: 24,
		SharedSkills:  24, EnvSkills: 2, FocusSkills: 5, OwnShare: 0.3, OffFocusShare: 0.1,
		SkillSD: 0.9, OwnSkillMean: -0.3,
		EnvDiffMean: 0.2, EnvDiffSD: 1.0, TaskDiffSD: 0.6, PerSkillDiff: 0.2, ComplexityDiff: 0.9, Slope: 1.6,
		DupEnvShare: 0.3, DupShare: 0.25,
		Learn: LearnParams{Rate: 0.1, Sat: 3, Ceiling: 1.5, TaskRate: 0.2, Forget: 0.02, Noise: 0.3, Drift: 0.005},
	}
}

// ScenarioByName returns a preset: default, noise (text similarity says nothing about skills),
// drift (strong policy drift and forgetting), small-envs (many small environments) or bimodal
// (most tasks nearly always or nearly never solved at the start, as in agent benchmarks).
// The real-catalog scenario needs a file: see RealCatalogScenario.
func ScenarioByName(name string) (Scenario, error) {
	sc := DefaultScenario()
	switch name {
	case "", "default":
	case "noise":
		sc.Name, sc.TextNoise = "noise", true
	case "drift":
		sc.Name = "drift"
		sc.Learn.Forget, sc.Learn.Drift, sc.Learn.TaskRate = 0.05, 0.04, 0.4
	case "bimodal":
		sc.Name, sc.ExtremeShare, sc.ExtremeShift = "bimodal", 0.6, 2.5
	case "small-envs":
		sc.Name, sc.Envs, sc.TaskMedian, sc.TaskSpread, sc.MinTasks, sc.MaxTasks = "small-envs", 80, 30, 0.5, 8, 80
		sc.HeldOutPerEnv, sc.EnvSkills = 8, 1
	default:
		return Scenario{}, fmt.Errorf("scenario %q: %w (known: %s)", name, ErrUnknownScenario, strings.Join(ScenarioNames(), ", "))
	}
	return sc, nil
}

// ScenarioNames lists the presets.
func ScenarioNames() []string {
	names := []string{"default", "noise", "drift", "small-envs", "bimodal"}
	sort.Strings(names)
	return names
}

// ScenarioFor returns the scenario name: a preset of ScenarioByName, or "real-catalog", read
// from the catalogue file at realPath (see RealCatalogScenario).
func ScenarioFor(name, realPath string) (Scenario, error) {
	if name == "real-catalog" {
		return RealCatalogScenario(realPath)
	}
	return ScenarioByName(name)
}
