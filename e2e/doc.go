// Package e2e drives the real envsched binary (built by TestMain with `go build` into a
// temporary folder) with real files and real signals: crash loops, crash points, both watch
// modes, bursts, bad inputs, a full disk, exit codes, and the request-latency benchmark.
package e2e
