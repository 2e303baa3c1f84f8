package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A bad request written again with the same body (a retry that does not remove the error file
// first, or a touch) is refused again and its error file written again, once. Its error file,
// which said the same, was not rewritten, so the request stayed older than no answer: every
// rescan read it, refused it and logged it again, without end (20 times in a second at
// --rescan-interval 50ms; 8,640 times a day at the default).
func TestBadRequestWrittenAgainIsRefusedOnce(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{args: []string{"--rescan-interval", "50ms"}})
	d.waitReady()
	errPath := filepath.Join(dir, "batches", "again.error.json")
	refusals := func() int { return strings.Count(d.stderr.String(), `"msg":"bad request","id":"again"`) }
	writeRequest(t, dir, "again", `{"size": -1}`)
	waitUntil(t, "the error file", func() bool { _, err := os.Stat(errPath); return err == nil })
	// The same body is written again once the error file is older than any file-time granularity
	// (the clock's granularity must not decide whether the request written again is newer). The
	// error file was made a minute old instead, but a rescan between that and the new version
	// then saw the first version newer than its error file and refused it a second time, as it
	// should: 3 refusals, a failure under load.
	first, err := os.Stat(errPath)
	must(t, err)
	time.Sleep(1100 * time.Millisecond)
	writeRequest(t, dir, "again", `{"size": -1}`)
	waitUntil(t, "the second refusal", func() bool { return refusals() >= 2 })
	time.Sleep(time.Second) // twenty rescans
	if n := refusals(); n != 2 {
		t.Errorf("the request written again was refused %d times; want 2 (once per version)\n%s", n,
			tail(d.stderr.String(), 1500))
	}
	fi, err := os.Stat(errPath)
	must(t, err)
	if !fi.ModTime().After(first.ModTime()) {
		t.Errorf("the error file was not written again for the request's new version")
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
