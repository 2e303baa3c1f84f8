//go:build soak

package e2e

import "testing"

// TestSoakCrashLoopFileChanges is the long crash loop with file changes: 200 kills over 8
// files. Run it with `go test -tags soak -run Soak -timeout 1h ./e2e/`.
func TestSoakCrashLoopFileChanges(t *testing.T) { crashLoopFiles(t, 200, 8) }
