package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// logQueue is how many log lines wait for a slow reader of the daemon's standard error before
// further ones are dropped (counted, and said once the reader reads again).
const logQueue = 4096

// logWriter hands the daemon's log lines to a goroutine that writes them, so that a reader of
// standard error that stops reading (a terminal paused with Ctrl-S, `| less` left open, a log
// shipper stuck) never stops the daemon. Each line was written from the goroutine that logged
// it: once the pipe's 64 KiB were full, the next log line blocked the daemon, which answered no
// request until the reader read again (461 requests answered, then none). A line that finds the
// queue full is dropped and counted; the count is logged before the next line written.
type logWriter struct {
	w       io.Writer
	mu      sync.RWMutex // Write holds it to read; Close to close lines
	closed  bool
	lines   chan []byte
	dropped atomic.Int64
	notice  func(n int64) []byte // the line saying n lines were dropped
	done    chan struct{}
}

func newLogWriter(w io.Writer, notice func(n int64) []byte) *logWriter {
	l := &logWriter{w: w, lines: make(chan []byte, logQueue), notice: notice, done: make(chan struct{})}
	go l.run()
	return l
}

// Write queues one log line (slog's handlers write a record in one call). It never blocks.
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		l.dropped.Add(1)
		return len(p), nil
	}
	select {
	case l.lines <- bytes.Clone(p):
	default:
		l.dropped.Add(1)
	}
	return len(p), nil
}

func (l *logWriter) run() {
	defer close(l.done)
	for p := range l.lines {
		if n := l.dropped.Swap(0); n > 0 {
			l.w.Write(l.notice(n))
		}
		l.w.Write(p)
	}
	if n := l.dropped.Swap(0); n > 0 {
		l.w.Write(l.notice(n))
	}
}

// Close writes the lines queued, waiting at most wait for a reader that does not read; later
// Writes are dropped.
func (l *logWriter) Close(wait time.Duration) {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.lines)
	}
	l.mu.Unlock()
	select {
	case <-l.done:
	case <-time.After(wait):
	}
}

// droppedNotice returns the line a handler made by mk writes to say n lines were dropped.
func droppedNotice(mk func(io.Writer) slog.Handler) func(n int64) []byte {
	return func(n int64) []byte {
		var b bytes.Buffer
		slog.New(mk(&b)).LogAttrs(context.Background(), slog.LevelWarn,
			"log lines dropped: standard error was not being read", slog.Int64("count", n))
		return b.Bytes()
	}
}
