package cli

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockedWriter blocks every Write until released, as a pipe whose reader stopped reading.
type blockedWriter struct {
	release chan struct{}
	mu      sync.Mutex
	b       bytes.Buffer
}

func (w *blockedWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// A reader of the log that stops reading never blocks the logging goroutine: lines beyond the
// queue are dropped, counted, and the count is logged once the reader reads again. Each line
// was written by the goroutine that logged it, so the daemon stopped answering requests as soon
// as the pipe was full.
func TestLogReaderThatStopsReadingDoesNotBlock(t *testing.T) {
	w := &blockedWriter{release: make(chan struct{})}
	logger, lw, err := runLogger("json", "info", w)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		for i := range 3 * logQueue {
			logger.Info("answered", "i", i)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // only turns a hang into a failure
		t.Fatal("logging blocked on a reader that does not read")
	}
	close(w.release)
	lw.Close(30 * time.Second)
	out := w.b.String()
	if !strings.Contains(out, `"msg":"log lines dropped: standard error was not being read"`) {
		t.Errorf("no line says lines were dropped:\n%s", out[max(0, len(out)-500):])
	}
	if n := strings.Count(out, `"msg":"answered"`); n < logQueue-1 || n >= 3*logQueue {
		t.Errorf("%d lines written; want the queue's (%d), not all", n, logQueue)
	}
	if _, err := lw.Write([]byte("after close\n")); err != nil {
		t.Errorf("a Write after Close: %v", err)
	}
}
