package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/storage"
)

// stallingIngester holds up the data path (ScanPaths) until released: the daemon's loop is
// busy, as under a torrent, while a request arrives.
type stallingIngester struct {
	Ingester
	stalled chan struct{} // closed when a ScanPaths is held
	release chan struct{}
}

func (s *stallingIngester) ScanPaths(ctx context.Context, paths []string) (ingest.Summary, error) {
	select {
	case <-s.release:
	default:
		close(s.stalled)
		<-s.release
	}
	return s.Ingester.ScanPaths(ctx, paths)
}

// TestAnswerLogCountsTheQueue: a request that waits behind earlier work is logged with the time
// from when it was noticed (queue_ms, and ms including it); the log left the queue out (7.7 s
// real, 1,061 ms logged).
func TestAnswerLogCountsTheQueue(t *testing.T) {
	dir := t.TempDir()
	s := &stallingIngester{stalled: make(chan struct{}), release: make(chan struct{})}
	wrap := WithIngester(func(db *storage.DB, dir string, log *slog.Logger, hooks IngestHooks) (Ingester, error) {
		in, err := newIngester(db, dir, log, hooks)
		s.Ingester = in
		return s, err
	})
	r := serveTest(t, testConfig(dir, false), wrap)
	appendFile(t, filepath.Join(dir, "rollouts", "a.jsonl"), rolloutLines("a", 3))
	<-s.stalled
	writeRequest(t, dir, "q.json", `{"size": 2}`)
	const held = 600 * time.Millisecond
	time.Sleep(held) // the request is noticed at once; the loop is held this long
	close(s.release)
	r.batch("q")
	r.waitLog("msg=answered id=q ") // written just after the batch file
	m := regexp.MustCompile(`msg=answered id=q .* ms=(\d+) .*queue_ms=(\d+)`).FindStringSubmatch(r.log.String())
	if m == nil {
		t.Fatalf("no answered line with ms and queue_ms:\n%s", r.log.String())
	}
	ms, _ := strconv.Atoi(m[1])
	queued, _ := strconv.Atoi(m[2])
	// The watcher notices the request within moments of its rename; half the hold is the margin.
	if ms < queued || queued < int(held.Milliseconds())/2 {
		t.Errorf("logged ms=%d queue_ms=%d; want the %v the request queued counted", ms, queued, held)
	}
}
