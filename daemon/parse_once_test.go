package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
)

// countingParser is the real scheduler, counting the request bodies it is asked to parse.
type countingParser struct {
	*schedule.Scheduler
	mu     sync.Mutex
	parses map[string]int // body → times parsed
	given  int            // AnswerParsed calls
}

func (c *countingParser) Parse(body []byte) schedule.Parsed {
	c.mu.Lock()
	c.parses[string(body)]++
	c.mu.Unlock()
	return c.Scheduler.Parse(body)
}

func (c *countingParser) AnswerParsed(id string, p schedule.Parsed, early func([]byte)) ([]byte, error) {
	c.mu.Lock()
	c.given++
	c.mu.Unlock()
	return c.Scheduler.AnswerParsed(id, p, early)
}

// TestRequestBodyParsedOnce: the daemon parses a request body once, and answers and logs (the
// keys it ignored, an ID written again with another body) from that parse. It parsed each body
// once to answer and once more to log its ignored keys (twice again for an ID answered before),
// so a body of 20,000 keys that are no field took twice the time it needs.
func TestRequestBodyParsedOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir, false)
	var cp *countingParser
	r := serveTest(t, cfg, WithAnswerer(func(db *storage.DB) (Answerer, error) {
		s, err := newScheduler(db, cfg)
		cp = &countingParser{Scheduler: s, parses: map[string]int{}}
		return cp, err
	}))
	first, again := `{"size": 2, "comment": "run b"}`, `{"size": 3, "note": "replayed"}`
	writeRequest(t, dir, "once.json", first)
	r.batch("once")
	must(t, os.Remove(filepath.Join(dir, "batches", "once.json")))
	writeRequest(t, dir, "once.json", again) // answered before: the stored answer stands
	r.batch("once")
	r.waitLog("written again with another body")
	r.stop()
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if cp.parses[first] != 1 || cp.parses[again] != 1 || cp.given != 2 {
		t.Errorf("bodies parsed %v, answered from a parse %d times; want each parsed once and both answered from it", cp.parses, cp.given)
	}
	logs := r.log.String()
	for _, want := range []string{`keys=comment`, `keys=note`, `asked="size 3, group_size 8"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}
}
