package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOtherFoldersDatabaseThroughALinkIsRefused: B/envsched.db a symbolic or hard link to
// A/envsched.db was taken for a copy of A's database inside B (as after `cp -a A B`), bound to B
// with a warning, and B's request step-000001 was answered with A's stored batch (A's tasks),
// both folders' rollouts counting in one set of statistics, the binding going back and forth
// with each start. It is A's own database: refused as another folder's. A real copy is still
// taken for one.
func TestOtherFoldersDatabaseThroughALinkIsRefused(t *testing.T) {
	for _, kind := range []string{"symbolic", "hard"} {
		t.Run(kind, func(t *testing.T) {
			base := t.TempDir()
			a, b := filepath.Join(base, "A"), filepath.Join(base, "B")
			for _, d := range []string{a, b} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			inA, inB := filepath.Join(a, "envsched.db"), filepath.Join(b, "envsched.db")
			db, err := Open(inA, Options{ExchangeDir: a})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			link := os.Link
			if kind == "symbolic" {
				link = func(_, n string) error { return os.Symlink("../A/envsched.db", n) }
			}
			if err := link(inA, inB); err != nil {
				t.Fatal(err)
			}
			db, err = Open(inB, Options{ExchangeDir: b})
			if err == nil {
				db.Close()
			}
			var other *OtherExchangeError
			if !errors.As(err, &other) || other.Stored != canonicalDir(a) {
				t.Fatalf("B/envsched.db a %s link to A's database: %v; want an OtherExchangeError naming %s", kind, err, a)
			}
			if db, err = Open(inA, Options{ExchangeDir: a}); err != nil {
				t.Fatalf("A's database for A after the refusal: %v", err)
			}
			db.Close()
			// a real copy in B is still taken for A copied
			if err := os.Remove(inB); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(inA)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(inB, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if db, err = Open(inB, Options{ExchangeDir: b}); err != nil {
				t.Fatalf("a copy of A's database in B: %v", err)
			}
			db.Close()
		})
	}
}
