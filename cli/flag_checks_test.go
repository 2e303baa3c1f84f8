package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchBadFlagsTouchNothing: a bad flag of `envsched batch` exits 2 before the database is
// opened. It was found after the ingest, so `batch --size 0` on a fresh exchange directory made
// envsched.db (with the default reward range, fixed for good) and ingested into it, then exited 2.
func TestBatchBadFlagsTouchNothing(t *testing.T) {
	for _, args := range [][]string{
		{"--size", "0"}, {"--group-size", "0"}, {"--step", "-4"}, {"--id", "../x"},
		{"--gamma", "2"}, {"--sim-penalty", "2e6"}, {"--exploit", "greedy"},
	} {
		dir := exchangeDir(t)
		code, _, msg := runApp(append([]string{"batch", "--dir", dir}, args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d (%s); want 2", args, code, msg)
		}
		if _, err := os.Stat(filepath.Join(dir, "envsched.db")); err == nil {
			t.Errorf("%v: exit %d, and envsched.db was made (and ingested into) first", args, code)
		}
	}
}

// TestSchedulerFlagErrorsNameTheFlag: README says a scheduling flag out of its range exits 2
// "with a message naming the flag". propagate and batcher name the parameter, which is not
// always the flag (`similarity penalty` is --sim-penalty, `re-chosen trend` --rechosen-trend), so
// the message begins with the flag and its value.
func TestSchedulerFlagErrorsNameTheFlag(t *testing.T) {
	bad := map[string]string{"hops": "3"} // the one integer flag; NaN is out of every float's range
	named := map[string]bool{"exploit": true, "exploit-graded": true}
	for _, s := range schedulerSetters {
		named[s.flag] = true
	}
	dir := exchangeDir(t)
	tried := 0
	for _, f := range schedulerFlags() {
		name := f.Names()[0]
		if !named[name] {
			t.Errorf("--%s is a scheduler flag that schedulerSetters does not read", name)
		}
		if strings.HasPrefix(name, "exploit") || !f.(interface{ TakesValue() bool }).TakesValue() {
			continue // named by their parser; a bool has no value out of range
		}
		value, ok := bad[name]
		if !ok {
			value = "NaN"
		}
		tried++
		for _, cmd := range []string{"batch", "run"} {
			code, _, msg := runApp(cmd, "--dir", dir, "--"+name, value)
			if code != 2 || !strings.HasPrefix(msg, "--"+name+" "+value+": ") {
				t.Errorf("%s --%s %s: exit %d, %q; want exit 2 and a message that starts with the flag", cmd, name, value, code, msg)
			}
		}
	}
	if tried < 20 {
		t.Errorf("only %d flags with values tried", tried)
	}
}

// TestTwoBadSchedulerFlagsNameTheOneReported: with two scheduling flags out of range, the
// message names the flag whose range it reports. schedulerParams names the first flag (in
// schedulerSetters' order) that alone fails, but wraps the error of all the flags together,
// which propagate reports in its own order: `--gamma 2 --feature-ridge -1` said
// "--feature-ridge -1: invalid prediction parameter: gamma is 2, want in [0, 1]".
func TestTwoBadSchedulerFlagsNameTheOneReported(t *testing.T) {
	dir := exchangeDir(t)
	for _, args := range [][]string{
		{"--gamma", "2", "--feature-ridge", "-1"},
		{"--feature-ridge", "-1", "--gamma", "2"},
		{"--drift-rate", "2", "--prior-refit", "-1"},
	} {
		code, _, msg := runApp(append([]string{"batch", "--dir", dir}, args...)...)
		flag, _, _ := strings.Cut(strings.TrimPrefix(msg, "--"), " ")
		param := strings.ReplaceAll(flag, "-", " ") // gamma, feature ridge, drift rate, prior refit
		if code != 2 || !strings.Contains(msg, ": "+param+" is ") {
			t.Errorf("%v: exit %d, %q; want exit 2 and the range of the flag it names (%q)", args, code, msg, param)
		}
	}
}

// TestBatchEmptyEnvFlagTouchesNothing: `--env ""` (or `--exclude-env ""`, as a script with an
// unset variable writes it) can never name an environment, and needs no database to tell,
// yet it is found by the request's parser after the database was made and ingested into:
// exit 1, "envs has an empty environment name" (the request's field, not the flag). README:
// bad flags "exit 2 before the database is opened (nothing is created or ingested)".
func TestBatchEmptyEnvFlagTouchesNothing(t *testing.T) {
	for _, args := range [][]string{{"--env", ""}, {"--exclude-env", ""}, {"--env", "a", "--env", ""}} {
		dir := exchangeDir(t)
		code, _, msg := runApp(append([]string{"batch", "--dir", dir}, args...)...)
		if code != 2 || !strings.HasPrefix(msg, args[len(args)-2]) {
			t.Errorf("%q: exit %d (%s); want 2 and a message naming the flag", args, code, msg)
		}
		if _, err := os.Stat(filepath.Join(dir, "envsched.db")); err == nil {
			t.Errorf("%q: exit %d, and envsched.db was made (and ingested into) first", args, code)
		}
	}
}
