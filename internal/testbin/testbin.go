// Package testbin builds the real envsched binary for the tests that run it as a process (the
// Python client's end-to-end tests, the acceptance harness), once per test process.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Root is the repository's root folder (where go.mod is), found from this file's place.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Envsched builds the binary into a temporary folder the first time it is called in a test
// process, and returns its path; a failed build fails every test that asks for it. Call
// Remove from TestMain once the tests have run.
func Envsched(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "envsched-bin-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "envsched")
		cmd := exec.Command("go", "build", "-o", built.path, ".")
		cmd.Dir = Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// Remove deletes the built binary and its folder, if any.
func Remove() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// Python returns the path of python3, or skips the test, saying that what needs it is skipped.
func Python(t testing.TB, what string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: skipping " + what)
	}
	return py
}
