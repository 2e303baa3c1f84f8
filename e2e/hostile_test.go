package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// waitAnswer is waitBatch that fails at once when the request gets an error file instead.
func waitAnswer(t *testing.T, d *daemon, id string) []byte {
	t.Helper()
	var data []byte
	waitUntil(t, "an answer to "+id, func() bool {
		if e, err := os.ReadFile(filepath.Join(d.dir, "batches", id+".error.json")); err == nil {
			t.Fatalf("%s got an error file: %s", id, e)
		}
		var err error
		data, err = os.ReadFile(filepath.Join(d.dir, "batches", id+".json"))
		return err == nil
	})
	return data
}

// answerStep is the step of an answer file.
func answerStep(t *testing.T, data []byte) int64 {
	t.Helper()
	var a struct{ Step *int64 }
	if err := json.Unmarshal(data, &a); err != nil || a.Step == nil {
		t.Fatalf("answer %s: %v; want a step", data, err)
	}
	return *a.Step
}

// TestStepAtTheBound: one request at the largest step used to make every later request without
// a step fail (the default step, previous + 1, was out of range) until one named a step. Now
// the default holds at the bound, and a request beyond it is refused without changing anything.
func TestStepAtTheBound(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "s1", `{"size": 2}`)
	if got := answerStep(t, waitAnswer(t, d, "s1")); got != 1 {
		t.Errorf("first request without a step: step %d; want 1", got)
	}
	writeRequest(t, dir, "beyond", `{"size": 2, "step": 1000000001}`)
	waitFile(t, d, filepath.Join(dir, "batches", "beyond.error.json"))
	writeRequest(t, dir, "s2", `{"size": 2}`)
	if got := answerStep(t, waitAnswer(t, d, "s2")); got != 2 {
		t.Errorf("after a refused step beyond the bound: step %d; want 2 (nothing changed)", got)
	}
	writeRequest(t, dir, "top", `{"size": 2, "step": 1000000000}`)
	if got := answerStep(t, waitAnswer(t, d, "top")); got != 1000000000 {
		t.Errorf("step at the bound: %d", got)
	}
	for i := range 3 {
		id := fmt.Sprint("after-top-", i)
		writeRequest(t, dir, id, `{"size": 2}`)
		if got := answerStep(t, waitAnswer(t, d, id)); got != 1000000000 {
			t.Errorf("%s: step %d; want 1000000000 (the default holds at the bound)", id, got)
		}
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}

// TestNamesAreBytes: names are compared as bytes, never normalised, so that every answer hands
// back exactly the bytes the trainer wrote (a trainer looks its tasks up by them). "café" in
// NFC (é one code point) and in NFD (e + combining accent) are two environments.
func TestNamesAreBytes(t *testing.T) {
	dir := t.TempDir()
	nfc, nfd := "caf\u00e9", "cafe\u0301"
	var cat strings.Builder
	for i := range 6 {
		fmt.Fprintf(&cat, `{"env":%q,"task_id":"t%d","text":"task %d"}`+"\n", nfc, i, i)
		fmt.Fprintf(&cat, `{"env":%q,"task_id":"t%d","text":"task %d"}`+"\n", nfd, i, i)
	}
	must(t, os.MkdirAll(filepath.Join(dir, "catalog"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "catalog", "tasks.jsonl"), []byte(cat.String()), 0o644))
	d := start(t, dir, opts{})
	d.waitReady()
	for _, env := range []string{nfc, nfd} {
		id := fmt.Sprintf("only-%x", env)
		writeRequest(t, dir, id, fmt.Sprintf(`{"size": 6, "envs": [%q]}`, env))
		var a struct {
			Envs  map[string]int
			Tasks []struct{ Env string }
		}
		must(t, json.Unmarshal(waitAnswer(t, d, id), &a))
		if len(a.Envs) != 1 || a.Envs[env] != 6 {
			t.Errorf("envs [%+q]: answer's envs %v; want 6 tasks of exactly that name", env, a.Envs)
		}
		for _, task := range a.Tasks {
			if task.Env != env {
				t.Errorf("envs [%+q]: a task of %+q", env, task.Env)
			}
		}
	}
	if st := waitStatus(t, d, "two environments", func(s status) bool { return s.Tasks == 12 }); st.Envs != 2 {
		t.Errorf("status: %d environments; want 2 (NFC and NFD are two names)", st.Envs)
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
