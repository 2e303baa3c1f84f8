package record

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// lineGen makes random valid JSON object lines from the keys that the parser reads, with values
// of every JSON type, nested extra_info, duplicate keys and ignored keys.
type lineGen struct{ r *rand.Rand }

var genKeys = []string{
	"env", "data_source", "env_class", "environment", "task_name", "tag", "domain",
	"task_id", "task", "index", "item_id", "id",
	"text", "description", "instruction", "question", "prompt", "tools", "tags", "embedding",
	"reward", "score", "group_id", "uid", "group_index", "step", "global_step", "request_id",
	"rollout_id", "extra_info", "input", "output", "content", "name",
}

func (g lineGen) line() string {
	var b strings.Builder
	b.WriteString(g.ws() + "{")
	n := g.r.IntN(12)
	for i := range n {
		if i > 0 {
			b.WriteString(g.ws() + ",")
		}
		k := genKeys[g.r.IntN(len(genKeys))]
		b.WriteString(g.ws() + strconv.Quote(k) + g.ws() + ":" + g.ws() + g.valueFor(k, 0) + g.ws())
	}
	b.WriteString("}" + g.ws())
	return b.String()
}

func (g lineGen) ws() string { return [...]string{"", "", "", " ", "\t", " \r "}[g.r.IntN(6)] }

// valueFor leans toward values that fit key, so that most lines are records.
func (g lineGen) valueFor(k string, depth int) string {
	if g.r.IntN(4) == 0 {
		return g.value(depth)
	}
	switch k {
	case "extra_info":
		return fmt.Sprintf(`{"data_source":%s,"index":%s,"task_id":%s,"x":%s}`, g.str(), g.number(), g.str(), g.value(depth+1))
	case "reward", "score", "step", "global_step", "index", "group_index":
		return g.number()
	case "prompt", "question":
		return fmt.Sprintf(`[{"role":"system","content":%s},{"role":"user","content":[{"type":"text","text":%s},%s]}]`, g.str(), g.str(), g.value(depth+1))
	case "tools":
		return fmt.Sprintf(`[%s,{"name":%s},{"function":{"name":%s}},%s]`, g.str(), g.str(), g.str(), g.value(depth+1))
	case "embedding":
		return fmt.Sprintf(`[%s,%s]`, g.number(), g.number())
	case "uid":
		return strconv.Quote(fmt.Sprintf("p%d_%d_%d", g.r.IntN(3), g.r.IntN(3), g.r.IntN(3)))
	}
	return g.str()
}

func (g lineGen) value(depth int) string {
	switch n := g.r.IntN(9); {
	case n == 0:
		return "null"
	case n == 1:
		return [...]string{"true", "false"}[g.r.IntN(2)]
	case n <= 3:
		return g.number()
	case n == 4 && depth < 3:
		return fmt.Sprintf("[%s,%s]", g.value(depth+1), g.value(depth+1))
	case n == 5 && depth < 3:
		k := genKeys[g.r.IntN(len(genKeys))]
		return fmt.Sprintf("{%q:%s}", k, g.valueFor(k, depth+1))
	}
	return g.str()
}

func (g lineGen) number() string {
	return [...]string{"0", "1", "-0", "17", "3.0", "2.5", "-1e2", "1E-3", "1e999", "-1e400", "1e21",
		"123456789012345678901234567890", "9223372036854775807", "9223372036854775808", "0.1", "7e0"}[g.r.IntN(16)]
}

func (g lineGen) str() string {
	return strconv.Quote([...]string{"", "a", "tau2-retail", "17", "é", "日本", "a\"b", "x\\y", "tab\there",
		"nl\nx", "😀", "g_1_2", "_1_2", "a_b_3_4"}[g.r.IntN(14)])
}

// TestParseAgreesWithReference checks the fast path against encoding/json plus plain rules on
// random valid lines.
func TestParseAgreesWithReference(t *testing.T) {
	g := lineGen{rand.New(rand.NewPCG(1, 2))}
	n := 20000
	if testing.Short() {
		n = 2000
	}
	records := 0
	for range n {
		line := []byte(g.line())
		if !refComparable(line, true) {
			t.Fatalf("generator made a line the reference cannot compare: %q", line)
		}
		r, err := ParseRollout(line)
		wantR, wantBad := refRollout(line)
		agree(t, line, r, err, wantR, wantBad)
		tk, err := ParseTask(line)
		wantT, wantBad := refTask(line)
		agree(t, line, tk, err, wantT, wantBad)
		if err == nil {
			records++
		}
	}
	t.Logf("%d of %d random lines were tasks", records, n)
	if records < n/20 {
		t.Fatalf("only %d of %d random lines were records: the generator tests too little", records, n)
	}
}

func agree[T any](t *testing.T, line []byte, got T, err error, want T, wantBad *BadLineError) {
	t.Helper()
	if wantBad != nil {
		var bad *BadLineError
		if !errors.As(err, &bad) || bad.Reason != wantBad.Reason {
			t.Fatalf("line %s\n got %+v, %v\nwant bad line %q", line, got, err, wantBad.Reason)
		}
		return
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("line %s\n got %+v, %v\nwant %+v", line, got, err, want)
	}
}
