package ingest

import (
	"testing"

	"github.com/envsched/envsched/storage"
)

// TestRenumberedDeviceKeepsTheFile: a tracked file (live, or a tombstone left while its
// filesystem was unmounted) found at its path with its inode and birth time on a device of
// another number is the same file, moved to its new identity; another birth time, another
// inode or another kind is another file.
func TestRenumberedDeviceKeepsTheFile(t *testing.T) {
	const path = "rollouts/a.jsonl"
	for _, gone := range []bool{false, true} {
		g := newRegistry([]storage.FileState{{ID: 1, Kind: storage.KindRollouts, Path: path, Dev: 10, Ino: 5,
			Birth: 77, Offset: 300, Gone: gone}})
		f, ch, _ := g.resolve(path, storage.KindRollouts, ident{dev: 11, ino: 5}, 77, nil)
		if f.ID != 1 || ch != changeRenumbered || f.Dev != 11 || f.Offset != 300 || f.Gone {
			t.Errorf("gone %v: file %d change %d device %d offset %d gone %v; want file 1 renumbered to 11 at 300",
				gone, f.ID, ch, f.Dev, f.Offset, f.Gone)
		}
		if g.byIdent[ident{11, 5}] != f || g.byIdent[ident{10, 5}] != nil || g.byPath[path] != f || g.gonePath[path] != nil {
			t.Errorf("gone %v: the registry does not hold the file under its new identity alone", gone)
		}
		if f2, ch2, _ := g.resolve(path, storage.KindRollouts, ident{dev: 11, ino: 5}, 77, nil); f2 != f || ch2 != changeNone {
			t.Errorf("gone %v: found again: file %d change %d", gone, f2.ID, ch2)
		}
	}
	for name, tc := range map[string]struct {
		id    ident
		birth int64
		kind  storage.FileKind
	}{
		"another birth time": {ident{11, 5}, 78, storage.KindRollouts},
		"another inode":      {ident{11, 6}, 77, storage.KindRollouts},
		"another kind":       {ident{11, 5}, 77, storage.KindCatalog},
	} {
		g := newRegistry([]storage.FileState{{ID: 1, Kind: storage.KindRollouts, Path: path, Dev: 10, Ino: 5, Birth: 77}})
		if f, ch, _ := g.resolve(path, tc.kind, tc.id, tc.birth, nil); f.ID == 1 || ch != changeNew {
			t.Errorf("%s: file %d change %d; want a new file", name, f.ID, ch)
		}
	}
}
