package ingest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/envsched/envsched/storage"
)

// Files and folders that cannot be read (permission denied, a path longer than the system's
// limit, an I/O error on one entry) never stop a scan: a trainer's folder may hold anything.
//
// A listed file that cannot be opened is logged once per process and quarantined once per path
// and reason (one entry with offset 0 and the reason, file id 0: nothing of it was read; a
// restart does not add another, see quarantineOnce); every scan tries it again, and
// once it opens it is read from where its committed offset says, so nothing is lost. A folder
// that cannot be listed is logged once per process and skipped; the files tracked under it are
// not marked gone (they may be there, unreadable for now).

// ReasonUnreadable starts the quarantine reason of a file that cannot be opened.
const ReasonUnreadable = "cannot open the file"

// problems remembers, per path relative to the exchange directory, the fault last reported for
// it, so that each is logged (or quarantined) once until it changes or clears.
type problems map[string]string

// report records fault for rel and reports whether it is new.
func (p problems) report(rel, fault string) bool {
	if p[rel] == fault {
		return false
	}
	p[rel] = fault
	return true
}

// clear forgets rel (it could be read again).
func (p problems) clear(rel string) {
	if len(p) > 0 {
		delete(p, rel)
	}
}

// unreadable handles a listed file that could not be opened: a quarantine entry and a log line
// the first time (per process, per fault), nothing afterwards. The file is not marked gone: its
// identity is still in the folder.
func (r *run) unreadable(c candidate, err error) {
	reason := fmt.Sprintf("%s: %s; it is read as soon as envsched can open it (give the user that runs "+
		"envsched read permission)", ReasonUnreadable, errText(err))
	if !r.in.faults.report(c.rel, reason) {
		return
	}
	r.in.opts.Logger.Warn("file cannot be read; it is retried at every scan", "path", c.rel, "err", err)
	if r.in.quarantineOnce(c.rel, reason) {
		r.batch.Quarantine = append(r.batch.Quarantine, storage.QuarantineEntry{Path: c.rel, Reason: reason})
		r.records++
	}
}

// skipFolder handles a folder (or entry) that a listing could not read: a log line the first
// time, and the folder's relative path in skipped, so that no tracked file under it is marked
// gone.
func (in *Ingester) skipFolder(rel string, err error) {
	if !in.underSkipped(rel) {
		in.skipped = append(in.skipped, rel)
	}
	if in.faults.report(rel, errText(err)) {
		in.opts.Logger.Warn("folder cannot be listed; the files in it are not read", "path", rel, "err", err)
	}
}

// underSkipped reports whether rel lies in (or is) a folder the last listing could not read.
func (in *Ingester) underSkipped(rel string) bool {
	for _, s := range in.skipped {
		if rel == s || strings.HasPrefix(rel, s+"/") {
			return true
		}
	}
	return false
}

// errText is the cause of a path error without the path (the path is logged beside it).
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// openable reports whether an open error is the file's own fault (permission, a name too long,
// an I/O error on it) rather than the file being gone.
func openable(err error) bool { return !errors.Is(err, os.ErrNotExist) }

// forgetRefusals forgets which files were refused, quarantined or logged as unreadable, after a
// scan that failed: their quarantine entries may have been in a batch that never committed, and
// quarantineOnce, which marks a file as it queues its entry, would otherwise never queue it
// again while the process lives. The next refusal reads the quarantine again; a file is logged
// again once.
func (in *Ingester) forgetRefusals() {
	in.held = nil
	clear(in.refused)
	clear(in.faults)
}

// quarantineOnce reports whether a file refused or unopenable for reason has no quarantine
// entry yet (file id 0, same path and reason), and remembers that it has one from now on: a FIFO
// that stays in the folder, or a file that stays unreadable, is counted once, not once more at
// every restart. The first call in a process reads the whole quarantine once (only in a folder
// that holds such a file); a database that cannot be read here counts the file anew rather than
// stopping the scan.
func (in *Ingester) quarantineOnce(rel, reason string) bool {
	if in.held == nil {
		in.held = map[string]bool{}
		err := in.db.View(func(r *storage.Reader) error {
			return r.Quarantine(func(q storage.QuarantineEntry) error {
				if q.File == 0 {
					in.held[q.Path+"\x00"+q.Reason] = true
				}
				return nil
			})
		})
		if err != nil {
			in.opts.Logger.Warn("cannot read the quarantine; a refused file may be counted again", "err", err)
		}
	}
	key := rel + "\x00" + reason
	if in.held[key] {
		return false
	}
	in.held[key] = true
	return true
}
