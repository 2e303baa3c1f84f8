package storage

import (
	"reflect"
	"testing"
)

// TestFileStateOlderLayouts: a file state stored by an older build (before Tail and Birth, before
// Quarantined, before Ctime and Digest, before InLongLine) decodes with the fields it has and the
// later ones zero; the current layout round-trips every field. A state decoded wrongly would make
// ingest read a file again from its start (its rollouts counted again where they carry no
// rollout_id) or skip bytes.
func TestFileStateOlderLayouts(t *testing.T) {
	full := FileState{ID: 7, Kind: KindCatalog, Gone: true, Dev: 2049, Ino: 1 << 40, Offset: 1 << 33,
		Generation: 3, Size: 1<<33 + 5, ModTime: -12, Fingerprint: []byte("head"), Path: "catalog/x.parquet",
		Tail: []byte("tail\n"), Birth: 99, Quarantined: 1000, Ctime: 1_700_000_000_000_000_001,
		Digest: []byte("0123456789abcdef0123456789abcdef"), InLongLine: true}
	base := func() enc {
		f := full
		return enc(nil).u64(f.ID).u8(uint8(f.Kind)).u8(1).uvar(f.Dev).uvar(f.Ino).
			svar(f.Offset).svar(f.Generation).svar(f.Size).svar(f.ModTime).bytes(f.Fingerprint).str(f.Path)
	}
	upTo := func(f FileState, layout int) FileState {
		if layout < 4 {
			f.InLongLine = false
		}
		if layout < 3 {
			f.Ctime, f.Digest = 0, nil
		}
		if layout < 2 {
			f.Quarantined = 0
		}
		if layout < 1 {
			f.Tail, f.Birth = nil, 0
		}
		return f
	}
	layouts := [][]byte{
		base(),
		base().bytes(full.Tail).svar(full.Birth),
		base().bytes(full.Tail).svar(full.Birth).svar(full.Quarantined),
		base().bytes(full.Tail).svar(full.Birth).svar(full.Quarantined).svar(full.Ctime).bytes(full.Digest),
		encodeFile(full),
	}
	for i, b := range layouts {
		got, err := decodeFile(b)
		if want := upTo(full, i); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("layout %d: %+v, %v; want %+v", i, got, err, want)
		}
	}
	// A line-by-line file (no digest) and a file not in a long line round-trip as such.
	plain := upTo(full, 2)
	if got, err := decodeFile(encodeFile(plain)); err != nil || !reflect.DeepEqual(got, plain) {
		t.Errorf("no digest: %+v, %v; want %+v", got, err, plain)
	}
	// Cut short inside the new fields: an error, not a state with made-up values.
	cur := encodeFile(full)
	if _, err := decodeFile(cur[:len(cur)-10]); err == nil {
		t.Error("a state cut inside its digest decoded without error")
	}
}
