package schedule

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"

	"github.com/envsched/envsched/graph"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// EdgeKeeper keeps a graph.Builder in step with the stored catalogue, so that every commit that
// adds tasks or changes their descriptions stores, in the same transaction, the adjacency lists
// that change. Its OnTasks is the hook for ingest.Options.OnTasks, and its Reset the hook for
// ingest.Options.OnCommitError. One EdgeKeeper serves one writer: it is not safe for concurrent
// use.
//
// The graph is built lazily, in the first commit that adds or describes tasks: a process that
// finds nothing new never reads the catalogue nor builds anything.
type EdgeKeeper struct {
	opts graph.Options
	b    *graph.Builder // nil until the first OnTasks or Stage, and again after Reset
	// all says the next Finish returns every list (the stored edges are stale); extra are nodes
	// whose lists the next Finish returns besides those the builder reports (see linkedTo)
	all   bool
	extra []graph.NodeKey
	// once says the keeper serves one scan (a one-shot ingest): Finish drops the builder's
	// index (graph.Builder.DropIndex) before the lists are stored, and the keeper forgets it
	once bool
	// log receives, once per length, the embedding lengths the graph's hyperplane bound left
	// out (warnUnbucketed); nil logs nothing
	log    *slog.Logger
	warned map[int]bool
}

// warnUnbucketed logs at WARN each embedding length the builder's hyperplane bound left out
// that it has not logged yet: such rows find their near-duplicates only through text, tools and
// tags, which used to happen without a word.
func (k *EdgeKeeper) warnUnbucketed() {
	if k.log == nil || k.b == nil {
		return
	}
	left := k.b.Unbucketed()
	dims := slices.Sorted(maps.Keys(left))
	for _, d := range dims {
		if k.warned[d] {
			continue
		}
		if k.warned == nil {
			k.warned = map[int]bool{}
		}
		k.warned[d] = true
		k.log.Warn("catalogue embeddings of this length are not bucketed: the bound on the graph's hyperplanes went to more common lengths; "+
			"they are linked only through text, tools and tags (embeddings of one length per catalogue are meant)",
			"length", d, "rows", left[d])
	}
}

// NewEdgeKeeper returns a keeper that builds its graph with opts. It reads nothing.
func NewEdgeKeeper(opts graph.Options) *EdgeKeeper {
	return &EdgeKeeper{opts: opts}
}

// Built reports whether the keeper holds a graph (whether OnTasks has been called since it was
// made or Reset).
func (k *EdgeKeeper) Built() bool { return k.b != nil }

// Reset drops the graph. Call it when a commit in which OnTasks ran fails: the graph then holds
// tasks the database does not, and a retry would find them known and store no lists for them.
// The next commit that adds or describes tasks builds the graph again from what is committed.
func (k *EdgeKeeper) Reset() { k.b, k.all, k.extra = nil, false, nil }

// OnTasks adds to the graph the tasks a commit adds and the new descriptions of known tasks
// (changed), and returns the adjacency lists to store: those of the added and changed tasks,
// and of every other task whose nearest neighbours changed. r is the committing transaction,
// with added and changed already stored. Its signature is that of storage.Batch.Adjacency.
//
// The first call builds the graph of the tasks stored before this commit, read through r, then
// adds added and changed to it. When the database held tasks but no edges (one from before
// edges were kept at ingest), that call returns the list of every node, so that the stored
// graph is whole from then on.
func (k *EdgeKeeper) OnTasks(r *storage.Reader, added, changed []record.Task) ([]storage.NodeEdges, error) {
	now := slices.Concat(added, changed)
	if k.b != nil {
		defer k.warnUnbucketed()
		return k.lists(k.b.Add(now)), nil
	}
	before, hasEdges, err := readGraphInput(r, now)
	if err != nil {
		return nil, err
	}
	b := graph.NewBuilder(k.opts)
	old := b.Add(before) // every node stored before this commit but those of now
	diff := b.Add(now)
	k.b = b
	k.warnUnbucketed()
	switch {
	case len(before) > 0 && !hasEdges:
		return k.lists(unionKeys(old, diff)), nil
	case len(changed) > 0 && hasEdges:
		// The graph never held the old descriptions of changed: the nodes that the stored
		// edges link to them may have lost that link, which diff does not show.
		linked, err := linkedTo(r, changed)
		if err != nil {
			return nil, err
		}
		return k.lists(unionKeys(diff, linked)), nil
	}
	return k.lists(diff), nil
}

// Stage is OnTasks for an ingester that stores the edges after its scan (ingest.Options
// FinishEdges = Finish): it only stages added and changed in the graph's builder, which keeps
// their features, not their text, and returns no lists. Its signature is that of
// storage.Batch.Adjacency.
//
// Its first call reads the tasks stored before this commit through r and builds their graph,
// the one the stored edges describe, so that the next Finish returns only the lists that the
// staged tasks change. When the stored edges are not those of the stored catalogue (the
// database holds tasks but no edges, or Counters.EdgesPending is set: a process stopped
// before it stored its lists), it builds nothing then, and the next Finish builds the whole
// catalogue and returns every list.
func (k *EdgeKeeper) Stage(r *storage.Reader, added, changed []record.Task) ([]storage.NodeEdges, error) {
	now := slices.Concat(added, changed)
	if k.b == nil {
		if err := k.start(r, now); err != nil {
			return nil, err
		}
		if len(changed) > 0 && !k.all {
			linked, err := linkedTo(r, changed)
			if err != nil {
				return nil, err
			}
			k.extra = append(k.extra, linked...)
		}
	}
	k.b.Stage(now)
	return nil, nil
}

// start makes the builder from the tasks stored through r but those of now, streamed into it in
// pieces, and decides whether the next Finish returns every list.
func (k *EdgeKeeper) start(r *storage.Reader, now []record.Task) error {
	c, err := r.Counters()
	if err != nil {
		return fmt.Errorf("read counters: %w", err)
	}
	b := graph.NewBuilder(k.opts)
	n, hasEdges, err := stageStored(r, b, now)
	if err != nil {
		return err
	}
	k.all = c.EdgesPending || (n > 0 && !hasEdges)
	if !k.all {
		b.Flush() // the graph the stored edges describe
	}
	k.b, k.extra = b, nil
	return nil
}

// stageStored stages into b the stored tasks that are not in now, a piece at a time, and returns
// how many there were and whether any edges are stored.
func stageStored(r *storage.Reader, b *graph.Builder, now []record.Task) (int, bool, error) {
	skip := make(map[storage.TaskKey]bool, len(now))
	for _, t := range now {
		skip[storage.TaskKey{Env: t.Env, Task: t.Task}] = true
	}
	n := 0
	piece := make([]record.Task, 0, stagePiece)
	err := r.Tasks(true, func(ti storage.TaskInfo) error {
		if skip[storage.TaskKey{Env: ti.Env, Task: ti.Task.Task}] {
			return nil
		}
		n++
		if piece = append(piece, ti.Task); len(piece) == stagePiece {
			b.Stage(piece)
			piece = piece[:0]
		}
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("read catalogue for the graph: %w", err)
	}
	b.Stage(piece)
	hasEdges := false
	err = r.Edges(func(storage.NodeEdges) error { hasEdges = true; return errStopEdges })
	if err != nil && !errors.Is(err, errStopEdges) {
		return 0, false, fmt.Errorf("read stored edges: %w", err)
	}
	return n, hasEdges, nil
}

// stagePiece is how many stored tasks are read before they are staged.
const stagePiece = 8192

// Finish is ingest.Options.FinishEdges for an ingester whose OnTasks is Stage: it scores what
// Stage staged since the last Finish and returns the lists to store: those of the staged tasks
// and of every task whose neighbours they change, but not the empty list of a task new to the
// database. When the stored edges are stale (see Stage; also when no Stage ran in this process
// and r shows Counters.EdgesPending), it builds the whole stored catalogue and returns the list
// of every task, empty ones included, so that the stored edges become exactly those of a build
// of the catalogue. The lists are made on demand from the builder; r is read only during the
// call.
func (k *EdgeKeeper) Finish(r *storage.Reader) (ingest.EdgeLists, error) {
	if k.b == nil {
		c, err := r.Counters()
		if err != nil {
			return ingest.EdgeLists{}, fmt.Errorf("read counters: %w", err)
		}
		if !c.EdgesPending {
			return ingest.EdgeLists{}, nil // nothing staged, nothing stale: build nothing
		}
		if err := k.start(r, nil); err != nil {
			return ingest.EdgeLists{}, err
		}
	}
	if !k.b.Staged() && !k.all {
		return ingest.EdgeLists{}, nil
	}
	if k.once {
		// The scan's commits leave garbage (about half the heap at a million tasks) that the
		// next collection would free only after the build's arrays had taken new pages: collect
		// now, so that they reuse it and the process's peak stays lower.
		runtime.GC()
	}
	keys := k.b.Flush()
	k.warnUnbucketed()
	if k.all {
		keys = k.b.Keys()
	} else {
		keys = unionKeys(keys, k.extra)
		keys = slices.DeleteFunc(keys, func(key graph.NodeKey) bool {
			return k.b.IsNew(key) && !k.b.Linked(key)
		})
	}
	k.all, k.extra = false, nil
	b := k.b
	if k.once {
		// The lists are made from b's adjacency alone; a later Stage (none in a one-shot
		// ingest) builds again from the database.
		b.DropIndex()
		k.b = nil
		runtime.GC() // the lists and the commits that store them reuse what the index held
		mk, restore := leanMake(b, keys)
		return ingest.EdgeLists{N: len(keys), Make: mk, Done: restore}, nil
	}
	return ingest.EdgeLists{N: len(keys), Make: func(i, j int) []storage.NodeEdges {
		return listsOf(b, keys[i:j])
	}}, nil
}

// storeGCPercent is the garbage collector's target while a one-shot keeper's lists are made and
// stored: every list and its encoding is garbage once committed, and with the default target
// (100) that garbage grew the heap by as much as the graph it was made from, the process's peak
// at a million tasks.
const storeGCPercent = 25

// leanMake is EdgeLists.Make for a one-shot keeper, and its Done: mk sets the collector's
// target to storeGCPercent at its first call and restores the previous target once the last
// list is made; restore restores it when it is still set (a commit that failed before the last
// list: the command then reports the error, and whatever it does next runs with the target it
// had). Both are idempotent about the target.
func leanMake(b *graph.Builder, keys []graph.NodeKey) (mk func(i, j int) []storage.NodeEdges, restore func()) {
	prev, set := 0, false
	restore = func() {
		if set {
			debug.SetGCPercent(prev)
			set = false
		}
	}
	mk = func(i, j int) []storage.NodeEdges {
		if !set {
			prev, set = debug.SetGCPercent(storeGCPercent), true
		}
		out := listsOf(b, keys[i:j])
		if j == len(keys) {
			restore()
		}
		return out
	}
	return mk, restore
}

// linkedTo returns the nodes whose stored lists name one of tasks, and those that the stored
// lists of tasks name.
func linkedTo(r *storage.Reader, tasks []record.Task) ([]graph.NodeKey, error) {
	of := make(map[storage.TaskKey]bool, len(tasks))
	for _, t := range tasks {
		of[storage.TaskKey{Env: t.Env, Task: t.Task}] = true
	}
	var out []graph.NodeKey
	err := r.Edges(func(ne storage.NodeEdges) error {
		for _, e := range ne.Edges {
			if of[ne.Node] {
				out = append(out, graph.NodeKey{Env: e.Env, Task: e.Task})
			} else if of[storage.TaskKey{Env: e.Env, Task: e.Task}] {
				out = append(out, graph.NodeKey{Env: ne.Node.Env, Task: ne.Node.Task})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read stored edges: %w", err)
	}
	return out, nil
}

// unionKeys returns the keys of a and b, sorted by environment then task, without repeats.
// When b is empty and a is strictly increasing (as Flush's keys are), a itself is returned: a
// million keys neither copied nor sorted again.
func unionKeys(a, b []graph.NodeKey) []graph.NodeKey {
	if len(b) == 0 && increasing(a) {
		return a
	}
	out := slices.Concat(a, b)
	slices.SortFunc(out, cmpNodeKeys)
	return slices.CompactFunc(out, func(x, y graph.NodeKey) bool { return x == y })
}

func cmpNodeKeys(x, y graph.NodeKey) int {
	if c := cmp.Compare(x.Env, y.Env); c != 0 {
		return c
	}
	return cmp.Compare(x.Task, y.Task)
}

// increasing reports whether keys are sorted by environment then task without repeats.
func increasing(keys []graph.NodeKey) bool {
	for i := 1; i < len(keys); i++ {
		if cmpNodeKeys(keys[i-1], keys[i]) >= 0 {
			return false
		}
	}
	return true
}

// readGraphInput returns the stored tasks that are not in now (the tasks the commit adds or
// describes anew), and whether any edges are stored. A changed task is left out too: r shows
// its new description, and the caller adds that after the rest, so that the lists it changes
// are reported.
func readGraphInput(r *storage.Reader, now []record.Task) ([]record.Task, bool, error) {
	skip := make(map[storage.TaskKey]bool, len(now))
	for _, t := range now {
		skip[storage.TaskKey{Env: t.Env, Task: t.Task}] = true
	}
	var before []record.Task
	err := r.Tasks(true, func(ti storage.TaskInfo) error {
		if !skip[storage.TaskKey{Env: ti.Env, Task: ti.Task.Task}] {
			before = append(before, ti.Task)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("read catalogue for the graph: %w", err)
	}
	hasEdges := false
	err = r.Edges(func(storage.NodeEdges) error { hasEdges = true; return errStopEdges })
	if err != nil && !errors.Is(err, errStopEdges) {
		return nil, false, fmt.Errorf("read stored edges: %w", err)
	}
	return before, hasEdges, nil
}

// errStopEdges ends the scan for stored edges at the first one.
var errStopEdges = errors.New("stop")

func (k *EdgeKeeper) lists(keys []graph.NodeKey) []storage.NodeEdges { return listsOf(k.b, keys) }

// listsOf returns the adjacency lists of keys in b, in the form storage keeps.
func listsOf(b *graph.Builder, keys []graph.NodeKey) []storage.NodeEdges {
	out := make([]storage.NodeEdges, len(keys))
	for i, key := range keys {
		named := b.Adjacency(key)
		edges := make([]storage.Edge, len(named))
		for j, e := range named {
			edges[j] = storage.Edge{Env: e.Env, Task: e.Task, Weight: e.Weight, Sim: e.Sim, Cross: e.Cross}
		}
		out[i] = storage.NodeEdges{Node: storage.TaskKey{Env: key.Env, Task: key.Task}, Edges: edges}
	}
	return out
}
