package storage

import (
	"fmt"
	"reflect"
	"testing"
)

// TestFileListRoundTrip: a file's list decodes to the keys added, whatever their environments'
// order and however much of its name a task shares with the one before.
func TestFileListRoundTrip(t *testing.T) {
	var keys []TaskKey
	for i := range 1000 {
		keys = append(keys, TaskKey{Env: fmt.Sprint("env-", i%7), Task: fmt.Sprintf("t%07d", i)})
	}
	keys = append(keys, TaskKey{"env-0", "t"}, TaskKey{"env-0", "t0000001x"}, TaskKey{"é", "\x00\xff"},
		TaskKey{"env-3", "t0000001"}) // a repeat
	var l FileList
	want := map[TaskKey]bool{}
	for _, k := range keys {
		l.Add(k)
		want[k] = true
	}
	got := map[TaskKey]bool{}
	if err := decodeList(append(l.digest(), l.buf...), got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %d keys; want %d", len(got), len(want))
	}
	if per := float64(len(l.buf)) / float64(len(keys)); per > 6 {
		t.Errorf("%.1f bytes a key; the shared prefixes should make it a few", per)
	}
	if err := decodeList(append(l.digest(), l.buf[:len(l.buf)-3]...), map[TaskKey]bool{}); err == nil {
		t.Errorf("a list cut short decodes")
	}
}
