package storage_test

import (
	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/storage"
)

// storeBenchAnswer stores an answer choosing chosen, with a prediction per task.
func storeBenchAnswer(db *storage.DB, id string, step int64, chosen []storage.TaskKey, group int) error {
	a := storage.AnswerRecord{ID: id, Step: step, Answer: []byte(id), Chosen: chosen, GroupSize: group}
	for i, k := range chosen {
		a.Predictions = append(a.Predictions, ledger.Prediction{Env: k.Env, Task: k.Task, Rank: i + 1,
			PDegenerate: 0.3, Mean: 0.5, Random: i%20 == 0})
	}
	return db.StoreAnswerRecord(a)
}
