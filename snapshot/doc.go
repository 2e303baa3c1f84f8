// Package snapshot lets envsched's reading commands (stats, report, export) read a consistent
// copy of a database that a running daemon holds.
//
// bbolt locks its file: while `envsched run` has the database open, no other process can open
// it, not even for reading. The reader therefore asks the daemon for a copy through files in
// the folder DIR/snapshots (a folder of envsched's own; the trainer's folders are untouched):
//
//  1. the reader writes NAME.want atomically (temporary file, fsync, rename);
//  2. the daemon, polling the folder from a goroutine of its own (Serve), writes the whole
//     database from one read transaction into a temporary file, fsyncs it, renames it to
//     NAME.db and fsyncs the folder, then removes NAME.want; when it cannot, it writes
//     NAME.error with the reason instead;
//  3. the reader opens NAME.db read-only and unlinks it at once: the open file stays readable
//     until the reader closes it, and nothing is left behind.
//
// The copy is consistent (one bbolt read transaction) and never torn (it appears by rename).
// The daemon is never blocked: bbolt serves the read transaction beside the writer, and the
// copy is made outside the daemon's event loop. The cost is disk space for one copy while it
// is read, and, while the copy is written, freed pages that the writer cannot reuse yet.
//
// When no process holds the database, Open copies it beside itself under a shared lock held
// only for the copy, and reads the copy: a long report never keeps a starting daemon out
// (Options.Direct reads in place instead).
package snapshot
