package export_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/export"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/report/reporttest"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// generated is a database holding a generated run, plus rollouts with no group, a clipped
// reward and a duplicate.
func generated(t *testing.T) (*storage.DB, reporttest.Run) {
	t.Helper()
	db := storagetest.Open(t)
	run, err := reporttest.Generate(db, reporttest.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	extra := []record.Rollout{
		{Env: "env-a", Task: "1", Reward: 0.25, Step: 13, HasStep: true},
		{Env: "env-a", Task: "1", Reward: 0.75, Step: 13, HasStep: true},
		{Env: "env-b", Task: "new", Reward: 1.5, Step: 13, HasStep: true, RolloutID: "x"},
		{Env: "env-b", Task: "new", Reward: 0, Step: 13, HasStep: true, RolloutID: "x"},
	}
	b := &storage.Batch{}
	for _, r := range extra {
		b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: r})
	}
	res, err := db.Commit(b)
	if err != nil || res.Rollouts != 3 || res.Clipped != 1 || res.Duplicates != 1 {
		t.Fatalf("extra rollouts: %+v, %v", res, err)
	}
	run.Rollouts += 3
	return db, run
}

func write(t *testing.T, db *storage.DB, what export.What, format export.Format) ([]byte, int64) {
	t.Helper()
	var buf bytes.Buffer
	var n int64
	err := db.View(func(r *storage.Reader) error {
		var err error
		n, err = export.Write(&buf, r, db.Config(), what, format)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), n
}

// TestRoundTrip re-ingests exported rollouts and tasks into a fresh exchange directory: every
// task's and environment's statistics come out the same.
func TestRoundTrip(t *testing.T) {
	db, run := generated(t)
	dir := t.TempDir()
	for sub, what := range map[string]export.What{"rollouts": export.Rollouts, "catalog": export.Tasks} {
		data, _ := write(t, db, what, export.JSONL)
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sub, "export.jsonl"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fresh, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	in, err := ingest.New(fresh, dir, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := in.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rollouts != run.Rollouts || sum.Quarantined != 0 {
		t.Fatalf("re-ingested %d rollouts (%d quarantined), exported %d", sum.Rollouts, sum.Quarantined, run.Rollouts)
	}
	compareTasks(t, tasksOf(t, db), tasksOf(t, fresh))
	compareEnvs(t, db, fresh)
	storagetest.MustCheck(t, fresh, dir)
}

func tasksOf(t *testing.T, db *storage.DB) map[storage.TaskKey]storage.TaskInfo {
	t.Helper()
	out := map[storage.TaskKey]storage.TaskInfo{}
	err := db.View(func(r *storage.Reader) error {
		return r.Tasks(true, func(ti storage.TaskInfo) error {
			out[storage.TaskKey{Env: ti.Env, Task: ti.Task.Task}] = ti
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func compareTasks(t *testing.T, want, got map[storage.TaskKey]storage.TaskInfo) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%d tasks after the round trip, want %d", len(got), len(want))
	}
	for k, w := range want {
		g := got[k]
		ws, gs := w.Stats, g.Stats
		ws.Chosen, ws.LastChosen = 0, 0 // answers are not re-imported
		if ws != gs {
			t.Errorf("task %v: statistics\n got %+v\nwant %+v", k, gs, ws)
		}
		if w.Text != g.Text || len(w.Tools) != len(g.Tools) || len(w.Tags) != len(g.Tags) {
			t.Errorf("task %v: metadata %+v, want %+v", k, g.Task, w.Task)
		}
	}
}

func compareEnvs(t *testing.T, a, b *storage.DB) {
	t.Helper()
	want, _ := a.Envs()
	got, _ := b.Envs()
	if len(want) != len(got) {
		t.Fatalf("%d envs after the round trip, want %d", len(got), len(want))
	}
	for name, w := range want {
		g := got[name]
		if math.Abs(w.Sum-g.Sum) > 1e-9 {
			t.Errorf("env %s: sum %g, want %g", name, g.Sum, w.Sum)
		}
		w.Sum, g.Sum = 0, 0
		if w != g {
			t.Errorf("env %s: %+v, want %+v", name, g, w)
		}
	}
}

func TestCSV(t *testing.T) {
	db, run := generated(t)
	cases := []struct {
		what   export.What
		rows   int
		header string
	}{
		{export.Rollouts, run.Rollouts, "env"},
		{export.Tasks, run.Tasks + 1, "env"},
		{export.Batches, run.Answers * 8, "id"},
		{export.Quarantine, run.Quarantined, "seq"},
	}
	for _, c := range cases {
		t.Run(string(c.what), func(t *testing.T) {
			data, n := write(t, db, c.what, export.CSV)
			rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil {
				t.Fatalf("CSV does not parse: %v", err)
			}
			if len(rows) != c.rows+1 || n != int64(c.rows) {
				t.Fatalf("%d rows (n=%d), want header + %d", len(rows), n, c.rows)
			}
			if rows[0][0] != c.header {
				t.Fatalf("header %v", rows[0])
			}
		})
	}
}

func TestBatchesJSONL(t *testing.T) {
	db, run := generated(t)
	data, n := write(t, db, export.Batches, export.JSONL)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		var a export.Answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("line %d: %v", lines+1, err)
		}
		if a.ID == "" || len(a.Tasks) != 8 || a.Step != int64(lines+1) {
			t.Fatalf("line %d: id %q, %d tasks, step %d", lines+1, a.ID, len(a.Tasks), a.Step)
		}
		lines++
	}
	if lines != run.Answers || n != int64(lines) {
		t.Fatalf("%d lines (n=%d), want %d", lines, n, run.Answers)
	}
}

func TestUnknown(t *testing.T) {
	db, _ := generated(t)
	err := db.View(func(r *storage.Reader) error {
		_, err := export.Write(&bytes.Buffer{}, r, db.Config(), "everything", export.JSONL)
		return err
	})
	if !errors.Is(err, export.ErrUnknown) {
		t.Fatalf("unknown kind: %v", err)
	}
	err = db.View(func(r *storage.Reader) error {
		_, err := export.Write(&bytes.Buffer{}, r, db.Config(), export.Tasks, "xlsx")
		return err
	})
	if !errors.Is(err, export.ErrUnknown) {
		t.Fatalf("unknown format: %v", err)
	}
}

// TestCSVEmptyHasHeader: a kind with no records still gives a CSV file with its header row, so
// that CSV readers (pandas' read_csv) see the columns instead of failing on an empty file.
func TestCSVEmptyHasHeader(t *testing.T) {
	db := storagetest.Open(t)
	for what, first := range map[export.What]string{
		export.Rollouts: "env", export.Tasks: "env", export.Batches: "id", export.Quarantine: "seq",
	} {
		t.Run(string(what), func(t *testing.T) {
			data, n := write(t, db, what, export.CSV)
			rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil || n != 0 || len(rows) != 1 || rows[0][0] != first {
				t.Fatalf("empty export: rows %q, n %d, err %v; want the header row alone", rows, n, err)
			}
		})
	}
}

// TestCSVFormulaGuard: names come from the trainer's files, so a name such as =HYPERLINK(...)
// would run as a formula when the CSV is opened in a spreadsheet. A text cell that begins with
// =, +, -, @, a tab or a carriage return gets a leading "'"; numbers (negative ones too) and JSON
// lines are left as they are.
func TestCSVFormulaGuard(t *testing.T) {
	db := storagetest.Open(t)
	names := map[string]string{ // task id -> cell in the CSV
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+1+cmd|' /C calc'!A0":     "'+1+cmd|' /C calc'!A0",
		"-2+3":                     "'-2+3",
		"@SUM(A1:A9)":              "'@SUM(A1:A9)",
		"\tx":                      "'\tx",
		"\rx":                      "'\rx",
		"-0.5":                     "-0.5",
		"+7":                       "+7",
		"-1e3":                     "-1e3",
		"plain=1":                  "plain=1",
		"'quoted":                  "'quoted",
	}
	b := &storage.Batch{}
	for task := range names {
		b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: "=env", Task: task, Reward: 1}})
	}
	if _, err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	for _, what := range []export.What{export.Rollouts, export.Tasks} {
		data, _ := write(t, db, what, export.CSV)
		rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil || len(rows) != len(names)+1 {
			t.Fatalf("%s: %d rows, %v", what, len(rows), err)
		}
		got := map[string]bool{}
		for _, row := range rows[1:] {
			if row[0] != "'=env" {
				t.Errorf("%s: env cell %q; want \"'=env\"", what, row[0])
			}
			got[row[1]] = true
		}
		for task, cell := range names {
			if !got[cell] {
				t.Errorf("%s: task %q: no cell %q in %q", what, task, cell, rows[1:])
			}
		}
		jl, _ := write(t, db, what, export.JSONL)
		if !bytes.Contains(jl, []byte(`"=env"`)) || bytes.Contains(jl, []byte(`"'=env"`)) {
			t.Errorf("%s: JSON lines changed the names: %s", what, jl)
		}
	}
}

// TestCSVControlCharacters: names come from the trainer's files, and a CSV goes to standard
// output by default: a raw ESC (or another control byte, a C1 control, a byte that is not
// UTF-8) in a cell reached the terminal, which ran the sequence. In CSV they are written as
// visible escapes, with the formula guard applied after; tab, newline and carriage return inside
// a quoted cell, and other text (U+FFFD, accents) stay as they are; JSON lines escape them already.
func TestCSVControlCharacters(t *testing.T) {
	db := storagetest.Open(t)
	names := map[string]string{ // task id -> cell in the CSV
		"\x1b[2Jcleared":      `\x1b[2Jcleared`,
		"t\x1b]0;title\x07":   `t\x1b]0;title\x07`,
		"a\x00b\x7fc":         `a\x00b\x7fc`,
		"c1\u009b31m":         `c1\u009b31m`,
		"bad\xffbyte":         `bad\xffbyte`,
		"multi\nline\ttab\rx": "multi\nline\ttab\rx",
		"\x1b=1+1":            `\x1b=1+1`,
		"=\x1b":               `'=\x1b`,
		"réel \ufffd":         "réel \ufffd",
	}
	b := &storage.Batch{}
	for task := range names {
		b.Rollouts = append(b.Rollouts, storage.Rollout{Rollout: record.Rollout{Env: "e\x1bv", Task: task, Reward: 1}})
	}
	if _, err := db.Commit(b); err != nil {
		t.Fatal(err)
	}
	for _, what := range []export.What{export.Rollouts, export.Tasks} {
		data, _ := write(t, db, what, export.CSV)
		if i := bytes.IndexFunc(data, func(r rune) bool {
			return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f || r >= 0x80 && r <= 0x9f
		}); i >= 0 {
			t.Errorf("%s: a control character at byte %d: %q", what, i, data[max(0, i-10):min(len(data), i+10)])
		}
		rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil || len(rows) != len(names)+1 {
			t.Fatalf("%s: %d rows, %v", what, len(rows), err)
		}
		got := map[string]bool{}
		for _, row := range rows[1:] {
			if row[0] != `e\x1bv` {
				t.Errorf("%s: env cell %q", what, row[0])
			}
			got[row[1]] = true
		}
		for task, cell := range names {
			if !got[cell] {
				t.Errorf("%s: task %q: no cell %q in %q", what, task, cell, rows[1:])
			}
		}
	}
}
