// Package storage is envsched's bbolt database and its only importer of bbolt: schema, file
// cursors, rollouts, statistics, quarantine, edges and stored answers, each change in one
// transaction.
//
// # Contracts
//
//   - Commit is the one write path of ingestion. A file's committed offset, the records read up to
//     it and the statistics they change are durable together (one fsync'd bbolt transaction) or
//     not at all: that is exactly-once.
//   - Statistics are stored per task, per group and per environment, and updated by the pure
//     rules of package stats inside the transaction. Opening never recomputes them.
//   - Rewards are clipped into the configured range here (and counted in the same transaction),
//     then normalised into [0, 1] for the statistics. The stored rollout keeps the clipped reward
//     in the configured scale.
//     Range.Normalise and Range.Scale are the one mapping between the two scales, both ways.
//   - The task graph's edges are stored by Commit but built by the caller, inside the write
//     transaction: Batch.Adjacency (in envsched, schedule.EdgeKeeper.OnTasks, reached through
//     ingest.Options.OnTasks) returns the adjacency lists to store with the tasks that make them.
//   - A rollout's round is its step when it has one, else the database's current round (the
//     step of the last stored answer). A group is the rollouts of one task at one round with one
//     group key; the rollouts that name no group form the group "" of their task and round.
//   - The reward range and decay λ are fixed when the database is created (meta bucket).
//   - Everything a Reader returns is copied out of bbolt's memory.
//
// # Layout (schema 1 and 2)
//
// Rollouts, groups, the dedupe index and the task log are written in arrival order: a commit
// appends a few pages to each instead of rewriting one page per task it touches (bbolt copies every page it
// changes; keying rollouts by task made ingestion I/O-bound at ~30k rollouts/s). Each rollout
// names its task by the task's seq; task_seqs maps seqs back to (env, task).
//
//	meta         schema, created, reward_min, reward_max, decay; predictor_state (drift offsets, with each answer)
//	counters     rollouts, quarantined, duplicates, clipped, requests_answered, last_request, round
//	envs         env -> stats.Env
//	tasks        env -> task -> seq, flags, stats.Task (fixed 113 bytes), as of the last checkpoint
//	task_log     seq -> task records changed since (appended by every commit; folded into tasks every 8 MiB)
//	catalog      env -> task -> text, tools, tags, embedding
//	task_seqs    task seq (uint64 BE) -> env \x00 task
//	rollouts     seq of the first (uint64 BE, arrival order) -> up to 64 rollouts: flags, task seq, reward,
//	             round, file, group, request, rollout id
//	groups       round (uint64 BE, sign flipped), task seq (uint64 BE), group as read -> stats.Group
//	id_hashes    seq -> (hash of rollout_id, rollout seq) pairs: the dedupe index, loaded into memory
//	files        id (uint64 BE) -> FileState
//	quarantine   seq (uint64 BE) -> QuarantineEntry
//	edges        env \x00 task -> adjacency list of Edge
//	requests     request ID -> stored answer bytes, or (schema 2) a reference to its parts
//	answer_parts part seq (uint64 BE) -> up to 900 bytes of an answer larger than that, appended
//	             (see answerparts.go); a database is raised to schema 2 by its first such answer
//	calib        the calibration ledger (see calib.go): pending predictions, cells per env and
//	             channel, reliability bins, per-answer cells, totals; created by the first answer
//	             stored with predictions; (schema 2) opening, the predictions of the answers since
//	             the last commit of rollouts, appended (see calibjournal.go)
package storage
