package storage

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBindExchange: a database records the exchange directory it is opened for; it opens again
// for the same folder under another path, for a folder it lies in (moved with it), and for any
// folder that is the recorded one moved; it is refused for another folder, whether the recorded
// one is still there or gone.
func TestBindExchange(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(base, "x.db")
	open := func(dir, path string) error {
		db, err := Open(path, Options{ExchangeDir: dir})
		if err == nil {
			err = db.Close()
		}
		return err
	}
	if err := open(a, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	if err := open(filepath.Join(base, "link"), path); err != nil {
		t.Errorf("the same folder through a link: %v", err)
	}
	if err := open(a+"/.", path); err != nil {
		t.Errorf("the same folder as a/.: %v", err)
	}
	err := open(b, path)
	var other *OtherExchangeError
	if !errors.As(err, &other) || !errors.Is(err, ErrOtherExchange) || other.Stored != a {
		t.Fatalf("another folder: %v; want an OtherExchangeError naming %s", err, a)
	}
	db, err := Open(path, Options{ReadOnly: true, ExchangeDir: b})
	if err != nil {
		t.Fatalf("a reader: %v", err)
	}
	db.Close()
	// Inside b, the database is b's: moved with it.
	inB := filepath.Join(b, "envsched.db")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inB, data, 0o600); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	db, err = Open(inB, Options{ExchangeDir: b, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Errorf("a database inside the folder: %v", err)
	} else {
		db.Close()
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "a copy?") {
		t.Errorf("a copy of the folder (the recorded one still there) is not warned of: %s", logged.String())
	}
	// a gone: its database serves wherever a went.
	if err := os.Rename(a, filepath.Join(base, "c")); err != nil {
		t.Fatal(err)
	}
	if err := open(filepath.Join(base, "c"), path); err != nil {
		t.Errorf("the folder moved: %v", err)
	}
	if db, err = Open(path, Options{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ExchangeDir(); got != filepath.Join(base, "c") {
		t.Errorf("recorded %q after the move, want %q", got, filepath.Join(base, "c"))
	}
	db.Close()
	// c deleted (its run over): another folder is not c moved, and is refused saying so (review13:
	// it was given the database, and answered its first request with c's stored batch).
	if err := os.RemoveAll(filepath.Join(base, "c")); err != nil {
		t.Fatal(err)
	}
	other = nil
	if err := open(b, path); !errors.As(err, &other) || !other.Gone || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("another folder after the recorded one was deleted: %v; want an OtherExchangeError saying it is gone", err)
	}
	// a folder made again at the recorded path is not refused (a restart at the same path must
	// not be), but is warned of
	if err := os.Mkdir(filepath.Join(base, "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	logged.Reset()
	db, err = Open(path, Options{ExchangeDir: filepath.Join(base, "c"), Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	if err != nil {
		t.Fatalf("the recorded path made again: %v", err)
	}
	db.Close()
	if dirID(filepath.Join(base, "c")) != "" && !strings.Contains(logged.String(), "made again?") {
		t.Errorf("a folder made again at the recorded path is not warned of: %s", logged.String())
	}
}

// TestBindExchangeLinkToAnotherFolder: the recorded folder's path made a symbolic link to
// another folder (the folder moved away, a link to another exchange directory put in its
// place) was taken for the same folder under another path, as the link leads to it: the
// database served the other folder, its rollouts counted into these statistics (hostile14a).
// It is refused now, by the folder's identity; the recorded folder moved and linked back from
// its old path is still the same folder.
func TestBindExchangeLinkToAnotherFolder(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if dirID(a) == "" {
		t.Skip("no folder identity on this filesystem")
	}
	path := filepath.Join(base, "x.db")
	open := func(dir string) error {
		db, err := Open(path, Options{ExchangeDir: dir})
		if err == nil {
			err = db.Close()
		}
		return err
	}
	if err := open(a); err != nil {
		t.Fatal(err)
	}
	// a moved and linked back: the same folder
	if err := os.Rename(a, filepath.Join(base, "a.moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "a.moved"), a); err != nil {
		t.Fatal(err)
	}
	if err := open(a); err != nil {
		t.Errorf("the folder moved and linked back from its path: %v", err)
	}
	// a's path now a link to b, another folder
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b, a); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{a, b} {
		var other *OtherExchangeError
		if err := open(dir); !errors.As(err, &other) {
			t.Errorf("--dir %s, a's path a link to b: %v; want an OtherExchangeError", dir, err)
		}
	}
}
