package record

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/valyala/fastjson"
)

// Benchmarks of the rollout parser on the two line shapes of the ingest benchmark, side by side
// with the plain alternative (encoding/json into a struct of json.RawMessage fields):
//
//	go test ./record -run '^$' -bench . -benchtime 2s

// compactLines returns n rollout lines of about 110 bytes.
func compactLines(n int) [][]byte {
	r := rand.New(rand.NewPCG(3, 4))
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = fmt.Appendf(nil, `{"env":"tau2-retail","task":"task-%05d","reward":%d,"step":%d,"group_id":"g-%04d-%05d","rollout_id":"r-%010d"}`+"\n",
			r.IntN(20000), r.IntN(2), 41+i/1000, 41+i/1000, r.IntN(20000), i)
	}
	return lines
}

// verlLines returns n lines shaped like verl's rollout_data_dir dumps (input, output, gts,
// score, step) plus the reward function's data_source, task_id and uid: about 4.5 KB each, most
// of it prompt and response text with newlines, quotes and some non-ASCII.
func verlLines(n int) [][]byte {
	r := rand.New(rand.NewPCG(5, 6))
	words := strings.Fields(`the user asked for a refund of order #W2378156 because the item arrived
		damaged; please call get_order_details with {"order_id": "#W2378156"} then check the
		payment method and confirm — café naïve 東京 résumé — before calling return_delivered_order_items
		<tool_call> </tool_call> assistant: I will now look up the order. Tool result: {"status": "delivered"}`)
	text := func(size int) string {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(12) == 0 {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	lines := make([][]byte, n)
	for i := range lines {
		m := map[string]any{
			"input":       "system\nYou are a helpful customer service agent.\nuser\n" + text(2600),
			"output":      text(1500),
			"gts":         text(60),
			"score":       float64(r.IntN(2)),
			"step":        41 + i/1000,
			"data_source": "tau2-retail",
			"task_id":     strconv.Itoa(r.IntN(20000)),
			"uid":         fmt.Sprintf("%08x-%d-%d_0_%d", r.Uint32(), r.IntN(99), r.IntN(9), i%8),
		}
		b, err := json.Marshal(m) // like Python's json.dumps: keys sorted, escapes of \n and "
		if err != nil {
			panic(err)
		}
		lines[i] = append(b, '\n')
	}
	return lines
}

func benchLines[T any](b *testing.B, lines [][]byte, parse func([]byte) (T, error)) {
	total := 0
	for _, l := range lines {
		total += len(l)
	}
	b.SetBytes(int64(total / len(lines)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := parse(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time, user and system, of the whole process (the GC's included) in ns. On
// a busy machine it varies less than ns/op, which counts the time spent waiting for a core.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkParseRollout(b *testing.B) {
	shapes := []struct {
		name  string
		lines [][]byte
	}{{"compact", compactLines(1000)}, {"verl", verlLines(200)}}
	for _, s := range shapes {
		b.Run(s.name+"/scanner", func(b *testing.B) { benchLines(b, s.lines, ParseRollout) })
		b.Run(s.name+"/fastjson", func(b *testing.B) { benchLines(b, s.lines, parseRolloutFastjson) })
		b.Run(s.name+"/encoding-json-raw", func(b *testing.B) { benchLines(b, s.lines, parseRolloutStd) })
	}
}

func BenchmarkParseTask(b *testing.B) {
	lines := make([][]byte, 0, 1000)
	for i := range 1000 {
		lines = append(lines, fmt.Appendf(nil, `{"env":"tau2-retail","task_id":"%d","text":"You received your order #W%07d and want to exchange the items for other options.","tools":["exchange_delivered_order_items","get_order_details","get_user_details"],"source":"tau2-bench"}`+"\n", i, i))
	}
	benchLines(b, lines, ParseTask)
}

// rawRollout is the alternative: encoding/json fills only the keys named here and skips the rest
// (still scanning and validating every byte). Note that encoding/json matches struct keys without
// regard to case, one reason it is not the parser used.
type rawRollout struct {
	Env         json.RawMessage `json:"env"`
	DataSource  json.RawMessage `json:"data_source"`
	EnvClass    json.RawMessage `json:"env_class"`
	Environment json.RawMessage `json:"environment"`
	TaskName    json.RawMessage `json:"task_name"`
	Tag         json.RawMessage `json:"tag"`
	Domain      json.RawMessage `json:"domain"`
	TaskID      json.RawMessage `json:"task_id"`
	Task        json.RawMessage `json:"task"`
	Index       json.RawMessage `json:"index"`
	ItemID      json.RawMessage `json:"item_id"`
	ID          json.RawMessage `json:"id"`
	ExtraInfo   struct {
		DataSource json.RawMessage `json:"data_source"`
		TaskID     json.RawMessage `json:"task_id"`
		Index      json.RawMessage `json:"index"`
	} `json:"extra_info"`
	Reward     json.RawMessage `json:"reward"`
	Score      json.RawMessage `json:"score"`
	GroupID    json.RawMessage `json:"group_id"`
	UID        json.RawMessage `json:"uid"`
	GroupIndex json.RawMessage `json:"group_index"`
	Step       json.RawMessage `json:"step"`
	GlobalStep json.RawMessage `json:"global_step"`
	RequestID  json.RawMessage `json:"request_id"`
	RolloutID  json.RawMessage `json:"rollout_id"`
}

// parseRolloutStd is ParseRollout written with encoding/json, for the benchmark only (it skips
// some of the finer rules: null handling of nested keys, duplicate extra_info).
func parseRolloutStd(line []byte) (Rollout, error) {
	var raw rawRollout
	if err := json.Unmarshal(line, &raw); err != nil {
		return Rollout{}, &BadLineError{Reason: ReasonInvalidJSON}
	}
	firstRaw := func(ms ...json.RawMessage) json.RawMessage {
		for _, m := range ms {
			if len(m) > 0 && string(m) != "null" {
				return m
			}
		}
		return nil
	}
	var r Rollout
	env := firstRaw(raw.Env, raw.DataSource, raw.EnvClass, raw.Environment, raw.TaskName, raw.Tag, raw.Domain, raw.ExtraInfo.DataSource)
	if env == nil || json.Unmarshal(env, &r.Env) != nil || r.Env == "" {
		return Rollout{}, &BadLineError{Reason: ReasonMissingEnv}
	}
	task := firstRaw(raw.TaskID, raw.Task, raw.ExtraInfo.TaskID, raw.Index, raw.ExtraInfo.Index, raw.ItemID, raw.ID)
	if task == nil {
		return Rollout{}, &BadLineError{Reason: ReasonMissingTask}
	}
	if task[0] == '"' {
		if json.Unmarshal(task, &r.Task) != nil {
			return Rollout{}, &BadLineError{Reason: ReasonBadTask}
		}
	} else if s, ok := numberText(string(task)); ok {
		r.Task = s
	} else {
		return Rollout{}, &BadLineError{Reason: ReasonBadTask}
	}
	rw := firstRaw(raw.Reward, raw.Score)
	switch {
	case rw == nil:
		return Rollout{}, &BadLineError{Reason: ReasonMissingReward}
	case string(rw) == "true":
		r.Reward = 1
	case string(rw) == "false":
	default:
		x, err := strconv.ParseFloat(string(rw), 64)
		if err != nil && !math.IsInf(x, 0) {
			return Rollout{}, &BadLineError{Reason: ReasonBadReward}
		}
		if math.IsInf(x, 0) {
			return Rollout{}, &BadLineError{Reason: ReasonNonFiniteReward}
		}
		r.Reward = x
	}
	if s := firstRaw(raw.Step, raw.GlobalStep); s != nil {
		if n, err := strconv.ParseInt(string(s), 10, 64); err == nil {
			r.Step, r.HasStep = n, true
		}
	}
	stdID := func(m json.RawMessage) string {
		var s string
		if json.Unmarshal(m, &s) == nil {
			return s
		}
		t, _ := numberText(string(m))
		return t
	}
	if g := firstRaw(raw.GroupID, raw.UID, raw.GroupIndex); g != nil {
		r.Group = stdID(g)
		if raw.GroupID == nil && firstRaw(raw.UID) != nil {
			r.Group = uidPrompt(r.Group)
		}
	}
	if m := firstRaw(raw.RequestID); m != nil {
		r.RequestID = stdID(m)
	}
	if m := firstRaw(raw.RolloutID); m != nil {
		r.RolloutID = stdID(m)
	}
	return r, nil
}

// TestStdAlternativeAgrees keeps the benchmark honest: the three parsers give the same records on
// the benchmark lines.
func TestStdAlternativeAgrees(t *testing.T) {
	for _, lines := range [][][]byte{compactLines(50), verlLines(20)} {
		for _, l := range lines {
			a, errA := ParseRollout(l)
			b, errB := parseRolloutStd(l)
			c, errC := parseRolloutFastjson(l)
			if errA != nil || errB != nil || errC != nil || a != b || a != c {
				t.Fatalf("line %.200q:\nscanner  %+v, %v\nstd      %+v, %v\nfastjson %+v, %v", l, a, errA, b, errB, c, errC)
			}
		}
	}
}

// parseRolloutFastjson is the same parse on valyala/fastjson's tree (the parser used before the
// scanner), for the benchmark only: it reads env, task, reward, step and group by the same key
// rules, with fastjson's own leniencies (it takes "+1", "NaN", and leaves string contents unchecked).
func parseRolloutFastjson(line []byte) (Rollout, error) {
	p := parsers.Get()
	defer parsers.Put(p)
	v, err := p.ParseBytes(line)
	if err != nil {
		return Rollout{}, &BadLineError{Reason: ReasonInvalidJSON}
	}
	o, err := v.Object()
	if err != nil {
		return Rollout{}, &BadLineError{Reason: ReasonNotObject}
	}
	var f [nKeys]*fastjson.Value
	o.Visit(func(k []byte, v *fastjson.Value) {
		if string(k) == "extra_info" {
			v.GetObject().Visit(func(k []byte, v *fastjson.Value) {
				switch string(k) {
				case "data_source":
					f[kXDataSource] = v
				case "task_id":
					f[kXTaskID] = v
				case "index":
					f[kXIndex] = v
				}
			})
		} else if i, ok := topKey(k); ok && v.Type() != fastjson.TypeNull {
			f[i] = v
		}
	})
	first := func(keys ...key) *fastjson.Value {
		for _, k := range keys {
			if f[k] != nil {
				return f[k]
			}
		}
		return nil
	}
	id := func(v *fastjson.Value) string {
		if v == nil {
			return ""
		}
		if v.Type() == fastjson.TypeNumber {
			s, _ := numberText(v.String())
			return s
		}
		return string(v.GetStringBytes())
	}
	var r Rollout
	if env := first(envKeys...); env == nil || env.Type() != fastjson.TypeString {
		return Rollout{}, &BadLineError{Reason: ReasonMissingEnv}
	} else {
		r.Env = string(env.GetStringBytes())
	}
	if r.Task = id(first(taskKeys...)); r.Task == "" {
		return Rollout{}, &BadLineError{Reason: ReasonMissingTask}
	}
	switch rw := first(kReward, kScore); {
	case rw == nil:
		return Rollout{}, &BadLineError{Reason: ReasonMissingReward}
	case rw.Type() == fastjson.TypeTrue:
		r.Reward = 1
	case rw.Type() == fastjson.TypeNumber:
		r.Reward = rw.GetFloat64()
	}
	if s := first(kStep, kGlobalStep); s != nil {
		if n, err := s.Int64(); err == nil {
			r.Step, r.HasStep = n, true
		}
	}
	if f[kGroupID] == nil && f[kUID] != nil {
		r.Group = uidPrompt(id(f[kUID]))
	} else {
		r.Group = id(first(kGroupID, kGroupIndex))
	}
	r.RequestID, r.RolloutID = id(f[kRequestID]), id(f[kRolloutID])
	return r, nil
}
