package procview

import (
	"os/exec"
	"strings"
	"testing"
)

// TestViewTellsNamespaces: the view is 16 hex digits, the same for every process of this
// namespace (a child process), and another in a new PID namespace (unshare, where it can run).
func TestViewTellsNamespaces(t *testing.T) {
	v := View()
	if v == "" {
		t.Skip("no boot id or PID namespace link here")
	}
	if len(v) != Digits || strings.Trim(v, "0123456789abcdef") != "" {
		t.Fatalf("view %q: want %d hex digits", v, Digits)
	}
	if !Visible(v) || !Visible("") || Visible("0000000000000000") && v != "0000000000000000" {
		t.Errorf("Visible: own %v, none %v, another %v", Visible(v), Visible(""), Visible("0000000000000000"))
	}
	if err := exec.Command("unshare", "--pid", "--fork", "true").Run(); err != nil {
		t.Skipf("cannot make a PID namespace here: %v", err)
	}
	out, err := exec.Command("unshare", "--pid", "--fork", "sh", "-c", "readlink /proc/self/ns/pid").Output()
	if err != nil {
		t.Fatal(err)
	}
	here, _ := exec.Command("readlink", "/proc/self/ns/pid").Output()
	if string(out) == string(here) {
		t.Errorf("a new PID namespace reads the same link %q", out)
	}
}
