package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Idle connections to --metrics-addr do not stop the daemon. Each one kept alive after its
// scrape (a client that opens a new connection per scrape and never closes it, or anyone on
// the loopback) held a descriptor for good; under the descriptor limit the daemon then stopped
// with exit 1 ("too many open files" creating status.json's temporary file) and its trainer's
// request was never answered. The daemon runs with a limit of 64 descriptors so that 200
// connections reach it.
func TestIdleMetricsConnectionsDoNotStopTheDaemon(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	dir := filepath.Join(t.TempDir(), "x")
	ensureCatalog(t, dir)
	args := []string{"run", "--dir", dir, "--poll-interval", "20ms", "--status-interval", "100ms",
		"--log-format", "json", "--metrics-addr", addr}
	d := startCmd(t, dir, "", nil, exec.Command("/bin/sh", append([]string{"-c", `ulimit -n 64 && exec "$0" "$@"`, binary}, args...)...))
	d.waitReady()

	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range 200 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	// The first connections get their scrape and stay open (keep-alive); the rest wait.
	resp, err := http.ReadResponse(bufio.NewReader(conns[0]), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the first scrape: %v %v\nstderr:\n%s", resp, err, tail(d.stderr.String(), 2000))
	}
	resp.Body.Close()
	time.Sleep(time.Second) // heartbeats at 100 ms: each needs a descriptor
	writeRequest(t, dir, "after-conns", `{"size": 2}`)
	waitBatch(t, d, "after-conns")
	if d.exited() {
		t.Fatalf("the daemon stopped (exit %d)\nstderr:\n%s", d.state.ExitCode(), tail(d.stderr.String(), 2000))
	}
}
