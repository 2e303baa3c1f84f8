package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the summary as an aligned text table: per policy the median held-out score
// at the report steps, the best score, the degenerate share (whole run and first 10 steps),
// rollouts spent, rollouts to reach random's final score and their ratio to envsched's, and
// the share of seeds whose step-40 score beats random's best; then the same three figures
// (score at the last report step up to 40, best, beats@40) with the held-out score that weighs
// every catalogue task the same (columns "task…"). Medians across seeds.
func WriteTable(w io.Writer, res Result) error {
	s := res.Summary
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"policy"}
	for _, st := range s.Steps {
		head = append(head, fmt.Sprintf("@%d", st))
	}
	head = append(head, "best", "degenerate", "deg@1-10", "rollouts", "to random@end", "ratio", "beats@40")
	at := taskColumnStep(s.Steps)
	head = append(head, fmt.Sprintf("task@%d", at), "task best", "task beats@40")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, p := range s.Policies {
		row := []string{p.Policy}
		for _, st := range s.Steps {
			row = append(row, num(p.ScoreAt[st].Median, 3))
		}
		row = append(row, num(p.Best.Median, 3), pct(p.Degenerate.Median), pct(p.Degenerate10.Median),
			count(p.Rollouts.Median), count(p.ToTarget.Median), ratio(p.RatioToEnvsched.Median), pct(float64(p.BeatsRandomBest)),
			num(p.TaskScoreAt[at].Median, 3), num(p.TaskBest.Median, 3), pct(float64(p.TaskBeatsRandomBest)))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if _, err := fmt.Fprintf(w, "\n%s\n%s\n", headline(res), taskHeadline(res)); err != nil {
		return err
	}
	return WriteCalibration(w, res)
}

// headline is the one-line claim check: envsched's median score at step 40 against the median
// of random's best over the run.
func headline(res Result) string {
	es, ok := res.Summary.find("envsched")
	return claim(res, "", "headline", ok, es.ScoreAt, res.Summary.RandomBest, es.BeatsRandomBest)
}

// taskHeadline is headline with the held-out score that weighs every catalogue task the same.
func taskHeadline(res Result) string {
	es, ok := res.Summary.find("envsched")
	return claim(res, "per task: ", "per-task headline", ok, es.TaskScoreAt, res.Summary.RandomTaskBest, es.TaskBeatsRandomBest)
}

// claim writes a headline from envsched's scores (found says whether envsched ran), random's
// best and the share of seeds ahead.
func claim(res Result, prefix, name string, found bool, scoreAt map[int]Interval, randomBest Interval, beats Share) string {
	at40, has40 := scoreAt[40]
	if !found || !has40 || math.IsNaN(randomBest.Median) {
		return "(the " + name + " needs envsched and random and at least 40 steps)"
	}
	return fmt.Sprintf("%senvsched at step 40: %.3f; random best in %d steps: %.3f (envsched ahead in %s of seeds)",
		prefix, at40.Median, res.Config.Steps, randomBest.Median, pct(float64(beats)))
}

// taskColumnStep is the step of the table's per-task score column: 40, or the last report
// step before it when the run is shorter.
func taskColumnStep(steps []int) int {
	at := steps[0]
	for _, s := range steps {
		if s <= 40 {
			at = s
		}
	}
	return at
}

func (s Summary) find(name string) (PolicySummary, bool) {
	for _, p := range s.Policies {
		if p.Policy == name {
			return p, true
		}
	}
	return PolicySummary{}, false
}

func num(x float64, prec int) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, x)
}

func pct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

func count(x float64) string {
	switch {
	case math.IsNaN(x):
		return "-"
	case math.IsInf(x, 1):
		return "never"
	}
	return fmt.Sprintf("%.0f", x)
}

func ratio(x float64) string {
	switch {
	case math.IsNaN(x):
		return "-"
	case math.IsInf(x, 1):
		return "inf"
	}
	return fmt.Sprintf("%.2fx", x)
}

// jsonResult is the machine-readable form of a Result.
type jsonResult struct {
	Scenario  string   `json:"scenario"`
	Seeds     []uint64 `json:"seeds"`
	Steps     int      `json:"steps"`
	BatchSize int      `json:"batch_size"`
	GroupSize int      `json:"group_size"`
	Summary   Summary  `json:"summary"`
	Headline  string   `json:"headline"`
	// HeadlineTasks is the headline with the per-task held-out score.
	HeadlineTasks string           `json:"headline_tasks"`
	Curves        map[string]Curve `json:"curves"`
}

// Curve is one policy's per-step medians across seeds (index 0 is before training).
type Curve struct {
	Score      []float64 `json:"score"`
	TaskScore  []float64 `json:"task_score"` // the per-task held-out score (Trace.TaskScore)
	Degenerate []float64 `json:"degenerate"`
	Rollouts   []float64 `json:"rollouts"`
}

// Curves returns every policy's per-step medians across seeds.
func (r Result) Curves() map[string]Curve {
	out := map[string]Curve{}
	for name, trs := range r.Traces {
		n := len(trs[0].Score)
		c := Curve{Score: make([]float64, n), TaskScore: make([]float64, n), Degenerate: make([]float64, n), Rollouts: make([]float64, n)}
		for s := range n {
			c.Score[s] = median(mapTraces(trs, func(t Trace) float64 { return t.Score[s] }))
			c.TaskScore[s] = median(mapTraces(trs, func(t Trace) float64 { return t.TaskScore[s] }))
			c.Degenerate[s] = median(mapTraces(trs, func(t Trace) float64 { return t.Degenerate[s] }))
			c.Rollouts[s] = median(mapTraces(trs, func(t Trace) float64 { return float64(t.Rollouts[s]) }))
		}
		out[name] = c
	}
	return out
}

// WriteJSON writes the summary, the headline and the per-step median curves as one JSON
// object. Numbers that do not exist (a target never reached) are null.
func WriteJSON(w io.Writer, res Result) error {
	seeds := make([]uint64, res.Config.Seeds)
	for i := range seeds {
		seeds[i] = res.Config.SeedBase + uint64(i)
	}
	out := jsonResult{
		Scenario: res.Config.Scenario.Name, Seeds: seeds, Steps: res.Config.Steps,
		BatchSize: res.Config.BatchSize, GroupSize: res.Config.GroupSize,
		Summary: res.Summary, Headline: headline(res), HeadlineTasks: taskHeadline(res), Curves: res.Curves(),
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// WriteDemoTable prints the demo's comparison of one envsched run (driven through the file
// protocol) and one random run on the same world: held-out score at the report steps, the
// share of degenerate groups, rollouts spent, and the headline line under both weightings of
// the held-out score, as sim prints them (every environment the same; every task the same).
func WriteDemoTable(w io.Writer, es, random Trace, policy string) error {
	steps := ReportSteps(len(es.Score) - 1)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"choice"}
	for _, s := range steps {
		head = append(head, fmt.Sprintf("step %d", s))
	}
	fmt.Fprintln(tw, strings.Join(append(head, "degenerate groups", "rollouts"), "\t")+"\t")
	for _, row := range []struct {
		name string
		tr   Trace
	}{{"envsched (" + policy + ")", es}, {"random", random}} {
		cells := []string{row.name}
		for _, s := range steps {
			cells = append(cells, num(row.tr.Score[s], 3))
		}
		cells = append(cells, pct(degShare(len(row.tr.Score)-1)(row.tr)), count(float64(row.tr.Rollouts[len(row.tr.Rollouts)-1])))
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	at := min(40, len(es.Score)-1)
	_, err := fmt.Fprintf(w, "\nenvsched at step %d: %.3f; random best in %d steps: %.3f\n"+
		"per task: envsched at step %d: %.3f; random best in %d steps: %.3f\n",
		at, es.Score[at], len(random.Score)-1, best(random),
		at, es.TaskScore[at], len(random.TaskScore)-1, taskBest(random))
	return err
}
