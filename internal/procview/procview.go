// Package procview tells whether a process id that another process wrote down can be looked up
// here. A process id means something only among the processes of one PID namespace of one
// machine's boot: a process in another container (another PID namespace) or on another machine
// sharing the exchange folder has an id that names nothing here, or another process. A writer
// puts its View beside the ids it writes (a snapshot request's name, status.json), and a
// reader checks an id's process only when Visible says the view is its own.
package procview

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"sync"
)

// Digits is the length of a view: 16 hex digits.
const Digits = 16

// own is this process's view, read once: it cannot change while the process runs.
var own = sync.OnceValue(read)

// View is this process's view: the first 16 hex digits of the SHA-256 of the machine's boot id
// (/proc/sys/kernel/random/boot_id), a NUL byte and its PID namespace (the link
// /proc/self/ns/pid, such as "pid:[4026531836]"); "" when either cannot be read.
func View() string { return own() }

func read() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(string(boot)) + "\x00" + ns))
	return hex.EncodeToString(sum[:])[:Digits]
}

// Visible reports whether a process id written with view can be looked up here: view is empty
// (a writer that wrote none, taken as before views were written) or this process's own.
func Visible(view string) bool { return view == "" || view == View() }
