package catalog_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/envsched/envsched/catalog"
	"github.com/envsched/envsched/record"
)

// The shapes of a verl training parquet file (as written by verl's examples/data_preprocess
// scripts through pandas and pyarrow): data_source, prompt (a chat list), ability,
// reward_model, extra_info (a struct with index and split).
type chatMsg struct {
	Content string `parquet:"content"`
	Role    string `parquet:"role"`
}

type rewardModel struct {
	GroundTruth string `parquet:"ground_truth"`
	Style       string `parquet:"style"`
}

type extraInfo struct {
	Index  *int64  `parquet:"index,optional"`
	Split  string  `parquet:"split"`
	Answer *string `parquet:"answer,optional"`
}

type verlRow struct {
	DataSource  *string     `parquet:"data_source,optional"`
	Prompt      []chatMsg   `parquet:"prompt,list"`
	Ability     string      `parquet:"ability"`
	RewardModel rewardModel `parquet:"reward_model"`
	ExtraInfo   extraInfo   `parquet:"extra_info"`
}

func ptr[T any](v T) *T { return &v }

// verlRows returns n well-formed rows: env gsm8k for even i, math for odd, index i.
func verlRows(n int) []verlRow {
	rows := make([]verlRow, n)
	for i := range rows {
		env := "gsm8k"
		if i%2 == 1 {
			env = "math"
		}
		rows[i] = verlRow{
			DataSource: ptr(env),
			Prompt: []chatMsg{
				{Role: "system", Content: "You are a careful solver."},
				{Role: "user", Content: "Question " + string(rune('A'+i%26)) + "?"},
			},
			Ability:     "math",
			RewardModel: rewardModel{GroundTruth: "42", Style: "rule"},
			ExtraInfo:   extraInfo{Index: ptr(int64(i)), Split: "train"},
		}
	}
	return rows
}

// writeRows writes rows as a parquet file with parquet-go's writer.
func writeRows[T any](w io.Writer, rows []T) error { return parquet.Write(w, rows) }

// writeParquet writes rows with parquet-go's writer to dir/name and returns the path.
func writeParquet[T any](t *testing.T, dir, name string, rows []T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := writeRows(&buf, rows); err != nil {
		t.Fatalf("write parquet: %v", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestParquetVerlColumns(t *testing.T) {
	path := writeParquet(t, t.TempDir(), "train.parquet", verlRows(600))
	tasks, err := catalog.ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	if len(tasks) != 600 {
		t.Fatalf("got %d tasks, want 600", len(tasks))
	}
	want := record.Task{Env: "math", Task: "301", Text: "You are a careful solver.\nQuestion P?"}
	if got := tasks[301]; !reflect.DeepEqual(got, want) {
		t.Errorf("row 302 = %+v, want %+v", got, want)
	}
	if tasks[0].Env != "gsm8k" || tasks[0].Task != "0" {
		t.Errorf("row 1 = %s/%s, want gsm8k/0", tasks[0].Env, tasks[0].Task)
	}
}

func TestParquetAliasesLikeJSONL(t *testing.T) {
	// The same rows as JSON lines and as parquet must give the same tasks: one set of key rules.
	type row struct {
		Env    string   `parquet:"env" json:"env"`
		TaskID int64    `parquet:"task_id" json:"task_id"`
		Text   string   `parquet:"text" json:"text"`
		Tools  []string `parquet:"tools,list" json:"tools"`
		Tags   []string `parquet:"tags,list" json:"tags"`
	}
	rows := []row{
		{Env: "bfcl-simple", TaskID: 7, Text: "call the weather tool", Tools: []string{"get_weather"}, Tags: []string{"easy"}},
		{Env: "tau2-retail", TaskID: 12345678901, Text: "return an order", Tools: []string{"a", "b"}},
	}
	dir := t.TempDir()
	pq := writeParquet(t, dir, "c.parquet", rows)
	jl := filepath.Join(dir, "c.jsonl")
	os.WriteFile(jl, []byte(`{"env":"bfcl-simple","task_id":7,"text":"call the weather tool","tools":["get_weather"],"tags":["easy"]}
{"env":"tau2-retail","task_id":12345678901,"text":"return an order","tools":["a","b"],"tags":[]}
`), 0o644)
	fromPQ, err := catalog.ReadFile(pq)
	if err != nil {
		t.Fatal(err)
	}
	fromJL, err := catalog.Check(jl)
	if err != nil {
		t.Fatal(err)
	}
	norm := func(ts []record.Task) []record.Task {
		for i := range ts {
			if len(ts[i].Tags) == 0 {
				ts[i].Tags = nil
			}
		}
		return ts
	}
	if a, b := norm(fromPQ), norm(fromJL.Tasks()); !reflect.DeepEqual(a, b) {
		t.Errorf("parquet gives %+v\njsonl gives %+v", a, b)
	}
}

func TestParquetBadRowsNumbered(t *testing.T) {
	rows := verlRows(20)
	rows[2].DataSource = nil       // row 3: no env at all
	rows[16].ExtraInfo.Index = nil // row 17: no task id
	path := writeParquet(t, t.TempDir(), "bad.parquet", rows)

	rep, err := catalog.Check(path)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	want := []catalog.BadRow{{N: 3, Reason: record.ReasonMissingEnv}, {N: 17, Reason: record.ReasonMissingTask}}
	if !reflect.DeepEqual(rep.Bad, want) {
		t.Errorf("bad rows = %v, want %v", rep.Bad, want)
	}
	if len(rep.Rows) != 18 {
		t.Errorf("%d good rows, want 18", len(rep.Rows))
	}

	// The ingester's reader keeps the good rows and names the bad ones in one quarantine reason.
	tasks, err := catalog.ReadFile(path)
	var bad *record.BadLineError
	if !errors.As(err, &bad) {
		t.Fatalf("ReadFile error = %v, want a *record.BadLineError", err)
	}
	if len(tasks) != 18 || !strings.Contains(bad.Reason, "row 3: missing env") ||
		!strings.Contains(bad.Reason, "row 17: missing task") {
		t.Errorf("ReadFile = %d tasks, reason %q", len(tasks), bad.Reason)
	}
}

func TestBadParquetFile(t *testing.T) {
	dir := t.TempDir()
	good := writeParquet(t, dir, "good.parquet", verlRows(50))
	data, _ := os.ReadFile(good)
	cases := map[string][]byte{
		"jsonl named parquet": []byte(`{"env":"a","task_id":"1"}` + "\n"),
		"empty":               nil,
		"truncated":           data[:len(data)/2],
		"footer only":         data[len(data)-8:],
		"corrupt middle":      corruptMiddle(data),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".parquet")
			os.WriteFile(path, body, 0o644)
			tasks, err := catalog.ReadFile(path)
			if name == "corrupt middle" && err == nil {
				t.Skip("corruption landed in bytes parquet does not check") // compressed pages may absorb it
			}
			var fe *catalog.FileError
			var bad *record.BadLineError
			if !errors.As(err, &fe) || !errors.As(err, &bad) {
				t.Fatalf("err = %v, want a *catalog.FileError that is a *record.BadLineError", err)
			}
			if len(tasks) != 0 {
				t.Errorf("a bad file gave %d tasks", len(tasks))
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func corruptMiddle(data []byte) []byte {
	out := append([]byte(nil), data...)
	for i := 4; i < len(out)/2; i++ {
		out[i] ^= 0x5a
	}
	return out
}

func TestCheckJSONL(t *testing.T) {
	in := `{"env":"a","task_id":"1","text":"x"}

{"env":"a"}
not json
{"data_source":"b","extra_info":{"index":4},"prompt":[{"role":"user","content":"hi"}]}
{"env":"a","task":2}`
	rep, err := catalog.CheckJSONL(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []catalog.BadRow{{N: 3, Reason: record.ReasonMissingTask}, {N: 4, Reason: record.ReasonInvalidJSON}}
	if !reflect.DeepEqual(rep.Bad, want) {
		t.Errorf("bad = %v, want %v", rep.Bad, want)
	}
	var got []string
	for _, r := range rep.Rows {
		got = append(got, r.Task.Env+"/"+r.Task.Task+"@"+string(rune('0'+r.N)))
	}
	if w := []string{"a/1@1", "b/4@5", "a/2@6"}; !reflect.DeepEqual(got, w) {
		t.Errorf("rows = %v, want %v", got, w)
	}
	if rep.Blank != 1 {
		t.Errorf("blank = %d, want 1", rep.Blank)
	}
}

func TestUnknownExtension(t *testing.T) {
	_, err := catalog.Check("tasks.csv")
	if !errors.Is(err, catalog.ErrFormat) {
		t.Errorf("err = %v, want ErrFormat", err)
	}
}

func TestBadRowsSummary(t *testing.T) {
	bad := []catalog.BadRow{{1, "a"}, {2, "b"}, {3, "c"}}
	if got, want := catalog.BadRowsSummary(bad, 2), "3 bad rows: row 1: a; row 2: b; and 1 more"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := catalog.BadRowsSummary(bad[:1], 2), "1 bad row: row 1: a"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
