package storage

import (
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// releaseMapped advises the kernel that the whole mapping of tx's database is not needed.
// The mapping cannot move meanwhile: a read transaction holds bbolt's mapping lock, and in a
// write transaction (the commit's dedupe scan) only the writer's own goroutine, this one, remaps.
func releaseMapped(tx *bolt.Tx) {
	size := tx.Size()
	if size <= 0 {
		return
	}
	// MADV_DONTNEED on a shared file mapping only unmaps the pages; an error (none is
	// expected) leaves them mapped, which is what not calling would do.
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, tx.DB().Info().Data, uintptr(size), syscall.MADV_DONTNEED)
}
