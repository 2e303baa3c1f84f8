package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

var errCrash = errors.New("simulated crash before commit")

// crashModel is what must be stored: every complete line written, once; lines that repeat an
// earlier line's rollout id only once.
type crashModel struct {
	files   map[string]string // path -> content written, unfinished tail included
	rest    map[string]string // path -> the end of its unfinished last line
	want    map[string]int    // "env/task=reward" -> count, over every complete line ever written
	idLines int               // complete lines with a rollout id
	ids     map[string]bool
	next    int
	written []string // complete lines with ids, to repeat
}

// TestExactlyOnceUnderCrashes drives random appends (with unfinished tails), renames,
// rewrites, deletes, scans that crash at a random commit (the database is closed without that
// commit and reopened) and scans cancelled between commits, against an in-memory model. After
// every scan that completes, the database must hold exactly the model's rollouts.
func TestExactlyOnceUnderCrashes(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { crashRun(t, seed, 80) })
	}
}

func crashRun(t *testing.T, seed uint64, ops int) {
	r := rand.New(rand.NewPCG(seed, 99))
	commits, failAt := 0, 0
	var cancel context.CancelFunc
	opt := Options{MaxRecords: 1 + r.IntN(6), commitHook: func(*storage.Batch) error {
		commits++
		if commits == failAt {
			if cancel != nil {
				cancel() // a cancelled scan: this commit still happens, the next does not
				return nil
			}
			return errCrash
		}
		return nil
	}}
	e := newEnv(t, opt)
	m := &crashModel{files: map[string]string{}, rest: map[string]string{}, want: map[string]int{}, ids: map[string]bool{}}
	clean := true // the last scan completed: every complete line is stored
	for i := 0; i < ops; i++ {
		switch k := r.IntN(10); {
		case k < 5:
			m.append(e, r)
			clean = false
		case k < 7:
			commits, failAt, cancel = 0, 1+r.IntN(4), nil
			if _, err := e.in.Scan(context.Background()); errors.Is(err, errCrash) {
				e.reopen() // the process died: what was committed is all there is
				clean = false
				continue
			} else if err != nil {
				t.Fatalf("op %d: scan: %v", i, err)
			}
			clean = true
			m.check(t, e, i)
		case k < 8:
			ctx, c := context.WithCancel(context.Background())
			commits, failAt, cancel = 0, 1+r.IntN(3), c
			_, err := e.in.Scan(ctx)
			c()
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("op %d: cancelled scan: %v", i, err)
			}
			clean = err == nil
		default:
			if clean {
				m.destroy(e, r)
				clean = false
			}
		}
	}
	failAt = 0
	e.scan()
	m.check(t, e, ops)
}

// append writes a few lines to a file, sometimes leaving or finishing an unfinished tail.
func (m *crashModel) append(e *env, r *rand.Rand) {
	paths := []string{"rollouts/a.jsonl", "rollouts/b.jsonl", "rollouts/sub/c.jsonl"}
	for p := range m.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	path := paths[r.IntN(len(paths))]
	var b strings.Builder
	b.WriteString(m.rest[path]) // finish the unfinished line first
	delete(m.rest, path)
	for n := r.IntN(4); n >= 0; n-- {
		b.WriteString(m.newLine(r))
	}
	data := b.String()
	if r.IntN(3) == 0 { // leave the end of the last line for later
		cut := len(data) - 1 - r.IntN(10)
		data, m.rest[path] = data[:cut], data[cut:]
	}
	before := m.files[path]
	m.files[path] = before + data
	m.count(before, m.files[path])
	e.append(path, data)
}

func (m *crashModel) newLine(r *rand.Rand) string {
	if len(m.written) > 0 && r.IntN(8) == 0 {
		return m.written[r.IntN(len(m.written))] // the same line again: a duplicate by rollout id
	}
	m.next++
	if r.IntN(3) == 0 {
		l := fmt.Sprintf(`{"env":"e","task":"t%d","reward":%d,"rollout_id":"id%d"}`+"\n", m.next, r.IntN(2), m.next)
		m.written = append(m.written, l)
		return l
	}
	return fmt.Sprintf(`{"env":"e","task":"t%d","reward":%d,"step":%d}`+"\n", m.next, r.IntN(2), r.IntN(3))
}

// count adds the lines that became complete when a file went from before to after.
func (m *crashModel) count(before, after string) {
	start := strings.LastIndexByte(before, '\n') + 1
	end := strings.LastIndexByte(after, '\n') + 1
	if end <= start {
		return
	}
	for _, l := range strings.SplitAfter(after[start:end], "\n") {
		if l != "" {
			m.countLine(l)
		}
	}
}

func (m *crashModel) countLine(l string) {
	var task, reward, id string
	fields := strings.Split(strings.Trim(l, "{}\n"), ",")
	for _, fld := range fields {
		k, v, _ := strings.Cut(fld, ":")
		switch k {
		case `"task"`:
			task = strings.Trim(v, `"`)
		case `"reward"`:
			reward = v
		case `"rollout_id"`:
			id = strings.Trim(v, `"`)
		}
	}
	if id != "" {
		m.idLines++
		if m.ids[id] {
			return
		}
		m.ids[id] = true
	}
	m.want["e/"+task+"="+reward]++
}

// destroy renames, rewrites or deletes a file; called only when everything written is stored.
func (m *crashModel) destroy(e *env, r *rand.Rand) {
	var paths []string
	for p := range m.files {
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		return
	}
	sort.Strings(paths)
	path := paths[r.IntN(len(paths))]
	switch r.IntN(3) {
	case 0:
		to := fmt.Sprintf("rollouts/moved/%d.jsonl", m.next)
		mustRename(e, path, to)
		m.files[to], m.rest[to] = m.files[path], m.rest[path]
		delete(m.files, path)
		delete(m.rest, path)
	case 1:
		data := m.newLine(r) + m.newLine(r)
		m.files[path] = data
		delete(m.rest, path)
		m.count("", data)
		e.write(path, data)
	default:
		if err := os.Remove(e.path(path)); err != nil {
			e.t.Fatal(err)
		}
		delete(m.files, path)
		delete(m.rest, path)
	}
}

func (m *crashModel) check(t *testing.T, e *env, op int) {
	t.Helper()
	var want []string
	for k, n := range m.want {
		for ; n > 0; n-- {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	got := e.tasks()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after op %d: stored %d rollouts, model %d\nstored %v\nmodel  %v", op, len(got), len(want), got, want)
	}
	c := e.counters()
	if c.Rollouts != int64(len(want)) || c.Duplicates != int64(m.idLines-len(m.ids)) {
		t.Fatalf("after op %d: counters %+v; model %d rollouts, %d duplicates", op, c, len(want), m.idLines-len(m.ids))
	}
	storagetest.MustCheck(t, e.db, e.dir)
}
