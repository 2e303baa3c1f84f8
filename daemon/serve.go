package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/internal/procview"
	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/schedule"
)

// timing is when a request was noticed and how long its barrier took, for the log line of
// its answer.
type timing struct {
	seen    time.Time
	queued  time.Duration // from seen to the start of the barrier
	barrier time.Duration
	choose  time.Duration
}

// handle answers one request file (a name in DIR/requests). It returns whether an answer was
// published. Only failures of envsched are returned; a bad request gets its error file.
func (d *Daemon) handle(name string, tm timing) (bool, error) {
	if fi, err := os.Lstat(d.dirs.requests); err != nil || !fi.IsDir() {
		return false, nil // not a folder (a link to one elsewhere): repairDirs says so; nothing is read
	}
	id, _ := requestID(name)
	// the version that is refused, if it is (see writeRejects)
	read, _ := os.Lstat(filepath.Join(d.dirs.requests, name))
	if !schedule.ValidID(id) { // the protocol's IDs can name nothing but a plain file
		return false, d.reject(id, badIDMessage(id), name, read)
	}
	body, err := readRequest(filepath.Join(d.dirs.requests, name))
	switch {
	case errors.Is(err, errRequestGone):
		return false, nil
	case errors.Is(err, errOwnOutput):
		if d.faults.once(filepath.Join(d.dirs.requests, name), err.Error()) {
			d.log.Warn("request file refused, never answered: it is envsched's own log (its standard output or error)",
				"file", name)
		}
		return false, nil
	case isBadRequest(err):
		return false, d.reject(id, err.Error(), name, read)
	case err != nil:
		return false, err
	}
	if d.settling(name, body, read) {
		return false, nil // an empty file may be a write in progress: answered once left alone
	}
	d.crash.at(CrashBeforeCommit)
	start := time.Now()
	parsed := d.parse(body)
	answer, early, err := d.answerEarly(id, body, parsed)
	tm.choose = time.Since(start)
	if err != nil {
		early.discard()
	}
	if isBadRequest(err) {
		return false, d.reject(id, err.Error(), name, read)
	}
	if err != nil {
		return false, fmt.Errorf("answer request %s: %w", id, err)
	}
	d.crash.at(CrashAfterCommit)
	d.warnIgnored(id, parsed)
	d.warnExcludedUnknown(id, parsed)
	if early == nil { // maybe an answer stored before: the same ID gets it whatever the body says now
		d.warnReused(id, parsed, answer)
		d.warnRetired(id, answer)
	}
	return d.publish(id, answer, tm, early.take(answer))
}

// warnIgnored logs the keys of an answered request's body that are no request field and were
// ignored (schedule.Request.Ignored: the trainer's own bookkeeping, or a field of a newer
// protocol), so that a trainer that meant one of them as a field learns it from the log.
func (d *Daemon) warnIgnored(id string, parsed schedule.Parsed) {
	req, err := parsed.Request, parsed.Err
	if err != nil || len(req.Ignored) == 0 {
		return
	}
	names := make([]string, 0, min(len(req.Ignored), 8))
	for _, k := range req.Ignored[:min(len(req.Ignored), 8)] {
		if r := []rune(k); len(r) > 40 {
			k = string(r[:40]) + "…"
		}
		names = append(names, k)
	}
	d.log.Warn("request keys that are no request field were ignored (the fields are size, group_size, step, envs, exclude_envs, allow_repeats, seed)",
		"id", id, "keys", strings.Join(names, ", "), "count", len(req.Ignored))
}

// warnReused logs a request whose body asks for another size, group size or step than its
// answer has: an ID answered before and written again with another body gets the stored answer
// (the same ID always gets the same answer), which the trainer may not expect. A new answer
// always agrees with its body, so calling it for one says nothing.
func (d *Daemon) warnReused(id string, parsed schedule.Parsed, answer []byte) {
	sum := summarise(answer)
	req, err := parsed.Request, parsed.Err
	if err == nil && req.Size == sum.Size && req.GroupSize == sum.GroupSize && (req.Step == nil || *req.Step == sum.Step) {
		return
	}
	asked := "a body that is not a valid request"
	if err == nil {
		asked = fmt.Sprintf("size %d, group_size %d", req.Size, req.GroupSize)
		if req.Step != nil {
			asked += fmt.Sprintf(", step %d", *req.Step)
		}
	}
	d.log.Warn("request ID answered before and written again with another body: its stored answer stands "+
		"(the same ID always gets the same answer); write a new ID for a new batch", "id", id, "asked", asked,
		"answer", fmt.Sprintf("size %d, group_size %d, step %d", sum.Size, sum.GroupSize, sum.Step))
}

// EnvChecker is an Answerer that can tell which environment names the database does not know
// (schedule.Scheduler).
type EnvChecker interface {
	UnknownEnvs(names []string) (map[string]string, error)
}

// warnExcludedUnknown logs, once per name while the daemon runs, an exclude_envs name that is no
// environment envsched knows: it excludes nothing, as PROTOCOL.md says (a trainer may exclude an
// environment before its tasks are in the catalogue), but a misspelt held-out environment
// (`tau2-retial`) was trained on without a word. The log names the environment it is likely a
// typo of.
func (d *Daemon) warnExcludedUnknown(id string, parsed schedule.Parsed) {
	ec, ok := d.answer.(EnvChecker)
	if !ok || parsed.Err != nil || len(parsed.Request.ExcludeEnvs) == 0 {
		return
	}
	var fresh []string
	for _, n := range parsed.Request.ExcludeEnvs {
		if _, seen := d.faults["exclude_envs\x00"+n]; !seen {
			fresh = append(fresh, n)
		}
	}
	if len(fresh) == 0 {
		return
	}
	unknown, err := ec.UnknownEnvs(fresh)
	if err != nil {
		return
	}
	for _, n := range fresh {
		near, ok := unknown[n]
		if !ok || !d.faults.once("exclude_envs\x00"+n, "unknown") {
			continue
		}
		if r := []rune(n); len(r) > 100 {
			n = string(r[:100]) + "…"
		}
		args := []any{"id", id, "name", n}
		if near != "" {
			args = append(args, "did_you_mean", near)
		}
		d.log.Warn("exclude_envs names no environment envsched knows, so it excludes nothing (said once per name): "+
			"if it is a held-out environment, write its name as the catalogue does", args...)
	}
}

// RetiredCounter is an Answerer that can count the tasks of an answer no catalogue lists now
// (schedule.Scheduler).
type RetiredCounter interface {
	RetiredIn(answer []byte) (retired, total int, err error)
}

// warnRetired logs a stored answer served again whose tasks no catalogue file lists any more:
// the trainer gets tasks it did not offer. The usual cause is a new run in an old DIR (the
// folders emptied, envsched.db kept, or ENVSCHED_DB pointing at another run's database), whose
// trainer starts its request IDs again at 000001 and got the old run's batches without a word.
// A new answer never holds a retired task, so calling it for one says nothing.
func (d *Daemon) warnRetired(id string, answer []byte) {
	rc, ok := d.answer.(RetiredCounter)
	if !ok {
		return
	}
	retired, total, err := rc.RetiredIn(answer)
	if err != nil || retired == 0 {
		return
	}
	d.log.Warn("request ID answered before gets its stored answer, whose tasks no catalogue file lists now "+
		"(the same ID always gets the same answer): if this is a new run in an old exchange directory, its "+
		"database holds the earlier run's answers; stop envsched and delete the database (DIR/envsched.db, or --db), "+
		"or give the new run's requests new IDs (another prefix)", "id", id, "retired_tasks", retired, "tasks", total,
		"step", summarise(answer).Step)
}

// publish writes the answer as DIR/batches/ID.json unless that file already holds it, and
// removes an error file left by an earlier, bad version of the request. file, when not nil,
// is the answer's temporary batch file written already (see EarlyAnswerer): publish renames it
// into place, or removes it when the answer is not to be written.
func (d *Daemon) publish(id string, answer []byte, tm timing, file *fsutil.Prepared) (bool, error) {
	path := filepath.Join(d.dirs.batches, batchFileName(id))
	if sameContent(path, answer) || !d.canPublish(batchFileName(id)) {
		file.Discard()
		return false, nil // stored: published by a later sweep once it can be
	}
	start := time.Now()
	if err := publishBatch(d.dirs.batches, batchFileName(id), answer, file, &d.crash); err != nil {
		return false, d.published(path, err) // nil when the trainer's doing: a later sweep tries again
	}
	d.published(path, nil)
	published := time.Since(start)
	if err := d.removeErrorFile(id); err != nil {
		return false, d.published(filepath.Join(d.dirs.batches, errorFileName(id)), err)
	}
	sum := summarise(answer)
	d.log.Info("answered", "id", id, "size", sum.Size, "ms", time.Since(tm.seen).Milliseconds(),
		"rollouts_seen", sum.RolloutsSeen, "queue_ms", tm.queued.Milliseconds(), "barrier_ms", tm.barrier.Milliseconds(),
		"choose_ms", tm.choose.Milliseconds(), "publish_ms", published.Milliseconds())
	d.observeRequest(time.Since(tm.seen))
	return true, nil
}

func (d *Daemon) removeErrorFile(id string) error {
	err := os.Remove(filepath.Join(d.dirs.batches, errorFileName(id)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove stale error file of %s: %w", id, err)
	}
	return fsutil.SyncDir(d.dirs.batches)
}

// reject logs a refused request and queues DIR/batches/ID.error.json (unless the file already
// says the same and was written after this version of the request) for writeRejects. An ID
// that cannot be a file name gets the log line only. name is the request file, read its status
// before it was read (nil when unknown).
//
// An error file that says the same but is older than the request is written again: a bad
// request rewritten with the same body (a retry, a touch) is otherwise pending for good
// (needsAnswer), and every sweep read it, refused it and logged it again, without end.
func (d *Daemon) reject(id, msg, name string, read os.FileInfo) error {
	errName := errorFileName(id)
	d.log.Warn("bad request", "id", id, "error", msg)
	if read != nil {
		if d.refused == nil {
			d.refused = map[string]os.FileInfo{}
		}
		d.refused[name] = read
	}
	if !safeName(errName) {
		return nil
	}
	body := errorFile(id, msg)
	path := filepath.Join(d.dirs.batches, errName)
	if sameContent(path, body) && !olderThan(path, read) || !d.canPublish(errName) {
		return nil
	}
	d.rejects = append(d.rejects, rejected{fsutil.File{Name: errName, Data: body}, name, read})
	return nil
}

// rejected is a queued error file and the request it answers, as it was when read.
type rejected struct {
	file    fsutil.File
	request string      // the request file's name in DIR/requests
	read    os.FileInfo // its status before it was read; nil: unknown
}

// rewritten reports whether the request of r was replaced, changed or removed since it was
// read. Its error file is then not written: it would be newer than the new version, which
// needsAnswer would then take as refused already (the new version is served when its own
// change is handled, or by the next sweep).
func (d *Daemon) rewritten(r rejected) bool {
	if r.read == nil {
		return false
	}
	now, err := os.Lstat(filepath.Join(d.dirs.requests, r.request))
	return err != nil || !sameVersion(r.read, now)
}

// sameVersion reports whether a and b are the status of one version of a file: the same file,
// not changed or renamed in between, of the same size.
func sameVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && changedAt(a).Equal(changedAt(b)) && a.Size() == b.Size()
}

// writeRejects writes the queued error files, each atomically and durably as every answer is,
// with their fsyncs overlapped and one fsync of DIR/batches for all (fsutil.WriteFilesAtomic):
// 20,000 bad requests cost a few file-system commits, not 40,000. The error file of a request
// rewritten since it was read is left out (see rewritten): the pass may have taken seconds.
func (d *Daemon) writeRejects() error {
	var files []fsutil.File
	for _, r := range d.rejects {
		if !d.rewritten(r) {
			files = append(files, r.file)
		}
	}
	d.rejects = nil
	for i, err := range fsutil.WriteFilesAtomic(d.dirs.batches, files, 0o644) {
		if err := d.published(filepath.Join(d.dirs.batches, files[i].Name), err); err != nil {
			return err
		}
	}
	return nil
}

// canPublish reports whether name can be written in DIR/batches now (the folder is there or
// could be made again, and name is free or a plain file).
func (d *Daemon) canPublish(name string) bool {
	return d.repairDirs() && d.plainTarget(d.dirs.batches, name)
}

// sweepRequests serves, behind the barrier, every request file with neither a batch file nor
// a newer error file (a batch file that went missing is written again from the database).
func (d *Daemon) sweepRequests(ctx context.Context) error {
	d.repairDirs()
	d.warnStrayFolders()
	seen := time.Now()
	todo, err := d.pendingRequests()
	if err != nil || len(todo) == 0 {
		return err
	}
	return d.answerAll(ctx, todo, seen)
}

// pendingRequests lists the request files that need an answer.
func (d *Daemon) pendingRequests() ([]string, error) {
	names, near, err := listRequests(d.dirs.requests)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) ||
		errors.Is(err, fs.ErrPermission) {
		if errors.Is(err, fs.ErrPermission) && d.faults.once(d.dirs.requests+" listing", errText(err)) {
			d.log.Error("cannot list requests; serving goes on, and they are answered once the folder can be read",
				"path", d.dirs.requests, "err", err)
		}
		d.repairDirs() // removed (made again and watched: requests come again), not a folder, a link, locked
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	delete(d.faults, d.dirs.requests+" listing")
	for _, name := range near {
		if strings.HasSuffix(name, "/") {
			if d.faults.once(filepath.Join(d.dirs.requests, name), "a subfolder") {
				d.log.Warn("folder in requests/ is never read: a request is requests/ID.json, directly in "+
					"requests/ (no subfolders); write the requests there", "path", "requests/"+name)
			}
			continue
		}
		if d.faults.once(filepath.Join(d.dirs.requests, name), "not a request") {
			d.log.Warn("file in requests/ is not a request and is never answered: a request is "+
				"requests/ID.json (the name ending in lower-case .json); rename it", "path", "requests/"+name)
		}
	}
	return slices.DeleteFunc(names, func(name string) bool { return !d.needsAnswer(name) }), nil
}

// needsAnswer reports whether a request file has no batch file, and no error file written
// after the request. Only regular files count as answers: with a FIFO (or a link, a folder) under
// an answer's name the request stays pending, and canPublish leaves that name alone until the
// trainer removes what is there.
//
// File times move by the kernel's clock tick (a few milliseconds), so a request fixed and
// renamed into place within the tick its error file was written in has the error file's very
// time: it was taken as refused already and never answered (a trainer that rewrites a request
// as soon as it reads the error does that; the daemon's own test did, once under load). On a
// tie the version this process refused tells: another one, or one refused before a restart, is
// read (again: a bad one is refused without writing its error file again).
func (d *Daemon) needsAnswer(name string) bool {
	id, _ := requestID(name)
	// Only a valid ID has an answer file: ID.json of an invalid one (`a.error`) is another
	// request's error file (a's), which took it for answered: it never got its own.
	if fi, err := os.Lstat(filepath.Join(d.dirs.batches, batchFileName(id))); err == nil && fi.Mode().IsRegular() &&
		schedule.ValidID(id) {
		return false
	}
	req, err := os.Lstat(filepath.Join(d.dirs.requests, name))
	if err != nil {
		return false
	}
	efi, err := os.Lstat(filepath.Join(d.dirs.batches, errorFileName(id)))
	if err != nil || !efi.Mode().IsRegular() {
		return true
	}
	switch at := changedAt(req); {
	case at.After(efi.ModTime()):
		return true
	case at.Equal(efi.ModTime()):
		prev, ok := d.refused[name]
		return !ok || !sameVersion(prev, req)
	}
	return false
}

// olderThan reports whether the file at path was last written before request (its status
// before it was read; nil: unknown, never older) last changed, as needsAnswer compares them.
func olderThan(path string, request os.FileInfo) bool {
	fi, err := os.Lstat(path)
	return request != nil && err == nil && changedAt(request).After(fi.ModTime())
}

// changedAt is when a file was last written or renamed (its status change time): a request
// fixed in a temporary file before the error file appeared, then renamed into place, is new.
func changedAt(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return fi.ModTime()
}

// summary is what the log says of an answer.
type summary struct {
	Size         int   `json:"size"`
	GroupSize    int   `json:"group_size"`
	Step         int64 `json:"step"`
	RolloutsSeen int64 `json:"rollouts_seen"`
}

// summarise reads size and rollouts_seen from an answer without decoding its task list.
func summarise(answer []byte) summary {
	var s summary
	dec := json.NewDecoder(bytes.NewReader(answer))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return s
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return s
		}
		switch key {
		case "size":
			dec.Decode(&s.Size)
		case "group_size":
			dec.Decode(&s.GroupSize)
		case "step":
			dec.Decode(&s.Step)
		case "rollouts_seen":
			dec.Decode(&s.RolloutsSeen)
		case "tasks":
			return s
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return s
			}
		}
	}
	return s
}

// ingestAll runs a full ingest pass and logs what it found.
func (d *Daemon) ingestAll(ctx context.Context, why string) error {
	start := time.Now()
	d.progress.begin(why)
	rep, err := d.ingest.Scan(ctx)
	d.progress.end(rep)
	d.logIngest(why, rep, start)
	if err != nil {
		return fmt.Errorf("ingest (%s): %w", why, err)
	}
	return nil
}

// ingestPaths reads the files the watcher named.
func (d *Daemon) ingestPaths(ctx context.Context, paths []string) error {
	start := time.Now()
	d.progress.begin("change")
	rep, err := d.ingest.ScanPaths(ctx, paths)
	d.progress.end(rep)
	d.logIngest("change", rep, start)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	return nil
}

// logIngest writes one line for a pass that stored anything. (Quarantined lines are logged
// with the status: one line per file and reason since the previous status, with a count.)
func (d *Daemon) logIngest(why string, s ingest.Summary, start time.Time) {
	if s.Rollouts > 0 || s.Duplicates > 0 || s.Quarantined > 0 || why == "backlog" {
		d.log.Debug("ingested", "why", why, "files_read", s.FilesRead, "rollouts", s.Rollouts,
			"duplicates", s.Duplicates, "clipped", s.Clipped, "quarantined", s.Quarantined,
			"ms", time.Since(start).Milliseconds())
	}
}

// writeStatus publishes DIR/status.json from the database's counters, and logs the lines
// quarantined since the last status, one line per file and reason.
func (d *Daemon) writeStatus() error {
	d.quarantine.flush(d.log)
	s, err := d.status()
	if err != nil {
		return err
	}
	if !d.plainTarget(d.dirs.root, StatusFile) {
		return nil
	}
	return d.published(filepath.Join(d.dirs.root, StatusFile), writeStatus(d.dirs.root, s))
}

func (d *Daemon) status() (Status, error) {
	gen, err := d.db.Generation()
	if err != nil {
		return Status{}, fmt.Errorf("read the database's generation: %w", err)
	}
	if d.stored.ok && d.stored.gen == gen {
		s := d.stored.status
		s.PID, s.PIDView, s.UpdatedAt, s.WatchMode = os.Getpid(), procview.View(), rfc3339(time.Now()), d.WatchMode()
		return s, nil
	}
	s, err := d.readStatus()
	if err != nil {
		return Status{}, err
	}
	d.stored.status, d.stored.gen, d.stored.ok = s, gen, true
	return s, nil
}

// readStatus reads the status from the database.
func (d *Daemon) readStatus() (Status, error) {
	c, err := d.db.Counters()
	if err != nil {
		return Status{}, fmt.Errorf("read counters: %w", err)
	}
	envs, err := d.db.Envs()
	if err != nil {
		return Status{}, fmt.Errorf("read environments: %w", err)
	}
	s := Status{
		Version: d.cfg.Version, PID: os.Getpid(), PIDView: procview.View(), StartedAt: rfc3339(d.started),
		UpdatedAt: rfc3339(time.Now()), DB: d.db.Path(), Rollouts: c.Rollouts,
		Quarantined: c.Quarantined, Duplicates: c.Duplicates, Clipped: c.Clipped,
		Envs: int64(len(envs)), RequestsAnswered: c.RequestsAnswered, WatchMode: d.WatchMode(),
	}
	for _, e := range envs {
		s.Tasks += e.Tasks
	}
	if c.LastRequest != "" {
		last := c.LastRequest
		s.LastRequest = &last
	}
	cal, err := d.db.Calibration(ledger.RecentAnswers)
	if err != nil {
		return Status{}, fmt.Errorf("read calibration: %w", err)
	}
	s.Calibration = ledger.Summarize(cal, ledger.EnvMeans(envs))
	corr, err := d.corrections(c.RequestsAnswered)
	if err != nil {
		return Status{}, err
	}
	s.Corrections, s.CorrectionsEnvsOmitted = shownEnvs(corr, StatusEnvsMax)
	return s, nil
}

// corrections reads the corrections stored with the last answer (schedule.Corrections) when
// an answer was stored since the last read: only an answer rewrites them, and at 100k tasks
// the stored state is some 190 KB to decode.
func (d *Daemon) corrections(answered int64) (*propagate.Corrections, error) {
	if d.shown.corr != nil && d.shown.answered == answered {
		return d.shown.corr, nil
	}
	state, err := d.db.PredictorState()
	if err != nil {
		return nil, fmt.Errorf("read corrections: %w", err)
	}
	c := schedule.Corrections(state)
	d.shown.corr, d.shown.answered = &c, answered
	return &c, nil
}

// EmptySettle is how long an empty request file (no bytes, or only white space and a byte order
// mark) must be left alone before it is answered with every default. A file created under its
// final name is empty until its writer writes: answered at once, it got the default batch for
// good (the same ID always gets the same answer), while the same writer's half-written JSON gets
// an error file and is served once complete. Left alone this long, it is meant empty.
const EmptySettle = 2 * time.Second

// settling reports whether the request file name, whose body is body and whose status before it
// was read is read, is empty and too fresh to be answered: changed less than EmptySettle ago,
// and first seen empty (with this change time) less than EmptySettle ago, which bounds the wait
// when its time is ahead of the clock. It then arms d.recheck for when it will have settled.
func (d *Daemon) settling(name string, body []byte, read os.FileInfo) bool {
	if read == nil || len(bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))) > 0 {
		delete(d.empty, name)
		return false
	}
	now, changed := time.Now(), changedAt(read)
	if read.ModTime().After(changed) {
		changed = read.ModTime()
	}
	first, ok := d.empty[name]
	if !ok || !first.changed.Equal(changed) {
		first = emptySeen{changed: changed, seen: now}
		d.empty[name] = first
	}
	wait := min(EmptySettle-now.Sub(changed), EmptySettle-now.Sub(first.seen))
	if wait <= 0 {
		delete(d.empty, name)
		return false
	}
	if !d.recheckAt.IsZero() && d.recheckAt.Before(now.Add(wait)) {
		return true // a recheck is due sooner; it arms the next one
	}
	d.recheckAt = now.Add(wait)
	d.recheck.Reset(wait)
	return true
}

// emptySeen is when an empty request file was first seen empty, and its change time then.
type emptySeen struct{ changed, seen time.Time }
