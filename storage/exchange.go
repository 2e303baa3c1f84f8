package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// A database holds one exchange directory's state: the read position of each of its files, the
// answers to its requests by ID. Opened for another directory (one --db, or ENVSCHED_DB, given
// to two runs), it answered the other directory's requests from the first one's stored answers
// when their IDs met (`step-000001` is every Python client's first ID), with tasks of the first
// catalogue, and counted both directories' rollouts in one set of statistics. So the writing
// commands (run, ingest, batch) bind the database to its directory when they open it, and a
// database bound to another directory that is still there is refused.

// ErrOtherExchange means the database was made for another exchange directory.
var ErrOtherExchange = errors.New("database belongs to another exchange directory")

// OtherExchangeError is ErrOtherExchange with both folders and the database.
type OtherExchangeError struct {
	DB, Stored, Dir string
	// Gone says the recorded folder is no longer there and Dir is not it moved.
	Gone bool
}

// Error names both folders and says what to do.
func (e *OtherExchangeError) Error() string {
	if e.Gone {
		return fmt.Sprintf("database %s was made for the exchange directory %s, which is gone, and %s is another "+
			"folder, not that one moved: the database holds the old folder's stored answers (a request of %s named "+
			"like one answered there would get that answer) and its rollouts' statistics; give this directory its "+
			"own --db (ENVSCHED_DB), or delete the database if its run is over; if %s is the old folder copied or "+
			"restored, put the database in %s as envsched.db and start without --db", e.DB, e.Stored, e.Dir, e.Dir,
			e.Dir, e.Dir)
	}
	return fmt.Sprintf("database %s was made for the exchange directory %s, not %s: it holds that folder's file "+
		"positions and stored answers (a request of %s named like one answered there would get that answer, "+
		"and the rollouts of both would count in one set of statistics); give each exchange directory its own "+
		"--db (ENVSCHED_DB), or, if %s is that folder moved here and the old path holds another one now, put the "+
		"database in %s as envsched.db and start without --db", e.DB, e.Stored, e.Dir, e.Dir, e.Dir,
		e.Dir)
}

// Unwrap returns ErrOtherExchange.
func (e *OtherExchangeError) Unwrap() error { return ErrOtherExchange }

// metaExchange is the meta key of the exchange directory the database belongs to: its absolute
// path, links resolved. metaExchangeID is the folder's identity (dirID): a folder moved keeps
// it, another folder made at any path has another.
var (
	metaExchange   = []byte("exchange_dir")
	metaExchangeID = []byte("exchange_dir_id")
)

// dirID is what identifies folder dir across a move or a remount: its inode and its birth time
// (0 where the filesystem keeps none), "" when it cannot be read. The device number is left
// out: a disk mounted again gets another.
func dirID(dir string) string {
	var stx unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, dir, 0, unix.STATX_INO|unix.STATX_BTIME, &stx); err != nil ||
		stx.Mask&unix.STATX_INO == 0 {
		return ""
	}
	birth := int64(0)
	if stx.Mask&unix.STATX_BTIME != 0 {
		birth = stx.Btime.Sec*1e9 + int64(stx.Btime.Nsec)
	}
	return fmt.Sprintf("%d:%d", stx.Ino, birth)
}

// sameDirID reports whether a folder of identity got can be the folder recorded as want: the
// same inode, and the same birth time unless one of them is unknown.
func sameDirID(want, got string) bool {
	var wi, gi uint64
	var wb, gb int64
	if _, err := fmt.Sscanf(want, "%d:%d", &wi, &wb); err != nil {
		return false
	}
	if _, err := fmt.Sscanf(got, "%d:%d", &gi, &gb); err != nil {
		return false
	}
	return wi == gi && (wb == 0 || gb == 0 || wb == gb)
}

// bindExchange records dir as the database's exchange directory, or checks that it is the one
// recorded. dir is taken as the recorded one when it is the same folder under another path,
// when the database file lies inside dir (the database moved with its folder: DIR/envsched.db,
// the default), and when the recorded folder is gone and dir is that folder moved (its inode
// and birth time, dirID); then it is recorded instead. Otherwise it fails with an
// *OtherExchangeError: another folder while the recorded one is still there, or while it is gone
// (a run's folder deleted, ENVSCHED_DB still set: the next run's first request was answered
// with the old run's stored batch). A database of an older build has none recorded: dir is.
func (db *DB) bindExchange(dir string) error {
	abs := canonicalDir(dir)
	id := dirID(abs)
	var stored, storedID string
	if err := db.view(func(tx *bolt.Tx) error {
		stored = string(tx.Bucket(bucketMeta).Get(metaExchange))
		storedID = string(tx.Bucket(bucketMeta).Get(metaExchangeID))
		return nil
	}); err != nil {
		return err
	}
	switch {
	case stored == abs && (storedID == id || id == ""):
		return nil
	case stored == abs:
		// the same path, its identity not recorded yet or another (the folder made again there,
		// or a filesystem that numbers folders anew when mounted): the path is what the
		// database was given, and a restart must not be refused for it
		if storedID != "" && id != "" && !sameDirID(storedID, id) {
			db.log.Warn("the exchange directory at this path is not the folder the database was made for "+
				"(made again?): the database's stored answers and statistics are that folder's", "dir", abs, "db", db.name)
		}
	case stored == "":
	case sameDir(stored, abs) && (storedID == "" || id == "" || sameDirID(storedID, id)):
		return nil
	case sameDir(stored, abs) && !inside(canonicalDir(filepath.Dir(db.path)), abs):
		// the recorded path leads to another folder now, through a link put in its place
		// (or in a parent's): taken for the same folder, the other one was served with this
		// database, its rollouts counted into these statistics
		return &OtherExchangeError{DB: db.name, Stored: stored, Dir: abs}
	case inside(canonicalDir(filepath.Dir(db.path)), abs) && isDir(stored) && sameFile(db.path, filepath.Join(stored, "envsched.db")):
		// Not a copy: the recorded folder's own database, reached from this one through a
		// symbolic or hard link (DIR/envsched.db -> ../A/envsched.db). Taken for a copy, it was
		// bound to this folder and answered its requests from the other's stored answers.
		return &OtherExchangeError{DB: db.name, Stored: stored, Dir: abs}
	case inside(canonicalDir(filepath.Dir(db.path)), abs) && isDir(stored):
		// The recorded folder is still there: this one is a copy of it (cp -a, a backup
		// restored beside it). Its files are new files to envsched (other inodes), read from
		// their start: lines with a rollout_id are skipped as duplicates, the others count again.
		db.log.Warn("database made for another exchange directory, still there, found inside this one: a copy? "+
			"its rollout files are new files here, and their lines without a rollout_id count again",
			"was", stored, "dir", abs, "db", db.name)
	case inside(canonicalDir(filepath.Dir(db.path)), abs):
		db.log.Info("database moved with its exchange directory", "was", stored, "dir", abs)
	case !isDir(stored) && storedID != "" && sameDirID(storedID, id):
		db.log.Info("database's exchange directory moved", "was", stored, "dir", abs)
	case !isDir(stored):
		return &OtherExchangeError{DB: db.name, Stored: stored, Dir: abs, Gone: true}
	default:
		return &OtherExchangeError{DB: db.name, Stored: stored, Dir: abs}
	}
	return db.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		if err := b.Put(metaExchange, []byte(abs)); err != nil {
			return err
		}
		return b.Put(metaExchangeID, []byte(id))
	})
}

// ExchangeDir is the exchange directory the database belongs to; "" when none is recorded (a
// database of an older build, or one only read so far).
func (db *DB) ExchangeDir() (string, error) {
	var stored string
	err := db.view(func(tx *bolt.Tx) error {
		stored = string(tx.Bucket(bucketMeta).Get(metaExchange))
		return nil
	})
	return stored, err
}

// canonicalDir is dir made absolute with its links resolved, as far as it can be.
func canonicalDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// inside reports whether folder p is dir or lies under it.
func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// sameFile reports whether the paths a and b (links followed) name one file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
