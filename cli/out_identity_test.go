package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutIdentityAliasesRefused (fix11, siblings of review11's hard-link finding): every
// command with --out (export, report) refuses a target that is the database, or a file or
// folder of DIR's input and output folders, under another name: a hard link opened by the shell
// and given as /proc/self/fd/N (written into in place), a hard link given by path, and a path
// through a bind mount's alias of DIR (when this machine lets the test mount one). Each file
// of DIR is left as it was.
func TestOutIdentityAliasesRefused(t *testing.T) {
	dir := exchangeDir(t)
	if code, _, msg := runApp("ingest", "--dir", dir); code != exitOK {
		t.Fatalf("ingest: exit %d: %s", code, msg)
	}
	db := filepath.Join(dir, "envsched.db")
	rollout := filepath.Join(dir, "rollouts", "r.jsonl")
	catalog := filepath.Join(dir, "catalog", "tasks.jsonl")
	for _, p := range []string{db, rollout, catalog} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the exchange directory has no %s: %v", p, err)
		}
	}
	snapshot := func() map[string][]byte {
		m := map[string][]byte{}
		for _, p := range []string{db, rollout, catalog} {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			m[p] = b
		}
		return m
	}
	before := snapshot()
	aside := t.TempDir()
	check := func(name string, args ...string) {
		t.Helper()
		code, _, errOut := opsApp(t, args...)
		if code != exitUsage {
			t.Errorf("%s: %s: exit %d %q; want 2", name, strings.Join(args, " "), code, strings.TrimSpace(errOut))
		}
		for p, b := range snapshot() {
			if !bytes.Equal(before[p], b) {
				t.Fatalf("%s: %s changed", name, p)
			}
		}
	}
	for i, target := range []string{db, rollout, catalog} {
		link := filepath.Join(aside, fmt.Sprintf("link%d", i))
		if err := os.Link(target, link); err != nil {
			t.Skipf("no hard links here: %v", err)
		}
		f, err := os.OpenFile(link, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		fd := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
		for _, cmd := range [][]string{
			{"export", "--dir", dir, "--what", "tasks", "--out"},
			{"report", "--dir", dir, "--out"},
		} {
			check("descriptor of a hard link of "+filepath.Base(target), append(cmd, fd)...)
			check("a hard link of "+filepath.Base(target)+" by path", append(cmd, link)...)
			check("a symbolic link to "+filepath.Base(target), append(cmd, symlinkTo(t, target))...)
		}
		f.Close()
	}

	if err := os.MkdirAll(filepath.Join(dir, "requests"), 0o755); err != nil {
		t.Fatal(err)
	}
	alias := t.TempDir()
	if out, err := exec.Command("mount", "--bind", dir, alias).CombinedOutput(); err != nil {
		t.Logf("no bind mount here (%v: %s): the aliases by mount are not tried", err, bytes.TrimSpace(out))
		return
	}
	defer exec.Command("umount", alias).Run()
	for _, out := range []string{
		filepath.Join(alias, "envsched.db"),
		filepath.Join(alias, "rollouts", "new.jsonl"),
		filepath.Join(alias, "catalog", "new.jsonl"),
		filepath.Join(alias, "requests", "r.json"),
	} {
		check("a bind mount's alias", "export", "--dir", dir, "--what", "tasks", "--out", out)
		check("a bind mount's alias", "report", "--dir", dir, "--out", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "rollouts", "new.jsonl")); err == nil {
		t.Error("a file was written into DIR/rollouts through the alias")
	}
}

func symlinkTo(t *testing.T, target string) string {
	t.Helper()
	l := filepath.Join(t.TempDir(), "sym")
	if err := os.Symlink(target, l); err != nil {
		t.Fatal(err)
	}
	return l
}
