package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/metrics"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/snapshot"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/watch"
)

// Answerer answers one request: it validates the body, chooses the batch, stores the answer in
// the database and returns it; a request answered before gets the stored answer unchanged. An
// error with a BadRequest() method returning true is the requester's fault (an ID.error.json is
// written and the daemon goes on); any other error stops the daemon.
type Answerer interface {
	Answer(id string, body []byte) ([]byte, error)
}

// Ingester reads what is new under DIR/catalog and DIR/rollouts into the database; package
// ingest's Ingester is the one used. The daemon calls it from its one goroutine.
type Ingester interface {
	// Scan reads every new complete line of every file. It commits as it goes and, when ctx is
	// done, stops after a commit and returns ctx.Err(): what it committed is consistent.
	Scan(ctx context.Context) (ingest.Summary, error)
	// ScanPaths reads the named files (absolute paths); missing ones are left to Scan.
	ScanPaths(ctx context.Context, paths []string) (ingest.Summary, error)
}

// IngesterFunc builds the ingester of the exchange directory dir over the open database; it
// logs to logger (quarantined lines are counted there, then logged once per file and reason)
// and calls the hooks.
type IngesterFunc func(db *storage.DB, dir string, logger *slog.Logger, hooks IngestHooks) (Ingester, error)

// IngestHooks are what the daemon asks of an ingester besides its work.
type IngestHooks struct {
	BeforeCommit func()                // just before each transaction commits (a crash point)
	Progress     func(ingest.Progress) // after each commit of a pass, how far the pass is
}

// AnswererFunc builds the answerer over the open database.
type AnswererFunc func(db *storage.DB) (Answerer, error)

// Option changes how New builds a Daemon.
type Option func(*parts)

// parts are the daemon's collaborators, built once the database is open.
type parts struct {
	ingester IngesterFunc
	answerer AnswererFunc
}

// WithIngester sets how the ingester is built (the default is package ingest's).
func WithIngester(f IngesterFunc) Option { return func(p *parts) { p.ingester = f } }

// WithAnswerer sets how the answerer is built (the default is package schedule's).
func WithAnswerer(f AnswererFunc) Option { return func(p *parts) { p.answerer = f } }

// Daemon serves one exchange directory. New prepares it, Run serves until its context is done,
// Close releases the database. All database writes happen in Run's goroutine.
type Daemon struct {
	cfg     Config
	log     *slog.Logger
	dirs    dirs
	db      *storage.DB
	watcher *watch.Watcher
	ingest  Ingester
	answer  Answerer
	crash   crasher
	started time.Time
	// quarantine counts the ingester's quarantined lines for one log line per file and reason.
	quarantine *quarantineLog
	// progress logs how far long ingest passes are.
	progress *progressLog
	// later gathers changed data files, read together at most every DataDelay.
	later   *deferred
	metrics *metrics.Metrics // nil without Config.MetricsAddr
	faults  faults           // troubles with the exchange directory, each logged once
	// rejects are the error files of the requests refused in this pass, written together after
	// the pass's answers (writeRejects).
	rejects []rejected
	// refused is the version (its status before it was read) of each request file this
	// process refused, by name: needsAnswer tells by it a request rewritten within the clock
	// tick of its error file from the version refused (see needsAnswer).
	refused map[string]os.FileInfo
	// empty holds the empty request files waiting to settle (settling); recheck fires at
	// recheckAt (zero: not armed) for the sweep that answers them.
	empty     map[string]emptySeen
	recheck   *time.Timer
	recheckAt time.Time

	// shown are the corrections status.json shows, as read when answered answers were stored
	shown struct {
		corr     *propagate.Corrections
		answered int64
	}
	// stored is the part of the last status read from the database, and the generation
	// (storage.DB.Generation) it was read at: while no commit moves the generation, the next
	// status takes it as it is (reading every environment's statistics for it cost 100 ms of
	// CPU every heartbeat at 200,000 environments, with nothing changed).
	stored struct {
		status Status
		gen    uint64
		ok     bool
	}

	// dbFile is the database file as opened, to notice it removed or replaced (checkDB).
	dbFile os.FileInfo
	// dirLock holds the exchange directory's lock (lockDir); nil when it could not be taken.
	dirLock *os.File
	// served is the folder served (DIR's folder when started, or the one locked again since:
	// relockDir), to tell a link put in DIR's place that leads elsewhere (linkedAway).
	served servedDir
	// away is true while DIR is a link to another folder (linkedAway): nothing is served.
	away bool

	closeOnce sync.Once
	closeErr  error
}

// dirs are the folders of the exchange directory.
type dirs struct {
	root, catalog, rollouts, requests, batches string
}

func newDirs(root string) (dirs, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return dirs{}, fmt.Errorf("exchange directory %s: %w", root, err)
	}
	return dirs{
		root:     abs,
		catalog:  filepath.Join(abs, "catalog"),
		rollouts: filepath.Join(abs, "rollouts"),
		requests: filepath.Join(abs, "requests"),
		batches:  filepath.Join(abs, "batches"),
	}, nil
}

// New creates the folders, locks the exchange directory (one served by another process fails
// within about a second with an error wrapping ErrDirHeld), removes envsched's stale temporary
// files, opens the database (a database held by another process fails within about a second
// with an error wrapping storage.ErrLocked), and starts watching (before any scan, so no
// change is missed).
func New(cfg Config, logger *slog.Logger, opts ...Option) (*Daemon, error) {
	p := defaultParts(cfg.withDefaults())
	for _, o := range opts {
		o(&p)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &Daemon{cfg: cfg, log: logger, started: time.Now(), faults: faults{},
		quarantine: newQuarantineLog(logger.Handler()), later: newDeferred(cfg.withDefaults().DataDelay),
		progress: newProgressLog(logger, cfg.ProgressInterval, time.Now), empty: map[string]emptySeen{},
		recheck: time.NewTimer(time.Hour)}
	d.recheck.Stop()
	d.crash, _ = parseCrashPoint(cfg.CrashPoint)
	var err error
	if d.dirs, err = newDirs(cfg.Dir); err != nil {
		return nil, err
	}
	if err := d.prepareDirs(); err != nil {
		return nil, err
	}
	if d.dirLock, err = lockDir(d.dirs.root, cfg.DB, time.Second, d.log); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(d.dirs.root); err == nil {
		d.served.set(fi)
	}
	if err := d.open(p); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// prepareDirs creates the folders and refuses links that would lead writes out of DIR.
func (d *Daemon) prepareDirs() error {
	if err := os.MkdirAll(d.dirs.root, 0o755); err != nil {
		return fmt.Errorf("create exchange directory %s: %w", d.dirs.root, err)
	}
	for _, dir := range []string{d.dirs.catalog, d.dirs.rollouts, d.dirs.requests, d.dirs.batches} {
		if err := realDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// sweep removes the temporary files a crash left. It runs only once the database lock is held:
// another daemon's writes in progress must not be swept away.
func (d *Daemon) sweep() error {
	n := 0
	for _, dir := range []string{d.dirs.batches, d.dirs.root} {
		removed, err := fsutil.SweepTemp(dir)
		if err != nil {
			return err
		}
		n += removed
	}
	if n > 0 {
		d.log.Info("removed unfinished writes of an earlier run", "files", n)
	}
	return nil
}

// realDir creates dir when missing and refuses a symbolic link: envsched never follows a link
// out of the exchange directory.
func realDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create %s: %w", dir, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat %s: %w", dir, err)
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link; envsched does not follow links out of the exchange "+
			"directory: make it a real folder", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder; remove it or choose another --dir", dir)
	}
	return nil
}

// open opens the database, builds the ingester and answerer, and starts the watcher.
func (d *Daemon) open(p parts) error {
	if p.ingester == nil || p.answerer == nil {
		return errors.New("daemon needs an ingester and an answerer")
	}
	opts := storage.Options{Timeout: time.Second, Logger: d.log, ExchangeDir: d.dirs.root}
	if d.cfg.RewardGiven {
		opts.Reward = &storage.Range{Min: d.cfg.RewardMin, Max: d.cfg.RewardMax}
	}
	db, err := storage.Open(d.cfg.DB, opts)
	if err != nil {
		return err
	}
	d.db = db
	if d.dbFile, err = os.Stat(d.cfg.DB); err != nil {
		return fmt.Errorf("database %s: %w", d.cfg.DB, err)
	}
	if err := d.sweep(); err != nil {
		return err
	}
	hooks := IngestHooks{BeforeCommit: func() { d.crash.at(CrashBeforeIngestCommit) }, Progress: d.progress.update}
	if d.ingest, err = p.ingester(db, d.dirs.root, slog.New(d.quarantine), hooks); err != nil {
		return fmt.Errorf("start ingest: %w", err)
	}
	if d.answer, err = p.answerer(db); err != nil {
		return fmt.Errorf("start scheduler: %w", err)
	}
	d.watcher, err = watch.New(watch.Options{
		Roots:          []string{d.dirs.catalog, d.dirs.rollouts, d.dirs.requests},
		Poll:           d.cfg.Poll,
		PollInterval:   d.cfg.PollInterval,
		SafetyInterval: d.cfg.SafetyInterval,
		OverflowEvery:  d.cfg.OverflowEvery,
		Debounce:       d.cfg.debounce,
		Urgent:         d.readyRequest,
		Logger:         d.log,
	})
	if err != nil {
		return fmt.Errorf("watch %s: %w", d.dirs.root, err)
	}
	return nil
}

// WatchMode returns "notify" or "poll".
func (d *Daemon) WatchMode() string { return string(d.watcher.Mode()) }

// Close stops watching and releases the database. It is idempotent.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		var errs []error
		if d.watcher != nil {
			errs = append(errs, d.watcher.Close())
		}
		if d.db != nil {
			errs = append(errs, d.db.Close())
		}
		if d.dirLock != nil {
			d.dirLock.Close() // released once the database is closed: a successor finds both free
		}
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}

// Run ingests the backlog, answers the requests already there, then serves changes until ctx
// is done; it returns nil then, after finishing the work in hand. Any other return is a
// failure that must stop the daemon (a failed fsync, a full disk, a damaged database).
func (d *Daemon) Run(ctx context.Context) error {
	wctx, stopWatch := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { d.watcher.Run(wctx) })
	wg.Go(func() { d.serveSnapshots(wctx) })
	defer func() { stopWatch(); wg.Wait() }()
	if err := d.startMetrics(wctx, &wg); err != nil {
		return err
	}

	d.log.Info("serving", "dir", d.dirs.root, "db", d.db.Path(), "watch_mode", d.WatchMode())
	if err := d.startup(ctx); err != nil {
		if err = stopped(ctx, err); err != nil {
			return err
		}
		return d.writeStatus() // stopped during the backlog: say how far it got
	}
	return stopped(ctx, d.serve(ctx))
}

// stopped turns the error of work cut short by ctx into a clean stop.
func stopped(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// startup serves every request file already there, behind the barrier of the backlog ingest:
// the requests are listed before it starts, so each sees every line written before it. Requests
// that come later arrive as watcher changes.
func (d *Daemon) startup(ctx context.Context) error {
	todo, err := d.pendingRequests()
	if err != nil {
		return err
	}
	start := time.Now()
	if err := d.ingestAll(ctx, "backlog"); err != nil {
		return err
	}
	for _, name := range inWrittenOrder(d.dirs.requests, todo) {
		if _, err := d.handle(name, timing{seen: start, barrier: time.Since(start)}); err != nil {
			return err
		}
	}
	if err := d.writeRejects(); err != nil {
		return err
	}
	return d.writeStatus()
}

// serve is the event loop: changes from the watcher, the status heartbeat, the sweep for batch
// files gone missing.
func (d *Daemon) serve(ctx context.Context) error {
	status := time.NewTicker(d.cfg.StatusInterval)
	defer status.Stop()
	sweep := time.NewTicker(d.cfg.SafetyInterval)
	defer sweep.Stop()
	for {
		var work func() error
		select {
		case <-ctx.Done():
			if d.linkedAway() {
				return nil
			}
			return d.writeStatus()
		case c := <-d.watcher.Changes():
			work = func() error { return d.onChange(ctx, c) }
		case <-d.later.due():
			paths := d.later.take()
			work = func() error { return d.ingestPaths(ctx, paths) }
		case <-status.C:
			if err := d.checkDB(); err != nil {
				return err
			}
			work = func() error {
				if err := d.relockDir(); err != nil {
					return err
				}
				if d.linkedAway() { // DIR swapped since the loop looked
					return nil
				}
				return d.writeStatus()
			}
		case <-sweep.C:
			work = func() error { return d.sweepRequests(ctx) }
		case <-d.recheck.C:
			d.recheckAt = time.Time{}
			work = func() error { return d.sweepRequests(ctx) }
		}
		if d.linkedAway() {
			continue // hints dropped: the full pass below, once DIR is back, finds everything
		}
		if d.away {
			d.away = false
			d.log.Warn("exchange directory leads to the folder served again; rescanning", "path", d.dirs.root)
			d.watcher.Relist()
			if err := d.ingestAll(ctx, "rescan"); err != nil {
				return err
			}
			if err := d.sweepRequests(ctx); err != nil {
				return err
			}
		}
		if err := work(); err != nil {
			return err
		}
	}
}

// linkedAway reports whether DIR's path is now a symbolic link that leads to another folder than
// the one served (DIR moved away and a link to another exchange directory put in its place, or
// the link given as --dir pointed elsewhere): such a link is never followed, as a linked folder
// inside DIR is not. Followed, the other folder was locked and served with this database: its
// rollouts counted into these statistics, its requests answered from these stored answers, and
// batch files, status.json and snapshots written into it. While it stays so, nothing is read or
// written; it is logged once. A link to the folder served is harmless and is served through.
func (d *Daemon) linkedAway() bool {
	if !d.served.elsewhere(d.dirs.root) {
		if d.away {
			delete(d.faults, d.dirs.root+" link")
		}
		return false
	}
	if !d.away {
		d.away = true
		target, err := filepath.EvalSymlinks(d.dirs.root)
		if err != nil { // a link that leads nowhere
			target, _ = os.Readlink(d.dirs.root)
		}
		if d.faults.once(d.dirs.root+" link", target) {
			d.log.Error("exchange directory is a symbolic link to another folder now; envsched never follows a link "+
				"out of the folder it serves: nothing is read or written until it is that folder again (start "+
				"another envsched, with its own --db, to serve the other one)", "path", d.dirs.root, "leads_to", target)
		}
	}
	return true
}

// checkDB fails when the database file at its path is no longer the one opened (removed, or
// replaced by another file): the daemon would go on storing into a file nobody can open again,
// while the reading commands said there was no database and a new daemon could start on the
// path. It fails too when the file is shorter than its pages (cut short in place). It runs with
// each heartbeat.
func (d *Daemon) checkDB() error {
	fi, err := os.Stat(d.cfg.DB)
	switch {
	case err == nil && os.SameFile(fi, d.dbFile):
		return d.db.CheckSize(fi.Size()) // the same file, cut short in place (`: > envsched.db`)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		if d.faults.once(d.cfg.DB, errText(err)) { // a folder on the path made unreadable: cannot tell
			d.log.Warn("cannot check the database file", "path", d.cfg.DB, "err", err)
		}
		return nil
	}
	return fmt.Errorf("database %s was removed or replaced while envsched ran; stopping, since nothing stored "+
		"from now on could be read again: start envsched again, which reads the files in %s into a database at "+
		"that path (the batch files already written stay as they are)", d.cfg.DB, d.dirs.root)
}

// onChange handles one flush of hints. Requests come after the barrier: a full ingest pass of
// everything present now, which includes everything present when the request was seen.
func (d *Daemon) onChange(ctx context.Context, c watch.Change) error {
	if c.Rescan {
		d.log.Info("rescan", "reason", c.Reason)
		if err := d.ingestAll(ctx, "rescan"); err != nil {
			return err
		}
		if err := d.sweepRequests(ctx); err != nil {
			return err
		}
		return d.writeStatus()
	}
	if d.touchesFolders(c.Paths) {
		d.repairDirs()
	}
	reqs, data := d.split(c.Paths)
	reqs = slices.DeleteFunc(reqs, func(name string) bool { return !d.needsAnswer(name) })
	d.later.add(data)
	if len(reqs) > 0 {
		d.later.take() // the barrier's full pass reads them
		return d.answerAll(ctx, reqs, c.Since)
	}
	return nil
}

// split sorts paths into request file names and data files (catalogue and rollouts).
func (d *Daemon) split(paths []string) (reqs, data []string) {
	for _, p := range paths {
		switch {
		case filepath.Dir(p) == d.dirs.requests:
			if _, ok := requestID(filepath.Base(p)); ok {
				reqs = append(reqs, filepath.Base(p))
			}
		case within(d.dirs.catalog, p) || within(d.dirs.rollouts, p):
			data = append(data, p)
		}
	}
	return reqs, data
}

// touchesFolders reports whether a hint names the exchange directory or one of its folders
// (removed, or made again).
func (d *Daemon) touchesFolders(paths []string) bool {
	for _, p := range paths {
		switch p {
		case d.dirs.root, d.dirs.catalog, d.dirs.rollouts, d.dirs.requests, d.dirs.batches:
			return true
		}
	}
	return false
}

func within(dir, p string) bool { return strings.HasPrefix(p, dir+string(filepath.Separator)) }

// answerAll passes the barrier once and answers each request. The error files of the bad ones
// are written after every good one is answered (writeRejects): a flood of bad requests never
// holds up a good request noticed with it.
//
// seen is when the requests were noticed (the watcher's hint, or the listing that found them);
// the logged ms of each answer counts from there, the time the requests queued behind earlier
// work included (queue_ms).
func (d *Daemon) answerAll(ctx context.Context, names []string, seen time.Time) error {
	start := time.Now()
	if seen.IsZero() || seen.After(start) {
		seen = start
	}
	if err := d.ingestAll(ctx, "barrier"); err != nil {
		return err
	}
	tm := timing{seen: seen, queued: start.Sub(seen), barrier: time.Since(start)}
	answered := 0
	for _, name := range inWrittenOrder(d.dirs.requests, names) {
		ok, err := d.handle(name, tm)
		if err != nil {
			return err
		}
		if ok {
			answered++
		}
	}
	if err := d.writeRejects(); err != nil {
		return err
	}
	if answered > 0 {
		return d.writeStatus()
	}
	return nil
}

// inWrittenOrder orders the request files names of folder dir by when each was last written or
// renamed into place (its status change time), then by name with runs of digits compared as
// numbers (step-9 before step-10): a request without a step takes the previous answer's step +
// 1, so requests noticed together (written while the daemon was stopped, or within one flush)
// were given their steps in the folder's listing order, a hash order on ext4 (s-5 got step 1,
// s-1 step 2, s-4 step 3, s-10 step 7). A name that cannot be looked at goes last.
func inWrittenOrder(dir string, names []string) []string {
	if len(names) < 2 {
		return names
	}
	type req struct {
		name string
		at   time.Time
		ok   bool
	}
	rs := make([]req, len(names))
	for i, n := range names {
		rs[i].name = n
		if fi, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			rs[i].at, rs[i].ok = changedAt(fi), true
		}
	}
	slices.SortStableFunc(rs, func(a, b req) int {
		switch {
		case a.ok != b.ok:
			if a.ok {
				return -1
			}
			return 1
		case !a.at.Equal(b.at):
			return a.at.Compare(b.at)
		}
		return naturalCompare(a.name, b.name)
	})
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.name
	}
	return out
}

// naturalCompare compares a and b byte by byte, except that runs of ASCII digits are compared
// as numbers (leading zeros aside: equal numbers with more zeros sort after).
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			na, nb := digitRun(a), digitRun(b)
			ta, tb := strings.TrimLeft(a[:na], "0"), strings.TrimLeft(b[:nb], "0")
			if len(ta) != len(tb) {
				return len(ta) - len(tb)
			}
			if c := strings.Compare(ta, tb); c != 0 {
				return c
			}
			if na != nb {
				return na - nb
			}
			a, b = a[na:], b[nb:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digitRun(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

// serveSnapshots answers the reading commands' requests for a consistent copy of the database
// (package snapshot) from a goroutine of its own: it only reads, and never holds up the loop.
func (d *Daemon) serveSnapshots(ctx context.Context) {
	err := snapshot.Serve(ctx, d.db, d.dirs.root, snapshot.ServeOptions{Logger: d.log,
		Paused: func() bool { return d.served.elsewhere(d.dirs.root) }})
	if err != nil {
		d.log.Warn("snapshots for stats, report and export are unavailable", "err", err)
	}
}
