package daemon

import (
	"sort"
	"time"
)

// deferred gathers paths to read later: the first path added starts a timer of delay, and when
// it fires (due) the loop takes them all at once. Only the loop's goroutine uses it.
type deferred struct {
	delay time.Duration
	paths map[string]struct{}
	timer *time.Timer
	armed bool
}

func newDeferred(delay time.Duration) *deferred {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &deferred{delay: delay, paths: map[string]struct{}{}, timer: t}
}

// add records paths and starts the timer if it is not running.
func (q *deferred) add(paths []string) {
	for _, p := range paths {
		q.paths[p] = struct{}{}
	}
	if len(q.paths) > 0 && !q.armed {
		q.timer.Reset(q.delay)
		q.armed = true
	}
}

// due fires when the gathered paths should be read.
func (q *deferred) due() <-chan time.Time { return q.timer.C }

// take returns the gathered paths, sorted, and forgets them.
func (q *deferred) take() []string {
	q.timer.Stop()
	q.armed = false
	out := make([]string, 0, len(q.paths))
	for p := range q.paths {
		out = append(out, p)
	}
	clear(q.paths)
	sort.Strings(out)
	return out
}
