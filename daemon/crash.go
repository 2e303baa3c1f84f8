package daemon

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Crash points: named places where a test can make the process die (SIGKILL to itself) to
// check that a restart leaves everything consistent. Config.CrashPoint selects one; it is a
// test-only knob (main reads it from ENVSCHED_CRASHPOINT).
const (
	// CrashBeforeCommit is just before the answer to a request is committed to the database.
	CrashBeforeCommit = "before-commit"
	// CrashBeforeStore is after a new answer's temporary batch file is written and fsync'd
	// (while the answer is stored, see EarlyAnswerer), just before the answer's commit.
	CrashBeforeStore = "before-store"
	// CrashAfterCommit is after the answer is committed and before its batch file is renamed
	// into place (its temporary file may be written already).
	CrashAfterCommit = "after-commit"
	// CrashBeforeRename is after the temporary batch file is written and fsync'd, before the
	// rename that makes it visible.
	CrashBeforeRename = "before-rename"
	// CrashBeforeDirSync is after the rename, before the fsync of the batches folder.
	CrashBeforeDirSync = "before-dirsync"
	// CrashBeforeIngestCommit is just before an ingest transaction commits.
	CrashBeforeIngestCommit = "before-ingest-commit"
)

var crashPoints = []string{CrashBeforeCommit, CrashBeforeStore, CrashAfterCommit, CrashBeforeRename, CrashBeforeDirSync,
	CrashBeforeIngestCommit}

// crasher kills the process the n-th time a named point is reached. The zero value never does.
type crasher struct {
	name string
	n    int
	hits int
}

// parseCrashPoint reads "name" or "name:n" (n ≥ 1, default 1).
func parseCrashPoint(s string) (crasher, error) {
	if s == "" {
		return crasher{}, nil
	}
	name, count, hasCount := strings.Cut(s, ":")
	c := crasher{name: name, n: 1}
	if hasCount {
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 {
			return crasher{}, fmt.Errorf("crash point %q: the count after ':' must be a positive integer", s)
		}
		c.n = n
	}
	for _, p := range crashPoints {
		if p == name {
			return c, nil
		}
	}
	return crasher{}, fmt.Errorf("crash point %q: unknown; known points are %s", s,
		strings.Join(crashPoints, ", "))
}

// afterWait is at for a point reached while other work runs: when point is the one that will
// kill now, it first waits for that work (wait) to end, so that the crash finds it done.
func (c *crasher) afterWait(point string, wait func()) {
	if c != nil && c.name == point && c.hits+1 == c.n {
		wait()
	}
	c.at(point)
}

// at kills the process, as a crash would (no deferred calls, no buffers flushed), when point is
// the chosen one and has been reached n times.
func (c *crasher) at(point string) {
	if c == nil || c.name == "" || c.name != point {
		return
	}
	c.hits++
	if c.hits == c.n {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		for { // the signal is delivered asynchronously; never go on past the point
			time.Sleep(time.Second)
		}
	}
}
