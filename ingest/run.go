package ingest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// run is the state of one scan: the batch being filled, the batch being committed by the
// committer goroutine, and the counts.
type run struct {
	in       *Ingester
	ctx      context.Context
	fullScan bool
	seen     map[ident]bool // identities found (full scans mark the others gone)
	dirty    map[uint64]*storage.FileState
	current  *storage.FileState // the file being read; its state goes into every flush
	lr       *lineReader        // current's line reader: its tail goes with current's state

	batch      *storage.Batch
	batchBytes int64
	records    int
	started    time.Time
	spare      *storage.Batch

	inflight      *storage.Batch
	inflightBytes int64
	todo          chan *storage.Batch
	done          chan commitDone
	ready         *commitDone // the in-flight commit's result, collected early by busy

	// dbID is the identity of the database file (zero when it cannot be had): a name of it in
	// the folders is refused (database).
	dbID ident
	// outIDs are the identities of this process's standard output and error when they are
	// regular files: a log written into the folders is refused (ownOutput).
	outIDs []ident
	// catalogChanged says a catalogue file was rewritten, replaced, found again, read whole or
	// gone in this scan: the scan's last commit carries the tasks listed now (Batch.Listed).
	catalogChanged bool
	// renumberedSaid: this scan logged files found on a device of another number (changeRenumbered).
	renumberedSaid bool
	// rewrote are the catalogue files found rewritten in this scan (content; read from the start).
	rewrote map[uint64]bool
	// flushed are the catalogue files whose states an intermediate flush took from dirty in this
	// scan: restore looks at them as at those still in dirty.
	flushed map[uint64]*storage.FileState
	// fromStart are the catalogue files read from their start (or whole) in this scan: the only
	// ones that gave every row they hold in it (restore).
	fromStart map[uint64]bool
	// resumed: the database held Counters.ListsPending when the scan began (restore).
	resumed bool
	// later are the lists that the scan's only commit made but left to commits of their own
	later *EdgeLists

	sum      Summary
	progress Progress
	logged   int // quarantined lines logged in this scan
}

type commitDone struct {
	res storage.Result
	err error
}

// logUncatalogued logs the tasks a commit added from rollouts alone while the catalogue describes
// others: a trainer writing a task's id or environment otherwise than the catalogue (T1 for t1,
// "Retail" for "retail") has its rollouts counted for a task of their own, and the catalogued task
// stays untried. The first maxLogged since New are logged one by one, with the catalogued task
// each reads as when there is one; the next says that the others are not.
func (in *Ingester) logUncatalogued(us []storage.Uncatalogued) {
	for _, u := range us {
		in.uncatalogued++
		switch {
		case in.uncatalogued > maxLogged+1:
			continue
		case in.uncatalogued == maxLogged+1:
			in.opts.Logger.Warn("more tasks not in the catalogue were added from rollouts; they are not logged one by one " +
				"(envsched export --what tasks lists every task, in_catalog false for these)")
			continue
		}
		attrs := []any{"env", asciiName(u.Task.Env), "task", asciiName(u.Task.Task)}
		msg := "rollouts of a task not in the catalogue: counted for a task of its own, with no text or tools " +
			"linking it to others (names are compared byte for byte)"
		if u.Like != (storage.TaskKey{}) {
			msg = "rollouts of a task not in the catalogue, whose names read as a catalogued task's: counted for a task " +
				"of its own, not for that one (names are compared byte for byte; write them as the catalogue does)"
			attrs = append(attrs, "catalogued_env", asciiName(u.Like.Env), "catalogued_task", asciiName(u.Like.Task))
		}
		in.opts.Logger.Warn(msg, attrs...)
	}
}

// logReused logs a commit's rollouts skipped as duplicates although the rollout stored under
// their id is of another task (storage.Result.Reused): a trainer whose rollout ids are unique
// only within a task or a group (`STEP/i`) lost every such rollout with nothing but the
// duplicates counter to show for it. One line per commit that had any, the first maxLogged
// commits since New.
func (in *Ingester) logReused(res storage.Result) {
	if res.Reused == 0 || in.reusedLogs >= maxLogged {
		return
	}
	in.reusedLogs++
	f := res.FirstReused
	in.opts.Logger.Warn("rollouts skipped as duplicates whose rollout_id is stored for another task: they are lost; "+
		"a rollout_id must name one rollout among all tasks' (PROTOCOL.md section 4, Duplicates), such as "+
		"REQUEST/ENV/TASK/RANK/i", "count", res.Reused, "rollout_id", asciiName(f.RolloutID),
		"env", asciiName(f.Task.Env), "task", asciiName(f.Task.Task),
		"stored_env", asciiName(f.Stored.Env), "stored_task", asciiName(f.Stored.Task))
}

// asciiName is name as the log shows it: itself when it is printable ASCII, else quoted with
// every other character escaped, so that two names that read alike are seen to differ.
func asciiName(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f {
			return strconv.QuoteToASCII(name)
		}
	}
	return name
}

// maxLogged is how many quarantined lines one scan logs one by one; the rest are summed up.
const maxLogged = 20

func (in *Ingester) scan(ctx context.Context, cands []candidate, full bool) (Summary, error) {
	r := &run{in: in, ctx: ctx, fullScan: full, seen: map[ident]bool{}, dirty: map[uint64]*storage.FileState{},
		batch: in.batch(0), spare: in.batch(1), todo: make(chan *storage.Batch), done: make(chan commitDone)}
	r.progress.Total, r.progress.Files = in.backlog(cands)
	if fi, err := os.Stat(in.db.Path()); err == nil {
		r.dbID, _ = identOf(fi)
	}
	for _, fd := range []string{"/dev/fd/1", "/dev/fd/2"} {
		if fi, err := os.Stat(fd); err == nil && fi.Mode().IsRegular() {
			if id, err := identOf(fi); err == nil {
				r.outIDs = append(r.outIDs, id)
			}
		}
	}
	r.catalogChanged = in.listsPending // an earlier scan stopped before its lists' commit: make them now
	r.resumed = in.listsPending
	go r.commitLoop()
	err := r.all(cands)
	close(r.todo)
	if err != nil {
		r.wait() // the batch in flight may still have committed: count it
		if r.later != nil {
			r.later.done() // left to edges, which the error skipped
		}
		if rerr := in.reload(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		in.forgetRefusals()
		return r.sum, err
	}
	if n := r.sum.Quarantined - r.logged; n > 0 && r.logged >= maxLogged {
		in.opts.Logger.Warn("more lines quarantined", "count", n)
	}
	return r.sum, nil
}

// batch returns one of the two batches a scan fills and commits in turn, emptied. They are
// kept across scans: the daemon scans a few paths many times a second.
func (in *Ingester) batch(i int) *storage.Batch {
	b := in.batches[i]
	if b == nil {
		b = &storage.Batch{Rollouts: make([]storage.Rollout, 0, in.opts.MaxRecords)}
		in.batches[i] = b
	}
	b.Reset()
	b.Adjacency = in.opts.OnTasks
	b.DeferEdges = in.opts.OnTasks != nil && in.opts.FinishEdges != nil
	return b
}

// backlog is the number of bytes the candidates hold past their committed offsets, and how many
// candidates hold any.
func (in *Ingester) backlog(cands []candidate) (int64, int) {
	var total int64
	files := 0
	for _, c := range cands {
		fi := c.listed
		if fi == nil {
			var err error
			if fi, err = os.Stat(in.abs(c.rel)); err != nil {
				continue
			}
		}
		size := fi.Size()
		if f := in.reg.byPath[c.rel]; f != nil && f.Offset <= size {
			size -= f.Offset
		}
		total += size
		if size > 0 {
			files++
		}
	}
	return total, files
}

func (in *Ingester) abs(rel string) string { return filepath.Join(in.dir, filepath.FromSlash(rel)) }

func (r *run) commitLoop() {
	for b := range r.todo {
		if r.in.opts.BeforeCommit != nil {
			r.in.opts.BeforeCommit()
		}
		if h := r.in.opts.commitHook; h != nil {
			if err := h(b); err != nil {
				r.done <- commitDone{err: err}
				continue
			}
		}
		res, err := r.in.db.Commit(b)
		if err != nil && r.in.opts.OnCommitError != nil {
			r.in.opts.OnCommitError()
		}
		r.done <- commitDone{res, err}
	}
}

// all reads every candidate, then flushes and waits for the last commit.
func (r *run) all(cands []candidate) error {
	for _, c := range r.linkedAcross(cands) {
		if err := r.file(c); err != nil {
			return err
		}
	}
	r.current = nil
	if r.fullScan {
		if err := r.markUnseenGone(); err != nil {
			return err
		}
	}
	if r.catalogChanged {
		r.batch.Listed, r.batch.Lists, r.batch.Held = r.in.listed() // nil when no catalogue file is left: no change
		r.restore()
		r.batch.ListsDone = true // clears the mark that the scan's earlier commits set (flush)
	}
	if r.inflight == nil && r.sum.Commits == 0 && r.in.opts.FinishEdges != nil && r.in.opts.OnTasks != nil {
		r.batch.Adjacency = r.inline(r.batch) // the scan's only commit
	}
	if err := r.flush(); err != nil {
		return err
	}
	r.catalogChanged = false // the lists are in that commit: the edges' commits set no mark
	if err := r.wait(); err != nil {
		return err
	}
	r.in.listsPending = false
	if err := r.edges(); err != nil {
		if r.in.opts.OnCommitError != nil {
			r.in.opts.OnCommitError() // the builder holds lists the database may not: build again
		}
		return err
	}
	return nil
}

// edges stores, after the scan's records are committed, the adjacency lists that
// Options.FinishEdges makes, in commits of at most edgeChunk lists; the last one clears
// Counters.EdgesPending. Nothing is committed when there are no lists and no mark to clear.
func (r *run) edges() error {
	fin := r.in.opts.FinishEdges
	if fin == nil || r.in.opts.OnTasks == nil {
		return nil
	}
	if r.later != nil {
		lists := *r.later
		r.later = nil // store calls its Done
		return r.store(lists, true)
	}
	var lists EdgeLists
	pending := false
	err := r.in.db.View(func(rd *storage.Reader) error {
		c, err := rd.Counters()
		if err != nil {
			return err
		}
		pending = c.EdgesPending
		lists, err = fin(rd)
		return err
	})
	if err != nil {
		return fmt.Errorf("build the task graph: %w", err)
	}
	return r.store(lists, pending)
}

// store commits lists in commits of at most edgeChunk × MaxRecords lists, the last with
// EdgesDone; with no lists, a commit that only clears the mark when pending.
func (r *run) store(lists EdgeLists, pending bool) error {
	defer lists.done()
	if lists.N == 0 && !pending {
		return nil
	}
	chunk := edgeChunk * r.in.opts.MaxRecords
	for i := 0; i == 0 || i < lists.N; i += chunk {
		j := min(i+chunk, lists.N)
		if j > i {
			r.batch.Edges = lists.Make(i, j)
		}
		r.batch.EdgesDone = j == lists.N
		if err := r.flush(); err != nil {
			return err
		}
	}
	return r.wait()
}

// inline is the Adjacency hook of a scan's only commit: the tasks are staged and their lists
// made and stored in that same commit, which then clears the mark it sets (one fsync, as when
// the edges were always built in the commit), unless there are more lists than one edge commit
// takes: those follow in commits of their own (edges), as after a longer scan. The hook sets
// the batch's EdgesDone, which storage reads after the hook returns.
func (r *run) inline(b *storage.Batch) func(*storage.Reader, []record.Task, []record.Task) ([]storage.NodeEdges, error) {
	return func(rd *storage.Reader, added, changed []record.Task) ([]storage.NodeEdges, error) {
		if _, err := r.in.opts.OnTasks(rd, added, changed); err != nil {
			return nil, err
		}
		lists, err := r.in.opts.FinishEdges(rd)
		if err != nil {
			return nil, err
		}
		if lists.N > edgeChunk*r.in.opts.MaxRecords {
			r.later = &lists // store calls its Done
			return nil, nil
		}
		defer lists.done()
		b.EdgesDone = true
		return lists.Make(0, lists.N), nil
	}
}

// edgeChunk times Options.MaxRecords adjacency lists at most go into one commit.
const edgeChunk = 4

// markUnseenGone marks gone the tracked files whose identity the scan did not find. Not
// finding a file is no proof that it is gone: a file renamed while the scan ran may have been
// listed under its old name and opened after the rename, or missed by the listing altogether.
// Marking it gone would forget its offset, and under its new name it would be read again from
// the start (PROTOCOL.md: a file renamed inside the folder keeps its place). So when some are
// missing, the folders are listed again and a file whose device and inode are there now is
// kept (the next scan reads it under its new name).
func (r *run) markUnseenGone() error {
	var missing []*storage.FileState
	for id, f := range r.in.reg.byIdent {
		if !r.seen[id] {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	present, err := r.in.present()
	if err != nil {
		return err
	}
	for _, f := range missing {
		if present[identOfState(f)] || r.in.underSkipped(f.Path) {
			r.in.opts.Logger.Info("file moved while scanning: kept", "path", f.Path, "file", f.ID)
			continue
		}
		r.in.opts.Logger.Info("file gone", "path", f.Path, "file", f.ID)
		r.dirty[f.ID] = r.in.reg.markGone(f)
		r.catalogChanged = r.catalogChanged || f.Kind == storage.KindCatalog
	}
	return nil
}

// present lists the folders again and returns the identities of the files found. A listed file
// that vanished before its stat may have been renamed again: the folders are then listed once
// more (a few times at most), and the identities of all listings count.
func (in *Ingester) present() (map[ident]bool, error) {
	ids := map[ident]bool{}
	for range presentTries {
		cands, err := in.walk()
		if err != nil {
			return nil, err
		}
		vanished := false
		for _, c := range cands {
			fi, err := os.Lstat(in.abs(c.rel))
			if err != nil {
				vanished = true
				continue
			}
			if id, err := identOf(fi); err == nil {
				ids[id] = true
			}
		}
		if !vanished {
			break
		}
	}
	return ids, nil
}

// presentTries bounds the listings of present.
const presentTries = 3

// refuse sets aside a candidate that is not a regular file (a FIFO, a socket, a device, a
// symbolic link: a link is never followed, wherever it points): it is logged once per path and
// type while the process runs, quarantined (counted in the database's quarantined count) once
// per path and type for good (quarantineOnce: a restart does not count it again), and never
// opened for reading. Serving goes on.
func (r *run) refuse(c candidate, err error) {
	r.refuseAs(c, ReasonNotRegular+": "+refusedType(err),
		"file refused: only regular files are read (a link is never followed)", "type", refusedType(err))
}

// database refuses a name of the database file itself in the folders (a hard link made into
// rollouts/ or catalog/), as refuse does: read as input, the database's pages were quarantined
// into it, which changed it, so it was read again whole at the next scan, for ever (the
// quarantined count grew at every rescan). --db inside those folders is refused by the
// commands; a hard link cannot be seen from the path.
func (r *run) database(c candidate) {
	r.refuseAs(c, ReasonDatabase, "file refused: it is envsched's own database under another name")
}

// ownOutput refuses this process's own standard output or error found in the folders (`run
// --log-format json 2>> DIR/rollouts/envsched.jsonl`), as refuse does: read as input, every
// log line was quarantined ("missing env", or "invalid JSON" for text), and each quarantine
// logged a line into the file that was read next, a line a second for as long as it ran.
func (r *run) ownOutput(c candidate) {
	r.refuseAs(c, ReasonOwnOutput, "file refused: it is envsched's own standard output or error (its log)")
}

// ReasonOwnOutput is the quarantine reason of the process's own log file in the folders.
const ReasonOwnOutput = "envsched's own log (its standard output or error)"

// ReasonDatabase is the quarantine reason of a name of the database file in the folders.
const ReasonDatabase = "envsched's own database (another name of its file)"

// refuseAs quarantines the file c once, with reason, and logs msg once per run of the process.
func (r *run) refuseAs(c candidate, reason, msg string, attrs ...any) {
	key := c.rel + "\x00" + reason
	if r.in.refused[key] {
		return
	}
	r.in.refused[key] = true
	if r.in.quarantineOnce(c.rel, reason) {
		r.sum.Refused++
		r.batch.Quarantine = append(r.batch.Quarantine, storage.QuarantineEntry{Path: c.rel, Reason: reason})
		r.records++
	}
	r.in.opts.Logger.Warn(msg, append([]any{"path", c.rel}, attrs...)...)
}

// ReasonNotRegular begins the quarantine reason of a file that is not a regular file.
const ReasonNotRegular = "not a regular file"

func refusedType(err error) string {
	var nr *fsutil.NotRegularError
	if errors.As(err, &nr) {
		return fsutil.TypeName(nr.Mode)
	}
	return err.Error()
}

// file reads what is new in one candidate. Only a regular file is opened, never through a
// symbolic link and never with a blocking open: anything else is refused (see refuse).
func (r *run) file(c candidate) error {
	r.sum.Files++
	if r.unchanged(c) {
		return nil
	}
	if r.in.opts.onOpen != nil {
		r.in.opts.onOpen(c.rel)
	}
	f, err := fsutil.OpenRegular(r.in.abs(c.rel))
	if errors.Is(err, os.ErrNotExist) {
		return nil // removed since it was listed
	}
	if fsutil.IsNotRegular(err) {
		r.refuse(c, err)
		return nil
	}
	if err != nil {
		r.unreadable(c, err)
		return nil
	}
	defer f.Close()
	r.in.faults.clear(c.rel)
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", c.rel, err)
	}
	id, err := identOf(fi)
	if err != nil {
		return err
	}
	if id == r.dbID {
		r.database(c)
		return nil
	}
	if slices.Contains(r.outIDs, id) {
		r.ownOutput(c)
		return nil
	}
	if r.seen[id] {
		return nil // another name (a hard link) of a file this scan has read: one file, read once
	}
	r.seen[id] = true
	if !c.ownName {
		c.rel, c.kind = r.in.reg.linkedName(c.rel, c.kind, id, r.in.abs)
	}
	st, err := r.state(c, id, f, fi)
	if err != nil || st == nil {
		return err
	}
	return r.read(c, f, st, fi.Size())
}

// state resolves the file's identity and content generation; nil means nothing to do.
func (r *run) state(c candidate, id ident, f *os.File, fi os.FileInfo) (*storage.FileState, error) {
	stp := stampOf(fi)
	if r.in.reg.unchanged(c.rel, c.kind, id, stp) {
		return nil, nil // read to its end, checked by content when settled, and unchanged since
	}
	var gone []*storage.FileState
	var birth int64
	if !r.in.opts.noBirth {
		birth = birthOf(f)
	}
	if old := r.in.reg.replacedAt(c.rel, c.kind, id); old != nil {
		back := false // a tombstone of this identity whose bytes these are: resolve takes it back
		if tomb := r.in.reg.gone[id]; tomb != nil && tomb != old && tomb.Kind == c.kind && sameBirth(tomb, birth) {
			evb, err := readEvidence(f, fi.Size(), tomb)
			if err != nil {
				return nil, err
			}
			back = sameContent(tomb, evb)
		}
		ev, err := readEvidence(f, fi.Size(), old)
		if err != nil {
			return nil, err
		}
		if !back && sameContent(old, ev) {
			r.in.reg.adopt(old, c.rel, id, birth)
			r.dirty[old.ID] = old
			r.sum.Resumed++
			r.in.opts.Logger.Info("file replaced by one holding its bytes and more: resuming where it was",
				"path", c.rel, "file", old.ID, "offset", old.Offset)
		}
	}
	prev := ""
	if f := r.in.reg.byIdent[id]; f != nil {
		prev = f.Path
	}
	st, ch, gone := r.in.reg.resolve(c.rel, c.kind, id, birth, gone)
	if c.kind == storage.KindCatalog && (ch != changeNone && ch != changeRenumbered || len(gone) > 0) &&
		!sameFormatRename(ch, prev, c.rel, gone) {
		r.catalogChanged = true
	}
	for _, g := range gone {
		if g.Kind == storage.KindCatalog {
			// a catalogue file found again as another kind (moved into rollouts/): what it
			// listed is no longer listed, so the tasks are listed again (review14)
			r.catalogChanged = true
		}
		r.in.opts.Logger.Info("file replaced", "path", g.Path, "file", g.ID)
		r.dirty[g.ID] = g
	}
	if ch == changeRenamed || ch == changeBack || ch == changeRenumbered {
		if ch == changeRenamed {
			r.in.opts.Logger.Info("file renamed", "path", st.Path, "file", st.ID)
		}
		if ch == changeRenumbered && !r.renumberedSaid {
			r.renumberedSaid = true
			r.in.opts.Logger.Warn("files found at their paths with their inodes on a device of another number "+
				"(their filesystem mounted again): the same files, resuming where they were", "path", st.Path,
				"file", st.ID, "device", st.Dev)
		}
		r.dirty[st.ID] = st
	}
	size, mtime := fi.Size(), fi.ModTime().UnixNano()
	delete(r.in.reg.settled, st.ID)
	checked := time.Now()
	ev, err := readEvidence(f, size, st)
	if err != nil {
		return nil, err
	}
	r.content(st, ch, ev)
	stamped := size == st.Size && mtime == st.ModTime
	sameSize := size == st.Size
	if ch != changeNone || !stamped {
		r.dirty[st.ID] = st // an unfinished line alone changes nothing worth a commit
	}
	st.Size, st.ModTime = size, mtime
	if settle := r.in.opts.settleAfter; checked.UnixNano()-max(stp.mtime, stp.ctime) > int64(settle) ||
		r.in.reg.steady(st.ID, stp, checked, settle) {
		r.in.reg.settled[st.ID] = stp // nothing written after the check can leave this stamp
		delete(r.in.reg.young, st.ID)
	}
	if sameSize && st.Offset >= size && !isJSONL(c.rel) && st.Kind == storage.KindCatalog {
		// A file read whole, with the size and bytes it had when read: reading it again
		// would store its rows again and quarantine a bad file once more (after it settled,
		// at every restart, and at every touch). Unless its bytes changed where neither the
		// size nor the fingerprints show it (sameWhole).
		if same, err := r.sameWhole(f, st, stp, stamped); err != nil || same {
			return nil, err
		}
		r.sum.Rewritten++
		r.in.opts.Logger.Warn("file rewritten with the same size: reading it again", "path", st.Path, "file", st.ID)
	}
	return st, nil
}

// restore adds to the scan's last commit the row of each task that a catalogue file gone or
// rewritten in this scan listed (as the catalogue's lists were last stored), that no catalogue
// file read from its start (or whole) in this scan lists now, and that another file still
// lists: its last row in those files, read in the order of their paths, as if the file had
// never been there. A task listed by two files takes the row read last, so one whose row came
// from a file deleted since kept that row for good, though the only file listing it now said
// otherwise (a.jsonl and b.jsonl list t1, b.jsonl is deleted: t1 kept b's text, its edges and
// its features). A task a file read from its start in this scan lists took its row from that
// file in this scan; a file only appended to gave just its new rows, so it is read here like
// the files the scan did not touch. Catalogue files read whole give no rows here.
func (r *run) restore() {
	touched := map[uint64]bool{}
	var dropped []uint64
	files := maps.Clone(r.flushed) // the catalogue files of this scan's intermediate commits too
	if files == nil {
		files = map[uint64]*storage.FileState{}
	}
	maps.Copy(files, r.dirty)
	if r.resumed {
		r.stopped(files)
	}
	for id, f := range files {
		if f.Kind != storage.KindCatalog {
			continue
		}
		if r.fromStart[id] {
			touched[id] = true // an appended file gave only its new rows
		}
		if !f.Gone && !r.rewrote[id] {
			continue
		}
		// A file replaced or rewritten with the same tasks (the usual rewrite of a catalogue, by
		// rename or in place) dropped none: its list is not read (a million keys are some
		// 100 MB as a map).
		if now := r.in.reg.byPath[f.Path]; now != nil && now.Kind == storage.KindCatalog &&
			r.in.db.SameFileList(id, r.batch.Lists[now.ID]) {
			continue
		}
		dropped = append(dropped, id)
	}
	if len(dropped) == 0 || r.batch.Listed == nil {
		return
	}
	want := map[storage.TaskKey]bool{}
	if err := r.in.db.FileListKeys(dropped, want); err != nil {
		r.in.opts.Logger.Warn("cannot read what the catalogue files gone or rewritten listed; their tasks' rows are "+
			"not read again from the other files", "err", err)
		return
	}
	for id := range touched {
		r.batch.Lists[id].Each(func(k storage.TaskKey) { delete(want, k) })
	}
	for k := range want {
		if !r.batch.Listed[k] {
			delete(want, k)
		}
	}
	if len(want) == 0 {
		return
	}
	rows := r.in.rowsOf(want, touched)
	keys := make([]storage.TaskKey, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b storage.TaskKey) int {
		return cmp.Or(strings.Compare(a.Env, b.Env), strings.Compare(a.Task, b.Task))
	})
	for _, k := range keys {
		r.batch.Tasks = append(r.batch.Tasks, rows[k])
	}
	if len(keys) > 0 {
		r.in.opts.Logger.Info("catalogue rows read again from the files that list them: the file their row came "+
			"from is gone or no longer lists them", "tasks", len(keys))
	}
}

// stopped adds to files what a scan stopped before its lists' commit (Counters.ListsPending)
// found and committed, and this scan finds unchanged: the catalogue files gone, and those whose
// list is not the one stored, taken as rewritten and, when this scan did not read them, as read
// from their start (their rows were committed). A file only appended to lists the tasks it
// listed and more: it restores none.
func (r *run) stopped(files map[uint64]*storage.FileState) {
	if r.rewrote == nil {
		r.rewrote = map[uint64]bool{}
	}
	if r.fromStart == nil {
		r.fromStart = map[uint64]bool{}
	}
	for id, f := range r.in.reg.byID {
		switch {
		case f.Kind != storage.KindCatalog:
		case f.Gone:
			if files[id] == nil {
				files[id] = f
			}
		case r.in.db.SameFileList(id, r.batch.Lists[id]):
		default:
			if files[id] == nil {
				files[id] = f
				r.fromStart[id] = true
			}
			r.rewrote[id] = true
		}
	}
}

// sameFormatRename reports whether a catalogue file was only renamed inside catalog/ to a name
// of its format (a.jsonl to b.jsonl): the tasks the catalogue lists are the same, so the list
// need not be read again. Every catalogue file was read again for it (300,000 tasks: 2 s), so a
// rename loop held each request's barrier that long.
func sameFormatRename(ch change, prev, rel string, gone []*storage.FileState) bool {
	return ch == changeRenamed && len(gone) == 0 && prev != "" &&
		strings.EqualFold(path.Ext(prev), path.Ext(rel))
}

// sameWhole reports whether a catalogue file read whole, with the size and fingerprints it had
// when read, still holds the bytes read. With its modification time unchanged (stamped), its
// change time unchanged says so at no cost; else the SHA-256 of its bytes decides (a chmod, a
// link or a rename moves the change time; so does a rewrite whose writer set the modification
// time back, which touch -r and rsync -t do; a touch moves both). A state stored by an older
// build has no hash: a file of the time it was read is taken as read, as it was then, and the
// hash of what it holds now is kept; one touched since is read again.
//
// The hash is taken at most once per file every hashEvery, or ten times as long as its last
// hash took (hashDue): a touch or chmod loop on a large file made every scan, and so every
// request's barrier, hash it whole (1 GB: 0.9 s per request, one core busy). A check put off
// leaves the change time stored as it was, so a later scan (the next event, or the rescan) takes
// it; a rewrite that keeps size and fingerprints is then read that much later.
func (r *run) sameWhole(f *os.File, st *storage.FileState, stp stamp, stamped bool) (bool, error) {
	switch {
	case stamped && st.Digest != nil && st.Ctime == stp.ctime:
		return true, nil
	case !stamped && st.Digest == nil:
		return false, nil
	case !r.in.hashDue(st.ID):
		delete(r.in.reg.settled, st.ID) // looked at again, until the hash is taken
		return true, nil
	}
	sum, err := r.in.digest(f, st.ID)
	if err != nil {
		return false, err
	}
	if st.Digest != nil && !bytes.Equal(sum, st.Digest) {
		return false, nil
	}
	st.Ctime, st.Digest = stp.ctime, sum
	r.dirty[st.ID] = st
	return true, nil
}

// hashEvery is the least time between two hashes of one catalogue file read whole, when
// nothing but its change or modification time moved.
const hashEvery = time.Second

// hashMark is when a file read whole was last hashed, and how long that took.
type hashMark struct {
	at   time.Time
	took time.Duration
}

// hashDue reports whether the file may be hashed now: never hashed by this process, or last
// hashed at least hashEvery ago and ten times as long ago as that hash took.
func (in *Ingester) hashDue(id uint64) bool {
	m, ok := in.hashed[id]
	return !ok || in.opts.now().Sub(m.at) >= max(hashEvery, 10*m.took)
}

// digest is digestOf, with the time it took noted for hashDue.
func (in *Ingester) digest(f *os.File, id uint64) ([]byte, error) {
	start := in.opts.now()
	sum, err := digestOf(f)
	in.hashed[id] = hashMark{at: start, took: in.opts.now().Sub(start)}
	return sum, err
}

// digestOf is the SHA-256 of f's bytes from its start. A sparse file's holes are not read: its
// digest is the SHA-256 of its extents in order (sparseDigest), a different function, so that a
// 10 GB hole is not hashed as 10 GB of NUL bytes. A file whose zeros were written rather than
// left as a hole then has another digest than the same bytes with a hole: at worst it is read
// again once.
func digestOf(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("hash %s: %w", f.Name(), err)
	}
	if hole, err := f.Seek(0, seekHole); err == nil && hole < fi.Size() {
		return sparseDigest(f, fi.Size())
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return nil, fmt.Errorf("hash %s: %w", f.Name(), err)
	}
	return h.Sum(nil), nil
}

// sparseDigest hashes the first size bytes of f as a sequence of extents, each a tag ('D' for
// data, 'H' for a hole), its length as 8 bytes, and for data its bytes: a prefix-free encoding,
// so two files have one digest only when their bytes are the same.
func sparseDigest(f *os.File, size int64) ([]byte, error) {
	h := sha256.New()
	h.Write([]byte("envsched sparse digest 1\x00"))
	src := &fileSource{f: f, limit: size}
	var head [9]byte
	for src.off < size {
		from := src.off
		n, err := src.skipHole()
		if err != nil {
			return nil, err
		}
		if n > 0 {
			head[0] = 'H'
			binary.BigEndian.PutUint64(head[1:], uint64(n))
			h.Write(head[:])
			continue
		}
		end, err := f.Seek(from, seekHole)
		if err != nil || end <= from || end > size {
			end = size // cannot tell: the rest is data
		}
		head[0] = 'D'
		binary.BigEndian.PutUint64(head[1:], uint64(end-from))
		h.Write(head[:])
		if _, err := io.Copy(h, io.NewSectionReader(f, from, end-from)); err != nil {
			return nil, fmt.Errorf("hash %s: %w", f.Name(), err)
		}
		src.off = end
	}
	return h.Sum(nil), nil
}

// content applies the content rules (checkContent) and logs what they found.
func (r *run) content(st *storage.FileState, ch change, ev evidence) {
	fp := len(st.Fingerprint)
	rewritten := checkContent(st, ev)
	if rewritten && st.Kind == storage.KindCatalog && isJSONL(st.Path) {
		r.catalogChanged = true // a file read whole says so in readWhole, when it could be read
		if r.rewrote == nil {
			r.rewrote = map[uint64]bool{}
		}
		r.rewrote[st.ID] = true
	}
	if fp != len(st.Fingerprint) {
		r.dirty[st.ID] = st
	}
	switch {
	case rewritten && ch == changeBack:
		r.sum.Rewritten++
		r.in.opts.Logger.Warn("file found again with other content: reading it from the start", "path", st.Path,
			"file", st.ID, "generation", st.Generation)
	case rewritten && ch != changeNew:
		r.sum.Rewritten++
		r.in.opts.Logger.Warn("file rewritten (shorter, or other bytes where it was read): reading it again from the start",
			"path", st.Path, "file", st.ID, "generation", st.Generation)
	case ch == changeBack:
		r.sum.Resumed++
		r.in.opts.Logger.Info("file found again: resuming where it was", "path", st.Path, "file", st.ID,
			"offset", st.Offset)
	}
}

func (r *run) read(c candidate, f *os.File, st *storage.FileState, size int64) error {
	if st.Kind == storage.KindCatalog && (st.Offset == 0 || !isJSONL(c.rel)) {
		if r.fromStart == nil {
			r.fromStart = map[uint64]bool{}
		}
		r.fromStart[st.ID] = true
	}
	if st.Kind == storage.KindCatalog && !isJSONL(c.rel) {
		return r.readWhole(f, st, size) // changed (state filtered out unchanged files): read it all again
	}
	if st.Offset >= size {
		return nil
	}
	r.current = st
	r.sum.FilesRead++
	if st.Offset == 0 && isBolt(f) {
		r.current = nil
		return r.bolt(f, st, size)
	}
	if kind := compressedKind(f); kind != "" {
		r.current = nil
		return r.compressed(f, st, size, kind)
	}
	from := st.Offset
	src := &fileSource{f: f, off: st.Offset, limit: -1, prev: append([]byte{}, st.Tail...)}
	if c.listed != nil && c.listed.Size() < size { // a full scan: up to the size it was listed with
		src.limit = max(c.listed.Size(), st.Offset)
	}
	if err := r.readLines(src, st); err != nil {
		return err
	}
	if st.Kind == storage.KindRollouts && !st.InLongLine && st.Offset < size {
		r.unterminated(f, st, size)
	}
	if st.Offset != from {
		r.dirty[st.ID] = st // its final offset goes into the next flush
		if st.Kind == storage.KindCatalog && (from == 0 || r.in.holding[st.ID] != "" || !r.in.listedOnce) {
			// Rows read into a file that listed nothing when last looked at (emptied in place
			// and written again, or held for bad rows): an edit, not an append, so the lists are
			// looked at again and the tasks it no longer lists retire. Taken for an append,
			// they stayed in service until some other catalogue file changed. Which files are
			// held is known once the lists were looked at in this process (holding): until
			// then, rows read into any catalogue file look at them.
			r.catalogChanged = true
		}
	}
	r.current = nil
	return nil
}

func isJSONL(rel string) bool { return strings.HasSuffix(rel, ".jsonl") }

// unterminatedAfter is how long a rollout file's last line may go without its newline before
// the log names it (unterminated).
const unterminatedAfter = 10 * time.Second

// unterminated logs, once per file and process, a rollout file whose bytes after its last
// newline are a whole rollout and have not changed for unterminatedAfter: a trainer that writes
// its lines joined by "\n" with none after the last (Python's "\n".join) loses the last
// rollout of every file, which waits for a newline that never comes, and nothing said so. The
// line still counts only once it ends in a newline (PROTOCOL.md section 4: a line written in
// pieces cannot be told from it); the log says so, naming the file.
func (r *run) unterminated(f *os.File, st *storage.FileState, size int64) {
	in := r.in
	if seen, ok := in.unterminated[st.ID]; ok && (seen < 0 || seen == size) || size-st.Offset > 1<<20 {
		return // logged, or looked at with this size already
	}
	fi, err := f.Stat()
	if err != nil || in.opts.now().Sub(fi.ModTime()) < unterminatedAfter {
		return
	}
	if in.unterminated == nil {
		in.unterminated = map[uint64]int64{}
	}
	in.unterminated[st.ID] = size
	tail, err := readAt(f, st.Offset, size-st.Offset)
	if err != nil {
		return
	}
	if _, err := record.ParseRollout(bytes.TrimRight(tail, " \t\r")); err != nil {
		return // not a whole rollout (a file already known as rollouts: the cross-link rule does not apply)
	}
	in.unterminated[st.ID] = -1
	in.opts.Logger.Warn("rollout file ends in a whole rollout with no newline after it, unchanged for 10 s: it is "+
		"not counted until its line ends in a newline (PROTOCOL.md section 4); end every line with \"\\n\"",
		"path", st.Path, "offset", st.Offset)
}

// ReasonBolt is the quarantine reason of a rollout or catalogue file that is a bbolt database.
const ReasonBolt = "a bbolt database file (envsched's database or a copy of it), not JSON lines"

// boltMeta is how a bbolt file begins on a little-endian machine: its first page is a meta page
// (flags 0x04 at byte 8) whose magic 0xED0CDAED is at byte 16.
const boltMetaFlags, boltMagic = 0x04, 0xED0CDAED

// isBolt reports whether f begins as a bbolt database does.
func isBolt(f *os.File) bool {
	b, err := readAt(f, 0, 20)
	return err == nil && len(b) == 20 && binary.LittleEndian.Uint16(b[8:]) == boltMetaFlags &&
		binary.LittleEndian.Uint32(b[16:]) == boltMagic
}

// bolt quarantines a rollout or catalogue file that is a bbolt database whole (once per
// version of it) and moves its offset to its end: a copy of envsched's database put into
// rollouts/ was read as lines, and the lines its pages hold (the fingerprints of rollout files
// are their last bytes, often a whole rollout line) counted as rollouts a second time.
func (r *run) bolt(f *os.File, st *storage.FileState, size int64) error {
	head, err := readAt(f, 0, min(size, fingerprintLen))
	if err != nil {
		return err
	}
	r.quarantine(st, 0, ReasonBolt, head)
	r.records++
	r.batchBytes += size
	st.Offset, st.InLongLine = size, false
	return r.settleAt(f, st, size)
}

// compressedMagic are the first bytes of files that are not JSON lines but are named so (a JSON
// line begins with "{", a blank or a UTF-8 byte order mark): compressed streams, parquet, and
// UTF-16 text, whose every other byte is NUL: each of its lines was quarantined as "line cut
// short by a crash (zeros follow it)", which sent its writer looking for a crash.
var compressedMagic = []struct{ magic, kind string }{
	{"\x1f\x8b", "gzip"}, {"\x28\xb5\x2f\xfd", "zstd"}, {"BZh", "bzip2"}, {"\xfd7zXZ\x00", "xz"},
	{"\x04\x22\x4d\x18", "lz4"}, {"PK\x03\x04", "zip"}, {"PAR1", "parquet"},
	{"\xff\xfe", "utf-16"}, {"\xfe\xff", "utf-16"}, // the byte order marks of UTF-16 (and UTF-32 LE): never UTF-8
}

// compressedKind names the format of f when it begins as a compressed stream or a parquet file
// does, or returns "".
func compressedKind(f *os.File) string {
	b, _ := readAt(f, 0, 6)
	for _, m := range compressedMagic {
		if strings.HasPrefix(string(b), m.magic) {
			return m.kind
		}
	}
	return ""
}

// ReasonCompressed is the quarantine reason of a .jsonl file that is kind (gzip, zstd, ...,
// parquet), not JSON lines.
func ReasonCompressed(kind string) string {
	switch kind {
	case "parquet":
		return "a parquet file, not JSON lines: name it .parquet (catalogue files only)"
	case "utf-16":
		return "a UTF-16 file (it begins with a UTF-16 byte order mark), not UTF-8 JSON lines: write it as UTF-8 " +
			"(PowerShell 5's > and Out-File write UTF-16: use Out-File -Encoding utf8)"
	}
	return "a " + kind + "-compressed file, not JSON lines: envsched reads plain JSON lines; decompress it, " +
		"or write it uncompressed"
}

// compressed quarantines a .jsonl file that is compressed (or parquet) whole, once per version
// of it, and moves its offset to its end as it grows. It was read as lines: a small gzip file of
// 20,000 rollouts held no newline byte, so it was one unfinished line waited on for ever, its
// rollouts never counted and nothing said; a larger one gave as many "invalid JSON" lines as
// its bytes held newlines.
func (r *run) compressed(f *os.File, st *storage.FileState, size int64, kind string) error {
	if st.Offset == 0 {
		head, err := readAt(f, 0, min(size, fingerprintLen))
		if err != nil {
			return err
		}
		r.quarantine(st, 0, ReasonCompressed(kind), head)
		r.records++
	}
	r.batchBytes += size - st.Offset
	st.Offset, st.InLongLine = size, false
	return r.settleAt(f, st, size)
}

func (r *run) readLines(f io.Reader, st *storage.FileState) error {
	if r.in.buf == nil {
		r.in.buf = make([]byte, r.in.opts.readBuf)
	}
	lr := newLineReader(f, st.Offset, r.in.opts.maxLine, 0)
	lr.buf = r.in.buf
	lr.tail = append(lr.tail, st.Tail...)
	if st.InLongLine {
		lr.resumeLongLine(st.Tail)
	}
	lr.tick, lr.tickEvery = r.skipping(st), r.in.opts.tickBytes
	if st.Kind == storage.KindCatalog {
		lr.whole = wholeRow
	}
	r.lr = lr
	defer func() {
		st.Tail, r.lr = lr.Tail(), nil
		if len(lr.buf) > len(r.in.buf) && len(lr.buf) <= 4<<20 {
			r.in.buf = lr.buf // keep a grown buffer of a modest size
		}
	}()
	for {
		line, off, kind, err := lr.next()
		if errors.Is(err, io.EOF) {
			r.batchBytes += lr.Offset() - st.Offset
			st.Offset, st.InLongLine = lr.Offset(), lr.inLongLine() // moved on inside a long line
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", st.Path, err)
		}
		r.line(st, line, off, kind)
		r.batchBytes += lr.Offset() - st.Offset
		st.Offset, st.InLongLine = lr.Offset(), lr.inLongLine()
		if r.full() && !r.busy() {
			if err := r.flush(); err != nil {
				return err
			}
		}
	}
}

// wholeRow says whether the bytes after a catalogue file's last newline, at its end, are a row
// all the same: a JSON object, closed, that reads as a task, with no NUL byte (a crash's zeros).
// Catalogues are often written without a final newline (Python's "\n".join of the rows), and
// that last row waited for a newline that never came: its task was never listed, without a
// word (hostile16). A writer cannot extend such a line into another good row (nothing but
// spaces may follow a closed object), so reading it now loses nothing: a newline written
// after it is a blank line, and a row after that the next line.
func wholeRow(tail []byte) bool {
	t := bytes.TrimRight(tail, " \t\r")
	if len(t) == 0 || t[len(t)-1] != '}' || bytes.IndexByte(t, 0) >= 0 {
		return false
	}
	_, err := record.ParseTask(t)
	return err == nil
}

// skipping is the tick of the line reader of st: a line too long being skipped
// returns nothing for as long as it lasts (10 GB of NUL bytes written out: seconds), so it
// reports the bytes passed as progress (Options.Progress) and stops when the scan's context is
// done (a SIGTERM waited for the end of the line). Its bytes are read again after a restart.
func (r *run) skipping(st *storage.FileState) func(off int64) error {
	return func(off int64) error {
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("scan %s: %w", r.in.dir, err)
		}
		if r.in.opts.Progress != nil {
			p := r.progress
			p.Done += r.inflightBytes + r.batchBytes + off - st.Offset // st.Offset: counted in batchBytes up to there
			r.in.opts.Progress(p)
		}
		return nil
	}
}

// busy reports whether the previous commit is still running and the batch may keep growing
// meanwhile (up to growFactor times its bounds): while the disk is busy, lines pile up into one
// bigger commit instead of waiting, which halves the fsyncs under a backlog and adds no latency.
func (r *run) busy() bool {
	if r.inflight == nil || r.ready != nil {
		return false
	}
	o := &r.in.opts
	if r.records >= growFactor*o.MaxRecords || r.batchBytes >= growFactor*o.MaxBytes {
		return false
	}
	select {
	case d := <-r.done:
		r.ready = &d
		return false
	default:
		return true
	}
}

// growFactor bounds how far a batch grows while the previous one commits.
const growFactor = 8

// line turns one framed line into a record or a quarantine entry of the batch.
func (r *run) line(st *storage.FileState, line []byte, off int64, kind lineKind) {
	r.records++
	if kind == lineTooLong {
		r.quarantine(st, off, record.ReasonTooLong, line)
		return
	}
	if torn, rest, skip := afterZeros(line); skip > 0 {
		if torn != nil {
			r.quarantine(st, off, ReasonTorn, torn)
			r.records++
		}
		line, off = rest, off+int64(skip)
	}
	if record.IsBlank(line) {
		r.records--
		return
	}
	if st.Kind == storage.KindCatalog {
		r.taskLine(st, line, off)
		return
	}
	ro, err := record.ParseRollout(line)
	if err == nil {
		err = checkNames(ro.Env, ro.Task)
	}
	if err != nil {
		r.quarantine(st, off, reasonOf(err), line)
		return
	}
	r.batch.Rollouts = append(r.batch.Rollouts, storage.Rollout{Rollout: ro, File: st.ID})
}

func (r *run) taskLine(st *storage.FileState, line []byte, off int64) {
	t, err := record.ParseTask(line)
	if err == nil {
		err = checkNames(t.Env, t.Task)
	}
	if err != nil {
		r.quarantine(st, off, reasonOf(err), line)
		return
	}
	r.batch.Tasks = append(r.batch.Tasks, t)
}

// afterZeros splits a line that holds NUL bytes. Zeros are a crash's unwritten bytes
// (record.IsBlank): what follows the last of them was written after the restart and is a line
// of its own (rest, which starts skip bytes into line); what precedes them, torn, is a line the
// crash cut short (nil when there is none but blanks). skip is 0 for a line without zeros. Every
// reader of catalogue and rollout lines splits them alike (run.line and listed), so that a row
// written after zeros is both stored and listed.
func afterZeros(line []byte) (torn, rest []byte, skip int) {
	z := bytes.LastIndexByte(line, 0)
	if z < 0 {
		return nil, line, 0
	}
	if t := bytes.TrimRight(line[:z], "\x00"); !record.IsBlank(t) {
		torn = t
	}
	return torn, line[z+1:], z + 1
}

// ReasonTorn is the quarantine reason of the start of a line that zeros follow: a line that a
// crash cut short, whose rest never reached the disk.
const ReasonTorn = "line cut short by a crash (zeros follow it)"

// ReasonNameTooLong is the quarantine reason of a record whose env or task name is longer than
// storage.MaxNameLen.
const ReasonNameTooLong = "env or task name too long"

func checkNames(env, task string) error {
	if len(env) > storage.MaxNameLen || len(task) > storage.MaxNameLen {
		return &record.BadLineError{Reason: ReasonNameTooLong}
	}
	return nil
}

func reasonOf(err error) string {
	var bad *record.BadLineError
	if errors.As(err, &bad) {
		return bad.Reason
	}
	return err.Error()
}

// quarantine sets a bad line of st aside: an entry with its offset, reason and first bytes for
// the first MaxStoredPerFile bad lines of the file, a count alone for the rest (a file of a
// million bad lines made a quarantine twice its size). Either way it counts in quarantined.
func (r *run) quarantine(st *storage.FileState, off int64, reason string, line []byte) {
	if st.Quarantined >= MaxStoredPerFile {
		r.batch.Unstored++
		return
	}
	st.Quarantined++
	head := append([]byte(nil), record.Head(line, storage.MaxHead)...)
	r.batch.Quarantine = append(r.batch.Quarantine, storage.QuarantineEntry{File: st.ID, Path: st.Path,
		Offset: off, Reason: storage.ClipReason(reason), Head: head})
}

// MaxStoredPerFile is how many bad lines of one file are stored in the quarantine with their
// details; the file's further bad lines are counted only.
const MaxStoredPerFile = 1000

// readWhole reads a catalogue file that is not JSON lines through Options.ReadCatalogFile.
func (r *run) readWhole(f *os.File, st *storage.FileState, size int64) error {
	if r.in.opts.ReadCatalogFile == nil {
		return nil
	}
	r.sum.FilesRead++
	// The hash and change time before the rows: a rewrite while they are read is seen next time.
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat catalogue %s: %w", st.Path, err)
	}
	if st.Digest, err = r.in.digest(f, st.ID); err != nil {
		return err
	}
	st.Ctime = stampOf(fi).ctime
	rows, err := r.in.opts.ReadCatalogFile(f.Name())
	// A file read whole changes the list of tasks now, unless it could not be read at all (a
	// stray or broken file: quarantined, and it retires nothing, as PROTOCOL.md says).
	r.catalogChanged = r.catalogChanged || err == nil || len(rows) > 0
	if unreadableFile(err) {
		r.in.unreadable[st.ID] = true
	} else {
		delete(r.in.unreadable, st.ID)
		r.in.noteWhole(st.ID, err)
	}
	var bad *record.BadLineError
	switch {
	case errors.As(err, &bad):
		head, _ := readAt(f, 0, min(size, fingerprintLen))
		r.quarantine(st, 0, bad.Reason, head)
		r.records++
	case err != nil:
		return fmt.Errorf("read catalogue %s: %w", st.Path, err)
	}
	keys := make([]storage.TaskKey, 0, len(rows))
	for _, t := range rows {
		if err := checkNames(t.Env, t.Task); err != nil || t.Env == "" || t.Task == "" {
			// The names are quoted and cut: they may be megabytes of anything.
			why := "empty env or task name"
			if err != nil {
				why = reasonOf(err)
			}
			r.quarantine(st, 0, fmt.Sprintf("catalogue row env %.40q (%d bytes) task %.40q (%d bytes): %s",
				t.Env, len(t.Env), t.Task, len(t.Task), why), nil)
			continue
		}
		r.batch.Tasks = append(r.batch.Tasks, t)
		keys = append(keys, storage.TaskKey{Env: t.Env, Task: t.Task})
	}
	r.in.wholeKeys[st.ID] = keys // what listed() needs of it, without reading it again
	r.records += len(rows)
	r.batchBytes += size - st.Offset
	st.Offset = size
	return r.settleAt(f, st, size)
}

// settleAt ends the reading of a file to its size: st takes the file's last bytes as its tail
// and goes into the next flush, which comes now if the batch is full.
func (r *run) settleAt(f *os.File, st *storage.FileState, size int64) error {
	var err error
	if st.Tail, err = readAt(f, size-min(size, fingerprintLen), min(size, fingerprintLen)); err != nil {
		return err
	}
	r.dirty[st.ID] = st
	if r.full() {
		return r.flush()
	}
	return nil
}

// full reports whether the batch has reached one of its bounds.
func (r *run) full() bool {
	o := &r.in.opts
	if r.records >= o.MaxRecords || r.batchBytes >= o.MaxBytes {
		return true
	}
	if r.records == 1 {
		r.started = time.Now()
	}
	return r.records&63 == 0 && time.Since(r.started) >= o.MaxDelay
}

// flush hands the batch, with the current file states, to the committer and starts a new one.
// Only one batch is in flight: flush first waits for the previous commit.
func (r *run) flush() error {
	if r.current != nil {
		if r.lr != nil {
			r.current.Tail = r.lr.Tail() // the bytes before the offset it is committed with
		}
		r.dirty[r.current.ID] = r.current
	}
	// A commit before the lists' one may store a catalogue file's new state (rewritten, say):
	// killed before the lists' commit, the restarted scan would find nothing changed.
	r.batch.ListsPending = r.catalogChanged && !r.batch.ListsDone
	for id, st := range r.dirty {
		r.batch.Files = append(r.batch.Files, *st)
		delete(r.dirty, id)
		if st.Kind == storage.KindCatalog {
			if r.flushed == nil {
				r.flushed = map[uint64]*storage.FileState{}
			}
			r.flushed[id] = st
		}
	}
	if r.batch.Empty() {
		return nil
	}
	if err := r.wait(); err != nil {
		return err
	}
	if err := r.ctx.Err(); err != nil {
		return fmt.Errorf("scan %s: %w", r.in.dir, err)
	}
	r.inflight, r.inflightBytes = r.batch, r.batchBytes
	r.todo <- r.batch
	r.batch, r.spare = r.spare, nil
	r.batch.Reset()
	r.batchBytes, r.records = 0, 0
	return nil
}

// wait collects the result of the commit in flight, if any.
func (r *run) wait() error {
	if r.inflight == nil {
		return nil
	}
	var d commitDone
	if r.ready != nil {
		d, r.ready = *r.ready, nil
	} else {
		d = <-r.done
	}
	b := r.inflight
	r.inflight, r.spare = nil, b
	if d.err != nil {
		return d.err
	}
	r.account(b, d.res)
	return nil
}

func (r *run) account(b *storage.Batch, res storage.Result) {
	s := &r.sum
	s.Commits++
	s.Bytes += r.inflightBytes
	s.Rollouts += res.Rollouts
	s.Duplicates += res.Duplicates
	s.Clipped += res.Clipped
	s.Quarantined += res.Quarantined
	s.TaskRows += len(b.Tasks)
	s.NewTasks += res.NewTasks
	for _, q := range b.Quarantine {
		if r.logged < maxLogged {
			r.in.opts.Logger.Warn("line quarantined", "path", q.Path, "offset", q.Offset, "reason", q.Reason,
				"head", string(q.Head))
		}
		r.logged++
	}
	r.in.logUncatalogued(res.Uncatalogued)
	r.in.logReused(res)
	r.progress.Done += r.inflightBytes
	r.progress.Lines = int64(s.Rollouts + s.Duplicates + s.Quarantined + s.TaskRows)
	r.progress.FilesRead = s.FilesRead
	if r.in.opts.Progress != nil {
		r.in.opts.Progress(r.progress)
	}
}
