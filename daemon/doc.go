// Package daemon is `envsched run`: the event loop that serves one exchange directory. It owns
// every write to the database, answers batch requests behind the ingest barrier, and publishes
// batch, error and status files atomically.
//
// # Life
//
// New creates DIR's folders (refusing one that is a symbolic link), opens the database (an
// error wrapping storage.ErrLocked within about a second when another process holds it),
// removes the temporary files a crash left (fsutil.SweepTemp) and starts watching before
// anything is read, so that no change is missed. Run ingests the backlog, answers the requests
// already there, then serves changes until its context is done, finishing the work in hand;
// Close releases the database.
//
// # Contracts
//
//   - One writer. Every database write happens in Run's goroutine: ingestion, answers, status.
//     (The goroutine of an early batch file writes only that temporary file.)
//     The snapshot server (package snapshot, for `stats`, `report` and `export` while the daemon
//     runs) and the metrics endpoint only read, each in a goroutine of its own.
//   - The barrier. Before answering a request the daemon ingests everything present now, hence
//     every complete line written before the request appeared. Data files that change without a
//     request are read together at most every Config.DataDelay, so that one commit takes many
//     appends.
//   - Watching is a hint. File events (package watch) say where to look (a request renamed
//     into DIR/requests is handed over without the debounce: readyRequest); a rescan every
//     Config.SafetyInterval (or polling alone, Config.Poll) is enough on its own, and an event
//     overflow turns into a full rescan.
//   - Answers. A request is answered by the Answerer (schedule.Configured: the answer is stored
//     in the database before its file is visible), then published as DIR/batches/ID.json: an
//     EarlyAnswerer hands the bytes over before its store, and the fsync'd temporary file
//     (fsutil.Prepare) is written meanwhile, from a goroutine; it is renamed into place only
//     after the store returned (otherwise fsutil.WriteAtomic after it), with the crash points
//     CrashBeforeStore, CrashBeforeRename and CrashBeforeDirSync between the steps. A request answered before gets the stored answer again, byte for byte; a bad one
//     gets DIR/batches/ID.error.json and the daemon goes on. Any other error stops Run.
//   - Ingestion is schedule.NewIngester: package ingest, parquet catalogues read by package
//     catalog, and the task graph's edges committed with their tasks.
//   - Status. DIR/status.json is rewritten atomically at least every Config.StatusInterval, and
//     after the backlog, answered requests and rescans.
//
// The parts can be replaced for tests (WithIngester, WithAnswerer). Config.CrashPoint and
// Config.OverflowEvery are test-only knobs that make the process die at a named point and
// simulate lost watcher events (see the Crash* constants and README's "Test-only knobs").
package daemon
