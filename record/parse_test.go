package record

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParseRolloutBytes covers lines that the golden files cannot hold as text.
func TestParseRolloutBytes(t *testing.T) {
	ok := Rollout{Env: "E", Task: "t", Reward: 1}
	tests := []struct {
		name   string
		line   []byte
		want   Rollout
		reason string
	}{
		{"CRLF", []byte("{\"env\":\"E\",\"task\":\"t\",\"reward\":1}\r\n"), ok, ""},
		{"bare CR", []byte("{\"env\":\"E\",\"task\":\"t\",\"reward\":1}\r"), ok, ""},
		{"tab inside", []byte("{\t\"env\":\"E\",\"task\":\"t\",\"reward\":1}"), ok, ""},
		{"byte order mark", []byte("\xef\xbb\xbf{\"env\":\"E\",\"task\":\"t\",\"reward\":1}\n"), ok, ""},
		{"invalid UTF-8 in an ignored value", []byte("{\"env\":\"E\",\"task\":\"t\",\"reward\":1,\"x\":\"\xff\"}"), ok, ""},
		{"invalid UTF-8 in env", []byte("{\"env\":\"E\xff\",\"task\":\"t\",\"reward\":1}"), Rollout{}, ReasonEnvUTF8},
		{"invalid UTF-8 in task", []byte("{\"env\":\"E\",\"task\":\"\xc3\",\"reward\":1}"), Rollout{}, ReasonTaskUTF8},
		// The database joins env and task with a NUL: "a\x00b"/"c" would be stored as "a"/"b\x00c".
		{"NUL in env", []byte(`{"env":"a\u0000b","task":"c","reward":1}`), Rollout{}, ReasonEnvNUL},
		{"NUL in task", []byte(`{"env":"a","task":"b\u0000c","reward":1}`), Rollout{}, ReasonTaskNUL},
		{"NUL ending a task", []byte(`{"env":"a","task_id":"n\u0000","reward":1}`), Rollout{}, ReasonTaskNUL},
		// The database keys groups by it, and bbolt keys are at most 32 KiB.
		{"group id too long", []byte(`{"env":"a","task":"t","reward":1,"group_id":"` + strings.Repeat("g", MaxGroupLen+1) + `"}`), Rollout{}, ReasonGroupTooLong},
		{"uid too long", []byte(`{"env":"a","task":"t","reward":1,"uid":"` + strings.Repeat("u", MaxGroupLen+1) + `_1_2"}`), Rollout{}, ReasonGroupTooLong},
		{"group id at the bound", []byte(`{"env":"E","task":"t","reward":1,"group_id":"` + strings.Repeat("g", MaxGroupLen) + `"}`), Rollout{Env: "E", Task: "t", Reward: 1, Group: strings.Repeat("g", MaxGroupLen)}, ""},
		{"invalid UTF-8 in group is absent", []byte("{\"env\":\"E\",\"task\":\"t\",\"reward\":1,\"uid\":\"\xff\"}"), ok, ""},
		{"empty", nil, Rollout{}, ReasonEmpty},
		{"blank", []byte(" \t\r\n"), Rollout{}, ReasonEmpty},
		{"NUL byte", []byte("{\"env\":\"E\",\"task\":\"t\",\"reward\":1}\x00"), Rollout{}, ReasonInvalidJSON},
		{"too long", append(bytes.Repeat([]byte(" "), MaxLine), "{}"...), Rollout{}, ReasonTooLong},
		{"deep nesting", append(append([]byte("{\"env\":\"E\",\"task\":\"t\",\"reward\":1,\"x\":"),
			bytes.Repeat([]byte("["), 100000)...), bytes.Repeat([]byte("]"), 100000)...), Rollout{}, ReasonTooDeep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRollout(tt.line)
			if tt.reason != "" {
				var bad *BadLineError
				if !errors.As(err, &bad) || bad.Reason != tt.reason {
					t.Fatalf("got %+v, %v; want bad line %q", got, err, tt.reason)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestParseTaskInvalidUTF8Text(t *testing.T) {
	got, err := ParseTask([]byte("{\"env\":\"E\",\"task\":\"t\",\"text\":\"a\xffb\",\"tags\":[\"\xfe\"]}"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != "a\uFFFDb" || len(got.Tags) != 1 || got.Tags[0] != "\uFFFD" {
		t.Fatalf("got %+v; want invalid bytes replaced by U+FFFD", got)
	}
}

func TestIsBlank(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"", true}, {"\n", true}, {"\r\n", true}, {" \t \r\n", true},
		{"\x00", true}, {"\x00\x00 \n", true}, // a crash's zeros (see IsBlank)
		{"{}", false}, {" x ", false}, {"\x00x", false}, {"\v", false}, {"\xc2\xa0", false},
	}
	for _, tt := range tests {
		if got := IsBlank([]byte(tt.line)); got != tt.want {
			t.Errorf("IsBlank(%q) = %v; want %v", tt.line, got, tt.want)
		}
	}
}

// TestLineAfterACrashsZeros: a power loss can leave zeros where an append's bytes never reached
// the disk, without a newline after them; the line written after the restart follows them and
// is read as itself (it was "invalid JSON" and its rollout lost). Zeros inside a line are still
// invalid JSON.
func TestLineAfterACrashsZeros(t *testing.T) {
	r, err := ParseRollout([]byte(strings.Repeat("\x00", 4096) + `{"env":"e","task":"t","reward":1}` + "\n"))
	if err != nil || r.Env != "e" || r.Task != "t" || r.Reward != 1 {
		t.Errorf("a rollout after zeros: %+v, %v", r, err)
	}
	if _, err := ParseTask([]byte("\x00\x00" + `{"env":"e","task":"t"}`)); err != nil {
		t.Errorf("a catalogue row after zeros: %v", err)
	}
	if _, err := ParseRollout([]byte(`{"env":"e","task":"t",` + "\x00" + `"reward":1}`)); err == nil {
		t.Error("a zero inside a line was read")
	}
}

func TestHead(t *testing.T) {
	tests := []struct {
		line string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"hello", -1, ""},
		{"aé", 2, "a"},  // é is 2 bytes: not split
		{"aé", 3, "aé"}, // whole
		{"a😀b", 4, "a"}, // 4-byte rune cut at any inner byte
		{"a😀b", 3, "a"},
		{"a😀b", 5, "a😀"},
		{"a\x80\x80\x80\x80b", 3, "a\x80\x80"}, // invalid bytes: cut where asked
		{"é\x80b", 2, "é"},                     // valid rune then a stray continuation byte
		{"é\x80b", 3, "é\x80"},
	}
	for _, tt := range tests {
		got := string(Head([]byte(tt.line), tt.n))
		if got != tt.want {
			t.Errorf("Head(%q, %d) = %q; want %q", tt.line, tt.n, got, tt.want)
		}
	}
}

// TestHeadKeepsValidUTF8 checks every cut of a mixed text: valid in, valid out, a prefix, and
// never more than 3 bytes short.
func TestHeadKeepsValidUTF8(t *testing.T) {
	line := []byte("aé€😀b日本語\n")
	for n := 0; n <= len(line)+1; n++ {
		h := Head(line, n)
		if !utf8.Valid(h) || !bytes.HasPrefix(line, h) || len(h) > n || len(h) < min(n, len(line))-3 {
			t.Fatalf("Head(%q, %d) = %q", line, n, h)
		}
	}
}
