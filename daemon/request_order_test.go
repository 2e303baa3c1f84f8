package daemon

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestRequestsFoundTogetherTakeStepsInWrittenOrder (hostile15): a request without a step takes
// the previous answer's step + 1, and the requests found together at start-up (written while
// the daemon was stopped) were answered in the folder's listing order, a hash order on ext4:
// written s-3, s-1, s-5, s-2, s-4, s-10, s-7, they got steps s-5 1, s-1 2, s-4 3, s-7 4, s-2 5,
// s-3 6, s-10 7. They are now answered in the order they were written (renamed into place).
func TestRequestsFoundTogetherTakeStepsInWrittenOrder(t *testing.T) {
	dir := t.TempDir()
	order := []int{3, 1, 5, 2, 4, 10, 7}
	for _, i := range order {
		writeRequest(t, dir, fmt.Sprintf("s-%d.json", i), `{"size": 2}`)
		time.Sleep(20 * time.Millisecond) // past the file system's coarse clock tick
	}
	r := serveTest(t, testConfig(dir, true))
	for want, i := range order {
		var b struct{ Step int64 }
		if err := json.Unmarshal(r.batch(fmt.Sprintf("s-%d", i)), &b); err != nil {
			t.Fatal(err)
		}
		if b.Step != int64(want+1) {
			t.Errorf("s-%d, written %d-th, got step %d; want %d", i, want+1, b.Step, want+1)
		}
	}
}

// TestNaturalOrderOfRequestNames: requests written within one clock tick are ordered by name,
// numbers as numbers.
func TestNaturalOrderOfRequestNames(t *testing.T) {
	names := []string{"s-10.json", "s-2.json", "step-000003.json", "s-1.json", "a.json", "s-02.json", "step-000010.json", "s-1b.json"}
	slices.SortFunc(names, naturalCompare)
	want := []string{"a.json", "s-1.json", "s-1b.json", "s-2.json", "s-02.json", "s-10.json", "step-000003.json", "step-000010.json"}
	if !slices.Equal(names, want) {
		t.Errorf("%v; want %v", names, want)
	}
}
