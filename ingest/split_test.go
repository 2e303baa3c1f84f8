package ingest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// splitStream holds every kind of line a reader meets: plain, CRLF, blank, bad JSON, a bad
// reward, a clipped reward, a duplicate rollout id, a number task id. NNNN is replaced by the
// number of the copy, so that many copies, each split its own way, can share one database.
const splitStream = `{"env":"aNNNN","task":"t1","reward":1,"step":3,"rollout_id":"r1-NNNN"}
  
{"env":"aNNNN","task":"t2","reward":0.5,"group_id":"g"}` + "\r\n" + `{oops
{"env":"bNNNN","task":7,"score":2}
{"env":"aNNNN","task":"t4","reward":"x"}
{"env":"aNNNN","task":"t1","reward":0,"step":3,"rollout_id":"r1-NNNN"}
{"env":"aNNNN","task":"t5","reward":true,"step":4}
`

func streamCopy(n int) string { return strings.ReplaceAll(splitStream, "NNNN", fmt.Sprintf("%04d", n)) }

func copyPath(n int) string { return fmt.Sprintf("rollouts/c%04d.jsonl", n) }

// perCopy is what was stored from one copy: its rollouts and quarantine entries, with the copy
// number taken out so that copies compare equal.
type perCopy struct {
	Tasks      []string
	Quarantine []string
}

func byCopy(e *env) map[string]*perCopy {
	out := map[string]*perCopy{}
	get := func(n string) *perCopy {
		if out[n] == nil {
			out[n] = &perCopy{}
		}
		return out[n]
	}
	for _, r := range e.rollouts() {
		n := r.Env[1:]
		get(n).Tasks = append(get(n).Tasks, fmt.Sprintf("%c/%s=%g step %d group %q id %q", r.Env[0], r.Task, r.Reward, r.Step, r.Group, strings.ReplaceAll(r.RolloutID, n, "")))
	}
	for _, q := range e.quarantine() {
		n := strings.TrimSuffix(strings.TrimPrefix(q.Path, "rollouts/c"), ".jsonl")
		get(n).Quarantine = append(get(n).Quarantine, fmt.Sprintf("@%d:%s:%s", q.Offset, q.Reason, strings.ReplaceAll(string(q.Head), n, "NNNN")))
	}
	for _, p := range out {
		sort.Strings(p.Tasks)
	}
	return out
}

// checkCopies ingests copy 0 in one write and every other copy in the given pieces (one scan per
// round of pieces), then checks that every copy stored exactly what copy 0 did.
func checkCopies(t *testing.T, pieces [][]string) {
	e := newEnv(t, Options{})
	e.write(copyPath(0), streamCopy(0))
	for round := 0; ; round++ {
		wrote := false
		for n, ps := range pieces {
			if round < len(ps) {
				e.append(copyPath(n+1), ps[round])
				wrote = true
			}
		}
		if !wrote {
			break
		}
		e.scan()
	}
	got := byCopy(e)
	want := got["0000"]
	if want == nil || len(want.Tasks) != 4 || len(want.Quarantine) != 2 {
		t.Fatalf("one write stored %+v; want 4 rollouts and 2 quarantined lines", want)
	}
	for n := range pieces {
		key := fmt.Sprintf("%04d", n+1)
		if !reflect.DeepEqual(got[key], want) {
			t.Errorf("copy written as %q stored %+v; one write stored %+v", pieces[n], got[key], want)
		}
	}
	c := e.counters()
	if c.Duplicates != int64(len(pieces)+1) || c.Clipped != int64(len(pieces)+1) {
		t.Errorf("counters %+v; want %d duplicates and clipped", c, len(pieces)+1)
	}
}

func TestSplitAtEveryByte(t *testing.T) {
	var pieces [][]string
	for p := 0; p <= len(splitStream); p++ {
		s := streamCopy(p + 1)
		pieces = append(pieces, []string{s[:p], s[p:]})
	}
	checkCopies(t, pieces)
}

func TestSplitAtRandomPoints(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var pieces [][]string
	for n := 1; n <= 200; n++ {
		s := streamCopy(n)
		cuts := []int{0, len(s)}
		for k := 1 + r.IntN(8); k > 0; k-- {
			cuts = append(cuts, r.IntN(len(s)+1))
		}
		sort.Ints(cuts)
		var ps []string
		for i := 1; i < len(cuts); i++ {
			ps = append(ps, s[cuts[i-1]:cuts[i]])
		}
		pieces = append(pieces, ps)
	}
	checkCopies(t, pieces)
}
