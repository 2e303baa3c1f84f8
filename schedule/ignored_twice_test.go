package schedule

import (
	"slices"
	"testing"
)

// TestIgnoredKeyGivenTwiceIsIgnored (review11): PROTOCOL.md section 5 says a key that is none
// of the fields is ignored (the trainer's own bookkeeping) and that a *field* given twice is
// refused. Since reqfields (513fea1) the first holds of a key given once, but a bookkeeping key
// given twice ({"id": 1, "id": 2, "size": 4}) is still refused, with a message that calls it a
// field: `the request gives "id" twice: give each field once`. Either the key is ignored as the
// contract says, or the contract says that any key given twice is refused.
func TestIgnoredKeyGivenTwiceIsIgnored(t *testing.T) {
	req, err := ParseRequest([]byte(`{"id": "step-7", "id": "step-7b", "size": 4}`), 64, 8)
	if err != nil {
		t.Fatalf("a non-field key given twice: %v; want it ignored as a key given once is", err)
	}
	if req.Size != 4 || !slices.Equal(req.Ignored, []string{"id"}) {
		t.Errorf("size %d, ignored %q; want 4 and [id]", req.Size, req.Ignored)
	}
}
