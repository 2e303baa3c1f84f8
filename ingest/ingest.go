// Package ingest reads the exchange directory's catalogue and rollout files into storage,
// exactly once.
//
// Files are identified by device and inode, checked by a fingerprint of their first bytes; each
// file's read position is committed in the same transaction as the records read up to it (see
// storage.Commit), so a crash at any moment loses nothing and counts nothing twice. Only
// newline-terminated lines are read; the bytes after a file's last newline wait for the next
// scan. Lines are framed and parsed in the calling goroutine while the previous batch commits
// in another, so parsing and fsync overlap.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/envsched/envsched/storage"
)

// Sub-folders of the exchange directory that ingest reads.
const (
	CatalogDir  = "catalog"
	RolloutsDir = "rollouts"
)

// Ingester reads one exchange directory into one database. It is not safe for concurrent use:
// the daemon calls it from its single writing goroutine.
type Ingester struct {
	db   *storage.DB
	dir  string
	opts Options
	reg  *registry
	buf  []byte // read buffer, reused across files

	refused map[string]bool // candidates refused (path and reason) since New: logged once
	// warnedNames are the files of rollouts/ not read though named like rollouts (misnamed),
	// and the subfolders of catalog/ holding files named like catalogues, logged once each
	// since New.
	warnedNames map[string]bool
	// held are the quarantine's entries for whole files (path and reason), loaded at the first
	// refusal (quarantineOnce); nil until then.
	held map[string]bool
	// faults are the unreadable files and folders reported so far; skipped are the folders the
	// last listing could not read (relative, '/' separated).
	faults  problems
	skipped []string
	// wholeKeys are the tasks of each catalogue file read whole (not JSON lines) by this
	// process, by file ID: the list of tasks now (listed) needs them without a second read.
	wholeKeys map[uint64][]storage.TaskKey
	// unreadable are the catalogue files read whole whose last read could not read them as
	// their format (unreadableFile): while one is, listed() holds back the tasks it listed.
	unreadable map[uint64]bool
	// whole notes what else listed() needs of the last read of each file read whole (noteWhole).
	whole map[uint64]wholeNote
	// holding are the catalogue files that hold their tasks back (listed), with why, as last logged.
	holding map[uint64]string
	// listedOnce is true once listed has run in this process: holding is known from then on.
	listedOnce bool
	// hashed says when each catalogue file read whole was last hashed (hashDue).
	hashed map[uint64]hashMark

	// uncatalogued counts the tasks first seen in rollouts of a database with a catalogue since
	// New (logUncatalogued): the first maxLogged are logged one by one.
	uncatalogued int
	// reusedLogs counts the commits since New whose reused rollout ids were logged (logReused).
	reusedLogs int
	// unterminated are the rollout files whose bytes after their last newline were looked at
	// (run.unterminated), by file ID: the file's size then, or -1 once the file was logged.
	unterminated map[uint64]int64

	batches [2]*storage.Batch // reused across scans
	// listsPending is the database's Counters.ListsPending: a scan's commits stored a changed
	// catalogue but not the list of tasks it makes (a crash between them); the next scan makes it.
	listsPending bool
}

// New returns an Ingester of the exchange directory dir into db, with the tracked files loaded
// from db.
func New(db *storage.DB, dir string, opts Options) (*Ingester, error) {
	in := &Ingester{db: db, dir: filepath.Clean(dir), opts: opts.withDefaults(), refused: map[string]bool{},
		faults: problems{}, wholeKeys: map[uint64][]storage.TaskKey{},
		unreadable: map[uint64]bool{}, whole: map[uint64]wholeNote{}, holding: map[uint64]string{}, hashed: map[uint64]hashMark{},
		warnedNames: map[string]bool{}}
	if err := in.reload(); err != nil {
		return nil, err
	}
	return in, nil
}

// reload replaces the in-memory file states by the committed ones.
func (in *Ingester) reload() error {
	files, err := in.db.Files()
	if err != nil {
		return fmt.Errorf("load file states: %w", err)
	}
	in.reg = newRegistry(files)
	c, err := in.db.Counters()
	if err != nil {
		return fmt.Errorf("load counters: %w", err)
	}
	in.listsPending = c.ListsPending
	return nil
}

// Dir is the exchange directory.
func (in *Ingester) Dir() string { return in.dir }

// Scan reads everything new in every catalogue and rollout file, and marks tracked files that
// are no longer there as gone. It returns when every complete line found is committed, when ctx
// is done (between commits: what is committed stays, the rest is read again by the next scan),
// or at the first I/O or database error.
func (in *Ingester) Scan(ctx context.Context) (Summary, error) {
	cands, err := in.walk()
	if err != nil {
		return Summary{}, err
	}
	if in.opts.afterList != nil {
		cands = in.opts.afterList(cands)
	}
	return in.scan(ctx, cands, true)
}

// ScanPaths reads what is new in the given paths only (absolute, or relative to the exchange
// directory; folders are walked): the cheap incremental scan for a watcher's hints. Paths
// outside the catalogue and rollout folders, ignored names and missing files are skipped;
// nothing is marked gone (a file that vanished may have been renamed to a path not in the list:
// the next full Scan decides).
func (in *Ingester) ScanPaths(ctx context.Context, paths []string) (Summary, error) {
	var cands []candidate
	seen := map[string]bool{}
	for _, p := range paths {
		cs, err := in.expand(p)
		if err != nil {
			return Summary{}, err
		}
		for _, c := range cs {
			if !seen[c.rel] {
				seen[c.rel] = true
				cands = append(cands, c)
			}
		}
	}
	return in.scan(ctx, cands, false)
}

// candidate is a file that a scan looks at.
type candidate struct {
	rel  string // relative to the exchange directory, '/' separated
	kind storage.FileKind
	// listed is what the listing of a full scan found (lstat), nil for a hinted path. A full
	// scan reads such a file only up to the size it had then (the barrier is what was written
	// before it started; a torrent written during it waits for the next pass), and skips it
	// without opening it when nothing about it changed since it was last read.
	listed os.FileInfo
	// ownName is set by linkedAcross on the rollouts/ name of a tracked catalogue file that
	// becomes a rollout file: it is read under this name and kind, not the tracked ones.
	ownName bool
}

// ignored reports whether a file or folder name marks an unfinished write.
func ignored(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp")
}

// editorFile reports whether a name in catalog/ is an editor's backup or autosave (Emacs'
// "tasks.jsonl~" and "#tasks.jsonl#"; Vim's swap files begin with a dot already): never a
// catalogue, so neither read nor quarantined as a stray file. Rollout files end in ".jsonl"
// and need no such rule.
func editorFile(name string) bool {
	return strings.HasSuffix(name, "~") || strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#")
}

// classify says whether rel (relative, '/' separated) names a file ingest reads.
func classify(rel string) (storage.FileKind, bool) {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == ".." || ignored(p) {
			return 0, false
		}
	}
	switch {
	case len(parts) == 2 && parts[0] == CatalogDir && !editorFile(parts[1]):
		return storage.KindCatalog, true
	case len(parts) >= 2 && parts[0] == RolloutsDir && strings.HasSuffix(rel, ".jsonl"):
		return storage.KindRollouts, true
	}
	return 0, false
}

// walk lists every candidate file: the catalogue first, so that rollouts of catalogue tasks
// find their metadata in place.
func (in *Ingester) walk() ([]candidate, error) {
	in.skipped = in.skipped[:0]
	var out []candidate
	for _, sub := range []string{CatalogDir, RolloutsDir} {
		cs, err := in.walkDir(filepath.Join(in.dir, sub))
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

func (in *Ingester) walkDir(root string) ([]candidate, error) {
	var out []candidate
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a folder not created yet, or removed while walking
			}
			in.skipFolder(in.relOf(p), err) // unreadable, or a path too long: never a stop
			return nil
		}
		if p != root && ignored(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil // a link to a folder is not a folder here: it is never entered
		}
		rel := in.relOf(p)
		if kind, ok := classify(rel); ok {
			fi, _ := d.Info() // nil when it vanished: the open settles it
			out = append(out, candidate{rel: rel, kind: kind, listed: fi})
		} else {
			in.misnamed(rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	return out, nil
}

// nearMisses are the endings of rollout files written under a name envsched does not read
// (which are ignored, as any other name in rollouts/ is) that are most likely meant as rollouts.
var nearMisses = []string{".json", ".ndjson", ".jsonlines", ".jsonl.gz", ".jsonl.zst", ".jsonl.bz2",
	".jsonl.xz", ".jsonl.lz4", ".jsonl.zip"}

// misnamed logs once, for a file in rollouts/ that is not read, when its name looks like a
// rollout file's all the same (r.json, r.JSONL, r.jsonl.gz): every line of such a file was
// ignored without a word, and a trainer saw its rollouts never count.
func (in *Ingester) misnamed(rel string) {
	top, name := rel, rel
	if i := strings.IndexByte(rel, '/'); i >= 0 {
		top = rel[:i]
	}
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		name = rel[i+1:]
	}
	if top == CatalogDir {
		in.nestedCatalogue(rel, name)
		return
	}
	if top != RolloutsDir || in.warnedNames[rel] {
		return
	}
	lower := strings.ToLower(name)
	// a rotated file too (r.jsonl.1, r.jsonl-20261204: logrotate's names): its lines not read
	// before the rotation are read only once it is named *.jsonl again
	near := strings.HasSuffix(lower, ".jsonl") || strings.Contains(lower, ".jsonl.") || strings.Contains(lower, ".jsonl-")
	for _, suffix := range nearMisses {
		near = near || strings.HasSuffix(lower, suffix)
	}
	if !near {
		return
	}
	in.warnedNames[rel] = true
	in.opts.Logger.Warn("file in rollouts/ not read: rollout files are read only under names ending in .jsonl "+
		"(lower case, uncompressed); rename it to count its lines", "path", rel)
}

// nestedCatalogue logs once per subfolder of catalog/ that holds a file named like a catalogue
// (rel, named name: *.jsonl, *.parquet in any case): catalogue files are read only directly in
// catalog/, and a catalogue put in catalog/v2/ was ignored without a word, its tasks never
// known (tasks first seen in rollouts got no text, tools or embedding).
func (in *Ingester) nestedCatalogue(rel, name string) {
	parts := strings.SplitN(rel, "/", 3)
	lower := strings.ToLower(name)
	if len(parts) < 3 || !strings.HasSuffix(lower, ".jsonl") && !strings.HasSuffix(lower, ".parquet") {
		return
	}
	folder := parts[0] + "/" + parts[1] + "/"
	if in.warnedNames[folder] {
		return
	}
	in.warnedNames[folder] = true
	in.opts.Logger.Warn("folder in catalog/ not read: catalogue files are read only directly in catalog/ "+
		"(no subfolders); move them there to have their tasks", "path", folder, "file", rel)
}

// relOf is p relative to the exchange directory, '/' separated.
func (in *Ingester) relOf(p string) string {
	rel, _ := filepath.Rel(in.dir, p)
	return filepath.ToSlash(rel)
}

// expand turns one hinted path into candidates.
func (in *Ingester) expand(p string) ([]candidate, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(in.dir, p)
	}
	rel, err := filepath.Rel(in.dir, filepath.Clean(p))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, nil
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, nil // gone already; a full scan settles it
	}
	rel = filepath.ToSlash(rel)
	if !in.noLinkAbove(rel) {
		return nil, nil // under a linked folder: never entered
	}
	if fi.IsDir() {
		return in.expandDir(p, rel)
	}
	if kind, ok := classify(rel); ok {
		return []candidate{{rel: rel, kind: kind}}, nil
	}
	if !slices.ContainsFunc(strings.Split(rel, "/"), ignored) {
		in.misnamed(rel) // as a full listing does: hinted alone, such a file was skipped without a word
	}
	return nil, nil
}

// noLinkAbove reports whether no folder on the way from the exchange directory to rel (a
// relative, '/' separated path) is a symbolic link. A full scan never enters a linked folder;
// a hinted path must not lead through one either.
func (in *Ingester) noLinkAbove(rel string) bool {
	parts := strings.Split(rel, "/")
	p := in.dir
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

func (in *Ingester) expandDir(p, rel string) ([]candidate, error) {
	if rel == "." {
		return in.walk()
	}
	top, _, _ := strings.Cut(rel, "/")
	for _, part := range strings.Split(rel, "/") {
		if ignored(part) {
			return nil, nil
		}
	}
	if top != CatalogDir && top != RolloutsDir {
		return nil, nil
	}
	return in.walkDir(p)
}
