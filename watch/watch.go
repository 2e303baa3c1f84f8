package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Mode says where a Watcher's hints come from.
type Mode string

// The modes of a Watcher; their names are those of status.json's watch_mode.
const (
	// ModeNotify takes hints from fsnotify events, with a slow safety poll.
	ModeNotify Mode = "notify"
	// ModePoll takes hints only from comparing directory listings on a ticker.
	ModePoll Mode = "poll"
)

// Defaults of Options; a zero field takes them.
const (
	DefaultPollInterval   = 250 * time.Millisecond
	DefaultSafetyInterval = 10 * time.Second
	DefaultDebounce       = 5 * time.Millisecond
)

// Change is one flush of hints: paths that may have changed since the previous Change, and
// whether hints may have been lost so that the consumer must rescan everything.
type Change struct {
	// Paths are the files (and new folders) that may have changed, sorted, without duplicates.
	// A path may no longer exist.
	Paths []string
	// Rescan is true when events may have been lost (overflow, watcher error): the consumer
	// must look at every file under the roots, not only at Paths.
	Rescan bool
	// Reason says why a rescan is asked for ("overflow", "watcher error: ..."); empty otherwise.
	Reason string
	// Since is when the oldest hint of this Change was noticed (an event, or the poll that
	// found it): the consumer's latency starts there, not when it received the Change.
	Since time.Time
}

// Options configure a Watcher.
type Options struct {
	// Roots are the folders watched recursively. Each must exist when New is called.
	Roots []string
	// Poll forces polling alone, for filesystems that give no events (NFS, FUSE).
	Poll bool
	// PollInterval is the poll period in poll mode.
	PollInterval time.Duration
	// SafetyInterval is the poll period in notify mode, a net under lost events.
	SafetyInterval time.Duration
	// Debounce is the longest time an event waits before it is flushed with those after it.
	Debounce time.Duration
	// Urgent, when set, is asked about every path a Create event names (a file made, or renamed
	// into place); when it returns true the pending hints are flushed at once, without waiting
	// for the debounce: someone waits on that file (a trainer on its request). It runs in Run's
	// goroutine and must be quick (a stat at most).
	Urgent func(path string) bool
	// OverflowEvery, when positive, is a test-only fault: every OverflowEvery-th event is
	// replaced by a simulated overflow that drops the pending hints, as a real one loses events.
	OverflowEvery int
	// Logger receives warnings (fallback to polling, watcher errors, rescans).
	Logger *slog.Logger

	// notifyErr, when set (by tests), is what starting fsnotify fails with.
	notifyErr error
}

// Watcher turns fsnotify events and polls of the roots into Changes. Create it with New, run
// it with Run, read Changes, and Close it.
type Watcher struct {
	opts     Options
	log      *slog.Logger
	fsw      *fsnotify.Watcher // nil in poll mode
	mode     Mode
	out      chan Change
	overflow chan struct{}
	relist   chan struct{}
	tree     *tree
	// skipped are the paths a listing or a watch could not take, with the error last logged
	// for each: each is logged once, not at every poll.
	skipped map[string]string

	closeOnce sync.Once
	closeErr  error
}

// New sets up watches on every folder under the roots (before any scan by the caller, so that
// no change after New returns goes unnoticed), then takes the first listing for polling. When
// fsnotify cannot start or cannot watch a folder, the Watcher falls back to poll mode and says
// so in the log.
func New(opts Options) (*Watcher, error) {
	opts = withDefaults(opts)
	w := &Watcher{
		opts:     opts,
		log:      opts.Logger,
		mode:     ModePoll,
		out:      make(chan Change),
		overflow: make(chan struct{}, 1),
		relist:   make(chan struct{}, 1),
		tree:     newTree(),
		skipped:  map[string]string{},
	}
	for _, root := range opts.Roots {
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("watch %s: not an existing folder", root)
		}
	}
	w.tree.onSkip = w.logSkip
	if !opts.Poll {
		w.startNotify()
	}
	if err := w.tree.scan(opts.Roots, w.addWatch); err != nil {
		w.Close()
		return nil, fmt.Errorf("list watched folders: %w", err)
	}
	return w, nil
}

func withDefaults(o Options) Options {
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.SafetyInterval <= 0 {
		o.SafetyInterval = DefaultSafetyInterval
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// startNotify creates the fsnotify watcher and watches every folder; on any failure it leaves
// the Watcher in poll mode.
func (w *Watcher) startNotify() {
	fsw, err := fsnotify.NewBufferedWatcher(4096)
	if err == nil && w.opts.notifyErr != nil {
		fsw.Close()
		fsw, err = nil, w.opts.notifyErr
	}
	if err != nil {
		w.log.Warn("fsnotify cannot start; polling instead", "err", err)
		return
	}
	w.fsw, w.mode = fsw, ModeNotify
	for _, root := range w.opts.Roots {
		if err := w.fsw.Add(root); err != nil {
			w.log.Warn("fsnotify cannot watch a folder; polling instead", "path", root, "err", err)
			w.fsw.Close()
			w.fsw, w.mode = nil, ModePoll
			return
		}
	}
}

// addWatch is called for every folder the tree finds; in notify mode it watches it (again: a
// folder already watched keeps its watch). A folder that cannot be watched (inotify's limit) is
// left to the safety poll, which lists it and tries to watch it again.
func (w *Watcher) addWatch(dir string) {
	if w.fsw == nil {
		return
	}
	if err := w.fsw.Add(dir); err != nil && !errors.Is(err, fsnotify.ErrClosed) && w.firstTime(dir, err) {
		w.log.Warn("cannot watch folder; the poll will cover it", "path", dir, "err", err)
	}
}

// logSkip logs, once per path and error, an entry a listing could not read.
func (w *Watcher) logSkip(path string, err error) {
	if w.firstTime(path, err) {
		w.log.Warn("cannot list folder; skipped", "path", path, "err", err)
	}
}

// firstTime records err for path and reports whether it was not the error last recorded.
// Only Run's goroutine (and New, before Run) call it.
func (w *Watcher) firstTime(path string, err error) bool {
	if w.skipped[path] == err.Error() {
		return false
	}
	if len(w.skipped) >= maxSkipped {
		clear(w.skipped) // forget old reports rather than grow without bound
	}
	w.skipped[path] = err.Error()
	return true
}

// maxSkipped bounds the paths whose fault is remembered.
const maxSkipped = 4096

// Mode returns where hints come from: ModeNotify or ModePoll.
func (w *Watcher) Mode() Mode { return w.mode }

// Changes returns the channel on which Run delivers Changes. A Change is held, and merged with
// later hints, until it is received: hints are never dropped because the consumer is busy.
func (w *Watcher) Changes() <-chan Change { return w.out }

// InjectOverflow makes Run behave as after a real event overflow: the pending hints are dropped
// and a rescan is asked for. It is for tests.
func (w *Watcher) InjectOverflow() {
	select {
	case w.overflow <- struct{}{}:
	default:
	}
}

// Relist makes Run list the roots again soon, watching every folder found, and ask the consumer
// for a full rescan: the consumer made a removed root again, which has no watch yet. It never
// blocks.
func (w *Watcher) Relist() {
	select {
	case w.relist <- struct{}{}:
	default:
	}
}

// Close stops fsnotify. It is safe to call more than once and from any goroutine; Run returns
// once its context is done.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		if w.fsw != nil {
			w.closeErr = w.fsw.Close()
		}
	})
	return w.closeErr
}

// pending accumulates hints between flushes; only Run's goroutine touches it.
type pending struct {
	since  time.Time // when the first hint since the last flush came
	paths  map[string]struct{}
	rescan bool
	reason string
	built  *Change // change() of the current contents; nil once they change
}

func (p *pending) add(path string) {
	p.noticed(time.Now())
	if p.paths == nil {
		p.paths = make(map[string]struct{})
	}
	p.paths[path] = struct{}{}
	p.built = nil
}

// noticed keeps the earliest time a hint came.
func (p *pending) noticed(t time.Time) {
	if p.since.IsZero() || t.Before(p.since) {
		p.since = t
	}
}

func (p *pending) askRescan(reason string) {
	p.noticed(time.Now())
	p.rescan = true
	if p.reason == "" {
		p.reason = reason
	}
	p.built = nil
}

func (p *pending) empty() bool { return len(p.paths) == 0 && !p.rescan }

// merge moves the hints of q into p.
func (p *pending) merge(q *pending) {
	if !q.since.IsZero() {
		p.noticed(q.since)
	}
	for path := range q.paths {
		p.add(path)
	}
	if q.rescan {
		p.askRescan(q.reason)
	}
	*q = pending{}
}

// change returns the hints as a Change, built once per change of contents: Run offers it on
// every turn of its loop.
func (p *pending) change() Change {
	if p.built != nil {
		return *p.built
	}
	c := Change{Rescan: p.rescan, Reason: p.reason, Since: p.since}
	for path := range p.paths {
		c.Paths = append(c.Paths, path)
	}
	sort.Strings(c.Paths)
	p.built = &c
	return c
}

// Run is the Watcher's one goroutine: it marks paths dirty from events and polls, flushes them
// after the debounce, and delivers Changes until ctx is done. It returns nil when ctx is done.
func (w *Watcher) Run(ctx context.Context) error {
	var (
		dirty, ready pending
		nEvents      int
		armed        bool // the debounce timer runs: the window opened by the first dirty event
	)
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	pollEvery := w.opts.PollInterval
	if w.mode == ModeNotify {
		pollEvery = w.opts.SafetyInterval
	}
	poll := time.NewTicker(pollEvery)
	defer poll.Stop()
	events, errs := w.channels()
	for {
		var (
			out  chan Change
			next Change
		)
		if !ready.empty() {
			out, next = w.out, ready.change()
		}
		select {
		case <-ctx.Done():
			debounce.Stop()
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			nEvents++
			if w.opts.OverflowEvery > 0 && nEvents%w.opts.OverflowEvery == 0 {
				w.onOverflow(&dirty, &ready, "overflow (injected)")
			} else {
				w.onEvent(ev, &dirty)
			}
			switch {
			case w.urgent(ev):
				debounce.Stop() // no stale tick after Stop (Go 1.23 timers)
				armed = false
				ready.merge(&dirty)
			case !dirty.empty() && !armed:
				debounce.Reset(w.opts.Debounce)
				armed = true
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.onError(err, &dirty, &ready)
		case <-w.overflow:
			w.onOverflow(&dirty, &ready, "overflow (injected)")
		case <-w.relist:
			w.rescan(&dirty, &ready, "folders made again")
		case <-debounce.C:
			armed = false
			ready.merge(&dirty)
		case <-poll.C:
			w.poll(&dirty)
			ready.merge(&dirty)
		case out <- next:
			ready = pending{}
		}
	}
}

// urgent reports whether ev must be flushed without the debounce (Options.Urgent).
func (w *Watcher) urgent(ev fsnotify.Event) bool {
	return w.opts.Urgent != nil && ev.Has(fsnotify.Create) && !ignored(ev.Name) && w.opts.Urgent(ev.Name)
}

// channels returns fsnotify's channels, or nil channels (never ready) in poll mode.
func (w *Watcher) channels() (chan fsnotify.Event, chan error) {
	if w.fsw == nil {
		return nil, nil
	}
	return w.fsw.Events, w.fsw.Errors
}

// onEvent marks the event's path dirty; a new folder is watched and its files marked too (they
// may have been created before the watch was in place).
func (w *Watcher) onEvent(ev fsnotify.Event, dirty *pending) {
	if ignored(ev.Name) {
		return
	}
	dirty.add(ev.Name)
	if ev.Has(fsnotify.Create) {
		for _, p := range w.tree.addDir(ev.Name, w.addWatch) {
			dirty.add(p)
		}
	}
}

// onError turns a watcher error into a rescan: events may have been lost.
func (w *Watcher) onError(err error, dirty, ready *pending) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		w.onOverflow(dirty, ready, "overflow")
		return
	}
	w.log.Warn("watcher error; rescanning", "err", err)
	w.rescan(dirty, ready, "watcher error: "+err.Error())
}

// onOverflow drops the pending hints (as a real overflow loses events) and asks for a rescan.
func (w *Watcher) onOverflow(dirty, ready *pending, reason string) {
	w.log.Warn("event overflow; rescanning", "reason", reason)
	*dirty = pending{}
	w.rescan(dirty, ready, reason)
}

// rescan re-lists the roots (watching folders created while events were lost) and asks the
// consumer for a full rescan.
func (w *Watcher) rescan(dirty, ready *pending, reason string) {
	w.poll(dirty)
	dirty.askRescan(reason)
	ready.merge(dirty)
}

// poll lists the roots and marks every path whose listing changed.
func (w *Watcher) poll(dirty *pending) {
	changed, err := w.tree.rescan(w.opts.Roots, w.addWatch)
	if err != nil {
		w.log.Warn("poll failed; rescanning", "err", err)
		dirty.askRescan("poll error: " + err.Error())
	}
	for _, p := range changed {
		dirty.add(p)
	}
}
