package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/export"
	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/snapshot"
	"github.com/envsched/envsched/storage"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "export rollouts, tasks, batches or quarantined lines as JSON lines or CSV",
		UsageText: "envsched export --dir DIR --what rollouts|tasks|batches|quarantine [--format jsonl|csv] [--out FILE]",
		Description: "export writes everything the database holds of one kind, for pandas or a spreadsheet: " +
			"rollouts (one per line, in the order each task's were counted), tasks (catalogue metadata and " +
			"statistics), batches (JSON lines: each stored answer; CSV: one row per chosen task) or " +
			"quarantine (lines set aside and why). Exported rollouts and tasks as JSON lines are valid " +
			"rollout and catalogue files: ingested into a fresh directory they give the same statistics. " +
			"While `envsched run` holds the database, export reads a consistent copy the daemon writes " +
			"into DIR/snapshots. Output goes to standard output unless --out names a file (written whole, " +
			"then renamed into place).",
		Flags: []cli.Flag{
			ingestDirFlag(),
			ingestDBFlag(),
			&cli.StringFlag{Name: "what", Required: true, Usage: "`KIND` to export: rollouts, tasks, batches or quarantine"},
			&cli.StringFlag{Name: "format", EnvVars: []string{"ENVSCHED_EXPORT_FORMAT"},
				Usage: "`FORMAT`: jsonl or csv (default: csv when --out ends in .csv, else jsonl)"},
			&cli.StringFlag{Name: "out", Usage: "write to `FILE` instead of standard output"},
			snapshotWaitFlag(),
		},
		Action: exportAction,
	}
}

func exportAction(c *cli.Context) error {
	what := export.What(strings.ToLower(c.String("what")))
	format, err := exportFormat(c.String("format"), c.String("out"))
	if err != nil {
		return err
	}
	if err := checkOutPlace(c.String("dir"), ingestDBPath(c), c.String("out")); err != nil {
		return usageError{err}
	}
	db, err := openForReading(c)
	if err != nil {
		return err
	}
	defer db.Close()
	out := c.String("out")
	write := func(w io.Writer) (n int64, err error) {
		err = db.View(func(r *storage.Reader) error {
			n, err = export.Write(w, r, db.Config(), what, format)
			return err
		})
		if errors.Is(err, export.ErrUnknown) {
			return n, usageError{err}
		}
		return n, err
	}
	if out == "" {
		_, err := write(c.App.Writer)
		return err
	}
	n, err := writeFileWith(out, write)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "exported %s to %s\n", exportedWhat(db.DB, what, format, n), out)
	return nil
}

// exportedWhat says what n records of the export are: for batches as CSV, rows of chosen tasks
// of so many batches ("240 rows (the chosen tasks of 30 batches)"), else n of the kind.
func exportedWhat(db *storage.DB, what export.What, format export.Format, n int64) string {
	if what != export.Batches || format != export.CSV {
		return fmt.Sprintf("%d %s", n, what)
	}
	var batches int
	err := db.View(func(r *storage.Reader) error {
		return r.Answers(func(string, []byte) error { batches++; return nil })
	})
	if err != nil {
		return fmt.Sprintf("%d rows (chosen tasks)", n)
	}
	return fmt.Sprintf("%d rows (the chosen tasks of %d batches)", n, batches)
}

// exportFormat is --format, or the format --out's extension suggests.
func exportFormat(flag, out string) (export.Format, error) {
	switch strings.ToLower(flag) {
	case "jsonl", "json":
		return export.JSONL, nil
	case "csv":
		return export.CSV, nil
	case "":
		if strings.EqualFold(filepath.Ext(out), ".csv") {
			return export.CSV, nil
		}
		return export.JSONL, nil
	}
	return "", usageError{fmt.Errorf("--format %q: use jsonl or csv", flag)}
}

// writeFileWith writes path through fn atomically (fsutil.WriteAtomic): a reader never sees
// half an export, and the file survives a crash once it is in place. A path that is a device or
// a pipe (/dev/stdout, /dev/null, a FIFO, a shell's process substitution) is written into as it
// is, and a symbolic link to a file replaces the file it names (see outTarget): the file written
// whole was renamed over whatever was there, so `--out /dev/null` run as root put a regular file
// in place of /dev/null for every program of the machine, and a link was replaced by a copy
// while the file it named stayed as it was.
func writeFileWith(path string, fn func(io.Writer) (int64, error)) (int64, error) {
	if fd, ok, err := ownOut(path); err != nil {
		return 0, err
	} else if ok {
		// This process's own open file (/dev/stdout, /dev/fd/3, /proc/self/fd/1): written through
		// the descriptor, as a shell's `>` or `>>` opened it (its offset, its append mode), and left
		// open. Resolved to its file and replaced, `--out /dev/stdout >> log` lost the log. A
		// duplicate is written and closed: an *os.File made of the descriptor itself would close
		// it when collected.
		dup, err := syscall.Dup(fd)
		if err != nil {
			return 0, fmt.Errorf("write %s: %w", path, err)
		}
		f := os.NewFile(uintptr(dup), path)
		n, err := fn(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return n, fmt.Errorf("write %s: %w", path, err)
		}
		return n, nil
	}
	target, into, err := outTarget(path)
	if err != nil {
		return 0, err
	}
	var n int64
	if into {
		n, err = writeInto(target, fn)
	} else {
		// An interrupt removes the temporary file (it was left beside the target for good).
		set, done := removeOnInterrupt("writing " + path)
		err = fsutil.Replace(target, func(tmp string) error {
			set(tmp)
			return fsutil.WriteNew(tmp, 0o644, func(w io.Writer) error {
				var err error
				n, err = fn(w)
				return err
			})
		}, fsutil.Hooks{})
		done()
	}
	if err != nil {
		return n, fmt.Errorf("write %s: %w", path, err)
	}
	return n, nil
}

// outTarget says how --out is written: the path to write and whether it is written into as it
// is (into: a device, a FIFO or a socket, links followed) rather than replaced by rename. A
// symbolic link to a regular file gives the file it resolves to, replaced by rename there; a
// missing path (a dangling link too) is created by rename; a folder is an error.
func outTarget(path string) (target string, into bool, err error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, false, nil
	case err != nil:
		return "", false, fmt.Errorf("--out %s: %w", path, err)
	case fi.IsDir():
		return "", false, fmt.Errorf("--out %s is a folder: name a file", path)
	case !fi.Mode().IsRegular():
		return path, true, nil
	}
	if lfi, err := os.Lstat(path); err != nil || lfi.Mode()&fs.ModeSymlink == 0 {
		return path, false, nil
	}
	target, err = filepath.EvalSymlinks(path)
	if err != nil {
		return "", false, fmt.Errorf("--out %s: %w", path, err)
	}
	return target, false, nil
}

// ownOut reports whether --out names one of this process's open descriptors (ownFD) that it may
// write: one it was given (a shell's redirection), not one the Go runtime opened for itself
// (anon_inode:[eventpoll], [eventfd]) nor one not open at all, which a file opened later (the
// database) could take. It is checked before the database is opened (checkOutPlace) and again
// before the write.
func ownOut(path string) (int, bool, error) {
	fd, ok := ownFD(path)
	if !ok {
		return 0, false, nil
	}
	target, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil || strings.HasPrefix(target, "anon_inode:") {
		return 0, false, fmt.Errorf("--out %s: descriptor %d is not a file this command was given", path, fd)
	}
	return fd, true, nil
}

// ownFD reports whether path names, itself or through up to eight symbolic links, one of this
// process's open descriptors: /proc/self/fd/N or /dev/fd/N (so /dev/stdout, /dev/stderr).
func ownFD(path string) (int, bool) {
	for range 8 {
		for _, prefix := range []string{"/proc/self/fd/", "/dev/fd/"} {
			if rest, ok := strings.CutPrefix(filepath.Clean(path), prefix); ok {
				if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
					return n, true
				}
			}
		}
		target, err := os.Readlink(path)
		if err != nil {
			return 0, false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return 0, false
}

// writeInto writes fn's output into the device or pipe at path, opened for writing as a shell's
// redirection opens it (a FIFO waits for its reader).
func writeInto(path string, fn func(io.Writer) (int64, error)) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	n, err := fn(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

func snapshotWaitFlag() cli.Flag {
	return &cli.DurationFlag{Name: "snapshot-wait", EnvVars: []string{"ENVSCHED_SNAPSHOT_WAIT"},
		Value: snapshot.DefaultWait,
		Usage: "while envsched run holds the database, how long (`DURATION`) to wait for the copy it writes"}
}

// noDatabase says that the database at path is not there, and why it may not be: a --dir that
// does not exist, or one that is no exchange directory (a parent folder given by mistake: the
// advice to start `envsched run` there would have served the wrong folder).
func noDatabase(c *cli.Context, path string) error {
	dir := c.String("dir")
	if c.String("db") == "" {
		if why := notExchange(dir); why != "" {
			return fmt.Errorf("no database at %s: %s", path, why)
		}
	}
	return fmt.Errorf("no database at %s: start `envsched run --dir %s` (or `envsched ingest`) first", path, dir)
}

// notExchange says why dir is likely not the exchange directory a user meant: it does not exist,
// or it holds none of catalog/, rollouts/, requests/, batches/ and status.json. "" otherwise.
func notExchange(dir string) string {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("the folder %s does not exist; is --dir the exchange directory given to `envsched run --dir`?", dir)
	}
	for _, sub := range []string{"catalog", "rollouts", "requests", "batches", "status.json"} {
		if _, err := os.Lstat(filepath.Join(dir, sub)); err == nil {
			return ""
		}
	}
	return fmt.Sprintf("%s holds no catalog/, rollouts/, requests/ or status.json: is --dir the exchange directory "+
		"given to `envsched run --dir`? If it is, start `envsched run --dir %s` first", dir, dir)
}

// openForReading opens --db (default DIR/envsched.db) for reading: directly when it is free, or
// through a consistent copy from the running daemon (package snapshot).
func openForReading(c *cli.Context) (*snapshot.DB, error) {
	if w := c.Duration("snapshot-wait"); w < 0 {
		return nil, usageError{fmt.Errorf("--snapshot-wait %v: want 0 or more", w)}
	}
	path := ingestDBPath(c)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, noDatabase(c, path)
	}
	if err := storage.NotStdio(path); err != nil { // the copy would pass; the file is the daemon's
		return nil, err
	}
	ctx := c.Context
	if ctx == nil {
		ctx = context.Background()
	}
	// An interrupt while the copy is asked for or made ends the wait and removes what was
	// written; the copy, once open, is already unlinked.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := snapshot.Open(ctx, c.String("dir"), path, snapshot.Options{Wait: c.Duration("snapshot-wait"), Logger: log})
	if ctx.Err() != nil {
		if err == nil {
			db.Close()
		}
		return nil, fmt.Errorf("read %s: interrupted", path)
	}
	return db, err
}
