package snapshot

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// MinReserve is the least room a copy of the database must leave free on a filesystem of 128 MiB
// or more; a smaller filesystem keeps a quarter of its size free instead (see Reserve).
const MinReserve = 32 << 20

// growth is the most bbolt grows a database file by at once (its default AllocSize; a file
// smaller than that grows to twice its size at most).
const growth = 16 << 20

// Reserve is the room a copy of size bytes must leave free on a filesystem of total bytes: the
// most of MinReserve (a quarter of total when that is less), an eighth of size, and what the
// daemon's file may take at its next growth (size, at most 16 MiB). The floor of MinReserve
// alone refused every copy on a small filesystem (a 16 MiB tmpfs with 15.7 MiB free and a
// database of 0.2 MiB: `envsched stats` beside the daemon always failed); a quarter of such a
// filesystem still keeps the daemon and the trainer's appends clear of a full disk.
func Reserve(size, total int64) int64 {
	floor := int64(MinReserve)
	if total > 0 {
		floor = min(floor, total/4)
	}
	return max(floor, size/8, min(size, growth))
}

// Room fails when the filesystem of the open folder fd (named where in messages) has less
// room than size plus Reserve(size, the filesystem's size) for an unprivileged writer. A
// filesystem that cannot say passes.
func Room(fd int, where string, size int64) error {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return nil
	}
	free := int64(st.Bavail) * int64(st.Bsize)  //nolint:unconvert // field types differ by platform
	total := int64(st.Blocks) * int64(st.Bsize) //nolint:unconvert // field types differ by platform
	if reserve := Reserve(size, total); free < size+reserve {
		return fmt.Errorf("not enough free space in %s for a copy of the database: it takes %s and %s must stay "+
			"free (for the daemon, and the trainer's files), but %s is free; free some space, or read the "+
			"database with the daemon stopped", where, mib(size), mib(reserve), mib(free))
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
