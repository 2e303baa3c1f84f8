// Package export writes what an envsched database holds as JSON lines or CSV, for analysis in
// pandas or a spreadsheet: rollouts, tasks (with their statistics) and batches (the stored
// answers).
//
// Rollouts exported as JSON lines are valid rollout lines of the exchange protocol, and tasks
// exported as JSON lines are valid catalogue rows: put them into a fresh exchange directory's
// rollouts/ and catalog/ folders and ingest them, and the statistics come out the same (the
// rollouts of each task are written in the order they were counted). The reward written is
// the stored one, already clipped into the configured range.
package export
