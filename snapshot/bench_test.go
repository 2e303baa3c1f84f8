package snapshot_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/envsched/envsched/report/reporttest"
	"github.com/envsched/envsched/snapshot"
	"github.com/envsched/envsched/storage"
)

// BenchmarkSnapshot reads a held database through the daemon's copy, end to end (request,
// copy, fsync, rename, open), beside a private copy of a free database.
func BenchmarkSnapshot(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "envsched.db")
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := reporttest.Generate(db, reporttest.Options{Envs: 5, Tasks: 400, Steps: 200, BatchSize: 64, GroupSize: 8}); err != nil {
		b.Fatal(err)
	}
	fi, _ := os.Stat(path)
	open := func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			r, err := snapshot.Open(context.Background(), dir, path, snapshot.Options{PollInterval: time.Millisecond})
			if err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/open")
	}
	b.Run("daemon-copy", func(b *testing.B) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { snapshot.Serve(ctx, db, dir, snapshot.ServeOptions{PollInterval: time.Millisecond}) })
		defer func() { cancel(); wg.Wait() }()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(snapshot.Dir(dir)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("Serve did not create the snapshot folder")
			}
		}
		open(b)
	})
	db.Close()
	b.Run("private-copy", open)
}
