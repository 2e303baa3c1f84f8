package snapshot

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A reader killed while it waits for its copy (SIGKILL, or any death before it unlinks the
// copy) leaves NAME.want or a whole copy NAME.db behind. Every request name carries the reader's
// process id and, where /proc tells it, the process's start time in clock ticks since boot
// (r<PID>-s<START>-<random>; r<PID>-<random> where it does not), so the daemon removes, before it
// writes the next copy (and when it starts serving), every file of a name whose process is gone:
// requests, copies, error files and the temporary files of either side (a temporary file of a
// live reader is never touched). A file of a live reader whose name has its start time is never
// removed for its age either: file times follow the wall clock, and a clock set forward by
// MaxAge or more made the sweep take a reader's fresh request or copy for an orphan (the reader
// then waited for a copy that was gone). The start time tells a reused process id from the
// reader's. MaxAge stays as the net under names of other shapes, and names without a start time.

// owner is who a file name of the folder says wrote it.
type owner struct {
	pid   int
	start uint64 // the process's start time in clock ticks since boot; 0 when the name has none
}

// ownerOf returns the owner named by a file name of the folder ("r123-ab.db",
// "r123-s4567-ab.db", ".r123-ab.db.tmp-x"), and whether it names one.
func ownerOf(file string) (owner, bool) {
	name := strings.TrimPrefix(file, ".")
	if i := strings.Index(name, "."); i >= 0 {
		name = name[:i]
	}
	rest, ok := strings.CutPrefix(name, "r")
	if !ok {
		return owner{}, false
	}
	digits, rest, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(digits)
	if !ok || err != nil || pid <= 0 {
		return owner{}, false
	}
	o := owner{pid: pid}
	if st, _, ok := strings.Cut(rest, "-"); ok && strings.HasPrefix(st, "s") {
		if n, err := strconv.ParseUint(st[1:], 10, 64); err == nil && n > 0 {
			o.start = n
		}
	}
	return o, true
}

// alive reports whether the owner's process exists (one of another user counts as alive): a
// process of that id, started at the owner's start time when the name gives one and /proc
// tells the process's.
func (o owner) alive() bool {
	err := syscall.Kill(o.pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if o.start == 0 {
		return true
	}
	start, ok := startOf(o.pid)
	return !ok || start == o.start
}

// startOf returns the start time of process pid in clock ticks since boot (field 22 of
// /proc/PID/stat: not the wall clock, which may jump), and whether it could be read.
func startOf(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')') // the command name, field 2, may hold spaces and parentheses
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(b[i+1:])) // from field 3 on
	if len(fields) < 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(fields[19], 10, 64)
	return n, err == nil && n > 0
}

// sweepOrphans removes the files of readers whose process is gone, and reports how many.
func (s *server) sweepOrphans() int {
	n := 0
	s.removeIn(func(name string, _ *unix.Stat_t) bool {
		o, ok := ownerOf(name)
		return ok && o.pid != os.Getpid() && !o.alive()
	}, func(name string) {
		n++
		o, _ := ownerOf(name)
		s.opts.Logger.Info("removed the snapshot file of a reader that is gone", "file", name, "pid", o.pid)
	})
	return n
}
