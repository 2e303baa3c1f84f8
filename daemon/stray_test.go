package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStrayExchangeFoldersAreLogged: a folder of DIR named like an exchange folder but not one
// (rollout/, Rollouts/, catalogue/, request/) is named in the log once, whether it was there at
// start or made while the daemon runs: the trainer's rollouts, catalogue or requests written
// there were ignored without a word. Other folders, and files of such names, are not named.
func TestStrayExchangeFoldersAreLogged(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "rollout"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "rollout", "r.jsonl"), []byte(`{"env":"e0","task_id":"t1","reward":1}`+"\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "logs"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "batch"), nil, 0o644))
	cfg := testConfig(dir, false)
	cfg.SafetyInterval = 20 * time.Millisecond // the sweep that looks at the folders again
	r := serveTest(t, cfg)
	r.waitLog("path=" + filepath.Join(dir, "rollout") + " ")
	must(t, os.MkdirAll(filepath.Join(dir, "Catalogue"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "request"), 0o755))
	r.waitLog("path=" + filepath.Join(dir, "Catalogue") + " ")
	r.waitLog("path=" + filepath.Join(dir, "request") + " ")
	time.Sleep(100 * time.Millisecond) // more sweeps: each folder is still named once
	r.stop()
	logs := r.log.String()
	for _, name := range []string{"rollout", "Catalogue", "request"} {
		if n := strings.Count(logs, "path="+filepath.Join(dir, name)+" "); n != 1 {
			t.Errorf("%s named %d times; want once:\n%s", name, n, logs)
		}
	}
	for _, name := range []string{"logs", "batch"} {
		if strings.Contains(logs, "path="+filepath.Join(dir, name)+" ") {
			t.Errorf("%s named in the log:\n%s", name, logs)
		}
	}
}
