package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRequestThatIsAFolderGetsAnErrorFile: requests/d.json as a folder stopped the daemon (and
// every restart); now it gets an error file, and the next request is answered.
func TestRequestThatIsAFolderGetsAnErrorFile(t *testing.T) {
	for _, m := range watchModes {
		for _, before := range []bool{false, true} {
			t.Run(m.name+map[bool]string{false: "/while serving", true: "/before start"}[before], func(t *testing.T) {
				dir := t.TempDir()
				mkdir := func() {
					if err := os.MkdirAll(filepath.Join(dir, "requests", "d.json"), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				if before {
					mkdir()
				}
				r := serveTest(t, testConfig(dir, m.poll))
				if !before {
					mkdir()
				}
				e := r.errorOf("d")
				if !strings.Contains(e["error"], "not a regular file (folder)") {
					t.Errorf("error file %v; want it to say the request is a folder", e)
				}
				writeRequest(t, dir, "next.json", `{"size": 2}`)
				r.batch("next")
			})
		}
	}
}

// TestExchangeFoldersTamperedWhileServing: folders removed or replaced, and names envsched
// writes taken by folders, while the daemon serves. Each case once stopped the daemon; now it
// goes on serving, says so in the log, and answers as soon as it can.
func TestExchangeFoldersTamperedWhileServing(t *testing.T) {
	cases := []struct {
		name    string
		tamper  func(t *testing.T, dir string)
		repair  func(t *testing.T, dir string) // nil: the daemon repairs it alone
		logSays string
	}{
		{"requests removed", func(t *testing.T, dir string) { removeRetrying(t, filepath.Join(dir, "requests")) },
			nil, "made it again"},
		{"batches removed", func(t *testing.T, dir string) { removeRetrying(t, filepath.Join(dir, "batches")) },
			nil, "made it again"},
		{"catalog removed", func(t *testing.T, dir string) { removeRetrying(t, filepath.Join(dir, "catalog")) },
			nil, "made it again"},
		{"rollouts removed", func(t *testing.T, dir string) { removeRetrying(t, filepath.Join(dir, "rollouts")) },
			nil, "made it again"},
		{"batches made a file", func(t *testing.T, dir string) {
			for { // the daemon may make the folder again (and write into it) between the two steps
				os.RemoveAll(filepath.Join(dir, "batches")) // "not empty" when it did: try again
				if os.WriteFile(filepath.Join(dir, "batches"), []byte("x"), 0o644) == nil {
					return
				}
			}
		}, func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, "batches"))) }, "is not a folder"},
		{"status.json a folder", func(t *testing.T, dir string) {
			for { // the daemon may write its status between the two steps
				must(t, os.RemoveAll(filepath.Join(dir, "status.json")))
				if os.Mkdir(filepath.Join(dir, "status.json"), 0o755) == nil {
					return
				}
			}
		}, nil, "status.json is a folder"},
		{"batch file a folder", func(t *testing.T, dir string) {
			must(t, os.Mkdir(filepath.Join(dir, "batches", "after.json"), 0o755))
		}, func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, "batches", "after.json"))) },
			"after.json is a folder"},
	}
	for _, m := range watchModes {
		for _, c := range cases {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				cfg := testConfig(dir, m.poll)
				cfg.SafetyInterval, cfg.StatusInterval = 50*time.Millisecond, 20*time.Millisecond
				r := serveTest(t, cfg)
				writeRequest(t, dir, "before.json", `{"size": 2}`)
				r.batch("before")
				c.tamper(t, dir)
				if c.repair == nil {
					r.waitLog(c.logSays) // the daemon notices alone
				}
				writeRequestRetrying(t, dir, "after.json", `{"size": 2}`)
				r.waitLog(c.logSays)
				if c.repair != nil {
					time.Sleep(100 * time.Millisecond) // a few sweeps with the fault in place
					c.repair(t, dir)
				}
				r.batch("after")
				select {
				case err := <-r.done:
					t.Fatalf("daemon stopped: %v\nlog:\n%s", err, r.log.String())
				default:
				}
			})
		}
	}
}

// writeRequestRetrying writes a request, making requests/ again when it is gone (the daemon
// makes it again too; either may come first).
func writeRequestRetrying(t *testing.T, dir, name, body string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(dir, "requests"), 0o755))
	writeRequest(t, dir, name, body)
}

// waitLog waits until the log holds s.
func (r *running) waitLog(s string) {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(r.log.String(), s) {
		if time.Now().After(deadline) {
			r.t.Fatalf("log never said %q\nlog:\n%s", s, r.log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// removeRetrying removes path and everything in it; the daemon may write into it meanwhile
// (making a folder removal fail with "not empty"), so it tries again.
func removeRetrying(t *testing.T, path string) {
	t.Helper()
	var err error
	for range 100 {
		if err = os.RemoveAll(path); err == nil {
			return
		}
	}
	t.Fatal(err)
}

// TestLinkedRequestsFolderIsNotRead: requests/ replaced, while the daemon serves, by a symbolic
// link to a folder elsewhere that holds a request. The daemon said it does not follow the link,
// then listed the folder through it and answered the request found there; now it reads nothing
// through it, and serves again once requests/ is a folder again.
func TestLinkedRequestsFolderIsNotRead(t *testing.T) {
	for _, m := range watchModes {
		t.Run(m.name, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			must(t, os.WriteFile(filepath.Join(elsewhere, "outside.json"), []byte(`{"size": 2}`), 0o644))
			cfg := testConfig(dir, m.poll)
			cfg.SafetyInterval, cfg.StatusInterval = 50*time.Millisecond, 20*time.Millisecond
			r := serveTest(t, cfg)
			writeRequest(t, dir, "before.json", `{"size": 2}`)
			r.batch("before")
			reqs := filepath.Join(dir, "requests")
			for { // the daemon may make the folder again between the two steps
				removeRetrying(t, reqs)
				if os.Symlink(elsewhere, reqs) == nil {
					break
				}
			}
			r.waitLog("is a symbolic link")
			time.Sleep(300 * time.Millisecond) // sweeps and polls with the link in place
			for _, name := range []string{"outside.json", "outside.error.json"} {
				if _, err := os.Lstat(filepath.Join(dir, "batches", name)); err == nil {
					t.Errorf("batches/%s written for a request read through the link", name)
				}
			}
			must(t, os.Remove(reqs))
			writeRequestRetrying(t, dir, "after.json", `{"size": 2}`)
			r.batch("after")
		})
	}
}

// TestDatabaseRemovedWhileServing: the database file removed (or replaced) while the daemon
// serves stops it with an error naming the file and what to do. It went on storing into the
// removed file, which no reading command could open (they said there was no database), and
// lost everything it stored since at its stop.
func TestDatabaseRemovedWhileServing(t *testing.T) {
	for _, replace := range []bool{false, true} {
		t.Run(fmt.Sprintf("replaced=%v", replace), func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(dir, true)
			cfg.StatusInterval = 20 * time.Millisecond
			r := serveTest(t, cfg)
			writeRequest(t, dir, "before.json", `{"size": 2}`)
			r.batch("before")
			db := filepath.Join(dir, "envsched.db")
			must(t, os.Remove(db))
			if replace {
				must(t, os.WriteFile(db, []byte("another file"), 0o600))
			}
			select {
			case err := <-r.done:
				r.cancel()
				r.cancel = nil // stopped already: nothing for the cleanup to check
				r.d.Close()
				if err == nil || !strings.Contains(err.Error(), "removed or replaced") || !strings.Contains(err.Error(), db) {
					t.Fatalf("daemon stopped with %v; want an error saying %s was removed or replaced", err, db)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("daemon still serving 30 s after its database was removed")
			}
		})
	}
}
