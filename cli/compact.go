package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/storage"
)

func compactCommand() *cli.Command {
	return &cli.Command{
		Name:      "compact",
		Usage:     "rewrite the database compactly (with the daemon stopped)",
		UsageText: "envsched compact --dir DIR [--db PATH]",
		Description: "compact copies every record of the database into a new file with no free pages " +
			"(bbolt's Compact), fsyncs it, checks that the copy holds the same counts, renames it over the " +
			"database and fsyncs the folder, then prints the sizes before and after. It holds the " +
			"database's lock throughout, so it refuses while `envsched run` (or any other envsched) has " +
			"the database open: exit code 3. A crash at any moment leaves either the old or the new file, " +
			"never a mix; a leftover .NAME.tmp-* file beside the database can be deleted.",
		Flags:  []cli.Flag{ingestDirFlag(), ingestDBFlag()},
		Action: compactAction,
	}
}

func compactAction(c *cli.Context) error {
	path := ingestDBPath(c)
	before, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("no database at %s: %w", path, err)
	}
	db, err := storage.Open(path, storage.Options{})
	if errors.Is(err, storage.ErrLocked) {
		return fmt.Errorf("%s is in use: stop `envsched run` (or the other envsched using it) before "+
			"compacting: %w", path, err)
	}
	if err != nil {
		return err
	}
	defer db.Close()
	after, err := compactInPlace(db)
	if err != nil {
		return err
	}
	// A process that opened the old file just before the rename waits for its lock and would
	// then write into a file no longer in the folder. Holding the lock past its open timeout
	// makes it fail (exit 3) instead; anything opening the path from now on gets the new file.
	time.Sleep(storage.DefaultTimeout + 200*time.Millisecond)
	fmt.Fprintf(c.App.Writer, "compacted %s: %s -> %s (%.0f%% of before)\n", path, byteSize(before.Size()),
		byteSize(after), 100*float64(after)/float64(max(1, before.Size())))
	return db.Close()
}

// compactInPlace writes a compact copy of db beside it, checks it, and renames it over db's
// file while db still holds the lock. It returns the new file's size.
func compactInPlace(db *storage.DB) (int64, error) {
	path := db.Path()
	tmp, err := tempPath(path)
	if err != nil {
		return 0, err
	}
	if err := db.Compact(tmp); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	if err := sameCounts(db, tmp); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	fi, err := os.Stat(tmp)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("replace %s: %w", path, err)
	}
	return fi.Size(), fsutil.SyncDir(filepath.Dir(path))
}

// tempPath is a new temporary name beside path that envsched's sweeps recognise.
func tempPath(path string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("temporary name: %w", err)
	}
	dir, name := filepath.Split(path)
	return filepath.Join(dir, fsutil.TempName(name, hex.EncodeToString(b[:]))), nil
}

// sameCounts opens the copy and compares its counters and environments with the original's.
func sameCounts(db *storage.DB, copyPath string) error {
	cp, err := storage.Open(copyPath, storage.Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("open compacted copy: %w", err)
	}
	defer cp.Close()
	c1, err1 := db.Counters()
	c2, err2 := cp.Counters()
	e1, err3 := db.Envs()
	e2, err4 := cp.Envs()
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return fmt.Errorf("compare compacted copy: %w", err)
	}
	if c1 != c2 || len(e1) != len(e2) {
		return fmt.Errorf("compacted copy differs (counters %+v, want %+v; %d envs, want %d); the database is unchanged",
			c2, c1, len(e2), len(e1))
	}
	for name, e := range e1 {
		if e2[name] != e {
			return fmt.Errorf("compacted copy differs in env %s; the database is unchanged", name)
		}
	}
	return nil
}

// byteSize formats n bytes for people.
func byteSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
