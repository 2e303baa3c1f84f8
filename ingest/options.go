package ingest

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// Defaults of Options.
const (
	DefaultMaxRecords = 10000
	DefaultMaxBytes   = 8 << 20
	DefaultMaxDelay   = 100 * time.Millisecond
)

// Options configure an Ingester. The zero value takes every default.
type Options struct {
	// MaxRecords, MaxBytes and MaxDelay bound one commit: it holds at most about MaxRecords
	// records (rollouts, catalogue rows and quarantined lines), MaxBytes bytes of lines, and the
	// lines read within MaxDelay of its first one. A bigger commit amortises the fsync; a smaller
	// one makes records visible sooner.
	MaxRecords int
	MaxBytes   int64
	MaxDelay   time.Duration

	// Logger receives quarantined lines (once each, when they are committed) and file events
	// (new generation, rename, gone). Nil discards.
	Logger *slog.Logger

	// Progress, when set, is called after every commit with the bytes of the scan's backlog done
	// so far and the backlog's size at the start of the scan.
	Progress func(Progress)

	// ReadCatalogFile, when set, reads a catalogue file that is not JSON lines (a *.parquet file
	// of DIR/catalog) whole, and returns its rows. It is called again whenever the file changes
	// (size, modification time or first bytes); its rows are upserted. A *record.BadLineError
	// quarantines the whole file; other errors stop the scan. Without it such files are skipped.
	// An error with a method Unreadable() bool that returns true says the file could not be
	// read as its format at all: it is quarantined, and none of the tasks it listed is retired
	// while it stays so.
	ReadCatalogFile func(path string) ([]record.Task, error)

	// OnTasks, when set, is called inside each commit that adds tasks to the database or
	// changes the description of known ones, with a Reader over that commit's transaction
	// (which sees those tasks already stored), the tasks added (catalogue rows new to it, and
	// tasks first seen in rollouts with only Env and Task) and the catalogue rows of known tasks
	// whose description changed. It returns adjacency lists to store in the same transaction
	// (the graph's edges of those nodes and of the neighbours they change). An error aborts
	// the commit and the scan. It becomes storage.Batch.Adjacency: see there.
	//
	// envsched's ingesters (schedule.NewIngester) set it to a schedule.EdgeKeeper's OnTasks, and
	// OnCommitError to its Reset: the task graph's edges are built here, inside the write
	// transaction, and commit with their tasks (ingest.Options.OnTasks ->
	// storage.Batch.Adjacency -> schedule.EdgeKeeper.OnTasks -> graph.Builder).
	OnTasks func(r *storage.Reader, added, changed []record.Task) ([]storage.NodeEdges, error)

	// FinishEdges, when set with OnTasks, moves the graph's edges out of the commits that add
	// tasks: those commits carry storage.Batch.DeferEdges (OnTasks is still called in them, and
	// should only take note of the tasks), and once every record of a scan is committed,
	// FinishEdges is called with a Reader over the database (valid only during the call: read
	// what is needed there) and returns the adjacency lists to store. They are stored in
	// commits of at most 4 × MaxRecords lists, the last of which sets storage.Batch.EdgesDone.
	// So the edges depend on the catalogue a scan reads, not on how the scan split it into
	// commits, and no commit holds a whole graph. A process stopped between the two leaves
	// storage.Counters.EdgesPending set: FinishEdges must then return every list of a build of
	// the whole stored catalogue. When it fails, or a commit of its lists does,
	// OnCommitError is called and the scan returns the error.
	//
	// schedule.NewIngester sets it to a schedule.EdgeKeeper's Finish (and OnTasks to its
	// Stage).
	FinishEdges func(r *storage.Reader) (EdgeLists, error)

	// OnCommitError, when set, is called whenever a commit fails, in the goroutine that
	// commits, before the scan returns the error. OnTasks may have run in that commit: state it
	// keeps outside the database must be undone here (schedule.EdgeKeeper.Reset).
	OnCommitError func()

	// BeforeCommit, when set, is called just before each transaction is committed, in the
	// goroutine that commits (the daemon's crash-test point between reading and committing).
	BeforeCommit func()

	// commitHook, in tests, runs before each commit; an error abandons the commit as a crash
	// between reading and committing would.
	commitHook func(*storage.Batch) error
	// afterList, in tests, runs between a full scan's listing and its reading, and may change
	// the folder and the list (as a rename racing the scan does).
	afterList func([]candidate) []candidate

	// settleAfter is settleAfter except in tests (which make it short, to reach the stat-only
	// check of unchanged files without waiting).
	settleAfter time.Duration
	// noBirth, in tests, ignores birth times, as on a filesystem that keeps none.
	noBirth bool
	// now is time.Now except in tests (which stop the clock that spaces the hashes of
	// catalogue files read whole).
	now func() time.Time

	// onOpen, in tests, is told of every candidate a scan opens.
	onOpen func(rel string)

	// readBuf is the size of the read buffer per file (tests make it tiny).
	readBuf int
	// maxLine is record.MaxLine except in tests.
	maxLine int
	// tickBytes is tickEvery except in tests.
	tickBytes int64
}

func (o Options) withDefaults() Options {
	if o.MaxRecords <= 0 {
		o.MaxRecords = DefaultMaxRecords
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = DefaultMaxDelay
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.settleAfter <= 0 {
		o.settleAfter = settleAfter
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.readBuf <= 0 {
		o.readBuf = 1 << 20
	}
	if o.maxLine <= 0 {
		o.maxLine = record.MaxLine
	}
	return o
}

// Progress is how far a scan is through its backlog: bytes, lines and files.
type Progress struct {
	Done  int64 // bytes committed so far
	Total int64 // bytes unread in the scan's files when it started
	Lines int64 // lines committed so far: rollouts, duplicates, catalogue rows and quarantined lines
	// FilesRead is how many files new bytes were read from so far; Files how many files had
	// unread bytes when the scan started.
	FilesRead, Files int
}

// Summary counts what a scan did. The counts are of what was committed.
type Summary struct {
	Files       int   // files looked at
	FilesRead   int   // files from which new bytes were read
	Bytes       int64 // bytes of lines committed
	Rollouts    int   // rollouts stored
	Duplicates  int   // rollouts skipped as duplicates
	Clipped     int   // stored rollouts whose reward was clipped
	Quarantined int   // lines (or whole catalogue files) quarantined
	TaskRows    int   // catalogue rows stored
	NewTasks    int   // tasks added (from the catalogue or first seen in rollouts)
	Commits     int   // transactions committed
	Rewritten   int   // tracked files whose content was found replaced: read again from the start
	Resumed     int   // files marked gone found again with their content: read on from where they were
	Refused     int   // files refused (not regular files, links); also quarantined
}

// Add adds o's counts to s.
func (s *Summary) Add(o Summary) {
	s.Files += o.Files
	s.FilesRead += o.FilesRead
	s.Bytes += o.Bytes
	s.Rollouts += o.Rollouts
	s.Duplicates += o.Duplicates
	s.Clipped += o.Clipped
	s.Quarantined += o.Quarantined
	s.TaskRows += o.TaskRows
	s.NewTasks += o.NewTasks
	s.Commits += o.Commits
	s.Rewritten += o.Rewritten
	s.Resumed += o.Resumed
	s.Refused += o.Refused
}

// String is the one-line summary the ingest command prints.
func (s Summary) String() string {
	return fmt.Sprintf("%d files (%d with new bytes), %d new rollouts, %d catalogue tasks (%d new tasks), "+
		"%d quarantined, %d duplicates, %d clipped",
		s.Files, s.FilesRead, s.Rollouts, s.TaskRows, s.NewTasks, s.Quarantined, s.Duplicates, s.Clipped)
}

// EdgeLists are adjacency lists to store, made on demand: a whole graph's lists are never held
// at once. Make(i, j) returns lists i to j-1 of N; the order is the maker's. Done, when set, is
// called once the scan is through with the lists, however it ends: after the last is stored,
// or when a commit failed before (the maker restores there what it changed for the making).
type EdgeLists struct {
	N    int
	Make func(i, j int) []storage.NodeEdges
	Done func()
}

// done calls Done when it is set.
func (l EdgeLists) done() {
	if l.Done != nil {
		l.Done()
	}
}
