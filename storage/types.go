package storage

import (
	"fmt"
	"math"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/stats"
)

// Range is the configured reward range. Rewards are clipped into [Min, Max] and normalised
// into [0, 1] for the statistics; Min < Max.
type Range struct {
	Min, Max float64
}

// Check reports whether the range can be used: finite Min < Max whose width Max − Min is finite
// too (-1e308 to 1e308 would normalise every reward to 0).
func (r Range) Check() error {
	w := r.Max - r.Min
	if math.IsNaN(w) || math.IsInf(w, 0) || math.IsInf(r.Min, 0) || math.IsInf(r.Max, 0) || !(r.Min < r.Max) {
		return fmt.Errorf("reward range [%g, %g]: need finite min < max, max − min finite", r.Min, r.Max)
	}
	return nil
}

// Normalise maps a reward into [0, 1]: Min to 0, Max to 1, linearly between, clamped outside.
// It is how a clipped reward enters the statistics.
func (r Range) Normalise(reward float64) float64 {
	n := (reward - r.Min) / (r.Max - r.Min)
	return math.Min(1, math.Max(0, n))
}

// Scale maps a value of [0, 1] back into the range, the inverse of Normalise: it turns the
// statistics' normalised means into rewards as the trainer wrote them.
func (r Range) Scale(n float64) float64 {
	return r.Min + n*(r.Max-r.Min)
}

// Config is what a database is created with and keeps for its whole life: changing it would
// make the stored statistics mean something else.
type Config struct {
	Schema  int    // schema version the file is written in
	Created string // RFC 3339 UTC time of creation
	Reward  Range  // reward range rollouts are clipped into
	Decay   float64
}

// TaskKey names one node: an (environment, task) pair.
type TaskKey struct {
	Env, Task string
}

// FileKind says what a tracked file holds.
type FileKind uint8

// File kinds.
const (
	KindRollouts FileKind = 1 // DIR/rollouts/**/*.jsonl
	KindCatalog  FileKind = 2 // DIR/catalog/*
)

// FileState is the committed identity and read position of one tracked file. Ingest owns the
// rules (which identity changes start a new generation); storage persists the state in the
// same transaction as the records read up to Offset.
type FileState struct {
	ID          uint64   // chosen by the caller: 1 + the largest stored ID (states are never deleted)
	Kind        FileKind //
	Path        string   // path relative to the exchange directory, with '/' separators
	Dev, Ino    uint64   // device and inode of the file
	Fingerprint []byte   // the first bytes of the file (up to 64; fewer for a short file)
	Offset      int64    // bytes of this generation consumed: every complete line before it is stored
	Generation  int64    // 0 for the first content seen; +1 whenever the content was found not to be the one read (ingest.sameContent)
	Size        int64    // the file's size when Offset was committed (for catalogue files read whole)
	ModTime     int64    // modification time (Unix ns) when Offset was committed
	Gone        bool     // the file was no longer found at a full scan; kept as a tombstone
	Tail        []byte   // the bytes just before Offset (up to 64; fewer when Offset is smaller)
	Birth       int64    // the file's birth time (Unix ns) where the filesystem tells it; 0 when unknown
	// Quarantined counts this file's bad lines stored in the quarantine with their details
	// (ingest stores at most ingest.MaxStoredPerFile of them; see Batch.Unstored).
	Quarantined int64
	// Ctime and Digest describe a catalogue file read whole (a .parquet file) as it was read:
	// its status change time (Unix ns) and the SHA-256 of its bytes. A file whose size and
	// modification time are unchanged but whose change time moved is hashed again, and read
	// again when the hash differs (a rewrite that kept size and mtime). Both are zero in states
	// stored by older builds and for files read line by line.
	Ctime  int64
	Digest []byte
	// InLongLine says Offset is inside a line longer than the longest line read (16 MiB),
	// quarantined already while it had no newline yet: reading resumes by skipping to its end.
	// Without it such a line was read again from its start at every scan until its newline came
	// (a 10 GB file of no newline: 10 GB read per scan).
	InLongLine bool
}

// Rollout is one rollout to store, as parsed (reward not yet clipped), with the file it came
// from.
type Rollout struct {
	record.Rollout
	File uint64 // FileState.ID of the source; 0 when not from a file
}

// QuarantineEntry is one line set aside: where it was and why.
type QuarantineEntry struct {
	Seq    uint64 // assigned by Commit; order of arrival
	File   uint64 // FileState.ID; 0 when not from a tracked file
	Path   string // path relative to the exchange directory
	Offset int64  // byte offset of the line in its file generation
	Reason string // record.BadLineError.Reason or a reader's reason
	Head   []byte // the first bytes of the line (at most 256)
}

// Edge is one adjacency entry of a node in the dual-relation graph.
type Edge struct {
	Env, Task string
	Weight    float32
	Sim       float32
	Cross     bool // the neighbour is in another environment
}

// NodeEdges is the full adjacency list of one node; storing it replaces the node's previous
// list. An empty Edges removes the node's list.
type NodeEdges struct {
	Node  TaskKey
	Edges []Edge
}

// Batch is everything one ingest step changes. Commit applies it in one transaction, in this
// order: file states, catalogue tasks, rollouts, quarantine entries, the statistics they
// change, Edges, the lists Adjacency returns, and last the counters.
type Batch struct {
	Files      []FileState       // upserted by ID
	Tasks      []record.Task     // catalogue rows: new tasks are added, known ones get new metadata
	Rollouts   []Rollout         // deduplicated by RolloutID, clipped, counted, folded into stats
	Quarantine []QuarantineEntry // Seq is assigned by Commit
	// Unstored counts lines quarantined without an entry (a file's bad lines beyond the ones
	// stored with their details): they count in Counters.Quarantined and Unstored.
	Unstored int
	Edges    []NodeEdges // adjacency lists to replace
	// Listed, when not nil, is every task the catalogue files list now (after this batch's
	// rows): each task with a catalogue row that is not in it is retired, each in it returned
	// to service (see Reader.Retired), except as Held says. The rows of Tasks return their tasks
	// to service anyway.
	Listed map[TaskKey]bool
	// Lists are, with Listed, the tasks each catalogue file read well lists now, by FileState
	// ID (a nil list is empty); the lists that changed are stored. Held are the IDs of the
	// catalogue files that cannot be read now or list no task (and of the files they replaced at
	// their path): a task one of them listed when it was last read well is not retired by this
	// Listed (see retired.go). The stored lists of files in neither are dropped.
	Lists map[uint64]*FileList
	Held  []uint64

	// Adjacency, when set, is called inside the transaction when this batch adds tasks or
	// changes the description of known ones. added are the tasks new to the database: their
	// catalogue rows, or Env and Task alone for tasks first seen in the batch's rollouts.
	// changed are the catalogue rows of known tasks whose description (text, tools, tags or
	// embedding) differs from the stored one, such as a task first seen in rollouts that the
	// catalogue now describes; rows that repeat the stored description are in neither. A task
	// is in at most one of the two, with the batch's last row for it.
	//
	// r is a Reader over the transaction, valid only during the call. It sees the batch's own
	// writes (its tasks with their new descriptions, rollouts, statistics and Edges) but the
	// counters as they were before the batch: they are written after the hook. The lists
	// Adjacency returns are stored in the same transaction, after Edges. An error aborts the
	// whole commit; state the hook keeps outside the database is then the caller's to undo.
	//
	// In envsched this is where the task graph's edges are built, deliberately inside the write
	// transaction so that they commit with the tasks that make them: schedule.NewIngester sets
	// ingest.Options.OnTasks to a schedule.EdgeKeeper's OnTasks, and the ingester passes it on
	// here (ingest.Options.OnTasks -> storage.Batch.Adjacency -> schedule.EdgeKeeper.OnTasks ->
	// graph.Builder -> the lists stored here). Storage itself knows nothing of graphs.
	Adjacency func(r *Reader, added, changed []record.Task) ([]NodeEdges, error)

	// DeferEdges says that the adjacency lists of the tasks this batch adds or describes are
	// stored by later commits: when it adds a task with a description (text, tools, tags or an
	// embedding) or changes a description, the commit sets Counters.EdgesPending. Adjacency is
	// still called (its lists are still stored). envsched's ingest builds the graph once per
	// scan, after the scan's tasks are committed, and stores the lists in commits of bounded
	// size: see ingest.Options.FinishEdges.
	DeferEdges bool
	// EdgesDone clears Counters.EdgesPending, after this batch's Edges are stored: set it on the
	// last commit of the lists that bring the stored edges up to date. It applies after
	// DeferEdges, so a batch with both leaves the mark cleared. Commit reads both flags after
	// Adjacency returns: the hook may set them (ingest's hook for a scan's only commit makes its
	// lists at once and sets EdgesDone).
	EdgesDone bool

	// ListsPending sets Counters.ListsPending: ingest sets it on the commits of a scan that found
	// the catalogue changed before its last commit, the one with Listed. ListsDone clears it (it
	// applies after ListsPending): set on that last commit, even when Listed is nil.
	ListsPending, ListsDone bool
}

// Empty reports whether b changes nothing.
func (b *Batch) Empty() bool {
	return len(b.Files) == 0 && len(b.Tasks) == 0 && len(b.Rollouts) == 0 &&
		len(b.Quarantine) == 0 && b.Unstored == 0 && len(b.Edges) == 0 && b.Listed == nil && !b.EdgesDone &&
		!b.ListsDone
}

// Reset empties b for reuse, keeping its capacity, Adjacency and DeferEdges.
func (b *Batch) Reset() {
	b.Files, b.Tasks, b.Rollouts = b.Files[:0], b.Tasks[:0], b.Rollouts[:0]
	b.Quarantine, b.Edges = b.Quarantine[:0], b.Edges[:0]
	b.Unstored = 0
	b.Listed, b.Lists, b.Held = nil, nil, nil
	b.EdgesDone = false
	b.ListsPending, b.ListsDone = false, false
}

// Result counts what a Commit stored.
type Result struct {
	Rollouts     int       // rollouts stored
	Duplicates   int       // rollouts skipped because their RolloutID was stored before
	Clipped      int       // stored rollouts whose reward was outside the range
	Quarantined  int       // lines quarantined: entries stored, and Batch.Unstored
	NewTasks     int       // tasks added (from the catalogue or first seen in rollouts)
	TasksUpdated int       // catalogue rows for known tasks (metadata replaced)
	Retired      int       // tasks retired or returned to service by Batch.Listed
	Added        []TaskKey // the tasks added, in order
	// Uncatalogued are the tasks added from rollouts alone while the catalogue holds others
	// (see committer.uncatalogued), in the order added; nil when the database has no catalogue.
	Uncatalogued []Uncatalogued
	// Reused counts the Duplicates whose RolloutID is stored for a rollout of another task: no
	// replay of a rollout, but a trainer whose rollout ids are not unique across tasks (an id of
	// "STEP/i", i the place in the group): each such rollout is lost. FirstReused is the first.
	Reused      int
	FirstReused ReusedID
}

// ReusedID is a rollout skipped as a duplicate although its id is stored for another task.
type ReusedID struct {
	RolloutID string
	Task      TaskKey // the skipped rollout's
	Stored    TaskKey // the task of the rollout stored under the id
}

// Uncatalogued is a task first seen in rollouts of a database that has a catalogue: most often
// a trainer that writes a task's id or environment otherwise than its catalogue does.
type Uncatalogued struct {
	Task TaskKey
	// Like is the catalogued task whose names read as Task's (record.LookAlike: case, Unicode
	// forms, invisible characters, spaces at the ends), zero when none was found or looked for
	// (only the first MaxLikeSearches of a commit are looked for).
	Like TaskKey
}

// MaxLikeSearches bounds the uncatalogued tasks of one commit whose look-alike is looked for: each
// search reads the names of an environment's catalogued tasks.
const MaxLikeSearches = 4

// Counters are the whole-database counts (they survive restarts).
type Counters struct {
	Rollouts         int64  // rollouts stored
	Quarantined      int64  // lines quarantined (with an entry stored or not)
	Unstored         int64  // lines quarantined without an entry stored (see Batch.Unstored)
	Duplicates       int64  // rollouts skipped as duplicates
	Clipped          int64  // stored rollouts whose reward was clipped
	RequestsAnswered int64  // answers stored
	LastRequest      string // ID of the last answer stored; "" when none
	Round            int64  // current round: the step of the last answer (0 before any)
	EdgeWrites       int64  // adjacency lists written or removed so far: a graph read before it moved is stale
	// CatalogWrites counts the stored descriptions of known tasks replaced by other ones so
	// far: features read before it moved are stale (a reworded task need not move EdgeWrites)
	CatalogWrites int64
	// EdgesPending says that a commit with Batch.DeferEdges added or described tasks whose
	// adjacency lists no commit with Batch.EdgesDone has stored since: the stored edges are not
	// those of the stored catalogue (a process stopped between the two), and the graph's owner
	// must build them again from the whole catalogue.
	EdgesPending bool
	// ListsPending says that a commit with Batch.ListsPending stored catalogue files' states
	// (a file rewritten, say) that no commit with Batch.ListsDone has followed: the stored
	// retirements and file lists are not those of the stored files (a process stopped between
	// the two), and the next scan must make the list of tasks again.
	ListsPending bool
}

// TaskInfo is one task as stored: its catalogue metadata and statistics.
type TaskInfo struct {
	record.Task            // Env and Task always set; the rest empty for tasks first seen in rollouts
	InCatalog   bool       // a catalogue row was seen for it
	Stats       stats.Task // statistics, as of Stats.Round
	Seq         uint64     // order in which the task was added (1, 2, …)
}

// StoredRollout is one rollout as stored.
type StoredRollout struct {
	Env, Task string
	Seq       uint64  // arrival order over the whole database (1, 2, …)
	Reward    float64 // clipped into the range, not normalised
	Clipped   bool    // the reward as read was outside the range
	Round     int64   // round the rollout was counted at (its step when it has one)
	Step      int64   // meaningful only when HasStep
	HasStep   bool
	Group     string // the group key as read ("" when none: the group of its task at Round)
	RequestID string
	RolloutID string
	File      uint64 // FileState.ID of the source
}
