package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// goldenCase is one case of a testdata/*.golden file.
type goldenCase struct {
	name   string
	line   []byte
	want   string // the wanted record as JSON; "" when reason is set
	reason string // the wanted BadLineError reason
}

// readGolden reads the cases of testdata/NAME (format in testdata/rollouts.golden).
func readGolden(t *testing.T, name string) []goldenCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "-- ") {
			continue
		}
		c := goldenCase{name: strings.TrimPrefix(sc.Text(), "-- ")}
		if !sc.Scan() {
			t.Fatalf("%s: case %q has no line", name, c.name)
		}
		c.line = append([]byte(nil), sc.Bytes()...)
		if !sc.Scan() || !strings.HasPrefix(sc.Text(), "=> ") {
			t.Fatalf("%s: case %q has no => line", name, c.name)
		}
		want := strings.TrimPrefix(sc.Text(), "=> ")
		if r, ok := strings.CutPrefix(want, "bad: "); ok {
			c.reason = r
		} else {
			c.want = want
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", name)
	}
	return cases
}

// checkGolden runs parse over the cases of file and compares with the wanted records.
func checkGolden[T any](t *testing.T, file string, parse func([]byte) (T, error)) {
	for _, c := range readGolden(t, file) {
		t.Run(c.name, func(t *testing.T) {
			// Each line also goes through with "\n" and "\r\n" endings: the result is the same.
			for _, end := range []string{"", "\n", "\r\n"} {
				got, err := parse(append(append([]byte(nil), c.line...), end...))
				checkResult(t, c, got, err)
			}
		})
	}
}

func checkResult[T any](t *testing.T, c goldenCase, got T, err error) {
	t.Helper()
	if c.reason != "" {
		var bad *BadLineError
		if !errors.As(err, &bad) || bad.Reason != c.reason {
			t.Fatalf("line %q: got %+v, %v; want bad line %q", c.line, got, err, c.reason)
		}
		return
	}
	if err != nil {
		t.Fatalf("line %q: %v", c.line, err)
	}
	var want T
	if err := json.Unmarshal([]byte(c.want), &want); err != nil {
		t.Fatalf("bad golden want %q: %v", c.want, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("line %q:\n got %+v\nwant %+v", c.line, got, want)
	}
}

func TestParseRolloutGolden(t *testing.T) { checkGolden(t, "rollouts.golden", ParseRollout) }

func TestParseTaskGolden(t *testing.T) { checkGolden(t, "tasks.golden", ParseTask) }
