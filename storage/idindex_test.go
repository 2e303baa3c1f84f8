package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/envsched/envsched/record"
)

// idWorld commits rollouts with ids drawn from a pool, and knows which were stored.
type idWorld struct {
	t      *testing.T
	db     *DB
	rng    *rand.Rand
	stored map[string]bool
	next   int
}

// batch returns old ids, new ids and repeats within the batch, and the duplicates a correct
// dedupe counts in it.
func (w *idWorld) batch(n int) (Batch, int) {
	var b Batch
	dups := 0
	seen := map[string]bool{}
	for range n {
		var id string
		switch k := w.rng.IntN(3); {
		case k == 0 && w.next > 0:
			id = fmt.Sprint("id-", w.rng.IntN(w.next))
		case k == 1 && len(seen) > 0:
			for s := range seen {
				id = s
				break
			}
		default:
			id = fmt.Sprint("id-", w.next)
			w.next++
		}
		if w.stored[id] || seen[id] {
			dups++
		}
		seen[id] = true
		b.Rollouts = append(b.Rollouts, Rollout{Rollout: record.Rollout{Env: "e", Task: fmt.Sprint("t", w.rng.IntN(9)), Reward: 1, RolloutID: id}})
	}
	return b, dups
}

func (w *idWorld) commit(what string, n int) {
	w.t.Helper()
	b, dups := w.batch(n)
	res, err := w.db.Commit(&b)
	if err != nil {
		w.t.Fatal(err)
	}
	if res.Duplicates != dups {
		w.t.Fatalf("%s: %d duplicates, want %d", what, res.Duplicates, dups)
	}
	for _, r := range b.Rollouts {
		w.stored[r.RolloutID] = true
	}
}

// failing commits a batch whose commit fails: its ids must not count as stored.
func (w *idWorld) failing() {
	w.t.Helper()
	b, _ := w.batch(40)
	b.Tasks = []record.Task{{Env: "e", Task: fmt.Sprint("new-", w.next)}}
	bad := errors.New("no")
	b.Adjacency = func(*Reader, []record.Task, []record.Task) ([]NodeEdges, error) { return nil, bad }
	if _, err := w.db.Commit(&b); !errors.Is(err, bad) {
		w.t.Fatalf("failing commit: %v", err)
	}
}

// Commits after Open deduplicate exactly as with the whole index loaded: while the background
// build of the table is held back (each commit scanning id_hashes for its own ids), with
// commits that fail meanwhile, and after the build is adopted with the ids committed since its
// snapshot.
func TestDedupeWhileTheIndexIsBuilt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := &idWorld{t: t, db: db, rng: rand.New(rand.NewPCG(1, 2)), stored: map[string]bool{}}
	for i := range 20 {
		w.commit(fmt.Sprint("before the restart ", i), 200)
	}
	db.Close()
	if w.db, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if w.db != nil {
			w.db.Close()
		}
	}()
	gate := make(chan struct{})
	w.db.ids.gate = gate
	w.commit("first commit after open", 300)
	if w.db.ids.loaded || w.db.ids.bg != nil {
		t.Fatalf("after the first commit: loaded %v, build started %v (want neither)", w.db.ids.loaded, w.db.ids.bg != nil)
	}
	w.failing()
	w.commit("second commit after open", 300)
	if w.db.ids.loaded || w.db.ids.bg == nil {
		t.Fatalf("after the second commit: loaded %v, build started %v", w.db.ids.loaded, w.db.ids.bg != nil)
	}
	for i := range 5 {
		w.commit(fmt.Sprint("while the table is built ", i), 150)
		w.failing()
	}
	if w.db.ids.loaded || len(w.db.ids.pending) == 0 {
		t.Fatalf("the held build was adopted (%v) or no id is pending", w.db.ids.loaded)
	}
	close(gate)
	<-w.db.ids.bg.done
	w.commit("the commit that adopts the table", 300)
	if !w.db.ids.loaded {
		t.Fatal("the finished build was not adopted")
	}
	for i := range 3 {
		w.commit(fmt.Sprint("after ", i), 150)
		w.failing()
	}
	w.db.Close()
	if w.db, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	w.commit("after a second restart, the build not held", 300)
	if err := w.db.StoreAnswer("a", 1, []byte("{}"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if w.db.ids.loaded || w.db.ids.bg == nil {
		t.Fatalf("after the first answer: loaded %v, build started %v", w.db.ids.loaded, w.db.ids.bg != nil)
	}
	<-w.db.ids.bg.done
	for i := range 3 {
		w.commit(fmt.Sprint("after the answer ", i), 150)
	}
	if !w.db.ids.loaded {
		t.Fatal("the build started by the answer was not adopted")
	}
	if err := w.db.Check(""); err != nil {
		t.Fatal(err)
	}
}
