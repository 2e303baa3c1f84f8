package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestAddCountsAndSums(t *testing.T) {
	var tk Task
	var g Group
	tk.Add(1, 3, 3, true, &g, 0.5)
	tk.Add(0.25, 3, 2, true, &g, 0.5)
	if tk.Rollouts != 2 || !near(tk.Sum, 1.25) || !near(tk.SumSq, 1.0625) || tk.LastStep != 3 {
		t.Errorf("task %+v; want 2 rollouts, sum 1.25, sum of squares 1.0625, last step 3", tk)
	}
	if !near(tk.A, 1.25) || !near(tk.B, 0.75) || tk.Round != 3 {
		t.Errorf("evidence a=%g b=%g round %d; want 1.25, 0.75 at round 3", tk.A, tk.B, tk.Round)
	}
	if !near(tk.Mean(), 0.625) || (Task{}).Mean() != 0 {
		t.Errorf("mean %g (want 0.625), empty mean %g (want 0)", tk.Mean(), (Task{}).Mean())
	}
}

func TestEvidenceDecaysPerRound(t *testing.T) {
	var tk Task
	tk.Add(1, 5, 0, false, new(Group), 0.5)
	tk.Add(1, 7, 0, false, new(Group), 0.5)
	// the first rollout's evidence is two rounds old at round 7: 1·0.5² + 1
	if !near(tk.A, 1.25) || !near(tk.B, 0) || tk.Round != 7 {
		t.Fatalf("a=%g b=%g round %d; want 1.25, 0 at round 7", tk.A, tk.B, tk.Round)
	}
	a, b := tk.Evidence(9, 0.5)
	if !near(a, 1.25*0.25) || b != 0 {
		t.Errorf("evidence at round 9: %g %g; want %g 0", a, b, 1.25*0.25)
	}
	if a, _ := tk.Evidence(4, 0.5); !near(a, 1.25) {
		t.Errorf("evidence asked for an earlier round %g; want it unchanged", a)
	}
	if tk.LastStep != 0 {
		t.Errorf("last step %d from rollouts without a step", tk.LastStep)
	}
}

func TestLateRolloutCountsAtTheNewerRound(t *testing.T) {
	var tk Task
	tk.Add(0, 10, 10, true, new(Group), 0.9)
	tk.Add(1, 4, 4, true, new(Group), 0.9)
	if tk.Round != 10 || !near(tk.A, 1) || !near(tk.B, 1) || tk.LastStep != 10 {
		t.Errorf("task %+v; want round 10, a=1, b=1, last step 10", tk)
	}
}

func TestGroupsAndDegenerateShare(t *testing.T) {
	var tk Task
	var g Group
	tk.Add(1, 1, 1, true, &g, 0.9)
	if tk.Groups != 0 || tk.WN != 0 {
		t.Fatalf("a group of one counted: %+v", tk)
	}
	tk.Add(1, 1, 1, true, &g, 0.9)
	if tk.Groups != 1 || tk.Degenerate != 1 || tk.WV != 0 || tk.WN != 1 {
		t.Fatalf("two equal rewards: %+v; want one degenerate group with no variance", tk)
	}
	tk.Add(0, 1, 1, true, &g, 0.9)
	if tk.Groups != 1 || tk.Degenerate != 0 || !near(tk.WV, 2.0/9) || tk.WN != 1 {
		t.Fatalf("rewards 1,1,0: %+v; want one informative group of variance 2/9", tk)
	}
	var h Group
	tk.Add(0, 1, 1, true, &h, 0.9)
	tk.Add(0, 1, 1, true, &h, 0.9)
	if tk.Groups != 2 || tk.Degenerate != 1 || !near(tk.WV, 2.0/9) || tk.WN != 2 {
		t.Errorf("a second, all-zero group: %+v; want 2 groups, 1 degenerate", tk)
	}
	if g.N != 3 || g.Min != 0 || g.Max != 1 || !near(g.Sum, 2) {
		t.Errorf("group state %+v", g)
	}
}

func TestEnvApply(t *testing.T) {
	var e Env
	var before, after Task
	after.Add(1, 1, 1, true, new(Group), 0.9)
	e.Apply(Task{}, Task{}, true) // a catalogue task without rollouts
	e.Apply(before, after, true)
	before = after
	after.Add(0, 1, 1, true, new(Group), 0.9)
	e.Apply(before, after, false)
	if e.Tasks != 2 || e.TasksSeen != 1 || e.Rollouts != 2 || !near(e.Sum, 1) || !near(e.Mean(), 0.5) {
		t.Errorf("env %+v; want 2 tasks, 1 seen, 2 rollouts, mean 0.5", e)
	}
	if (Env{}).Mean() != 0 {
		t.Error("an empty environment has a mean")
	}
}

func TestWithinVarDecays(t *testing.T) {
	var tk Task
	var g Group
	tk.Add(0, 2, 2, true, &g, 0.5)
	tk.Add(1, 2, 2, true, &g, 0.5)
	wv, wn := tk.WithinVar(3, 0.5)
	if !near(wv, 0.125) || !near(wn, 0.5) {
		t.Errorf("within-group variance one round later %g over %g; want 0.125 over 0.5", wv, wn)
	}
}

// TestLateRolloutOfAnOlderGroup: the older group's variance has decayed since it was counted;
// a late rollout replaces the decayed contribution, not the original one.
func TestLateRolloutOfAnOlderGroup(t *testing.T) {
	var tk Task
	var g, h Group
	tk.Add(0, 1, 1, true, &g, 0.5)
	tk.Add(1, 1, 1, true, &g, 0.5) // variance 0.25 at round 1
	tk.Add(1, 3, 3, true, &h, 0.5) // round 3: the 0.25 is now 0.0625
	tk.Add(0.5, 1, 1, true, &g, 0.5)
	if want := 1.0 / 6; !near(tk.WV, want) {
		t.Errorf("within-group variance %g; want the group's new variance %g counted at round 3", tk.WV, want)
	}
}
