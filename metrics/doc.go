// Package metrics serves envsched's Prometheus metrics over HTTP (`envsched run
// --metrics-addr`). The counts come from the database at scrape time (so they are the whole
// database's, and survive restarts, like status.json's); the request latency histogram is fed
// by the daemon as it answers; the ingest lag is measured on the exchange directory at scrape
// time (bytes of rollout and catalogue files not yet read).
//
// A scrape only reads: one short bbolt read transaction (beside the daemon's writer, never
// blocking it), a stat of the database file and a listing of DIR/catalog and DIR/rollouts.
package metrics
