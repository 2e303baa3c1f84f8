package daemon

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

// quarantineLog sits between the ingester and the daemon's log. The ingester logs every
// quarantined line; a torrent of bad lines would bury the log, so those records are counted by
// file and reason instead, and the daemon writes one line per file and reason after each ingest
// pass (flush). Every other record passes through unchanged.
type quarantineLog struct {
	next  slog.Handler
	state *quarantineCounts
	attrs []slog.Attr // attributes added by WithAttrs, searched for file and reason too
}

type quarantineKey struct{ file, reason string }

type quarantineCounts struct {
	mu     sync.Mutex
	counts map[quarantineKey]int
}

func newQuarantineLog(next slog.Handler) *quarantineLog {
	return &quarantineLog{next: next, state: &quarantineCounts{counts: map[quarantineKey]int{}}}
}

// Enabled always accepts quarantine records (they are counted whatever the level).
func (q *quarantineLog) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || q.next.Enabled(ctx, l)
}

// Handle counts a quarantine record or passes the record on.
func (q *quarantineLog) Handle(ctx context.Context, r slog.Record) error {
	if !strings.Contains(strings.ToLower(r.Message), "quarantin") {
		if !q.next.Enabled(ctx, r.Level) {
			return nil
		}
		return q.next.Handle(ctx, r)
	}
	key, n := quarantineKey{}, 1
	visit := func(a slog.Attr) bool {
		switch a.Key {
		case "path":
			key.file = a.Value.String()
		case "reason":
			key.reason = a.Value.String()
		case "count": // "more lines quarantined": the ingester stopped itemising them
			n = int(a.Value.Int64())
		}
		return true
	}
	for _, a := range q.attrs {
		visit(a)
	}
	r.Attrs(visit)
	q.state.mu.Lock()
	q.state.counts[key] += n
	q.state.mu.Unlock()
	return nil
}

// WithAttrs keeps the attributes for the search and passes them on.
func (q *quarantineLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &quarantineLog{next: q.next.WithAttrs(attrs), state: q.state,
		attrs: append(append([]slog.Attr(nil), q.attrs...), attrs...)}
}

// WithGroup passes the group on.
func (q *quarantineLog) WithGroup(name string) slog.Handler {
	return &quarantineLog{next: q.next.WithGroup(name), state: q.state, attrs: q.attrs}
}

// flush writes one line per file and reason counted since the last flush.
func (q *quarantineLog) flush(log *slog.Logger) {
	q.state.mu.Lock()
	counts := q.state.counts
	q.state.counts = map[quarantineKey]int{}
	q.state.mu.Unlock()
	keys := make([]quarantineKey, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].file != keys[j].file {
			return keys[i].file < keys[j].file
		}
		return keys[i].reason < keys[j].reason
	})
	for _, k := range keys {
		if k == (quarantineKey{}) {
			log.Warn("quarantined lines", "count", counts[k], "note", "not itemised by file; see envsched stats")
			continue
		}
		log.Warn("quarantined lines", "file", k.file, "reason", k.reason, "count", counts[k])
	}
}
