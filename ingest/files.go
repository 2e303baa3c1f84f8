package ingest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/envsched/envsched/storage"
)

// fingerprintLen is how many bytes identify a file's content: its first bytes (the head) and
// the bytes just before the read position (the tail), next to its device and inode.
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

// birthOf returns the birth time of the open file f (Unix ns), or 0 where the filesystem does
// not keep one. Moving a file keeps it; a file deleted and made again under the same name, even
// when the filesystem gives it the freed inode (ext4 does), has a new one.
func birthOf(f *os.File) int64 {
	var stx unix.Statx_t
	if err := unix.Statx(int(f.Fd()), "", unix.AT_EMPTY_PATH, unix.STATX_BTIME, &stx); err != nil ||
		stx.Mask&unix.STATX_BTIME == 0 {
		return 0
	}
	return stx.Btime.Sec*1e9 + int64(stx.Btime.Nsec)
}

// sameBirth reports whether a tracked state and a file found with birth time birth can be the
// same file: they can unless both birth times are known and differ.
func sameBirth(f *storage.FileState, birth int64) bool {
	return f.Birth == 0 || birth == 0 || f.Birth == birth
}

// stamp is what one stat says about a file's content: when all of it is unchanged, and the
// file was settled (see settleAfter) when it was last checked, the content is taken as unchanged.
type stamp struct {
	size, mtime, ctime int64
}

func stampOf(fi os.FileInfo) stamp {
	s := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return s
}

// settleAfter is how old a file's modification and change times must be, when its content is
// checked, for a later stat with the same times and size to prove the content unchanged. A
// write within the same clock tick as the last one (file times are coarse: a few milliseconds
// on Linux, seconds on some filesystems) leaves the times as they were; a file checked while
// so young is checked again by content (head and tail) every time, until it settles.
const settleAfter = 2 * time.Second

// registry is the in-memory copy of the tracked files, as read so far (ahead of what is
// committed while a scan runs; reloaded from the database after a failed scan).
type registry struct {
	byID     map[uint64]*storage.FileState
	byIdent  map[ident]*storage.FileState  // files not gone
	byPath   map[string]*storage.FileState // files not gone
	gone     map[ident]*storage.FileState  // tombstones: the last file gone with each identity
	gonePath map[string]*storage.FileState // tombstones: the last file gone from each path
	settled  map[uint64]stamp              // files checked by content and settled since, in memory only
	young    map[uint64]youngCheck         // files checked by content and not settled: the stamp then, and when
	nextID   uint64
}

// youngCheck is the stamp a file had when it was checked by content without settling, and when
// (by this process's monotonic clock).
type youngCheck struct {
	stamp stamp
	at    time.Time
}

// steady reports whether the file id, checked by content at now with stamp stp, was checked by
// content with the same stamp at least settle earlier (monotonic clock), and remembers this check
// otherwise. It settles a file whose times are ahead of the clock (the clock set back, a file
// copied with its times from a machine ahead, touch -d): now minus its times stays below
// settleAfter until the clock catches up, so every full scan (every request's barrier) opened
// and checked it again. Two checks settleAfter apart with the same stamp close the same race
// the age does: a write within the tick of the last one came before the later check.
func (g *registry) steady(id uint64, stp stamp, now time.Time, settle time.Duration) bool {
	y, ok := g.young[id]
	if ok && y.stamp == stp && now.Sub(y.at) >= settle {
		delete(g.young, id)
		return true
	}
	if !ok || y.stamp != stp {
		g.young[id] = youngCheck{stamp: stp, at: now}
	}
	return false
}

func newRegistry(files []storage.FileState) *registry {
	g := &registry{byID: map[uint64]*storage.FileState{}, byIdent: map[ident]*storage.FileState{},
		byPath: map[string]*storage.FileState{}, gone: map[ident]*storage.FileState{},
		gonePath: map[string]*storage.FileState{}, settled: map[uint64]stamp{}, young: map[uint64]youngCheck{}, nextID: 1}
	for i := range files {
		f := files[i]
		g.byID[f.ID] = &f
		if f.ID >= g.nextID {
			g.nextID = f.ID + 1
		}
		if f.Gone {
			if old := g.gone[identOfState(&f)]; old == nil || old.ID < f.ID {
				g.gone[identOfState(&f)] = &f
			}
			if old := g.gonePath[f.Path]; old == nil || old.ID < f.ID {
				g.gonePath[f.Path] = &f
			}
			continue
		}
		g.byIdent[identOfState(&f)] = &f
		g.byPath[f.Path] = &f
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
	changeBack           // a file marked gone (a tombstone) found again, under any path
	// changeRenumbered: a tracked file found at its path with its inode (and birth time) on a
	// device of another number: its filesystem mounted again under another device.
	changeRenumbered
)

// resolve returns the tracked state of the file found at rel with identity id, applying the
// identity rules: the same device and inode (and birth time, where the filesystem keeps one)
// is the same file, wherever it now is in the folder
// (a rename keeps its place), and so is a file marked gone that is found again (moved out of
// the folder, or to an ignored name, and back: it resumes where it was). Whether the content
// is still the one read is checked next (checkContent): an identity reused by the filesystem
// for another file fails that check and is read from its start. Another identity at a tracked
// path is a new file. The file that was at the path is not marked gone here: it may have been
// renamed to a path not seen yet; a full scan marks gone the files whose identity it did not find
// anywhere. Files marked gone (a tracked identity found with another kind) are appended to gone.
func (g *registry) resolve(rel string, kind storage.FileKind, id ident, birth int64, gone []*storage.FileState) (*storage.FileState, change, []*storage.FileState) {
	f, ch := g.byIdent[id], changeRenamed
	if f == nil {
		f, ch = g.gone[id], changeBack
	}
	if f == nil {
		if r := g.renumbered(rel, kind, id, birth); r != nil {
			return r, changeRenumbered, gone
		}
	}
	if f != nil && f.Kind == kind && sameBirth(f, birth) {
		if f.Birth == 0 {
			f.Birth = birth
		}
		if f.Path == rel && ch == changeRenamed {
			return f, changeNone, gone
		}
		g.place(f, rel, id)
		return f, ch, gone
	}
	if f != nil && !f.Gone {
		gone = append(gone, g.markGone(f))
	}
	if f != nil && f.Kind != kind {
		// The identity was last tracked as the other kind (a rollout file moved into catalog/,
		// read there as a catalogue file, and moved back): its tombstone of this kind, if it
		// has one, resumes where it was, as a file moved anywhere else and back does. Taken
		// for a new file, it was read again from its start: every rollout counted twice.
		if back := g.goneOfKind(id, kind, birth); back != nil {
			g.place(back, rel, id)
			return back, changeBack, gone
		}
	}
	f = &storage.FileState{ID: g.nextID, Kind: kind, Path: rel, Dev: id.dev, Ino: id.ino, Birth: birth}
	g.nextID++
	g.byID[f.ID] = f
	g.place(f, rel, id)
	return f, changeNew, gone
}

// goneOfKind returns the newest tombstone of identity id and the given kind that a file of birth
// time birth can be, or nil. gone keeps only the newest tombstone of each identity, so the
// older ones are looked for among all files: this happens only when a file is found as another
// kind than it was last tracked as (moved between catalog/ and rollouts/), which is rare.
func (g *registry) goneOfKind(id ident, kind storage.FileKind, birth int64) *storage.FileState {
	var back *storage.FileState
	for _, f := range g.byID {
		if f.Gone && f.Kind == kind && identOfState(f) == id && sameBirth(f, birth) && (back == nil || f.ID > back.ID) {
			back = f
		}
	}
	if back != nil && back.Birth == 0 {
		back.Birth = birth
	}
	return back
}

// renumbered returns the tracked file (live or a tombstone) at path rel that the file found
// there with identity id is, when only the device number differs: the same inode, of the same
// kind, with the same birth time where both are known. A filesystem's device number is not the
// file's: it is given at mount time, so the same disk attached again under another device
// (a cloud volume or USB disk re-attached, a loop device, an NFS, ZFS or overlay mount, which
// get a number of their own at every mount) numbers every file anew. Taken for new files, every
// rollout and catalogue file was read again from its start and each rollout counted twice. The
// state is moved to the new identity and keeps its place; checkContent then checks its bytes as
// for any file found again (other bytes: read from the start). nil when there is none.
func (g *registry) renumbered(rel string, kind storage.FileKind, id ident, birth int64) *storage.FileState {
	f := g.byPath[rel]
	if f == nil {
		f = g.gonePath[rel]
	}
	if f == nil || f.Ino != id.ino || f.Dev == id.dev || f.Kind != kind || !sameBirth(f, birth) {
		return nil
	}
	if old := identOfState(f); !f.Gone && g.byIdent[old] == f {
		delete(g.byIdent, old)
	} else if g.gone[old] == f {
		delete(g.gone, old)
	}
	if f.Birth == 0 {
		f.Birth = birth
	}
	f.Dev = id.dev
	g.place(f, rel, id)
	return f
}

// replacedAt returns the tracked rollout file, not seen gone, that was at path rel, when the
// file found there now has identity id, which no tracked file has: a file written whole and
// renamed over the old one (write .NAME.tmp, then rename; the path was never seen empty), also
// while envsched was stopped. nil when there is none, when it was of another kind, or when
// nothing of it was read. The caller adopts it (adopt) only when the new file's bytes are its
// bytes grown (sameContent) and no tombstone of identity id (ext4 reuses freed inodes) is
// those bytes: the protocol's rule is that only a file that shrinks or whose first bytes change
// is new (version 1, "Rollout records"); taken for a new file, every line it repeats from the
// old one counted twice. A file seen gone (deleted, then made again) stays a new file.
func (g *registry) replacedAt(rel string, kind storage.FileKind, id ident) *storage.FileState {
	if kind != storage.KindRollouts || g.byIdent[id] != nil {
		return nil
	}
	f := g.byPath[rel]
	if f == nil || f.Kind != kind || f.Offset == 0 {
		return nil
	}
	return f
}

// adopt moves the state f to the identity id (and birth time) at path rel: the same file,
// resuming where it was.
func (g *registry) adopt(f *storage.FileState, rel string, id ident, birth int64) {
	if old := identOfState(f); !f.Gone && g.byIdent[old] == f {
		delete(g.byIdent, old)
	} else if g.gone[old] == f {
		delete(g.gone, old)
	}
	if g.gone[id] != nil && g.gone[id] != f {
		delete(g.gone, id) // a tombstone of a file whose inode was reused: it stays in byID
	}
	f.Dev, f.Ino, f.Birth = id.dev, id.ino, birth
	g.place(f, rel, id)
}

// linkedName returns the path and kind under which the file of identity id, found at rel, is
// tracked, when that path still names it: rel is then another hard link to the same file, which
// stays one file under its first name (taken for a rename, it moved between the names at every
// scan, logging each move, and between catalog/ and rollouts/ it was a new file each time, read
// again from its start). Otherwise rel and kind, unchanged.
func (g *registry) linkedName(rel string, kind storage.FileKind, id ident, abs func(string) string) (string, storage.FileKind) {
	f := g.byIdent[id]
	if f == nil || f.Path == rel || f.Gone {
		return rel, kind
	}
	fi, err := os.Lstat(abs(f.Path))
	if err != nil || !fi.Mode().IsRegular() {
		return rel, kind
	}
	if other, err := identOf(fi); err != nil || other != id {
		return rel, kind
	}
	return f.Path, f.Kind
}

// place makes f the live file of identity id at path rel.
func (g *registry) place(f *storage.FileState, rel string, id ident) {
	if !f.Gone && g.byPath[f.Path] == f {
		delete(g.byPath, f.Path)
	}
	if g.gone[id] == f {
		delete(g.gone, id)
	}
	if f.Gone && g.gonePath[f.Path] == f {
		delete(g.gonePath, f.Path)
	}
	f.Gone, f.Path = false, rel
	g.byIdent[id], g.byPath[rel] = f, f
}

// markGone makes f a tombstone: its state (offset, head and tail) is kept, so that the file
// resumes where it was if it comes back.
func (g *registry) markGone(f *storage.FileState) *storage.FileState {
	f.Gone = true
	id := identOfState(f)
	if g.byIdent[id] == f {
		delete(g.byIdent, id)
	}
	if g.byPath[f.Path] == f {
		delete(g.byPath, f.Path)
	}
	if old := g.gone[id]; old == nil || old.ID < f.ID {
		g.gone[id] = f
	}
	if old := g.gonePath[f.Path]; old == nil || old.ID < f.ID {
		g.gonePath[f.Path] = f
	}
	delete(g.settled, f.ID)
	delete(g.young, f.ID)
	return f
}

// unchanged reports whether the file found at rel with identity id and stamp stp is a tracked
// file of that kind and path, read to its end, whose content was checked once it had settled,
// and whose stamp is the same since: there is nothing to read, nor to check.
func (g *registry) unchanged(rel string, kind storage.FileKind, id ident, stp stamp) bool {
	f := g.byIdent[id]
	if f == nil || f.Path != rel || f.Kind != kind || f.Offset != stp.size {
		return false
	}
	s, ok := g.settled[f.ID]
	return ok && s == stp
}

// evidence is what a file holds now where its state says what was read: its size, its first
// bytes, and the bytes just before the state's offset (nil when the file is shorter).
type evidence struct {
	size int64
	head []byte
	tail []byte
}

// readEvidence reads the head of f and the bytes before st.Offset.
func readEvidence(f *os.File, size int64, st *storage.FileState) (evidence, error) {
	ev := evidence{size: size}
	var err error
	if ev.head, err = readAt(f, 0, min(size, fingerprintLen)); err != nil {
		return ev, err
	}
	if n := int64(len(st.Tail)); n > 0 && size >= st.Offset {
		ev.tail, err = readAt(f, st.Offset-n, n)
	}
	return ev, err
}

// readAt returns up to n bytes of f from off, in a new slice.
func readAt(f *os.File, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	k, err := f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return b[:k], nil
}

// sameContent reports whether the file can be the one st describes, grown at most: it is not
// shorter than what was read, its first bytes agree with those seen (on the length both know),
// and the bytes just before the read position are those read there. Anything else is a new
// content (a truncate, a rewrite in place, another file under a reused inode).
func sameContent(st *storage.FileState, ev evidence) bool {
	n := min(len(st.Fingerprint), len(ev.head))
	return ev.size >= st.Offset && bytes.Equal(st.Fingerprint[:n], ev.head[:n]) && bytes.Equal(st.Tail, ev.tail)
}

// checkContent applies the content rules to st, given the evidence: content that is not
// sameContent is a new generation, read again from offset 0 (what was read of the old one
// stays: rollouts are never retracted). It reports whether a new generation began.
func checkContent(st *storage.FileState, ev evidence) bool {
	if !sameContent(st, ev) {
		st.Generation++
		st.Offset, st.InLongLine = 0, false
		st.Fingerprint, st.Tail = ev.head, nil
		return true
	}
	if len(ev.head) > len(st.Fingerprint) {
		st.Fingerprint = ev.head
	}
	return false
}

// unchanged reports whether a listed candidate is a tracked file, at the same path and of the
// same identity, read to its end, whose content was checked once it had settled, and whose
// size, modification time and status change time are those it had then (registry.unchanged):
// nothing new can be in it, and it is not opened (the barrier's cost over many files is one
// lstat each). It marks the file seen. A file not yet settled is opened and checked by content:
// its times may not have moved for a rewrite within the same clock tick.
func (r *run) unchanged(c candidate) bool {
	fi := c.listed
	if fi == nil || !fi.Mode().IsRegular() {
		return false
	}
	id, err := identOf(fi)
	if err != nil || !r.in.reg.unchanged(c.rel, c.kind, id, stampOf(fi)) {
		return false
	}
	r.seen[id] = true
	return true
}
