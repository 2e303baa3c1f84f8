package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

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
	if err := checkDBPlace(c.String("dir"), c.String("db")); err != nil {
		return usageError{err}
	}
	path := ingestDBPath(c)
	before, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return noDatabase(c, path)
	}
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
	// An interrupt before the copy is renamed over the database removes the copy and ends the
	// command with exit 1 (killed by it, compact left `.NAME.tmp-X` beside the database, up to the
	// database's size); from the rename on it finishes.
	set, done := removeOnInterrupt("compacting " + path + " (the database is as it was)")
	after, err := db.CompactInPlaceWith(storage.CompactHooks{Temp: set, Renaming: done})
	done()
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
