package fsutil

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Holder is a process that holds a lock on a file, as the system tells it.
type Holder struct {
	PID     int
	Command string // its command name (/proc/PID/comm); "" when it cannot be read
}

func (h Holder) String() string {
	if h.Command == "" {
		return "pid " + strconv.Itoa(h.PID)
	}
	return fmt.Sprintf("pid %d, %s", h.PID, h.Command)
}

// LockHolders returns the processes that hold a lock (flock, POSIX or open file description
// lock) on the file at path, from /proc/locks (Linux). It returns nil when that cannot be told:
// no /proc/locks, a lock taken in another PID namespace (pid 0 or -1), or the file gone. Waiters
// (the "->" lines) are not holders. The same process holding two locks is named once.
func LockHolders(path string) []Holder {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return nil
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	var out []Holder
	seen := map[int]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 9548 fe:00:10019382 0 EOF"
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" || fields[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 || seen[pid] {
			continue
		}
		seen[pid] = true
		comm, _ := os.ReadFile("/proc/" + fields[4] + "/comm")
		out = append(out, Holder{PID: pid, Command: strings.TrimSpace(string(comm))})
	}
	return out
}
