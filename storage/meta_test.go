package storage_test

import (
	"fmt"
	"testing"

	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

// Tasks with metadata gives each task its own catalogue row and none to a task that has none,
// with described and undescribed tasks interleaved in every environment (the rows are read by
// walking the catalogue beside the tasks), as the single-task read does.
func TestTasksMetaOfInterleavedTasks(t *testing.T) {
	db := storagetest.Open(t)
	var rows []record.Task
	var rs []storage.Rollout
	for i := range 300 {
		env, task := fmt.Sprintf("env-%d", i%3), fmt.Sprintf("t%03d", i)
		if i%4 == 1 || i%7 == 0 { // never described: rollouts only
			rs = append(rs, rollout(env, task, 1, 1, "", "r"+task))
			continue
		}
		rows = append(rows, record.Task{Env: env, Task: task, Text: "text " + task, Tools: []string{"tool " + task}})
	}
	commit(t, db, &storage.Batch{Tasks: rows[:100], Rollouts: rs})
	commit(t, db, &storage.Batch{Tasks: rows[100:]}) // some in the task log, some folded
	want := map[string]string{}
	for _, r := range rows {
		want[r.Env+"/"+r.Task] = r.Text
	}
	err := db.View(func(r *storage.Reader) error {
		n := 0
		return r.Tasks(true, func(ti storage.TaskInfo) error {
			n++
			key := ti.Env + "/" + ti.Task.Task
			one, err := r.Task(ti.Env, ti.Task.Task)
			if err != nil {
				return err
			}
			if ti.Text != want[key] || one.Text != want[key] || (ti.Text != "" && ti.Tools[0] != "tool "+ti.Task.Task) {
				t.Errorf("%s: text %q (alone %q), tools %v; want %q", key, ti.Text, one.Text, ti.Tools, want[key])
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	storagetest.MustCheck(t, db, "")
}
