package ingest

import (
	"fmt"
	"testing"
)

func rl(env, task string, reward float64, id string) string {
	return fmt.Sprintf(`{"env":%q,"task":%q,"reward":%g,"step":1,"rollout_id":%q}`+"\n", env, task, reward, id)
}

func TestScanBasic(t *testing.T) {
	e := newEnv(t, Options{})
	e.write("catalog/tasks.jsonl", `{"env":"a","task":"1","text":"hello"}`+"\n")
	e.write("rollouts/x/run.jsonl", rl("a", "1", 1, "r1")+rl("a", "2", 0, "r2")+rl("a", "2", 0, "r2")+"not json\n"+`{"env":"a"`)
	s := e.scan()
	if s.Rollouts != 2 || s.Duplicates != 1 || s.Quarantined != 1 || s.TaskRows != 1 || s.NewTasks != 2 {
		t.Fatalf("summary %+v", s)
	}
	if s2 := e.scan(); s2.Rollouts != 0 || s2.Commits != 0 {
		t.Fatalf("second scan %+v", s2)
	}
	e.append("rollouts/x/run.jsonl", `,"task":"3","reward":1}`+"\n")
	if s3 := e.scan(); s3.Rollouts != 1 {
		t.Fatalf("third scan %+v", s3)
	}
	e.reopen()
	if s4 := e.scan(); s4.Rollouts != 0 {
		t.Fatalf("after reopen %+v", s4)
	}
}
