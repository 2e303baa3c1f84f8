package snapshot

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/envsched/envsched/internal/procview"
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
//
// A process id means something only to a process that sees the same processes: a reader in
// another PID namespace (a container, a sidecar sharing the exchange folder) or on another
// machine (a shared file system) has an id the daemon cannot look up, or that names another of
// its processes. The daemon took such a reader for gone and removed its request or copy, and the
// reader waited for a copy that never came (4 of 6 readers started together in other PID
// namespaces exited 3). So a name also carries the reader's view (r<PID>-s<START>-v<VIEW>-<random>:
// a hash of the machine's boot id and the PID namespace), and the daemon judges by the process
// only the names of its own view; another view's files go by MaxAge, as names without a start
// time do.

// owner is who a file name of the folder says wrote it.
type owner struct {
	pid   int
	start uint64 // the process's start time in clock ticks since boot; 0 when the name has none
	view  string // the writer's view (procview.View); "" when the name has none
}

// visible reports whether the owner's process can be looked up from here: its name gives no
// view (an older reader, taken as before) or this process's own.
func (o owner) visible() bool { return procview.Visible(o.view) }

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
	st, rest, ok := strings.Cut(rest, "-")
	if !ok || !strings.HasPrefix(st, "s") {
		return o, true
	}
	if n, err := strconv.ParseUint(st[1:], 10, 64); err == nil && n > 0 {
		o.start = n
	}
	if v, _, ok := strings.Cut(rest, "-"); ok && len(v) == 1+procview.Digits && v[0] == 'v' {
		o.view = v[1:]
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
		return ok && o.visible() && o.pid != os.Getpid() && !o.alive()
	}, func(name string) {
		n++
		o, _ := ownerOf(name)
		s.opts.Logger.Info("removed the snapshot file of a reader that is gone", "file", name, "pid", o.pid)
	})
	return n
}
