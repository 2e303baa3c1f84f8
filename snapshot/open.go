package snapshot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/internal/procview"
	"github.com/envsched/envsched/storage"
)

// Options configure Open. The zero value is valid.
type Options struct {
	LockTimeout  time.Duration // how long to try the database itself; 0 means DefaultLockTimeout
	Wait         time.Duration // how long to wait for the daemon's copy; 0 means DefaultWait
	PollInterval time.Duration // how often to look for the copy; 0 means DefaultPollInterval
	Logger       *slog.Logger  // nil discards
	// Direct reads a database that no process holds in place, holding its shared lock for as
	// long as the returned DB is open. By default Open copies it first (beside it, then
	// unlinked) and releases the lock at once, so that a daemon starting meanwhile is not kept
	// out by a long read; when the copy cannot be made (a read-only folder) it reads in place.
	Direct bool
}

func (o Options) withDefaults() Options {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// DB is a database opened for reading, directly or through a copy.
type DB struct {
	*storage.DB
	// Source is the database file that was asked for (dbPath of Open).
	Source string
	// Snapshot says the data comes from a copy the running daemon wrote.
	Snapshot bool
}

// Open opens the database at dbPath, of the exchange directory dir, for reading. When no
// process holds it, Open reads a private copy (or the file itself: see Options.Direct). When a
// process holds it, Open asks that
// daemon for a consistent copy (see the package comment) and opens the copy. It fails with an
// error wrapping storage.ErrLocked and ErrNoServer when no daemon answers within opts.Wait (or
// at once when DIR/snapshots does not exist: nothing serves copies there), with ErrFailed when
// the daemon says it could not write the copy, and with ctx's error when ctx is done first.
func Open(ctx context.Context, dir, dbPath string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	if _, err := os.Stat(dbPath); err != nil {
		return nil, fmt.Errorf("open db %s: %w", dbPath, err)
	}
	db, err := storage.Open(dbPath, storage.Options{ReadOnly: true, Timeout: opts.LockTimeout, Logger: opts.Logger})
	if err == nil {
		return localCopy(db, opts)
	}
	if !errors.Is(err, storage.ErrLocked) {
		return nil, err
	}
	path, err := request(ctx, Dir(dir), opts)
	if err != nil {
		return nil, fmt.Errorf("read %s while another process holds it: %w", dbPath, err)
	}
	return openCopy(path, dbPath, opts)
}

// localCopy copies db, which this process holds with a shared lock, into a temporary file
// beside it, opens the copy and then releases db; see Options.Direct. When the copy cannot be
// made, db is read in place.
func localCopy(db *storage.DB, opts Options) (*DB, error) {
	source := db.Path()
	if opts.Direct {
		return &DB{DB: db, Source: source}, nil
	}
	dir, name := filepath.Split(source)
	if err := roomBeside(db, dir); err != nil { // a copy would fill the disk: read in place
		opts.Logger.Debug("reading the database in place", "db", source, "reason", err)
		return &DB{DB: db, Source: source}, nil
	}
	tmp, err := os.CreateTemp(dir, fsutil.TempName(name, "read-*"))
	if err == nil {
		_, err = db.WriteSnapshot(tmp)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
	}
	var cp *DB
	if err == nil {
		cp, err = openCopy(tmp.Name(), source, opts)
	}
	if err != nil {
		if tmp != nil {
			os.Remove(tmp.Name())
		}
		opts.Logger.Debug("reading the database in place", "db", source, "reason", err)
		return &DB{DB: db, Source: source}, nil
	}
	cp.Snapshot = false
	db.Close() // read-only: nothing to lose
	return cp, nil
}

// roomBeside fails when a copy of db in folder dir would leave less than Reserve free there.
func roomBeside(db *storage.DB, dir string) error {
	size, err := db.SnapshotSize()
	if err != nil {
		return err
	}
	if dir == "" {
		dir = "."
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil // CreateTemp says what is wrong
	}
	defer f.Close()
	return Room(int(f.Fd()), dir, size)
}

// openCopy opens the copy at path and unlinks it: the open file stays readable.
func openCopy(path, source string, opts Options) (*DB, error) {
	db, err := storage.Open(path, storage.Options{ReadOnly: true, Timeout: opts.LockTimeout, Logger: opts.Logger,
		Name: source})
	os.Remove(path)
	if err != nil {
		return nil, fmt.Errorf("open snapshot of %s: %w", source, err)
	}
	opts.Logger.Debug("reading a snapshot written by the daemon", "db", source)
	return &DB{DB: db, Source: source, Snapshot: true}, nil
}

// request asks the daemon serving folder for a copy and returns the copy's path.
func request(ctx context.Context, folder string, opts Options) (string, error) {
	fi, err := os.Lstat(folder)
	switch {
	case err == nil && (!fi.IsDir() || fi.Mode()&os.ModeSymlink != 0):
		// The daemon never serves through a link, nor in a file or a FIFO (Serve logs the same
		// words): a request written where a link led waited the whole Wait (two minutes) for a
		// copy that never came, and a file was called missing, with the advice to wait.
		return "", fmt.Errorf("%s, and the daemon serves no copies until then: %w: %w", notAFolder(folder, fi),
			ErrNoServer, storage.ErrLocked)
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%s does not exist, so the process holding the database serves no "+
			"snapshots (an `envsched ingest`, or an older `envsched run`); wait until it is done: %w: %w",
			folder, ErrNoServer, storage.ErrLocked)
	case err != nil:
		return "", fmt.Errorf("snapshot folder %s: %w: %w: %w", folder, err, ErrNoServer, storage.ErrLocked)
	}
	name, err := newName()
	if err != nil {
		return "", err
	}
	want := filepath.Join(folder, name+wantSuffix)
	body := fmt.Appendf(nil, "{\"pid\": %d, \"asked_at\": %q}\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	if err := fsutil.WriteFileAtomic(want, body, 0o644); err != nil {
		return "", fmt.Errorf("ask for a snapshot: %w", err)
	}
	path, err := await(ctx, folder, name, opts)
	// The daemon removes NAME.want only after NAME.db or NAME.error has appeared, so the reader
	// can see its answer first: it removes its own request, so that nothing is left once it
	// returns (the daemon tolerates the request being gone).
	os.Remove(want)
	if err != nil { // interrupted or timed out: leave nothing, not even a copy answered meanwhile
		for _, suffix := range []string{dbSuffix, errorSuffix} {
			os.Remove(filepath.Join(folder, name+suffix))
		}
	}
	return path, err
}

// await waits for NAME.db or NAME.error.
func await(ctx context.Context, folder, name string, opts Options) (string, error) {
	deadline := time.NewTimer(opts.Wait)
	defer deadline.Stop()
	tick := time.NewTicker(opts.PollInterval)
	defer tick.Stop()
	for {
		if path, done, err := answered(folder, name); done {
			return path, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-deadline.C:
			return "", fmt.Errorf("no envsched daemon answered the snapshot request %s within %s "+
				"(is the process holding the database `envsched ingest`? wait until it is done): %w: %w",
				filepath.Join(folder, name+wantSuffix), opts.Wait, ErrNoServer, storage.ErrLocked)
		case <-tick.C:
		}
	}
}

// answered reports whether the daemon has answered request name, and with what.
func answered(folder, name string) (path string, done bool, err error) {
	path = filepath.Join(folder, name+dbSuffix)
	if _, err := os.Stat(path); err == nil {
		return path, true, nil
	}
	epath := filepath.Join(folder, name+errorSuffix)
	msg, err := fsutil.ReadRegularMax(epath, 1<<20) // a FIFO or a huge file put there must not block the reader
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	os.Remove(epath)
	if err != nil {
		return "", true, err // it names the path (fsutil.ReadRegularMax)
	}
	return "", true, fmt.Errorf("%w: %s", ErrFailed, strings.TrimSpace(string(msg)))
}

// newName is a request name unique to this call, naming this process (orphans.go).
func newName() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("snapshot request name: %w", err)
	}
	start, ok := startOf(os.Getpid()) // the daemon tells a live reader by it, not by file times
	switch view := procview.View(); {
	case ok && view != "": // and looks it up only when it sees the same processes
		return fmt.Sprintf("r%d-s%d-v%s-%s", os.Getpid(), start, view, hex.EncodeToString(b[:])), nil
	case ok:
		return fmt.Sprintf("r%d-s%d-%s", os.Getpid(), start, hex.EncodeToString(b[:])), nil
	}
	return fmt.Sprintf("r%d-%s", os.Getpid(), hex.EncodeToString(b[:])), nil
}
