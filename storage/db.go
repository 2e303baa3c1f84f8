package storage

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/stats"
	"golang.org/x/sys/unix"
)

// SchemaVersion is the newest layout this package reads and writes. A database is created with
// schema 1 and raised to 2 by the first answer stored in parts (see answerparts.go); this
// package reads both.
const SchemaVersion = schemaAnswerParts

// schemaCreated is the schema a new database is created with.
const schemaCreated = 1

// DefaultTimeout is how long Open waits for another process to release the database.
const DefaultTimeout = time.Second

// Bucket names (see the package comment for the layout). tasks and catalog hold one bucket per
// environment; rollouts, groups and id_hashes are written in arrival order, so that a commit
// appends to them instead of rewriting a page per task.
var (
	bucketMeta       = []byte("meta")       // schema, created, reward_min, reward_max, decay, predictor_state
	bucketEnvs       = []byte("envs")       // env -> stats.Env
	bucketTasks      = []byte("tasks")      // env -> task -> task record (seq, flags, stats.Task), as of the last checkpoint
	bucketTaskLog    = []byte("task_log")   // commit seq -> task records changed since the last checkpoint
	bucketCatalog    = []byte("catalog")    // env -> task -> catalogue metadata (text, tools, tags, embedding)
	bucketTaskSeqs   = []byte("task_seqs")  // task seq (8 bytes BE) -> env \x00 task
	bucketRollouts   = []byte("rollouts")   // seq (8 bytes BE) -> compact rollout naming its task seq
	bucketGroups     = []byte("groups")     // round, task seq, group -> stats.Group
	bucketIDHashes   = []byte("id_hashes")  // commit seq -> (hash of rollout_id, rollout seq) pairs
	bucketFiles      = []byte("files")      // id (8 bytes BE) -> FileState
	bucketQuarantine = []byte("quarantine") // seq (8 bytes BE) -> QuarantineEntry
	bucketEdges      = []byte("edges")      // env \x00 task -> adjacency list
	bucketRequests   = []byte("requests")   // request ID -> stored answer bytes
	bucketCounters   = []byte("counters")   // name -> int64 (8 bytes BE) or string
)

var allBuckets = [][]byte{bucketMeta, bucketEnvs, bucketTasks, bucketTaskLog, bucketCatalog, bucketRollouts,
	bucketGroups, bucketTaskSeqs, bucketIDHashes, bucketFiles, bucketQuarantine, bucketEdges, bucketRequests,
	bucketCounters}

// Options configure Open. The zero value is valid.
type Options struct {
	// Timeout is how long to wait for another process to release the file lock; 0 means
	// DefaultTimeout. When it runs out Open returns an error wrapping ErrLocked.
	Timeout time.Duration
	// Reward is the reward range. Nil takes the stored range (or [0, 1] for a new database);
	// a range different from the stored one fails with ErrConfigMismatch.
	Reward *Range
	// Decay is λ. 0 takes the stored value (or stats.DefaultDecay for a new database); a
	// different value fails with ErrConfigMismatch.
	Decay float64
	// ReadOnly opens an existing database for reading only (a shared lock: it waits, like a
	// writer, while a writer holds the file). It never creates the file.
	ReadOnly bool
	// Logger receives notes on creation and migrations; nil discards them.
	Logger *slog.Logger
	// Name is the file that messages name, when path is a copy of it; empty means path.
	Name string
	// ExchangeDir, for the commands that write (run, ingest, batch), is the exchange directory
	// the database serves: recorded in a new database, and checked against the one recorded in
	// an existing one (bindExchange; an *OtherExchangeError when it is another directory).
	// Ignored when ReadOnly.
	ExchangeDir string
}

// DB is an open envsched database. All methods are safe for concurrent use; bbolt allows one
// writing transaction at a time, and envsched's daemon keeps all writes in one goroutine.
type DB struct {
	ids       idIndex     // the dedupe index of rollout ids, loaded at the first commit
	tasks     taskOverlay // the writer's copy of task_log, loaded at the first commit
	opens     openCounts  // guarded by writeMu: open predictions of tasks with journaled ones
	logCache  logCache    // the readers' copy of task_log, per database state
	bolt      *bolt.DB
	path      string
	name      string // the file named in messages: Options.Name, or path
	cfg       Config
	log       *slog.Logger
	closeOnce sync.Once
	closeErr  error
	writeMu   sync.Mutex                   // held by Commit and StoreAnswer around their transaction and caches
	broken    atomic.Pointer[DamagedError] // the first damage a transaction met (see DB.guard)
	locksLost atomic.Bool                  // a read transaction's begin faulted holding bbolt's locks (see DB.begin)
	metaBytes int64                        // the bytes of the file's two meta pages (see DB.cutShort)
	followers []*Follower                  // guarded by writeMu: told of every task record a commit writes
	txs       txWatch                      // the transaction ids this process committed (see DB.sameTx)
}

// Open opens or creates the database at path. A database held by another process fails
// within opts.Timeout with an error wrapping ErrLocked that names the path; a database of a
// newer schema fails with ErrSchemaNewer. Commits are always fsync'd (NoSync is never set).
func Open(path string, opts Options) (*DB, error) {
	if err := checkFile(path, cmp.Or(opts.Name, path), opts.ReadOnly); err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	name := cmp.Or(opts.Name, path)
	var bdb *bolt.DB
	err := guard(name, func() (err error) {
		bdb, err = bolt.Open(path, 0o600, &bolt.Options{
			Timeout:      opts.Timeout,
			FreelistType: bolt.FreelistMapType,
			ReadOnly:     opts.ReadOnly,
		})
		return err
	})
	var damaged *DamagedError
	if errors.As(err, &damaged) {
		return nil, err
	}
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, lockedError{path: path, holders: fsutil.LockHolders(path)}
	}
	if err != nil {
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	db := &DB{bolt: bdb, path: path, name: name, log: log, metaBytes: 2 * int64(bdb.Info().PageSize)}
	if err := db.opened(opts); err != nil {
		bdb.Close()
		if db.txs.file != nil { // startTxWatch's own descriptor (review15: one leaked per refused open)
			db.txs.file.Close()
		}
		return nil, err
	}
	return db, nil
}

// opened checks and prepares a database bbolt has just opened; Open closes it when this fails.
func (db *DB) opened(opts Options) error {
	if err := db.startTxWatch(); err != nil {
		return err
	}
	if err := db.checkLength(); err != nil {
		return err
	}
	if err := db.loadInstance(); err != nil {
		return err
	}
	if err := db.init(opts); err != nil {
		return fmt.Errorf("open db %s: %w", db.path, err)
	}
	if opts.ExchangeDir != "" && !opts.ReadOnly {
		return db.bindExchange(opts.ExchangeDir)
	}
	return nil
}

// checkFile refuses a path that cannot be a database before bbolt opens it (name is how errors
// name it): anything but a
// regular file (links followed), and, to read, a missing or empty file. bbolt's open of a FIFO
// for reading waits for a writer for ever (and the reading commands catch SIGINT and SIGTERM, so
// `stats --db FIFO` could only be killed); for writing it failed with "illegal seek", a
// device with "invalid argument" or "bad file descriptor", and an empty file read with "bad
// file descriptor" (bbolt tried to write a new database into it).
func checkFile(path, name string, readOnly bool) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !readOnly:
		return nil // created
	case err != nil:
		return fmt.Errorf("open db %s: %w", path, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("open db %s: not a database file but a %s", path, fsutil.TypeName(fi.Mode()))
	case fi.Size() == 0 && readOnly:
		return fmt.Errorf("open db %s: the file is empty, not a database (envsched run, ingest or batch "+
			"makes a new one)", path)
	case fi.Size() > 0 && !readOnly:
		// A writable open loads the freelist before checkLength can look: cut short, the file
		// faulted there ("cut short or overwritten") or, when the freelist page fell inside the
		// zero-filled rest of the last page mapped, said "invalid freelist page: 0, page type is
		// unknown<00>", while a read-only open of the same file said it was cut short.
		if need, ok := pagesNeed(path); ok && fi.Size() < need {
			return &DamagedError{Path: name, Cause: fmt.Sprintf("the file has %d bytes, its pages need %d: "+
				"it was cut short", fi.Size(), need)}
		}
	}
	return notStdio(path, fi)
}

// NotStdio refuses a database file at path that is this process's standard output or standard
// error (see notStdio), for commands that read a copy of it (the daemon holds it) and write
// what they read to standard output. A path that cannot be stated passes.
func NotStdio(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return notStdio(path, fi)
}

// notStdio refuses a database that is this process's standard output or standard error under
// any name (`1<> DB`, `2>> DB`, a hard link of it): what the command prints or logs would be
// written into the database's pages, over its meta pages at offset 0 (`export 1<>
// hardlink-of-the-db` left "invalid database").
// The descriptor is pointed at /dev/null first, so that the refusal itself, said on standard
// error, is not written into the database either.
func notStdio(path string, fi fs.FileInfo) error {
	var err error
	for _, fd := range []int{1, 2} {
		sfi, serr := os.Stat(fmt.Sprintf("/dev/fd/%d", fd))
		if serr != nil || !os.SameFile(fi, sfi) {
			continue
		}
		if null, nerr := os.OpenFile(os.DevNull, os.O_WRONLY, 0); nerr == nil {
			unix.Dup2(int(null.Fd()), fd)
			null.Close()
		}
		if err == nil {
			name := map[int]string{1: "standard output", 2: "standard error"}[fd]
			err = fmt.Errorf("open db %s: the database is this command's %s: what it writes there would "+
				"overwrite the database; redirect it to another file", path, name)
		}
	}
	return err
}

// pagesNeed is the length the pages of the bbolt file at path need, as its newest valid meta
// page counts them (its high-water page times the page size: bbolt's Tx.Size), read without
// opening the database; false when neither meta page is valid (bbolt's open says what is
// wrong). bbolt grows the file before it writes a meta page that counts the new pages, so a
// writer at work never makes a whole file look short.
func pagesNeed(path string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	m, ok := newestMeta(f, 0)
	return int64(m.pgid) * int64(m.pageSize), ok
}

// boltMeta is what envsched reads of a bbolt meta page.
type boltMeta struct {
	pageSize    uint32
	pgid, txid  uint64
	checksummed bool
}

// newestMeta reads the two meta pages of the bbolt file f and returns the newer valid one (the
// one bbolt uses); false when neither is valid. pageSize is the file's page size when known (0:
// the first meta page says, else the system's).
func newestMeta(f io.ReaderAt, pageSize int) (boltMeta, bool) {
	const (
		header    = 16 // page header: id, flags, count, overflow
		metaBytes = 64 // magic, version, page size, flags, root (2×8), freelist, pgid, txid, checksum
		sumAt     = 56 // the checksum covers the meta's bytes before it (FNV-1a 64)
		magic     = 0xED0CDAED
	)
	read := func(at int64) (boltMeta, bool) {
		b := make([]byte, metaBytes)
		if _, err := f.ReadAt(b, at+header); err != nil {
			return boltMeta{}, false
		}
		le := binary.NativeEndian
		h := fnv.New64a()
		h.Write(b[:sumAt])
		if le.Uint32(b[0:]) != magic || le.Uint32(b[4:]) != 2 || h.Sum64() != le.Uint64(b[sumAt:]) {
			return boltMeta{}, false
		}
		return boltMeta{le.Uint32(b[8:]), le.Uint64(b[40:]), le.Uint64(b[48:]), true}, true
	}
	m0, ok0 := read(0)
	second := int64(os.Getpagesize())
	switch {
	case pageSize > 0:
		second = int64(pageSize)
	case ok0:
		second = int64(m0.pageSize)
	}
	m1, ok1 := read(second)
	switch {
	case ok0 && (!ok1 || m0.txid >= m1.txid):
		return m0, true
	case ok1:
		return m1, true
	}
	return boltMeta{}, false
}

// init creates the buckets and meta of a new database, or checks those of an existing one. An
// existing one is only read: a write transaction would fsync the file at every start, and flush
// whatever of it the page cache holds unwritten (a database just copied: seconds).
func (db *DB) init(opts Options) error {
	exists := false
	err := db.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if exists = meta != nil && meta.Get([]byte("schema")) != nil; exists || opts.ReadOnly {
			return db.loadConfig(tx, opts)
		}
		return nil
	})
	if err != nil || exists || opts.ReadOnly {
		return err
	}
	return db.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil || meta.Get([]byte("schema")) == nil {
			if err := notOurs(tx); err != nil {
				return err
			}
			return db.create(tx, opts)
		}
		return db.loadConfig(tx, opts)
	})
}

// notOurs refuses a bbolt file without envsched's schema that holds anything: another
// program's bbolt database. envsched creates its buckets and its schema in one transaction, so
// a database of its own is either empty (bbolt's new file) or has a schema. Such a file was
// taken for a new database: envsched's buckets were written into it beside the other
// program's, and its ingest and answers went on there.
func notOurs(tx *bolt.Tx) error {
	var names []string
	tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		if len(names) < 5 {
			names = append(names, strconv.Quote(string(name)))
		} else if len(names) == 5 {
			names = append(names, "...")
		}
		return nil
	})
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("%w: a bbolt file without envsched's schema, holding buckets %s "+
		"(another program's database?); left unchanged: give --db a new path", ErrNotEnvsched,
		strings.Join(names, ", "))
}

func (db *DB) create(tx *bolt.Tx, opts Options) error {
	cfg := Config{Schema: schemaCreated, Created: time.Now().UTC().Format(time.RFC3339),
		Reward: Range{0, 1}, Decay: stats.DefaultDecay}
	if opts.Reward != nil {
		cfg.Reward = *opts.Reward
	}
	if opts.Decay != 0 {
		cfg.Decay = opts.Decay
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	// A new database knows every file's list from the start (retired.go): an older one gets the
	// bucket with its first list.
	if _, err := tx.CreateBucketIfNotExists(bucketFileLists); err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketFileLists, err)
	}
	meta := tx.Bucket(bucketMeta)
	for k, v := range map[string]string{
		"schema":     strconv.Itoa(cfg.Schema),
		"created":    cfg.Created,
		"reward_min": formatFloat(cfg.Reward.Min),
		"reward_max": formatFloat(cfg.Reward.Max),
		"decay":      formatFloat(cfg.Decay),
	} {
		if err := meta.Put([]byte(k), []byte(v)); err != nil {
			return err
		}
	}
	db.cfg = cfg
	db.log.Info("created database", "path", db.path, "reward_min", cfg.Reward.Min,
		"reward_max", cfg.Reward.Max, "decay", cfg.Decay)
	return nil
}

func (c Config) validate() error {
	if err := c.Reward.Check(); err != nil {
		return err
	}
	if !(c.Decay > 0 && c.Decay <= 1) {
		return fmt.Errorf("decay %g: need 0 < decay <= 1", c.Decay)
	}
	return nil
}

func (db *DB) loadConfig(tx *bolt.Tx, opts Options) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil || meta.Get([]byte("schema")) == nil {
		if err := notOurs(tx); err != nil {
			return err
		}
		return fmt.Errorf("%w: an empty bbolt file", ErrNotEnvsched)
	}
	cfg, err := readConfig(meta)
	if err != nil {
		return err
	}
	if cfg.Schema > SchemaVersion {
		return fmt.Errorf("schema %d, this envsched reads %d: %w", cfg.Schema, SchemaVersion, ErrSchemaNewer)
	}
	// A stored range or decay no build writes (damaged, or edited by hand) is refused: a NaN
	// reward_max made every statistic NaN, and `envsched batch` then spun at full CPU for ever.
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("stored configuration: %v: %w", err, ErrCorrupt)
	}
	if opts.Reward != nil && *opts.Reward != cfg.Reward {
		return fmt.Errorf("reward range [%g, %g] asked, database has [%g, %g] (%w): leave --reward-min and "+
			"--reward-max out to use the stored range, or give a new database (--db) for another range",
			opts.Reward.Min, opts.Reward.Max, cfg.Reward.Min, cfg.Reward.Max, ErrConfigMismatch)
	}
	if opts.Decay != 0 && opts.Decay != cfg.Decay {
		return fmt.Errorf("decay %g asked, database has %g: %w", opts.Decay, cfg.Decay, ErrConfigMismatch)
	}
	db.cfg = cfg
	return nil
}

func readConfig(meta *bolt.Bucket) (Config, error) {
	var cfg Config
	var err error
	get := func(k string) string { return string(meta.Get([]byte(k))) }
	if cfg.Schema, err = strconv.Atoi(get("schema")); err != nil {
		return cfg, fmt.Errorf("meta schema: %w", err)
	}
	cfg.Created = get("created")
	for k, p := range map[string]*float64{"reward_min": &cfg.Reward.Min, "reward_max": &cfg.Reward.Max, "decay": &cfg.Decay} {
		if *p, err = strconv.ParseFloat(get(k), 64); err != nil {
			return cfg, fmt.Errorf("meta %s: %w", k, err)
		}
	}
	return cfg, nil
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Path is the file the database lives in.
func (db *DB) Path() string { return db.path }

// Config is the configuration the database was created with.
func (db *DB) Config() Config { return db.cfg }

// Close releases the database and its lock. It is idempotent; later calls return the first
// call's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.writeMu.Lock()
		db.ids.close()
		db.writeMu.Unlock()
		if d := db.broken.Load(); d != nil {
			db.closeErr = db.closeBroken(d)
		} else if err := db.bolt.Close(); err != nil {
			db.closeErr = fmt.Errorf("close db %s: %w", db.path, err)
		}
		if db.txs.file != nil {
			db.txs.file.Close()
		}
	})
	return db.closeErr
}

// WriteSnapshot writes a consistent copy of the whole database file to w from one read
// transaction; writers go on meanwhile. It returns the bytes written.
func (db *DB) WriteSnapshot(w io.Writer) (int64, error) {
	var n int64
	err := db.view(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("snapshot db %s: %w", db.path, err)
	}
	return n, nil
}

// SnapshotSize is the number of bytes WriteSnapshot would write now (the pages in use).
func (db *DB) SnapshotSize() (int64, error) {
	var n int64
	err := db.view(func(tx *bolt.Tx) error {
		n = tx.Size()
		return nil
	})
	return n, err
}

// Compact writes a compacted copy of the database to the new file dst (which must not exist).
// The copy holds the same data in fewer pages; it is fsync'd before Compact returns.
func (db *DB) Compact(dst string) error {
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("compact %s to %s: destination exists", db.path, dst)
	}
	out, err := bolt.Open(dst, 0o600, &bolt.Options{Timeout: DefaultTimeout, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return fmt.Errorf("compact %s to %s: %w", db.path, dst, err)
	}
	if err := db.guard(func() error { return bolt.Compact(out, db.bolt, 64<<20) }); err != nil {
		out.Close()
		return fmt.Errorf("compact %s to %s: %w", db.path, dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("compact %s to %s: %w", db.path, dst, err)
	}
	return nil
}
