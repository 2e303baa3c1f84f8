package ingest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/envsched/envsched/storage"
)

// fingerprintLen is how many first bytes identify a file's content, next to its inode.
const fingerprintLen = 64

// ident is a file's identity on its filesystem.
type ident struct{ dev, ino uint64 }

func identOf(fi os.FileInfo) (ident, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ident{}, fmt.Errorf("stat %s: no device and inode on this system", fi.Name())
	}
	return ident{dev: uint64(st.Dev), ino: st.Ino}, nil //nolint:unconvert // Dev is int32 on some systems
}

// registry is the in-memory copy of the tracked files, as read so far (ahead of what is
// committed while a scan runs; reloaded from the database after a failed scan).
type registry struct {
	byID    map[uint64]*storage.FileState
	byIdent map[ident]*storage.FileState  // files not gone
	byPath  map[string]*storage.FileState // files not gone
	nextID  uint64
}

func newRegistry(files []storage.FileState) *registry {
	g := &registry{byID: map[uint64]*storage.FileState{}, byIdent: map[ident]*storage.FileState{},
		byPath: map[string]*storage.FileState{}, nextID: 1}
	for i := range files {
		f := files[i]
		g.byID[f.ID] = &f
		if f.ID >= g.nextID {
			g.nextID = f.ID + 1
		}
		if !f.Gone {
			g.byIdent[identOfState(&f)] = &f
			g.byPath[f.Path] = &f
		}
	}
	return g
}

func identOfState(f *storage.FileState) ident { return ident{f.Dev, f.Ino} }

// change says what resolve did, for the log.
type change uint8

const (
	changeNone    change = iota
	changeNew            // a file not tracked before
	changeRenamed        // a tracked file (same device and inode) found under a new path
)

// resolve returns the tracked state of the file found at rel with identity id, applying the
// identity rules: the same device and inode is the same file, wherever it now is in the folder
// (a rename keeps its place); another identity at a tracked path is a new file. The file that
// was at the path is not marked gone here: it may have been renamed to a path not seen yet. A
// full scan marks gone the files whose identity it did not find anywhere. Files marked gone
// (a tracked identity found with another kind) are appended to gone.
func (g *registry) resolve(rel string, kind storage.FileKind, id ident, gone []*storage.FileState) (*storage.FileState, change, []*storage.FileState) {
	f := g.byIdent[id]
	if f != nil && f.Kind == kind {
		if f.Path == rel {
			return f, changeNone, gone
		}
		if g.byPath[f.Path] == f {
			delete(g.byPath, f.Path)
		}
		f.Path = rel
		g.byPath[rel] = f
		return f, changeRenamed, gone
	}
	if f != nil {
		gone = append(gone, g.markGone(f))
	}
	f = &storage.FileState{ID: g.nextID, Kind: kind, Path: rel, Dev: id.dev, Ino: id.ino}
	g.nextID++
	g.byID[f.ID], g.byIdent[id], g.byPath[rel] = f, f, f
	return f, changeNew, gone
}

func (g *registry) markGone(f *storage.FileState) *storage.FileState {
	f.Gone = true
	if g.byIdent[identOfState(f)] == f {
		delete(g.byIdent, identOfState(f))
	}
	if g.byPath[f.Path] == f {
		delete(g.byPath, f.Path)
	}
	return f
}

// newGeneration applies the content rules to f, given the file's size and first bytes: a file
// that is shorter than what was read of it, or whose first bytes differ from those seen (on the
// length both know), is a new file in the same place and is read again from offset 0.
func newGeneration(f *storage.FileState, size int64, head []byte) bool {
	n := min(len(f.Fingerprint), len(head))
	if size < f.Offset || !bytes.Equal(f.Fingerprint[:n], head[:n]) {
		f.Generation++
		f.Offset = 0
		f.Fingerprint = head
		return true
	}
	if len(head) > len(f.Fingerprint) {
		f.Fingerprint = head
	}
	return false
}

// readHead returns the first bytes of f (up to fingerprintLen), in a new slice.
func readHead(f *os.File, size int64) ([]byte, error) {
	head := make([]byte, min(size, fingerprintLen))
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return head[:n], nil
}
