package graph

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/envsched/envsched/record"
)

// A task of more distinct words, tools or tags than MaxTaskWords and MaxTaskNames gives only the
// first of each, in order, every occurrence of a kept word counted; the graph's features and the
// feature prior's agree. Before, each of a hostile row's 150,000 distinct random words was a
// feature kept in the vocabulary (BENCHMARKS.md, "Huge catalogue texts").
func TestTaskFeaturesKeepTheFirstDistinctNames(t *testing.T) {
	var text, tools, tags []string
	for i := range MaxTaskWords + 500 {
		text = append(text, fmt.Sprintf("w%05d", i))
		if i%2 == 0 {
			text = append(text, "w00000") // repeated: one feature, counted each time
		}
	}
	for i := range MaxTaskNames + 300 {
		tools = append(tools, fmt.Sprintf(" tool%05d", i), "")
		tags = append(tags, fmt.Sprintf("tag%05d", i))
	}
	task := record.Task{Env: "e", Task: "huge", Text: strings.Join(text, " "), Tools: tools, Tags: tags}
	small := record.Task{Env: "e", Task: "small", Text: "w00000 w00001 w99999", Tools: []string{"tool00000"}}

	feats := taskFeatures(task, 1, 1)
	kinds := map[string]int{}
	for _, f := range feats {
		kinds[f.name[:2]]++
		switch f.name {
		case kindWord + "w02047", kindTool + "tool01023", kindTag + "tag01023":
		case kindWord + "w02048", kindTool + "tool01024", kindTag + "tag01024":
			t.Errorf("%q is past the first distinct names and was kept", f.name)
		case kindWord + "w00000":
			if want := 1 + math.Log(float64(1+(MaxTaskWords+500+1)/2)); f.w != want {
				t.Errorf("w00000 weighs %v, want %v (every occurrence counted)", f.w, want)
			}
		}
	}
	if kinds[kindWord] != MaxTaskWords || kinds[kindTool] != MaxTaskNames || kinds[kindTag] != MaxTaskNames {
		t.Fatalf("features by kind %v; want %d words, %d tools, %d tags", kinds, MaxTaskWords, MaxTaskNames, MaxTaskNames)
	}
	tasks := []record.Task{task, small}
	if got, want := TextFeatures(tasks), referenceFeatures(tasks); !reflect.DeepEqual(got, want) {
		t.Errorf("the feature prior's rows (Dim %d, NNZ %d) differ from the graph's (Dim %d, NNZ %d)", got.Dim, got.NNZ(), want.Dim, want.NNZ())
	}
	if d := TextFeatures(tasks).Dim; d != MaxTaskWords+2*MaxTaskNames+1 { // small adds w99999
		t.Errorf("Dim %d, want %d", d, MaxTaskWords+2*MaxTaskNames+1)
	}
}
