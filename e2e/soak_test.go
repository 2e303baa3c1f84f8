//go:build soak

package e2e

import "testing"

// TestSoakCrashLoop is the long crash loop: 300 kills over 8 files. Run it with
// `go test -tags soak -run Soak -timeout 1h ./e2e/`.
func TestSoakCrashLoop(t *testing.T) { crashLoop(t, 300, 8) }
