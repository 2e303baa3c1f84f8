package cli

import (
	"strings"
	"testing"
)

// TestBatchIDReusedWithOtherFlagsSaysSo: `batch --id X --size 5` after X was chosen with 2 tasks
// printed the stored 2 tasks without a word (the same ID always gets the same answer; the daemon
// logs such a request at WARN). It still prints them, and says on standard error that they are
// the stored answer, not one of the size asked. The same flags again say nothing.
func TestBatchIDReusedWithOtherFlagsSaysSo(t *testing.T) {
	dir := exchangeDir(t)
	if code, _, errs := runCLI("batch", "--dir", dir, "--id", "x", "--size", "2"); code != 0 {
		t.Fatalf("first batch: exit %d: %s", code, errs)
	}
	code, out, errs := runCLI("batch", "--dir", dir, "--id", "x", "--size", "5")
	if code != 0 || !strings.Contains(out, "2 tasks") {
		t.Fatalf("the same ID with --size 5: exit %d, %q; want the stored 2 tasks", code, out)
	}
	if !strings.Contains(errs, "chosen before with size 2") || !strings.Contains(errs, "size 5") {
		t.Errorf("the same ID with --size 5 said %q on standard error; want that the stored batch of size 2 is printed, not one of size 5", errs)
	}
	if _, _, errs := runCLI("batch", "--dir", dir, "--id", "x", "--size", "2"); strings.Contains(errs, "chosen before") {
		t.Errorf("the same ID with the same flags said %q", errs)
	}
}
