package daemon

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/envsched/envsched/internal/procview"
	"github.com/envsched/envsched/storage"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var watchModes = []struct {
	name string
	poll bool
}{{"poll", true}, {"notify", false}}

func TestAnswersRequestAndWritesStatus(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			r := serveTest(t, testConfig(dir, m.poll))
			writeRequest(t, dir, "step-1.json", `{"size": 3}`)
			got := r.batch("step-1")
			var ans map[string]any
			if err := json.Unmarshal(got, &ans); err != nil {
				t.Fatalf("batch is not JSON: %v", err)
			}
			if ans["id"] != "step-1" || ans["size"] != float64(3) || len(ans["tasks"].([]any)) != 3 {
				t.Errorf("batch %s: want id step-1, size 3", got)
			}
			stored, err := r.d.db.Answer("step-1")
			if err != nil || string(stored) != string(got) {
				t.Errorf("stored answer %q, %v; want the published bytes", stored, err)
			}
			r.stop()
			st, err := readStatus(dir)
			if err != nil {
				t.Fatal(err)
			}
			if st.RequestsAnswered != 1 || st.LastRequest == nil || *st.LastRequest != "step-1" ||
				st.WatchMode != m.name || st.PID != os.Getpid() || st.Version != "test" ||
				st.Tasks != 60 || st.Envs != 3 {
				t.Errorf("status %+v", st)
			}
			if tmp := tempFiles(t, dir); len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
		})
	}
}

func TestStatusHasExactlyTheProtocolFields(t *testing.T) {
	dir := t.TempDir()
	r := serveTest(t, testConfig(dir, true))
	r.stop()
	data, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// calibration and corrections are envsched's own extra fields (README, status.json)
	want := []string{"calibration", "clipped", "corrections", "db", "duplicates", "envs", "last_request", "pid", "quarantined",
		"requests_answered", "rollouts", "started_at", "tasks", "updated_at", "version", "watch_mode"}
	if procview.View() != "" { // where the pid can be looked up; left out where it cannot be told
		want = append(want[:8], append([]string{"pid_view"}, want[8:]...)...)
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("status.json keys %v\nwant %v", keys, want)
	}
	cal, _ := m["calibration"].(map[string]any)
	var calKeys []string
	for k := range cal {
		calKeys = append(calKeys, k)
	}
	sort.Strings(calKeys)
	wantCal := []string{"channels", "expired", "open", "overall", "recent", "recent_answers", "restarted", "savings", "unmatched"}
	if !reflect.DeepEqual(calKeys, wantCal) {
		t.Errorf("status.json calibration keys %v\nwant %v", calKeys, wantCal)
	}
	if m["last_request"] != nil {
		t.Errorf("last_request %v before any answer; want null", m["last_request"])
	}
}

func TestSameIDAgainGetsTheStoredAnswer(t *testing.T) {
	dir := t.TempDir()
	r := serveTest(t, testConfig(dir, false))
	writeRequest(t, dir, "a.json", `{"size": 2}`)
	first := r.batch("a")
	// The trainer deletes request and batch, then writes the same ID again with other content.
	os.Remove(filepath.Join(dir, "requests", "a.json"))
	os.Remove(filepath.Join(dir, "batches", "a.json"))
	writeRequest(t, dir, "a.json", `{"size": 5}`)
	if again := r.batch("a"); string(again) != string(first) {
		t.Errorf("second answer %s\nwant the first %s", again, first)
	}
}

func TestMissingBatchIsRewrittenAtStartup(t *testing.T) {
	dir := t.TempDir()
	r := serveTest(t, testConfig(dir, true))
	writeRequest(t, dir, "r1.json", `{}`)
	first := r.batch("r1")
	r.stop()
	if err := os.Remove(filepath.Join(dir, "batches", "r1.json")); err != nil {
		t.Fatal(err)
	}
	r = serveTest(t, testConfig(dir, true))
	if again := r.batch("r1"); string(again) != string(first) {
		t.Errorf("rewritten batch %s\nwant %s", again, first)
	}
}

func TestRequestsPresentBeforeStart(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"x1", "x2", "x3"} {
		writeRequest(t, dir, id+".json", `{"size": 1}`)
	}
	r := serveTest(t, testConfig(dir, false))
	for _, id := range []string{"x1", "x2", "x3"} {
		r.batch(id)
	}
}

func TestBadRequestsGetErrorFilesAndTheDaemonGoesOn(t *testing.T) {
	long := strings.Repeat("a", 129)
	cases := []struct {
		name string // file name in DIR/requests
		body string
		want string // a part of the error message
	}{
		{"badjson.json", `{"size": `, "not a JSON object"},
		{"notobject.json", `[1, 2]`, "not a JSON object"},
		{"unknown.json", `{"sise": 3}`, "unknown field"},
		{"toolarge.json", `{"size": 1000000}`, "from 1 to 100000"},
		{"unknownenv.json", `{"envs": ["nope"]}`, "nope"},
		{"twovalues.json", `{} {}`, "more than one JSON value"},
		{"huge.json", `{"size": 1` + strings.Repeat(" ", MaxRequestBytes) + `}`, "larger than"},
		{"-dash.json", `{}`, "is not valid"},
		{"sp ace.json", `{}`, "is not valid"},
		{long + ".json", `{}`, "is not valid"},
		{"y.error.json", `{}`, `does not end in ".error"`}, // its batch would be y's error file
		{"hugestep.json", `{"step": 9223372036854775807}`, "from 0 to 1000000000"},
		{"bigstep.json", `{"step": 1000000001}`, "from 0 to 1000000000"},
		{strings.Repeat("b", 245) + ".json", `{}`, "is not valid"}, // ID.error.json would be too long a name
		{strings.Repeat("c", 230) + ".json", `{}`, "is not valid"}, // and so would its temporary file's
	}
	dir := t.TempDir()
	r := serveTest(t, testConfig(dir, false))
	for _, c := range cases {
		writeRequest(t, dir, c.name, c.body)
	}
	writeRequest(t, dir, "good.json", `{"size": 2}`)
	r.batch("good")
	for _, c := range cases {
		id := strings.TrimSuffix(c.name, ".json")
		e := r.errorOf(id)
		if e["id"] != id || !strings.Contains(e["error"], c.want) {
			t.Errorf("%s: error file %v; want id %q and a message with %q", c.name, e, id, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "batches", id+".json")); err == nil {
			t.Errorf("%s: a batch was published for a bad request", c.name)
		}
	}
	// A fixed request under the same ID is answered and its stale error file goes.
	writeRequest(t, dir, "badjson.json", `{"size": 1}`)
	r.batch("badjson")
	r.stop()
	if _, err := os.Stat(filepath.Join(dir, "batches", "badjson.error.json")); err == nil {
		t.Errorf("error file kept after the request was fixed and answered")
	}
	if !strings.Contains(r.log.String(), "bad request") {
		t.Errorf("no log line for bad requests")
	}
}

func TestNothingIsWrittenOutsideDir(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	// A link named like an error file, and a request that is a link to a file outside DIR.
	os.MkdirAll(filepath.Join(dir, "batches"), 0o755)
	target := filepath.Join(outside, "victim.json")
	os.WriteFile(target, []byte("keep"), 0o644)
	must(t, os.Symlink(target, filepath.Join(dir, "batches", "evil.error.json")))
	os.MkdirAll(filepath.Join(dir, "requests"), 0o755)
	must(t, os.Symlink(target, filepath.Join(dir, "requests", "evil.json")))

	r := serveTest(t, testConfig(dir, true))
	writeRequest(t, dir, "after.json", `{}`)
	r.batch("after")
	r.stop()
	if data, _ := os.ReadFile(target); string(data) != "keep" {
		t.Errorf("a file outside DIR was changed: %q", data)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("files appeared outside DIR: %v", entries)
	}
}

func TestLinkedFolderIsRefused(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(dir, "batches")))
	_, err := New(testConfig(dir, true), nil, testParts()...)
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("New with DIR/batches a link out of DIR: %v; want a refusal naming the link", err)
	}
}

// TestSecondDaemonIsLockedOut: a second daemon is refused, naming what is held and the database
// it would use, whether it shares the first one's DIR (with the same database or another: two
// daemons on one DIR answered the same requests and overwrote each other's batch files with
// other answers) or only its database. Once the first stops, a second starts.
func TestSecondDaemonIsLockedOut(t *testing.T) {
	dir := t.TempDir()
	first := serveTest(t, testConfig(dir, true))
	otherDB := filepath.Join(t.TempDir(), "other.db")
	cases := []struct {
		name string
		cfg  Config
		want error
	}{
		{"same DIR, same database", testConfig(dir, true), ErrDirHeld},
		{"same DIR, another database", func() Config { c := testConfig(dir, true); c.DB = otherDB; return c }(), ErrDirHeld},
		{"another DIR, same database", func() Config {
			c := testConfig(t.TempDir(), true)
			c.DB = filepath.Join(dir, "envsched.db")
			return c
		}(), storage.ErrLocked},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(tc.cfg, nil, testParts()...)
			if err == nil {
				d.Close()
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), filepath.Base(tc.cfg.withDefaults().DB)) {
				t.Fatalf("second New: %v; want %v naming the database", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(otherDB); err == nil {
		t.Error("the refused daemon created its database")
	}
	first.stop()
	d, err := New(testConfig(dir, true), nil, testParts()...)
	if err != nil {
		t.Fatalf("New after the first stopped: %v", err)
	}
	d.Close()
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no dir", Config{}, "--dir"},
		{"batch", Config{Dir: "d", BatchSize: -1}, "--batch-size"},
		{"group", Config{Dir: "d", GroupSize: 2000}, "--group-size"},
		{"reward", Config{Dir: "d", RewardMin: 1, RewardMax: 0.5}, "--reward-min"},
		{"crash", Config{Dir: "d", CrashPoint: "nowhere"}, "unknown"},
		{"crash count", Config{Dir: "d", CrashPoint: "after-commit:0"}, "positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate: %v; want a message with %q", err, c.want)
			}
		})
	}
	if err := (Config{Dir: "d", CrashPoint: "before-rename:3"}).Validate(); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestReplacedDirIsLockedAgain: DIR replaced while the daemon serves it (moved away, made
// again; its database elsewhere) is locked again at the next heartbeat, so a second daemon on
// it is refused; a second process that locked the new DIR first stops the daemon with
// ErrDirHeld. The lock stayed on the old folder: a second envsched served the new DIR too.
func TestReplacedDirIsLockedAgain(t *testing.T) {
	heldByOther := func(dir string) bool { // a second process's attempt, not kept
		f, err := os.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB), syscall.EWOULDBLOCK)
	}
	replace := func(dir string) {
		if err := os.Rename(dir, dir+".old"); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfgOf := func() Config {
		c := testConfig(filepath.Join(t.TempDir(), "dir"), true)
		c.DB, c.StatusInterval = filepath.Join(t.TempDir(), "envsched.db"), 20*time.Millisecond
		if err := os.Mkdir(c.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return c
	}

	cfg := cfgOf()
	r := serveTest(t, cfg)
	replace(cfg.Dir)
	deadline := time.Now().Add(20 * time.Second)
	for !heldByOther(cfg.Dir) {
		if time.Now().After(deadline) {
			t.Fatal("the replaced DIR was never locked again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.stop()

	cfg = cfgOf()
	r = serveTest(t, cfg)
	replace(cfg.Dir)
	other, err := os.Open(cfg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		if !errors.Is(err, ErrDirHeld) {
			t.Fatalf("the daemon stopped with %v, want ErrDirHeld", err)
		}
		r.cancel()
		r.cancel = nil // stopped already
		r.d.Close()
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon went on serving a DIR another process holds")
	}
}

// TestIgnoredRequestKeysAreAnsweredAndLogged: a request with a key of the trainer's own ("id",
// "comment") is answered, not refused, and the log names the keys that were ignored; a key
// that looks like a misspelled field still gets an error file.
func TestIgnoredRequestKeysAreAnsweredAndLogged(t *testing.T) {
	dir := t.TempDir()
	r := serveTest(t, testConfig(dir, false))
	writeRequest(t, dir, "extra.json", `{"size": 2, "id": "extra", "comment": "step 7 of run b"}`)
	writeRequest(t, dir, "typo.json", `{"size": 2, "grup_size": 4}`)
	r.batch("extra")
	if e := r.errorOf("typo"); !strings.Contains(e["error"], `did you mean "group_size"?`) {
		t.Errorf("typo: error file %v, want a near miss named", e)
	}
	r.stop()
	logs := r.log.String()
	if !strings.Contains(logs, "were ignored") || !strings.Contains(logs, `keys="comment, id"`) || !strings.Contains(logs, "id=extra") {
		t.Errorf("no log line naming the ignored keys of extra:\n%s", logs)
	}
}
