package snapshot

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// MinReserve is the least room a copy of the database must leave free on the filesystem it is
// written to; a larger database keeps an eighth of its size free as well (see Reserve).
const MinReserve = 32 << 20

// Reserve is the room a copy of size bytes must leave free: MinReserve, or size/8 when larger.
func Reserve(size int64) int64 { return max(MinReserve, size/8) }

// Room fails when the filesystem of the open folder fd (named where in messages) has less
// room than size plus Reserve(size) for an unprivileged writer. A filesystem that cannot say
// passes.
func Room(fd int, where string, size int64) error {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return nil
	}
	free := int64(st.Bavail) * int64(st.Bsize) //nolint:unconvert // field types differ by platform
	if need := size + Reserve(size); free < need {
		return fmt.Errorf("not enough free space in %s for a copy of the database: it takes %s and %s must stay "+
			"free (for the daemon, and the trainer's files), but %s is free; free some space, or read the "+
			"database with the daemon stopped", where, mib(size), mib(Reserve(size)), mib(free))
	}
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
