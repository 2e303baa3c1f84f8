package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/envsched/envsched/fsutil"
	"golang.org/x/sys/unix"
)

// Source is what Serve copies: storage.DB's WriteSnapshot, which writes the whole database
// from one read transaction while writers go on.
type Source interface {
	WriteSnapshot(w io.Writer) (int64, error)
}

// ServeOptions configure Serve. The zero value is valid.
type ServeOptions struct {
	PollInterval time.Duration // how often Folder is listed; 0 means DefaultPollInterval
	MaxAge       time.Duration // leftovers older than this are removed; 0 means DefaultMaxAge
	// SweepInterval is how often leftovers older than MaxAge are looked for; 0 means a minute.
	SweepInterval time.Duration
	// TakeTime is how long a copy this server wrote counts as being taken by its reader; 0 means
	// DefaultTakeTime. While fewer than MaxWaiting of the copies waiting are older, a further
	// request waits for a later pass instead of being refused (see answerAll).
	TakeTime time.Duration
	Logger   *slog.Logger // nil discards
	// Paused, when set and true, skips a pass: the daemon's DIR is a link to another folder
	// now, which is never followed (the folder would be made, and requests answered, there).
	Paused func() bool
}

func (o ServeOptions) withDefaults() ServeOptions {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = time.Minute
	}
	if o.TakeTime <= 0 {
		o.TakeTime = DefaultTakeTime
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Serve answers the snapshot requests written into DIR/snapshots until ctx is done; it then
// returns nil. It creates the folder (refusing a symbolic link) and returns an error only when
// it cannot; a copy that fails (a full disk) is logged, answered with NAME.error, and Serve
// goes on. Run it in a goroutine of its own, beside the daemon's writer: it never takes the
// write lock, and the daemon never waits for it.
func Serve(ctx context.Context, src Source, dir string, opts ServeOptions) error {
	opts = opts.withDefaults()
	folder := Dir(dir)
	if err := ensureFolder(folder); err != nil {
		return err
	}
	s := &server{src: src, folder: folder, opts: opts, written: map[string]time.Time{}}
	if s.hold() {
		s.sweepOrphans()
		s.release()
	}
	tick := time.NewTicker(opts.PollInterval)
	defer tick.Stop()
	lastSweep := time.Time{}
	for {
		if (opts.Paused == nil || !opts.Paused()) && s.usable() && s.hold() {
			if time.Since(lastSweep) > opts.SweepInterval {
				s.sweep(time.Now())
				lastSweep = time.Now()
			}
			s.answerAll()
			s.release()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// ensureFolder creates folder when missing and refuses anything but a real folder.
func ensureFolder(folder string) error {
	fi, err := os.Lstat(folder)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(folder, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create snapshot folder %s: %w", folder, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("snapshot folder %s: %w", folder, err)
	}
	if !fi.IsDir() || fi.Mode()&os.ModeSymlink != 0 {
		return errors.New(notAFolder(folder, fi))
	}
	return nil
}

// notAFolder says that folder, which fi describes, is not a real folder and what to do, in the
// same words for the daemon's log and for a reader that meets it (which said "does not exist ...
// wait until it is done" of a file or a FIFO the running daemon was logging).
func notAFolder(folder string, fi os.FileInfo) string {
	return fmt.Sprintf("snapshot folder %s is a %s, not a real folder; remove it (the running envsched run "+
		"makes the folder again)", folder, fsutil.TypeName(fi.Mode()))
}

type server struct {
	src    Source
	folder string
	opts   ServeOptions
	fault  string // why the folder was last found unusable; "" when it was usable
	// dir is the folder held open for one pass (hold, release), and at the path that reaches
	// it through that descriptor: every file of the pass is named under at, never under
	// folder, so that a folder swapped for a link while the pass runs is not followed.
	dir *os.File
	at  string
	// written is when (by the monotonic clock) this server wrote each copy still waiting for
	// its reader, so that a copy being taken is told from one nobody takes (unread).
	written map[string]time.Time
}

// hold opens the folder for one pass without following a link; a folder that became a link
// since usable checked it is skipped until the next pass. The pass then names its files under
// /proc/self/fd/N, which the kernel resolves to the folder the descriptor holds, whatever
// the path DIR/snapshots names meanwhile (Linux, like the rest of envsched).
func (s *server) hold() bool {
	f, err := os.OpenFile(s.folder, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_DIRECTORY, 0)
	if err != nil {
		return false
	}
	s.dir, s.at = f, fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	return true
}

// shown is err as a person reads it: the paths the pass names under /proc/self/fd/N (hold)
// name the folder instead. Log lines and error files said "rename /proc/self/fd/7/.x.db.tmp-...
// /proc/self/fd/7/x.db: ...", which tells a reader nothing; the folder is where the descriptor
// was opened, unless it was swapped meanwhile (then the pass does not run: usable).
func (s *server) shown(err error) error {
	if err == nil || s.at == "" {
		return err
	}
	return shownError{err: err, msg: replacePath(err.Error(), s.at, s.folder)}
}

// replacePath replaces every whole path element sequence from in msg (not /proc/self/fd/71 for
// /proc/self/fd/7) with to.
func replacePath(msg, from, to string) string {
	var b strings.Builder
	for {
		i := strings.Index(msg, from)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		end := i + len(from)
		b.WriteString(msg[:i])
		if end < len(msg) && msg[end] >= '0' && msg[end] <= '9' {
			b.WriteString(from)
		} else {
			b.WriteString(to)
		}
		msg = msg[end:]
	}
}

// shownError is an error with another message (shown), unwrapping to the original.
type shownError struct {
	err error
	msg string
}

func (e shownError) Error() string { return e.msg }
func (e shownError) Unwrap() error { return e.err }

// release closes the folder held by hold.
func (s *server) release() {
	s.dir.Close()
	s.dir, s.at = nil, ""
}

// usable checks the folder before each pass, as the trainer may change it while envsched runs:
// a folder removed is made again (the reading commands need it), and a folder replaced by a
// symbolic link or a file is left alone, the pass skipped: listing it would follow the link, and
// the sweep would remove old files wherever it leads. Each change is logged once.
func (s *server) usable() bool {
	_, statErr := os.Lstat(s.folder)
	err := ensureFolder(s.folder)
	switch {
	case err != nil && err.Error() != s.fault:
		s.opts.Logger.Error("snapshot folder unusable; reading commands get no copies until it is a folder again",
			"folder", s.folder, "err", err)
	case err == nil && errors.Is(statErr, fs.ErrNotExist):
		s.opts.Logger.Warn("snapshot folder was removed; made it again", "folder", s.folder)
	case err == nil && s.fault != "":
		s.opts.Logger.Info("snapshot folder usable again", "folder", s.folder)
	}
	s.fault = ""
	if err != nil {
		s.fault = err.Error()
	}
	return err == nil
}

// answerAll answers every pending request in the folder.
func (s *server) answerAll() {
	entries, err := os.ReadDir(s.at)
	if err != nil {
		s.opts.Logger.Warn("list snapshot requests", "folder", s.folder, "error", s.shown(err))
		return
	}
	swept, waiting, stale := false, -1, 0
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), wantSuffix)
		if !ok || !e.Type().IsRegular() || !validName(name) {
			continue
		}
		if !swept { // before each new copy: the copies of dead readers go first
			s.sweepOrphans()
			swept = true
		}
		if waiting < 0 {
			waiting, stale = s.unread()
		}
		if waiting >= MaxWaiting && stale < MaxWaiting {
			continue // copies being taken: served at a later pass, as readers take theirs
		}
		if waiting >= MaxWaiting {
			s.refuse(name, fmt.Errorf("%d copies of the database wait in %s, not yet taken by their readers "+
				"(at most %d): a reader takes its copy at once; remove the ones nobody will take", waiting,
				s.folder, MaxWaiting))
			continue
		}
		if s.answer(name) {
			waiting++
		}
	}
}

// MaxWaiting is how many copies Serve lets wait in the folder for their readers at once. A
// reader takes its copy as soon as it appears, so only requests nobody reads pile up: a
// thousand NAME.want files put there made a thousand whole copies of the database, enough to
// fill the disk (and then the daemon stopped on its own full disk). While MaxWaiting copies
// wait, further requests wait too, for a later pass, as long as fewer than MaxWaiting of the
// copies are older than TakeTime (being taken); once that many are older (nobody takes them),
// further requests are answered with an error file. Refused at once, nine readers started
// together (a dashboard and a few scripts) failed, one in two of sixteen.
const MaxWaiting = 8

// DefaultTakeTime is ServeOptions.TakeTime's default.
const DefaultTakeTime = 10 * time.Second

// unread counts the copies in the folder (NAME.db, a regular file) that no reader has taken yet,
// and how many of them are stale: written by this server longer than TakeTime ago, or by an
// earlier one. It forgets the copies that are gone.
func (s *server) unread() (n, stale int) {
	entries, err := os.ReadDir(s.at)
	if err != nil {
		return 0, 0
	}
	present := map[string]bool{}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), dbSuffix); ok && e.Type().IsRegular() && validName(name) {
			n++
			present[name] = true
			if t, ok := s.written[name]; !ok || time.Since(t) >= s.opts.TakeTime {
				stale++
			}
		}
	}
	for name := range s.written {
		if !present[name] {
			delete(s.written, name)
		}
	}
	return n, stale
}

// answer writes NAME.db (or NAME.error) and then removes NAME.want; it reports whether the
// copy was written.
func (s *server) answer(name string) bool {
	start := time.Now()
	n, err := s.write(name)
	if err != nil {
		s.refuse(name, err)
		return false
	}
	s.opts.Logger.Info("snapshot written", "name", name, "bytes", n, "ms", time.Since(start).Milliseconds())
	s.written[name] = time.Now()
	s.done(name)
	return true
}

// refuse answers NAME.want with NAME.error saying err, then removes the request.
func (s *server) refuse(name string, err error) {
	err = s.shown(err)
	s.opts.Logger.Warn("snapshot failed", "name", name, "error", err)
	msg := []byte(err.Error() + "\n")
	if werr := fsutil.WriteFileAtomic(filepath.Join(s.at, name+errorSuffix), msg, 0o644); werr != nil {
		s.opts.Logger.Warn("snapshot error file", "name", name, "error", s.shown(werr))
	}
	s.done(name)
}

// done removes the request NAME.want once it is answered.
func (s *server) done(name string) {
	if err := os.Remove(filepath.Join(s.at, name+wantSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.opts.Logger.Warn("remove snapshot request", "name", name, "error", s.shown(err))
	}
}

// write copies the database into NAME.db atomically (fsutil.WriteAtomic: temporary file,
// fsync, rename, folder fsync); the copy is readable by its owner only.
func (s *server) write(name string) (int64, error) {
	if err := s.room(); err != nil {
		return 0, fmt.Errorf("write snapshot %s: %w", name, err)
	}
	var n int64
	err := fsutil.WriteAtomic(filepath.Join(s.at, name+dbSuffix), 0o600, func(w io.Writer) error {
		var err error
		n, err = s.src.WriteSnapshot(w)
		return err
	}, fsutil.Hooks{})
	if err != nil {
		return n, fmt.Errorf("write snapshot %s: %w", name, err)
	}
	return n, nil
}

// room refuses a copy that would leave less than Reserve free on the folder's filesystem (when
// the source says how large its copy is): such a copy, being written and then held by its
// reader, filled the disk, and the daemon's next write there (status.json, a batch file, a
// commit) failed with "no space left on device", which stops the daemon; the trainer's rollout
// writes on that disk failed too. An `envsched stats` stopped the daemon it read.
func (s *server) room() error {
	sz, ok := s.src.(interface{ SnapshotSize() (int64, error) })
	if !ok {
		return nil
	}
	size, err := sz.SnapshotSize()
	if err != nil {
		return err
	}
	return Room(int(s.dir.Fd()), "DIR/snapshots", size)
}

// sweep removes every regular file in the folder older than MaxAge: requests nobody can
// answer, copies and error files whose reader died, temporary files of crashed writers.
// Readers unlink a copy as soon as they open it, so an old file is an orphan; except a file
// whose name says which live reader it is for (with its start time, orphans.go): its age is
// by the wall clock, which may have jumped forward.
func (s *server) sweep(now time.Time) {
	s.removeIn(func(name string, st *unix.Stat_t) bool {
		if o, ok := ownerOf(name); ok && o.start != 0 && o.visible() && o.alive() {
			return false
		}
		return now.Sub(time.Unix(st.Mtim.Unix())) >= s.opts.MaxAge
	}, func(name string) { s.opts.Logger.Info("removed stale snapshot file", "file", name) })
}

// removeIn removes the regular files of the folder held for the pass (hold) for which doomed
// is true (given their lstat), calling removed after each. It works through that descriptor,
// never through the folder's path: a folder swapped for a link meanwhile cannot make it remove
// files elsewhere.
func (s *server) removeIn(doomed func(name string, st *unix.Stat_t) bool, removed func(name string)) {
	held, err := unix.Openat(int(s.dir.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(held), s.folder)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return
	}
	fd := int(f.Fd())
	for _, name := range names {
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if doomed(name, &st) && unix.Unlinkat(fd, name, 0) == nil {
			removed(name)
		}
	}
}
