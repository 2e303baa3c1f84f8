package record

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// acceptedKeys returns every key name the parser reads, taken from the case clauses of the
// functions in fields.go that map names to keys: a key added there is found here without
// editing this test. Keys nested in extra_info are returned as extra_info.NAME.
func acceptedKeys(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "fields.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		prefix := ""
		if fn.Name.Name == "setExtraInfo" {
			prefix = "extra_info."
		}
		ast.Inspect(fn, func(n ast.Node) bool {
			cc, ok := n.(*ast.CaseClause)
			if !ok {
				return true
			}
			for _, e := range cc.List {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					names = append(names, prefix+s)
				}
			}
			return true
		})
	}
	return names
}

// TestProtocolNamesEveryKey checks that PROTOCOL.md names every key the parser accepts, so
// that a trainer author who reads only PROTOCOL.md knows every alias.
func TestProtocolNamesEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../PROTOCOL.md")
	if err != nil {
		t.Fatalf("PROTOCOL.md must be in the repository: %v", err)
	}
	names := acceptedKeys(t)
	if len(names) != int(nKeys) {
		t.Fatalf("found %d key names in fields.go, want %d (one per key): %v", len(names), nKeys, names)
	}
	for _, name := range names {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("PROTOCOL.md does not name the key `%s` that record accepts", name)
		}
	}
}
