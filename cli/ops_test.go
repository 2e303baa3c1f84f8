package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/envsched/envsched/daemon"
	"github.com/envsched/envsched/internal/procview"
	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/report"
	"github.com/envsched/envsched/report/reporttest"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// runApp runs the app in-process with args and returns the exit code and what it printed.
func opsApp(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := NewApp()
	app.Writer, app.ErrWriter = &out, &errOut
	err := app.Run(append([]string{"envsched"}, args...))
	if err != nil {
		errOut.WriteString(err.Error())
		return ExitCode(err), out.String(), errOut.String()
	}
	return exitOK, out.String(), errOut.String()
}

// generatedDir is an exchange directory whose database holds a generated run (closed).
func generatedDir(t *testing.T) (string, reporttest.Run) {
	t.Helper()
	dir := t.TempDir()
	db, err := storage.Open(filepath.Join(dir, "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := reporttest.Generate(db, reporttest.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, run
}

func TestExportCommand(t *testing.T) {
	dir, run := generatedDir(t)
	code, out, errOut := opsApp(t, "export", "--dir", dir, "--what", "rollouts")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != run.Rollouts {
		t.Fatalf("%d lines, want %d", len(lines), run.Rollouts)
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first["env"] == nil || first["reward"] == nil {
		t.Fatalf("first line %s: %v", lines[0], err)
	}
	file := filepath.Join(t.TempDir(), "tasks.csv")
	if code, _, errOut := opsApp(t, "export", "--dir", dir, "--what", "tasks", "--out", file); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, _ := os.Open(file)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != run.Tasks+1 {
		t.Fatalf("CSV by extension: %d rows, %v", len(rows), err)
	}
	bfile := filepath.Join(t.TempDir(), "batches.csv")
	code, _, errOut = opsApp(t, "export", "--dir", dir, "--what", "batches", "--out", bfile)
	bf, _ := os.Open(bfile)
	defer bf.Close()
	brows, err := csv.NewReader(bf).ReadAll()
	want := fmt.Sprintf("exported %d rows (the chosen tasks of %d batches)", len(brows)-1, run.Answers)
	if code != 0 || err != nil || !strings.Contains(errOut, want) || len(brows)-1 <= run.Answers {
		t.Errorf("batches as CSV: exit %d, %v, said %q, want %q", code, err, errOut, want)
	}
	if code, _, _ := opsApp(t, "export", "--dir", dir, "--what", "everything"); code != exitUsage {
		t.Fatalf("unknown --what: exit %d, want %d", code, exitUsage)
	}
}

func TestCompactCommand(t *testing.T) {
	dir, _ := generatedDir(t)
	path := filepath.Join(dir, "envsched.db")
	before := counts(t, path)
	fi, _ := os.Stat(path)
	code, out, errOut := opsApp(t, "compact", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "compacted") || !strings.Contains(out, "->") {
		t.Fatalf("output %q", out)
	}
	after := counts(t, path)
	if before != after {
		t.Fatalf("counts changed: %+v -> %+v", before, after)
	}
	if fi2, _ := os.Stat(path); fi2.Size() > fi.Size() {
		t.Fatalf("compacted file grew: %d -> %d", fi.Size(), fi2.Size())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storagetest.MustCheck(t, db, "")
	code, _, errOut = opsApp(t, "compact", "--dir", dir)
	if code != exitLocked || !strings.Contains(errOut, "stop `envsched run`") {
		t.Fatalf("compact of a held database: exit %d, %s", code, errOut)
	}
}

// dbCounts are what compaction must keep.
type dbCounts struct {
	storage.Counters
	tasks, rollouts, answers int
}

func counts(t *testing.T, path string) dbCounts {
	t.Helper()
	db, err := storage.Open(path, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var c dbCounts
	err = db.View(func(r *storage.Reader) error {
		var err error
		if c.Counters, err = r.Counters(); err != nil {
			return err
		}
		err = errors.Join(
			r.Tasks(true, func(storage.TaskInfo) error { c.tasks++; return nil }),
			r.Rollouts(func(*storage.StoredRollout) error { c.rollouts++; return nil }),
			r.Answers(func(string, []byte) error { c.answers++; return nil }))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStatusCommand(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := opsApp(t, "status", "--dir", dir)
	if code != exitError || !strings.Contains(errOut, "not running") {
		t.Fatalf("missing status.json: exit %d, %q", code, errOut)
	}
	last := "step-000003"
	pid := os.Getpid()
	write := func(updated time.Time) {
		s := daemon.Status{Version: "test", PID: pid, StartedAt: "2026-12-02T17:00:00Z",
			UpdatedAt: updated.UTC().Format(time.RFC3339), DB: "x.db", Rollouts: 42, Tasks: 7, Envs: 2,
			RequestsAnswered: 3, LastRequest: &last, WatchMode: "notify"}
		s.Calibration.Overall = ledger.Window{Groups: 24, PredictedDegenerate: 0.25, RealisedDegenerate: 0.375}
		s.Calibration.Recent, s.Calibration.RecentAnswers = s.Calibration.Overall, 3
		s.Calibration.Savings = ledger.Savings{Source: "env_means", RandomDegenerate: 0.5, RolloutsSaved: 38}
		s.Corrections = &propagate.Corrections{CoverageReturn: propagate.Return{Factor: 0.25}, RechosenFactor: 1.5,
			Dispersion: map[string]propagate.Correction{"never_tried": {Scale: 0.6}}, State: "unreadable"}
		data, _ := json.Marshal(s)
		if err := os.WriteFile(filepath.Join(dir, "status.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(time.Now())
	code, out, errOut := opsApp(t, "status", "--dir", dir)
	if code != 0 || !strings.Contains(out, "running") || !strings.Contains(out, "42") || !strings.Contains(out, last) {
		t.Fatalf("fresh heartbeat: exit %d, %q %q", code, out, errOut)
	}
	if !strings.Contains(out, "25.0% of groups predicted degenerate, 37.5% were (24 groups)") ||
		!strings.Contains(out, "about 38 rollouts against random choice (an estimate") {
		t.Errorf("status does not show the calibration and the savings estimate: %q", out)
	}
	// newuser14: the walkthrough's toy run showed "saved about -111 rollouts against random
	// choice"; a negative estimate is said as none saved.
	func() {
		defer write(time.Now())
		s := daemon.Status{Version: "test", PID: pid, UpdatedAt: time.Now().UTC().Format(time.RFC3339), WatchMode: "notify"}
		s.Calibration.Overall = ledger.Window{Groups: 24}
		s.Calibration.Savings = ledger.Savings{Source: "env_means", RandomDegenerate: 0.162, RolloutsSaved: -111}
		data, _ := json.Marshal(s)
		if err := os.WriteFile(filepath.Join(dir, "status.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, neg, _ := opsApp(t, "status", "--dir", dir)
		if !strings.Contains(neg, "saved        none: about 111 rollouts more than random choice (an estimate") {
			t.Errorf("a negative savings estimate: %q", neg)
		}
	}()
	if !strings.Contains(out, "coverage_return 0.2500, rechosen_factor 1.5000, never_tried scale 0.6") {
		t.Errorf("status does not show the corrections: %q", out)
	}
	if !strings.Contains(out, "(the predictor state stored with the last answer does not decode") {
		t.Errorf("status does not say the stored state does not decode: %q", out)
	}
	code, out, _ = opsApp(t, "status", "--dir", dir, "--json")
	var s daemon.Status
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.Rollouts != 42 {
		t.Fatalf("--json: exit %d, %q", code, out)
	}
	write(time.Now().Add(-time.Hour))
	code, out, errOut = opsApp(t, "status", "--dir", dir)
	if code != exitError || !strings.Contains(out, "NOT RUNNING") || !strings.Contains(out, "stuck") ||
		!strings.Contains(errOut, "not running") {
		t.Fatalf("stale heartbeat of a live process: exit %d, %q %q", code, out, errOut)
	}
	// A heartbeat from the future (clock skew) is said so: it was "0s old" and running, even an
	// hour ahead, which a status.json left by a daemon whose clock ran ahead would stay for ever.
	write(time.Now().Add(time.Hour))
	code, out, errOut = opsApp(t, "status", "--dir", dir)
	if code != exitError || !(strings.Contains(out, "1h0m0s in the future") || strings.Contains(out, "59m59s in the future")) || strings.Contains(out, "0s old") ||
		!strings.Contains(out, "clock") || !strings.Contains(errOut, "in the future") {
		t.Fatalf("heartbeat an hour ahead: exit %d, %q %q", code, out, errOut)
	}
	write(time.Now().Add(4 * time.Second)) // small skew, within --stale-after: running, said so
	code, out, errOut = opsApp(t, "status", "--dir", dir)
	if code != 0 || !strings.Contains(out, "in the future") || !strings.Contains(out, ": running") {
		t.Fatalf("heartbeat seconds ahead: exit %d, %q %q", code, out, errOut)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	pid = gone.Process.Pid
	write(time.Now())
	code, out, _ = opsApp(t, "status", "--dir", dir)
	if code != exitError || !strings.Contains(out, "is gone") {
		t.Fatalf("fresh heartbeat of an exited process: exit %d, %q", code, out)
	}
}

// TestStatusShowsEveryCountFactor: the one-line corrections summary of `envsched status` carries
// the three count factors status.json carries (rechosen_factor, never_tried_factor,
// rechosen_low_factor), in that order; rechosen_low_factor was left out.
func TestStatusShowsEveryCountFactor(t *testing.T) {
	dir := t.TempDir()
	s := daemon.Status{Version: "test", PID: os.Getpid(), StartedAt: "2026-12-02T17:00:00Z",
		UpdatedAt: time.Now().UTC().Format(time.RFC3339), DB: "x.db", WatchMode: "notify",
		Corrections: &propagate.Corrections{RechosenFactor: 1.5, NeverTriedFactor: 0.75, RechosenLowFactor: 0.8125,
			Dispersion: map[string]propagate.Correction{"never_tried": {Scale: 0.6}}, State: "stored"}}
	data, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(dir, "status.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := opsApp(t, "status", "--dir", dir)
	want := "rechosen_factor 1.5000, never_tried_factor 0.7500, rechosen_low_factor 0.8125, never_tried scale 0.6"
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("exit %d; status %q (%q); want it to hold %q", code, out, errOut, want)
	}
}

func TestReportCommand(t *testing.T) {
	dir, _ := generatedDir(t)
	out := filepath.Join(t.TempDir(), "report.html")
	code, _, errOut := opsApp(t, "report", "--dir", dir, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.HasPrefix(data, []byte("<!DOCTYPE html>")) || bytes.Count(data, []byte("data:image/png;base64,")) != len(report.FigureIDs) {
		t.Fatalf("report file: %d bytes, %v", len(data), err)
	}
	if code, _, errOut := opsApp(t, "report", "--dir", t.TempDir(), "--out", out); code != exitError || !strings.Contains(errOut, "no database") {
		t.Fatalf("no database: exit %d, %s", code, errOut)
	}
}

func TestRunRefusesBadMetricsAddr(t *testing.T) {
	// A port out of range or not a port at all is a usage error found before anything starts,
	// not a failure to listen after the daemon has opened its database.
	for _, addr := range []string{"9464", ":99999", "127.0.0.1:65536", ":-1", ":no-such-service-here"} {
		code, _, errOut := opsApp(t, "run", "--dir", t.TempDir(), "--metrics-addr", addr)
		if code != exitUsage || !strings.Contains(errOut, "HOST:PORT") {
			t.Errorf("%s: exit %d: %s", addr, code, errOut)
		}
	}
}

// TestDBInsideExchangeFoldersRefused: a --db inside DIR/rollouts (or catalog, requests,
// batches, snapshots) is a usage error (exit 2) of every command that writes the database,
// before anything is created: in rollouts/ envsched read its own database as rollout lines,
// quarantined its pages into it, saw it change and read it again, for ever. A link to such a
// folder is seen through; DIR itself, a folder beside them with a similar name, and anywhere
// outside DIR stay fine.
func TestDBInsideExchangeFoldersRefused(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"rollouts/sub", "catalog", "requests", "batches", "snapshots", "rollouts-db"} {
		if err := os.MkdirAll(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "rollouts"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{"rollouts/db.jsonl", "rollouts/sub/x.db", "catalog/db", "requests/a.json",
		"batches/b.json", "snapshots/s.db", "link/db.jsonl", "rollouts/new/deeper/db"} {
		for _, cmd := range []string{"run", "ingest", "batch", "compact"} {
			path := filepath.Join(dir, db)
			code, _, errOut := opsApp(t, cmd, "--dir", dir, "--db", path)
			if code != exitUsage || !strings.Contains(errOut, "would read (or remove) its own database") {
				t.Errorf("%s --db %s: exit %d, %q; want 2 and a message", cmd, db, code, errOut)
			}
			if _, err := os.Lstat(path); err == nil {
				t.Errorf("%s --db %s: the database was created", cmd, db)
			}
		}
	}
	for _, db := range []string{filepath.Join(dir, "envsched.db"), filepath.Join(dir, "rollouts-db", "x.db"),
		filepath.Join(t.TempDir(), "elsewhere.db")} {
		if code, _, errOut := opsApp(t, "ingest", "--dir", dir, "--db", db); code != 0 {
			t.Errorf("ingest --db %s: exit %d, %s", db, code, errOut)
		}
		if code, _, errOut := opsApp(t, "compact", "--dir", dir, "--db", db); code != 0 {
			t.Errorf("compact --db %s: exit %d, %s", db, code, errOut)
		}
	}
}

// TestDBIsADaemonFileRefused: a --db naming a file the daemon itself writes in DIR is a usage
// error (exit 2) of every command that writes the database, and the file is left as it was:
// DIR/status.json (rewritten by rename every heartbeat, it replaced the database: everything
// stored was lost, and the next start said "invalid database"), the same file through a link
// or a hard link, and a name of the daemon's temporary files (removed by its start-up sweep).
// `export --out` and `report --out` there are refused too (the daemon replaced the output).
func TestDBIsADaemonFileRefused(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	status := filepath.Join(dir, "status.json")
	body := []byte(`{"version": "old"}` + "\n")
	if err := os.WriteFile(status, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(status, filepath.Join(other, "link.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(status, filepath.Join(other, "hard.db")); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{status, filepath.Join(dir, ".", "status.json"), filepath.Join(other, "link.db"),
		filepath.Join(other, "hard.db"), filepath.Join(dir, ".envsched.db.tmp-1234")} {
		for _, cmd := range []string{"run", "ingest", "batch", "compact"} {
			code, _, errOut := opsApp(t, cmd, "--dir", dir, "--db", db)
			if code != exitUsage || !strings.Contains(errOut, "which envsched run writes") {
				t.Errorf("%s --db %s: exit %d, %q; want 2 and a message", cmd, db, code, errOut)
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, ".envsched.db.tmp-1234")); err == nil {
			t.Errorf("--db %s: the temporary name was created", db)
		}
	}
	if got, err := os.ReadFile(status); err != nil || !bytes.Equal(got, body) {
		t.Errorf("status.json changed: %q, %v", got, err)
	}
	gen, _ := generatedDir(t)
	for _, cmd := range [][]string{{"export", "--what", "rollouts"}, {"report"}} {
		out := filepath.Join(gen, "status.json")
		code, _, errOut := opsApp(t, append(cmd, "--dir", gen, "--out", out)...)
		if code != exitUsage || !strings.Contains(errOut, "which envsched run writes") {
			t.Errorf("%s --out DIR/status.json: exit %d, %q; want 2", cmd[0], code, errOut)
		}
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("%s --out DIR/status.json: written", cmd[0])
		}
	}
	// A name beside them stays fine.
	if code, _, errOut := opsApp(t, "ingest", "--dir", dir, "--db", filepath.Join(dir, "status.json.db")); code != 0 {
		t.Errorf("ingest --db DIR/status.json.db: exit %d, %s", code, errOut)
	}
}

// TestStatusOnHugeFile: a huge status.json (a sparse 8 GB file put in its place) is refused
// saying so, without being read whole (it was read into memory).
func TestStatusOnHugeFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "status.json")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 8<<30); err != nil {
		t.Skipf("no sparse file: %v", err)
	}
	code, _, errOut := opsApp(t, "status", "--dir", dir)
	if code != exitError || !strings.Contains(errOut, "8589934592 bytes") {
		t.Errorf("exit %d, %q; want 1 and the size", code, errOut)
	}
}

// TestExportIntoExchangeFoldersRefused: `export --out` into DIR/rollouts (or catalog, requests,
// batches, snapshots) is a usage error and writes nothing: exported rollouts carry no
// rollout_id unless the trainer wrote one, so the daemon (or the next ingest) read them again,
// every rollout counted twice. Outside those folders it is written.
func TestExportIntoExchangeFoldersRefused(t *testing.T) {
	dir, _ := generatedDir(t)
	for _, out := range []string{"rollouts/export.jsonl", "catalog/tasks-export.jsonl", "batches/x.csv", "requests/r.json"} {
		path := filepath.Join(dir, out)
		code, _, errOut := opsApp(t, "export", "--dir", dir, "--what", "rollouts", "--out", path)
		if code != exitUsage || !strings.Contains(errOut, "counted twice") {
			t.Errorf("--out %s: exit %d, %q; want 2", out, code, errOut)
		}
		if _, err := os.Lstat(path); err == nil {
			t.Errorf("--out %s: written", out)
		}
	}
	if code, _, errOut := opsApp(t, "export", "--dir", dir, "--what", "rollouts", "--out", filepath.Join(dir, "rollouts.jsonl")); code != 0 {
		t.Errorf("--out DIR/rollouts.jsonl: exit %d, %s", code, errOut)
	}
}

// TestCompactAndReportIntoExchangeFoldersRefused: `compact --db` and `report --out` inside
// DIR/rollouts (or catalog, requests, batches, snapshots) are usage errors like those of run,
// ingest, batch and export, and touch nothing: compact renamed a new file (a new inode) over a
// database kept in rollouts/, which was then read as new input; a report written there was read
// as input, taken for a request or removed. A database put there by hand stays as it was.
func TestCompactAndReportIntoExchangeFoldersRefused(t *testing.T) {
	dir, _ := generatedDir(t)
	db := filepath.Join(dir, "envsched.db")
	if code, _, errOut := opsApp(t, "ingest", "--dir", dir); code != 0 {
		t.Fatalf("ingest: exit %d, %s", code, errOut)
	}
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"rollouts", "catalog", "requests", "batches", "snapshots"} {
		if err := os.MkdirAll(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
		placed := filepath.Join(dir, f, "moved.db")
		if err := os.WriteFile(placed, data, 0o644); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Stat(placed)
		code, _, errOut := opsApp(t, "compact", "--dir", dir, "--db", placed)
		if code != exitUsage || !strings.Contains(errOut, "would read (or remove) its own database") {
			t.Errorf("compact --db %s/moved.db: exit %d, %q; want 2 and a message", f, code, errOut)
		}
		if after, err := os.Stat(placed); err != nil || !os.SameFile(before, after) {
			t.Errorf("compact --db %s/moved.db: the file was replaced (%v)", f, err)
		}
		out := filepath.Join(dir, f, "report.html")
		code, _, errOut = opsApp(t, "report", "--dir", dir, "--out", out)
		if code != exitUsage || !strings.Contains(errOut, "counted twice") {
			t.Errorf("report --out %s/report.html: exit %d, %q; want 2", f, code, errOut)
		}
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("report --out %s/report.html: written", f)
		}
	}
	if code, _, errOut := opsApp(t, "report", "--dir", dir, "--out", filepath.Join(dir, "report.html")); code != 0 {
		t.Errorf("report --out DIR/report.html: exit %d, %s", code, errOut)
	}
}

// TestOutIsTheDatabaseRefused: `export --out` or `report --out` naming the database (the default
// DIR/envsched.db, a --db elsewhere, the same path written another way) is a usage error, and
// the database is left as it was: the output, written whole, was renamed over it, and everything
// it held was lost without a word (the next command said "invalid database").
func TestOutIsTheDatabaseRefused(t *testing.T) {
	dir, _ := generatedDir(t)
	db := filepath.Join(dir, "envsched.db")
	other := filepath.Join(t.TempDir(), "other.db")
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ dbFlag, out string }{
		{"", db},
		{"", filepath.Join(dir, "catalog", "..", "envsched.db")},
		{other, other},
		{other, filepath.Join(filepath.Dir(other), ".", "other.db")},
	}
	for _, c := range cases {
		for _, cmd := range [][]string{{"export", "--what", "rollouts"}, {"report"}} {
			args := append(append([]string(nil), cmd...), "--dir", dir, "--out", c.out)
			if c.dbFlag != "" {
				args = append(args, "--db", c.dbFlag)
			}
			code, _, errOut := opsApp(t, args...)
			if code != exitUsage || !strings.Contains(errOut, "would replace it") {
				t.Errorf("%s --db %q --out %s: exit %d, %q; want 2", cmd[0], c.dbFlag, c.out, code, errOut)
			}
		}
	}
	for _, path := range []string{db, other} {
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s changed (%v)", path, err)
		}
	}
}

// TestOutIntoPipeOrLink: `export --out` and `report --out` naming a FIFO (as /dev/stdout, a
// shell's process substitution or /dev/null are, or a device) write into it, and naming a
// symbolic link replace the file it names. The output, written whole, was renamed over
// whatever was at the path: the FIFO became a regular file and its reader got nothing (run as
// root, `--out /dev/null` replaced the machine's /dev/null), and the link was replaced by a copy
// while the file it names stayed as it was. A folder is a usage error (it was "file exists" from
// the rename, after the whole export was written).
func TestOutIntoPipeOrLink(t *testing.T) {
	dir, run := generatedDir(t)
	for _, cmd := range [][]string{{"export", "--what", "rollouts"}, {"report"}} {
		t.Run(cmd[0], func(t *testing.T) {
			tmp := t.TempDir()
			fifo := filepath.Join(tmp, "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("no FIFO here:", err)
			}
			got := make(chan []byte)
			go func() {
				f, err := os.Open(fifo) // waits for the writer
				if err != nil {
					got <- nil
					return
				}
				defer f.Close()
				data, _ := io.ReadAll(f)
				got <- data
			}()
			out := func(path string) []string { return append(append([]string(nil), cmd...), "--dir", dir, "--out", path) }
			code, _, errOut := opsApp(t, out(fifo)...)
			var data []byte
			select {
			case data = <-got:
			case <-time.After(10 * time.Second): // only turns a hang into a failure
				t.Errorf("--out FIFO: its reader got nothing (the FIFO was replaced?)")
			}
			if code != 0 {
				t.Fatalf("--out FIFO: exit %d, %s", code, errOut)
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
				t.Errorf("--out FIFO: the FIFO was replaced (%v, %v)", fi.Mode(), err)
			}
			wantLines := map[string]int{"export": run.Rollouts, "report": 0}[cmd[0]]
			if n := bytes.Count(data, []byte("\n")); len(data) == 0 || cmd[0] == "export" && n != wantLines {
				t.Errorf("--out FIFO: its reader got %d bytes, %d lines; want the whole output", len(data), n)
			}

			target, link := filepath.Join(tmp, "target"), filepath.Join(tmp, "link")
			if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("target", link); err != nil {
				t.Fatal(err)
			}
			if code, _, errOut := opsApp(t, out(link)...); code != 0 {
				t.Fatalf("--out link: exit %d, %s", code, errOut)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("--out link: the link was replaced (%v, %v)", fi.Mode(), err)
			}
			// The export is the same both times; a report differs in its time of writing.
			written, err := os.ReadFile(target)
			if same := bytes.Equal(written, data); err != nil || cmd[0] == "export" && !same ||
				!bytes.HasPrefix(written, data[:min(len(data), 15)]) || len(written) < 100 {
				t.Errorf("--out link: the file it names holds %d bytes (%v) %q; want what the FIFO got (%d bytes)",
					len(written), err, written[:min(len(written), 20)], len(data))
			}

			// A descriptor the command was given (`--out /dev/stdout >> log`, `/dev/fd/N`) is
			// written through, at its offset and in its append mode; resolved to its file and
			// replaced, the log lost what it held.
			logPath := filepath.Join(tmp, "log")
			if err := os.WriteFile(logPath, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			code, _, errOut = opsApp(t, out(fmt.Sprintf("/dev/fd/%d", logFile.Fd()))...)
			logFile.Close()
			if got, _ := os.ReadFile(logPath); code != 0 || !bytes.HasPrefix(got, []byte("old\n")) || len(got) < 100 {
				t.Errorf("--out /dev/fd/N of a file open to append: exit %d, %s; the file holds %q...; want old\n "+
					"and the output after it", code, errOut, got[:min(len(got), 20)])
			}

			if code, _, errOut := opsApp(t, out(tmp)...); code != exitUsage || !strings.Contains(errOut, "is a folder") {
				t.Errorf("--out a folder: exit %d, %q; want 2 saying it is a folder", code, errOut)
			}
		})
	}
}

// TestLinkedInputFoldersRefused: DIR/catalog or DIR/rollouts that is a symbolic link (to a folder
// outside DIR) is never read through, as `run` refuses it at start; `ingest` and `batch` exit 2
// saying so (they read nothing and said "0 files"), and `catalog import` writes nothing through
// it (it wrote the file where the link led, outside DIR, said "imported", and no envsched ever
// read it).
func TestLinkedInputFoldersRefused(t *testing.T) {
	for _, folder := range []string{"catalog", "rollouts"} {
		dir, outside := t.TempDir(), t.TempDir()
		src := filepath.Join(t.TempDir(), "tasks.jsonl")
		line := []byte(`{"env": "e", "task_id": 1, "reward": 1}` + "\n")
		if err := os.WriteFile(src, line, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(outside, "r.jsonl"), line, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(dir, folder)); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"ingest", "--dir", dir}, {"batch", "--dir", dir, "--size", "1"}} {
			if code, _, errOut := opsApp(t, args...); code != exitUsage || !strings.Contains(errOut, "symbolic link") {
				t.Errorf("%s with DIR/%s a link: exit %d, %q; want 2 saying it is a link", args[0], folder, code, errOut)
			}
		}
		if folder != "catalog" {
			continue
		}
		code, _, errOut := opsApp(t, "catalog", "import", "--dir", dir, src)
		if code == exitOK || !strings.Contains(errOut, "symbolic link") {
			t.Errorf("catalog import with DIR/catalog a link: exit %d, %q; want a refusal saying it is a link", code, errOut)
		}
		if _, err := os.Stat(filepath.Join(outside, "tasks.jsonl")); err == nil {
			t.Error("catalog import wrote through the link, outside DIR")
		}
	}
}

// TestStatusOfADaemonInAnotherPIDNamespace: status.json written by a daemon of another view
// (another container's PID namespace, another machine) is judged by its heartbeat: its pid
// names nothing here, or another process, and `envsched status` said NOT RUNNING (exit 1) of a
// daemon running in the next container. A pid of this view that is gone is still NOT RUNNING,
// and a stale heartbeat of another view too.
func TestStatusOfADaemonInAnotherPIDNamespace(t *testing.T) {
	dir := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	write := func(view string, updated time.Time) {
		s := daemon.Status{Version: "test", PID: gone.Process.Pid, PIDView: view, StartedAt: "2026-12-02T17:00:00Z",
			UpdatedAt: updated.UTC().Format(time.RFC3339), DB: "x.db", WatchMode: "notify"}
		data, _ := json.Marshal(s)
		if err := os.WriteFile(filepath.Join(dir, "status.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("0123456789abcdef", time.Now())
	code, out, errOut := opsApp(t, "status", "--dir", dir)
	if code != 0 || !strings.Contains(out, ": running (by its heartbeat") {
		t.Errorf("fresh heartbeat of another view: exit %d, %q %q; want running", code, out, errOut)
	}
	write(procview.View(), time.Now())
	if code, out, _ := opsApp(t, "status", "--dir", dir); code != exitError || !strings.Contains(out, "is gone") {
		t.Errorf("fresh heartbeat of this view, process gone: exit %d, %q", code, out)
	}
	write("0123456789abcdef", time.Now().Add(-time.Hour))
	if code, out, _ := opsApp(t, "status", "--dir", dir); code != exitError || !strings.Contains(out, "NOT RUNNING (last heartbeat") {
		t.Errorf("stale heartbeat of another view: exit %d, %q", code, out)
	}
}
