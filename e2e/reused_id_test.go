package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A request ID answered before and written again with another body gets its stored answer, byte
// for byte (the protocol's guarantee), and the daemon now says so in its log with what was asked
// and what the answer holds: the trainer that reused an ID got a batch of another size without a
// word. The same body written again says nothing.
func TestReusedIDWithAnotherBodyIsLogged(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, opts{})
	d.waitReady()
	writeRequest(t, dir, "same", `{"size": 2}`)
	first := waitBatch(t, d, "same")
	again := func(body string) []byte {
		must(t, os.Remove(filepath.Join(dir, "batches", "same.json")))
		writeRequest(t, dir, "same", body)
		return waitBatch(t, d, "same")
	}
	if b := again(`{"size": 2}`); !bytes.Equal(b, first) {
		t.Fatalf("the same request again: another answer\n%s\n%s", first, b)
	}
	time.Sleep(100 * time.Millisecond) // its log line, were there one
	if strings.Contains(d.stderr.String(), "written again with another body") {
		t.Errorf("the same body again was warned about:\n%s", tail(d.stderr.String(), 2000))
	}
	for _, body := range []string{`{"size": 3}`, `{"size": 2, "step": 9}`, `not json`} {
		if b := again(body); !bytes.Equal(b, first) {
			t.Fatalf("%s under a used ID: another answer\n%s\n%s", body, first, b)
		}
	}
	waitUntil(t, "three warnings", func() bool {
		return strings.Count(d.stderr.String(), "written again with another body") == 3
	})
	if !strings.Contains(d.stderr.String(), `"asked":"size 3, group_size 8"`) {
		t.Errorf("the warning does not say what was asked:\n%s", tail(d.stderr.String(), 3000))
	}
	if code := d.signal(syscall.SIGTERM); code != 0 {
		t.Errorf("SIGTERM: exit %d", code)
	}
}
