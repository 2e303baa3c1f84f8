package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"
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
}

// Error names both folders and says what to do.
func (e *OtherExchangeError) Error() string {
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
// path, links resolved.
var metaExchange = []byte("exchange_dir")

// bindExchange records dir as the database's exchange directory, or checks that it is the one
// recorded. dir is taken as the recorded one when it is the same folder under another path,
// when the database file lies inside dir (the database moved with its folder: DIR/envsched.db,
// the default), and when the recorded folder is gone (the folder moved, the database
// elsewhere); then it is recorded instead. Otherwise (the recorded folder is still there) it
// fails with an *OtherExchangeError. A database of an older build has none recorded: dir is.
func (db *DB) bindExchange(dir string) error {
	abs := canonicalDir(dir)
	var stored string
	if err := db.view(func(tx *bolt.Tx) error {
		stored = string(tx.Bucket(bucketMeta).Get(metaExchange))
		return nil
	}); err != nil {
		return err
	}
	switch {
	case stored == abs:
		return nil
	case stored == "":
	case sameDir(stored, abs):
		return nil
	case inside(canonicalDir(filepath.Dir(db.path)), abs) && isDir(stored):
		// The recorded folder is still there: this one is a copy of it (cp -a, a backup
		// restored beside it). Its files are new files to envsched (other inodes), read from
		// their start: lines with a rollout_id are skipped as duplicates, the others count again.
		db.log.Warn("database made for another exchange directory, still there, found inside this one: a copy? "+
			"its rollout files are new files here, and their lines without a rollout_id count again",
			"was", stored, "dir", abs, "db", db.name)
	case inside(canonicalDir(filepath.Dir(db.path)), abs):
		db.log.Info("database moved with its exchange directory", "was", stored, "dir", abs)
	case !isDir(stored):
		db.log.Warn("database was made for an exchange directory that is gone; it is this one's now "+
			"(the folder moved)", "was", stored, "dir", abs, "db", db.name)
	default:
		return &OtherExchangeError{DB: db.name, Stored: stored, Dir: abs}
	}
	return db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(metaExchange, []byte(abs))
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
