package snapshot_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/envsched/envsched/snapshot"
)

// oversized is a database whose copy would not fit: it says it is larger than the free space of
// the folder, and counts the copies it was asked to write.
type oversized struct {
	size   int64
	copies *int
}

func (o oversized) SnapshotSize() (int64, error) { return o.size, nil }

func (o oversized) WriteSnapshot(w io.Writer) (int64, error) {
	*o.copies++
	return 0, errors.New("no space left on device")
}

func freeIn(t *testing.T, dir string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * int64(st.Bsize)
}

// TestCopyThatWouldFillTheDiskIsRefused (hostile15): a copy asked for by `envsched stats` was
// written whatever the room: on a disk with less free space than the database (a 14 MB tmpfs,
// 2.5 MB free, a database of 4.8 MB in use) the copy filled it, and the daemon's next
// status.json failed with "no space left on device", which stops the daemon (exit 1) - a
// reading command stopped the daemon it read, and the trainer's rollout writes on that disk
// failed meanwhile. A copy that would leave less than snapshot.Reserve free is now refused
// before anything is written, with an error naming the sizes; the reader exits 1 saying so.
func TestCopyThatWouldFillTheDiskIsRefused(t *testing.T) {
	dir, path, _ := held(t)
	copies := 0
	serve(t, oversized{size: freeIn(t, dir), copies: &copies}, dir)
	_, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{})
	if !errors.Is(err, snapshot.ErrFailed) || !strings.Contains(err.Error(), "not enough free space in DIR/snapshots") {
		t.Fatalf("error %v; want ErrFailed saying there is not enough free space", err)
	}
	if copies != 0 {
		t.Errorf("%d copies begun; want none", copies)
	}
	if left, _ := os.ReadDir(snapshot.Dir(dir)); len(left) != 0 {
		t.Fatalf("files left in the snapshot folder: %v", left)
	}
}

// TestRoomLeavesTheReserve: Room passes a copy that leaves the reserve free and refuses one that
// does not.
func TestRoomLeavesTheReserve(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	free := freeIn(t, dir)
	if free < 4*snapshot.MinReserve {
		t.Skipf("only %d bytes free here", free)
	}
	if err := snapshot.Room(int(f.Fd()), dir, 1<<20); err != nil {
		t.Errorf("a 1 MiB copy with %d bytes free: %v", free, err)
	}
	if err := snapshot.Room(int(f.Fd()), dir, free-snapshot.MinReserve/2); err == nil {
		t.Errorf("a copy leaving %d bytes free of %d passed", snapshot.MinReserve/2, free)
	}
}

// TestReserveOnSmallFilesystems (hostile16): the reserve's floor of 32 MiB refused every copy on
// a filesystem smaller than that, however small the database; it is now a quarter of the
// filesystem there, and never less than what the daemon's file may grow by next (its size, up
// to 16 MiB) nor an eighth of the database.
func TestReserveOnSmallFilesystems(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct{ size, total, want int64 }{
		{mib / 4, 16 * mib, 4 * mib},                // a quarter of a 16 MiB tmpfs
		{48 * mib / 10, 14 * mib, 48 * mib / 10},    // hostile15's case: the database's next growth
		{mib, 1 << 40, snapshot.MinReserve},         // a large disk: 32 MiB
		{1 << 30, 1 << 40, (1 << 30) / 8},           // a large database: an eighth of it
		{100 * mib, 200 * mib, snapshot.MinReserve}, // a quarter of 200 MiB is more than 32 MiB: 32 MiB
		{mib, 0, snapshot.MinReserve},               // a filesystem that says no size
	} {
		want := tc.want
		if got := snapshot.Reserve(tc.size, tc.total); got != want {
			t.Errorf("Reserve(%d, %d) = %d; want %d", tc.size, tc.total, got, want)
		}
	}
}
