package cli

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// removeOnInterrupt makes an interrupt (SIGINT, SIGTERM, SIGHUP) while a command writes a
// temporary file remove that file and end the command with exit 1, saying what was
// interrupted: killed by the signal, the command left the file for good beside its target
// (`.NAME.tmp-X`, as large as what was written). Call set with each temporary file's path as
// it is named, and done once the file is renamed into place (or the work is over): from then on
// an interrupt does nothing more than end the command once it returns.
func removeOnInterrupt(what string) (set func(tmp string), done func()) {
	var mu sync.Mutex
	tmp, finished := "", false
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		mu.Lock() // held to the exit: no other file is named meanwhile
		if finished {
			mu.Unlock()
			return
		}
		msg := ""
		if tmp != "" && os.Remove(tmp) == nil {
			msg = ": nothing written, its partial file removed"
		}
		fmt.Fprintf(os.Stderr, "envsched: %s interrupted (%v)%s\n", what, sig, msg)
		os.Exit(1)
	}()
	set = func(p string) { mu.Lock(); tmp = p; mu.Unlock() }
	done = func() {
		mu.Lock()
		finished = true
		mu.Unlock()
	}
	return set, done
}
