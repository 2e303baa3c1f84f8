package daemon

import (
	"log/slog"
	"sync"
	"time"

	"github.com/envsched/envsched/ingest"
)

// DefaultProgressInterval is how often a long ingest pass logs how far it is.
const DefaultProgressInterval = 2 * time.Second

// progressLog logs how far a long ingest pass is: a line every interval once the pass has run
// that long (lines, files, megabytes, rates and the time left at the current rate), and a line
// when it ends. The backlog pass at start-up gets its end line when it read anything; another
// pass only when it ran long enough to log progress. update is called from the ingester's goroutines, begin and
// end from the daemon's loop.
type progressLog struct {
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	why     string
	start   time.Time
	last    time.Time // when the last line was logged (start before the first)
	p       ingest.Progress
	logged  bool
	running bool
}

func newProgressLog(log *slog.Logger, every time.Duration, now func() time.Time) *progressLog {
	return &progressLog{log: log, every: every, now: now}
}

// begin starts a pass.
func (l *progressLog) begin(why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.now()
	l.why, l.start, l.last, l.p, l.logged, l.running = why, t, t, ingest.Progress{}, false, true
}

// update records the pass's progress and logs it when a line is due.
func (l *progressLog) update(p ingest.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.running {
		return
	}
	l.p = p
	t := l.now()
	if t.Sub(l.last) < l.every {
		return
	}
	l.last, l.logged = t, true
	elapsed := t.Sub(l.start)
	attrs := l.attrs(elapsed)
	if eta, ok := timeLeft(p, elapsed); ok {
		attrs = append(attrs, "eta", eta.Round(time.Second).String())
	}
	l.log.Info("ingest progress", attrs...)
}

// end closes the pass with a line saying what it read, when one is due.
func (l *progressLog) end(s ingest.Summary) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.running {
		return
	}
	l.running = false
	if !l.logged && (l.why != "backlog" || l.p.Files == 0) {
		return // a short pass, or a backlog of nothing: no line
	}
	elapsed := l.now().Sub(l.start)
	l.log.Info("ingest done", append(l.attrs(elapsed), "rollouts", s.Rollouts, "quarantined", s.Quarantined,
		"duplicates", s.Duplicates)...)
}

// attrs are the figures of the pass so far.
func (l *progressLog) attrs(elapsed time.Duration) []any {
	secs := elapsed.Seconds()
	attrs := []any{"why", l.why, "lines", l.p.Lines, "files", l.p.FilesRead, "files_total", l.p.Files,
		"mb", mb(l.p.Done), "mb_total", mb(l.p.Total), "elapsed", elapsed.Round(100 * time.Millisecond).String()}
	if secs > 0 {
		attrs = append(attrs, "lines_per_s", int64(float64(l.p.Lines)/secs), "mb_per_s", mb(int64(float64(l.p.Done)/secs)))
	}
	return attrs
}

// timeLeft is the time the rest of the backlog takes at the rate so far; false before any byte.
func timeLeft(p ingest.Progress, elapsed time.Duration) (time.Duration, bool) {
	if p.Done <= 0 || p.Total < p.Done {
		return 0, false
	}
	return time.Duration(float64(elapsed) * float64(p.Total-p.Done) / float64(p.Done)), true
}

// mb is bytes in megabytes (10^6), to one decimal.
func mb(b int64) float64 { return float64(b/100_000) / 10 }
