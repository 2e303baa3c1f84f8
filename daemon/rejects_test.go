package daemon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The error files of a pass are written after its answers (writeRejects), so a request can be
// rewritten between its refusal and its error file. That error file would be newer than the
// new version, which needsAnswer would then take as refused already: it would never be served.
// The error file of a request rewritten, changed or removed since it was read is left out; an
// unchanged one gets its error file as before.
func TestRewrittenRequestKeepsNoStaleErrorFile(t *testing.T) {
	for _, tt := range []struct {
		name      string
		request   string // file name in DIR/requests
		change    func(t *testing.T, dir, name string)
		wantError bool // the error file is written
	}{
		{"unchanged", "b.json", func(*testing.T, string, string) {}, true},
		{"invalid ID, unchanged", "bad id.json", func(*testing.T, string, string) {}, true},
		{"rewritten by rename", "b.json", func(t *testing.T, dir, name string) {
			writeRequest(t, dir, name, `{"size": 2}`)
		}, false},
		{"invalid ID, rewritten by rename", "bad id.json", func(t *testing.T, dir, name string) {
			writeRequest(t, dir, name, `{"size": 2}`)
		}, false},
		{"rewritten in place", "b.json", func(t *testing.T, dir, name string) {
			must(t, os.WriteFile(filepath.Join(dir, "requests", name), []byte(`{"size": 2}`), 0o644))
		}, false},
		{"removed", "b.json", func(t *testing.T, dir, name string) {
			must(t, os.Remove(filepath.Join(dir, "requests", name)))
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := openTest(t)
			dir := d.cfg.Dir
			writeRequest(t, dir, tt.request, `{"size": -1}`)
			if ok, err := d.handle(tt.request, timing{seen: time.Now()}); ok || err != nil {
				t.Fatalf("handle = %v, %v; want a refusal", ok, err)
			}
			tt.change(t, dir, tt.request)
			must(t, d.writeRejects())
			id, _ := requestID(tt.request)
			_, err := os.Lstat(filepath.Join(d.dirs.batches, errorFileName(id)))
			if written := err == nil; written != tt.wantError || err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("error file written: %v (%v); want %v", written, err, tt.wantError)
			}
			if _, err := os.Lstat(filepath.Join(d.dirs.requests, tt.request)); err == nil {
				if pending := d.needsAnswer(tt.request); pending == tt.wantError {
					t.Errorf("needsAnswer = %v; want %v (the version there now is %s)", pending,
						!tt.wantError, map[bool]string{true: "refused", false: "not refused yet"}[tt.wantError])
				}
			}
		})
	}
}

// A bad request written again with the same body (a retry, or only touched) is newer than its
// error file, which says the same: the error file was not written again (it is rewritten only
// when its message changes), so the request stayed pending (needsAnswer) for good, and every
// sweep read it, refused it and logged it again, once per rescan without end. It is refused
// once more and its error file written again; then it is answered.
func TestBadRequestRewrittenWithTheSameBodyIsSettled(t *testing.T) {
	d := openTest(t)
	dir := d.cfg.Dir
	refuse := func() {
		t.Helper()
		if ok, err := d.handle("b.json", timing{seen: time.Now()}); ok || err != nil {
			t.Fatalf("handle = %v, %v; want a refusal", ok, err)
		}
		must(t, d.writeRejects())
	}
	writeRequest(t, dir, "b.json", `{"size": -1}`)
	refuse()
	if d.needsAnswer("b.json") {
		t.Fatal("the refused request is still pending")
	}
	// The error file was written before the request's new version (a minute: the clock's
	// granularity must not decide), and the request is written again with the same body.
	errPath := filepath.Join(d.dirs.batches, errorFileName("b"))
	past := time.Now().Add(-time.Minute)
	must(t, os.Chtimes(errPath, past, past))
	writeRequest(t, dir, "b.json", `{"size": -1}`)
	if !d.needsAnswer("b.json") {
		t.Fatal("the request written again is not pending: nothing tested")
	}
	refuse()
	if d.needsAnswer("b.json") {
		t.Error("the request written again with the same bad body is still pending after its refusal: " +
			"every sweep reads, refuses and logs it again")
	}
}
