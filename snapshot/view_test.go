package snapshot

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/envsched/envsched/internal/procview"
)

// TestReaderOfAnotherViewIsNotSweptAsGone: a reader in another PID namespace or on another
// machine names a process the daemon cannot look up (or another of its processes). Its request
// and copy were removed at once as a dead reader's, and it waited for a copy that never came.
// Files named with another view now stay until MaxAge; files of the daemon's own view whose
// process is gone, and of names without a view, go at once as before.
func TestReaderOfAnotherViewIsNotSweptAsGone(t *testing.T) {
	own := procview.View()
	if own == "" {
		t.Skip("no boot id or PID namespace here: names carry no view")
	}
	if o, ok := ownerOf(mustName(t)); !ok || o.view != own || o.start == 0 {
		t.Fatalf("a request name of this process names %+v; want its view %s", o, own)
	}
	other := "0123456789abcdef"
	if other == own {
		other = "fedcba9876543210"
	}
	const gone = 1 << 22 // above pid_max's default: no process has this id here
	start := uint64(12345)
	foreign := []string{fmt.Sprintf("r%d-s%d-v%s-0123abcd.want", gone, start, other),
		fmt.Sprintf("r1-s%d-v%s-4567abcd.db", start, other)} // pid 1 here is another process
	dead := []string{fmt.Sprintf("r%d-s%d-v%s-89abcdef.want", gone, start, own), fmt.Sprintf("r%d-s%d-0123abcd.db", gone, start)}
	folder := t.TempDir()
	for _, name := range append(append([]string{}, foreign...), dead...) {
		if err := os.WriteFile(filepath.Join(folder, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := &server{folder: folder, opts: ServeOptions{Logger: slog.New(slog.DiscardHandler)}.withDefaults()}
	if !s.hold() {
		t.Fatal("hold")
	}
	s.sweepOrphans()
	s.sweep(time.Now())
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(folder, name)); return err == nil }
	for _, name := range foreign {
		if !exists(name) {
			t.Errorf("%s, a reader of another view, removed as gone", name)
		}
	}
	for _, name := range dead {
		if exists(name) {
			t.Errorf("%s, a reader of this view that is gone, not removed", name)
		}
	}
	s.sweep(time.Now().Add(s.opts.MaxAge + time.Minute))
	s.release()
	for _, name := range foreign {
		if exists(name) {
			t.Errorf("%s of another view not removed after MaxAge", name)
		}
	}
}
