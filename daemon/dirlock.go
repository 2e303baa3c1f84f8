package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/envsched/envsched/fsutil"
)

// ErrDirHeld means another envsched process serves the exchange directory. Two daemons on one
// DIR (with two databases) would both answer every request, each overwriting the other's batch
// file with another answer, and sweep each other's temporary files.
var ErrDirHeld = errors.New("exchange directory is served by another envsched process")

// DirHeldError is ErrDirHeld with the folder and the database this process would have used,
// and the processes holding the folder's lock where the system tells them.
type DirHeldError struct {
	Dir, DB string
	Holders []fsutil.Holder
}

// Error says which folder is held, where to find the other process, and what to do.
func (e *DirHeldError) Error() string {
	who := ""
	for _, h := range e.Holders {
		who += h.String() + "; "
	}
	return fmt.Sprintf("exchange directory %s is served by another envsched process (%sits pid and database are "+
		"in %s/status.json); this one would use the database %s: stop the other one, or give this one another --dir",
		e.Dir, who, e.Dir, e.DB)
}

// Is makes errors.Is(err, ErrDirHeld) true.
func (e *DirHeldError) Is(target error) bool { return target == ErrDirHeld }

// lockDir takes an exclusive lock (flock) on the folder dir itself, held while the returned
// file is open (closing it, or the process ending, releases it). It waits up to timeout for a
// daemon being stopped to let go, then fails with a *DirHeldError. A filesystem that cannot
// lock a folder (some network filesystems) is logged and gives a nil file: the folder is then
// served unlocked, as before.
func lockDir(dir, db string, timeout time.Duration, log *slog.Logger) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock exchange directory %s: %w", dir, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			log.Warn("cannot lock the exchange directory; a second envsched on it would not be refused",
				"path", dir, "err", err)
			return nil, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, &DirHeldError{Dir: dir, DB: db, Holders: fsutil.LockHolders(dir)}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// relockDir keeps the lock on the folder at DIR's path: DIR replaced while the daemon runs
// (moved away and made again) would leave the lock on the old folder while the daemon serves
// the new one, and a second envsched could lock and serve it too. The new folder is locked in
// turn (the old lock let go); one another process holds fails with a *DirHeldError. It runs
// with each heartbeat; a DIR that cannot be read is left to the other checks.
func (d *Daemon) relockDir() error {
	if d.dirLock == nil {
		return nil
	}
	held, err := d.dirLock.Stat()
	if err != nil {
		return nil
	}
	if lfi, err := os.Lstat(d.dirs.root); err == nil && lfi.Mode()&os.ModeSymlink != 0 && d.served.elsewhere(d.dirs.root) {
		return nil // a link to another folder in DIR's place: never followed, nor locked (linkedAway)
	}
	fi, err := os.Stat(d.dirs.root)
	if err != nil || os.SameFile(fi, held) {
		return nil
	}
	f, err := lockDir(d.dirs.root, d.cfg.DB, time.Second, d.log)
	if err != nil {
		return err
	}
	d.log.Warn("exchange directory was replaced; locked the new one", "path", d.dirs.root)
	d.dirLock.Close()
	d.dirLock = f
	if fi, err := f.Stat(); err == nil {
		d.served.set(fi)
	}
	return nil
}

// servedDir is the folder the daemon serves, read by the loop and by the snapshot server's
// goroutine.
type servedDir struct {
	mu sync.Mutex
	fi os.FileInfo
}

func (s *servedDir) set(fi os.FileInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fi = fi
}

// elsewhere reports whether root is a symbolic link that leads to another folder than the one
// served (or nowhere). A plain folder, or a root that cannot be read, is left to the other
// checks (relockDir, repairDirs).
func (s *servedDir) elsewhere(root string) bool {
	fi, err := os.Lstat(root)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return false
	}
	s.mu.Lock()
	served := s.fi
	s.mu.Unlock()
	target, err := os.Stat(root)
	return served == nil || err != nil || !os.SameFile(target, served)
}
