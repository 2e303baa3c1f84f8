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
//   - A rollout's round is its step when it has one, else the database's current round (the
//     step of the last stored answer). Its group is the group key it names, or, when it names
//     none, "the rollouts of its task at that round" (GroupKey).
//   - The reward range and decay λ are fixed when the database is created (meta bucket).
//   - Everything a Reader returns is copied out of bbolt's memory.
//
// # Layout (schema 1)
//
//	meta         schema, created, reward_min, reward_max, decay
//	counters     rollouts, quarantined, duplicates, clipped, requests_answered, last_request, round
//	envs         env -> stats.Env
//	tasks        env -> task -> seq, flags, stats.Task (fixed 113 bytes: fast to load)
//	catalog      env -> task -> text, tools, tags, embedding
//	rollouts     env -> task -> seq (uint64 BE) -> flags, reward, round, file, group, request, rollout id
//	groups       env -> task -> GroupKey -> stats.Group
//	rollout_ids  rollout_id -> 1 (the dedupe index)
//	files        id (uint64 BE) -> FileState
//	quarantine   seq (uint64 BE) -> QuarantineEntry
//	edges        env \x00 task -> adjacency list of Edge
//	requests     request ID -> stored answer bytes
package storage
