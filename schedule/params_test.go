package schedule_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
)

// NewIngester is the ingester of the daemon and the commands: it reads parquet catalogues and
// stores the graph edges of the tasks it adds in the same commit.
func TestNewIngesterReadsParquetAndKeepsEdges(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "catalog"), 0o755); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Env   string   `parquet:"env"`
		Task  string   `parquet:"task_id"`
		Text  string   `parquet:"text"`
		Tools []string `parquet:"tools,list"`
	}
	rows := []row{
		{"shop", "1", "cancel the pending order and refund the gift card", []string{"cancel_order"}},
		{"shop", "2", "cancel the pending order and refund the gift card please", []string{"cancel_order"}},
		{"shop", "3", "book a flight to paris in economy class", []string{"book_flight"}},
	}
	if err := parquet.WriteFile(filepath.Join(dir, "catalog", "tasks.parquet"), rows); err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(filepath.Join(t.TempDir(), "envsched.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in, err := schedule.NewIngester(db, dir, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := in.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.NewTasks != 3 {
		t.Fatalf("summary %s; want 3 new tasks from the parquet file", sum)
	}
	got := storedEdges(t, db)
	a1, a2 := storage.TaskKey{Env: "shop", Task: "1"}, storage.TaskKey{Env: "shop", Task: "2"}
	if _, ok := got[a1][a2]; !ok {
		t.Fatalf("near-duplicates shop/1 and shop/2 not linked in the stored edges: %v", got)
	}
}

// Configured always predicts with the database's decay, whatever the parameters carry, and
// takes the parameters it is given.
func TestConfiguredTakesTheDatabasesDecay(t *testing.T) {
	db, err := storage.Open(filepath.Join(t.TempDir(), "envsched.db"), storage.Options{Decay: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := schedule.DefaultParams()
	p.Predict.Decay = 0.5
	if _, err := schedule.Configured(db, p, 0, 0, nil); err != nil {
		t.Fatalf("Configured with another decay: %v; want the database's taken", err)
	}
	pp := p.Predict
	if _, err := schedule.New(db, schedule.Options{Predict: &pp}); err == nil {
		t.Fatal("New took a decay other than the database's; the test above proves nothing")
	}
	p.Select.RandomShare = 2
	if _, err := schedule.Configured(db, p, 0, 0, nil); !errors.Is(err, batcher.ErrParams) {
		t.Fatalf("Configured with a random share of 2: %v; want batcher.ErrParams", err)
	}
	if _, err := schedule.Configured(db, schedule.DefaultParams(), schedule.MaxSize+1, 0, nil); err == nil {
		t.Fatal("Configured took a default size above the limit")
	}
}

func TestParamsValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(*schedule.Params)
		want   error
		says   string
	}{
		{"defaults", func(*schedule.Params) {}, nil, ""},
		{"decay is the database's, not checked here", func(p *schedule.Params) { p.Predict.Decay = 7 }, nil, ""},
		{"prediction", func(p *schedule.Params) { p.Predict.Gamma = 2 }, propagate.ErrParams, "gamma"},
		{"selection", func(p *schedule.Params) { p.Select.MaxShare = -1 }, batcher.ErrParams, "max share"},
	}
	for _, c := range cases {
		p := schedule.DefaultParams()
		c.change(&p)
		err := p.Validate()
		if (c.want == nil) != (err == nil) || (c.want != nil && (!errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says))) {
			t.Errorf("%s: %v; want %v naming %q", c.name, err, c.want, c.says)
		}
	}
}

// The bounds of the batch and group sizes, at their edges, and the defaults within them.
func TestSizeBounds(t *testing.T) {
	for _, c := range []struct {
		n           int
		size, group bool
	}{
		{0, false, false}, {-1, false, false}, {1, true, true}, {schedule.MaxGroupSize, true, true},
		{schedule.MaxGroupSize + 1, true, false}, {schedule.MaxSize, true, false}, {schedule.MaxSize + 1, false, false},
	} {
		if schedule.ValidSize(c.n) != c.size || schedule.ValidGroupSize(c.n) != c.group {
			t.Errorf("%d: ValidSize %v, ValidGroupSize %v; want %v, %v", c.n, schedule.ValidSize(c.n), schedule.ValidGroupSize(c.n), c.size, c.group)
		}
	}
	if !schedule.ValidSize(schedule.DefaultSize) || !schedule.ValidGroupSize(schedule.DefaultGroupSize) {
		t.Error("a default out of its bounds")
	}
}
