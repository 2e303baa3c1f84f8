package schedule

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func readProtocol(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../PROTOCOL.md")
	if err != nil {
		t.Fatalf("PROTOCOL.md must be in the repository: %v", err)
	}
	return string(doc)
}

// jsonNames returns the JSON names of a struct type's fields.
func jsonNames(typ reflect.Type) []string {
	var out []string
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// TestProtocolNamesEveryRequestField checks that PROTOCOL.md's request table has a row for
// every field ParseRequest accepts, and that ParseRequest accepts every field it names.
func TestProtocolNamesEveryRequestField(t *testing.T) {
	doc := readProtocol(t)
	for _, f := range fields {
		if !strings.Contains(doc, "| `"+f+"` |") {
			t.Errorf("PROTOCOL.md has no table row for the request field `%s`", f)
		}
		if _, err := ParseRequest([]byte(`{"`+f+`": null}`), 64, 8); err != nil {
			t.Errorf("request field %s is in the list but refused: %v", f, err)
		}
	}
	if len(fields) != 7 {
		t.Errorf("the request has %d fields; PROTOCOL.md section 5 lists 7: update both", len(fields))
	}
}

// TestProtocolNamesEveryBatchField checks that every key of a batch file and of its tasks is
// in PROTOCOL.md's batch tables.
func TestProtocolNamesEveryBatchField(t *testing.T) {
	doc := readProtocol(t)
	for _, typ := range []reflect.Type{reflect.TypeOf(Answer{}), reflect.TypeOf(Task{})} {
		names := jsonNames(typ)
		if len(names) < 10 {
			t.Fatalf("%s has %d JSON fields; the reflection found too few", typ, len(names))
		}
		for _, n := range names {
			if !strings.Contains(doc, "`"+n+"`") {
				t.Errorf("PROTOCOL.md does not name the batch field `%s` (%s)", n, typ)
			}
		}
	}
}
