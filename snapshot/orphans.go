package snapshot

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A reader killed while it waits for its copy (SIGKILL, or any death before it unlinks the
// copy) leaves NAME.want or a whole copy NAME.db behind. Every request name carries the reader's
// process id (r<PID>-<random>), so the daemon removes, before it writes the next copy (and when
// it starts serving), every file of a name whose process is gone: requests, copies, error files
// and the temporary files of either side (a temporary file of a live reader is never touched). MaxAge stays as the net under
// names of other shapes and reused process ids.

// ownerOf returns the process id in a file name of the folder ("r123-ab.db", ".r123-ab.db.tmp-x"),
// and whether it has one.
func ownerOf(file string) (int, bool) {
	name := strings.TrimPrefix(file, ".")
	if i := strings.Index(name, "."); i >= 0 {
		name = name[:i]
	}
	rest, ok := strings.CutPrefix(name, "r")
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(digits)
	return pid, ok && err == nil && pid > 0
}

// alive reports whether process pid exists (one of another user counts as alive).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// sweepOrphans removes the files of readers whose process is gone, and reports how many.
func (s *server) sweepOrphans() int {
	n := 0
	s.removeIn(func(name string, _ *unix.Stat_t) bool {
		pid, ok := ownerOf(name)
		return ok && pid != os.Getpid() && !alive(pid)
	}, func(name string) {
		n++
		pid, _ := ownerOf(name)
		s.opts.Logger.Info("removed the snapshot file of a reader that is gone", "file", name, "pid", pid)
	})
	return n
}
