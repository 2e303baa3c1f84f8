package cli

import (
	"strings"
	"testing"
)

// TestHelpOfAnUnknownCommandSaysWhatWasMeant (hostile15): `envsched help runn` said "No help
// topic for 'runn'" (exit 2), while `envsched runn` names the command meant; `catalog help
// improt` the same; `help catalog import` showed catalog's help, not import's; and the message
// of `envsched runn` sent the reader to "`envsched envsched --help`" (the app's own context was
// taken for a command's). Each now says what `envsched runn` says, with `envsched --help`.
func TestHelpOfAnUnknownCommandSaysWhatWasMeant(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "runn"}, `unknown command "runn" (did you mean run?)`},
		{[]string{"h", "stast"}, `unknown command "stast" (did you mean stats?)`},
		{[]string{"help", "catalog", "improt"}, `unknown command "improt" (did you mean import?): the commands are import (` + "`envsched catalog --help`"},
		{[]string{"catalog", "help", "improt"}, `unknown command "improt" (did you mean import?)`},
		{[]string{"help", "run", "extra"}, `envsched run has no subcommands: "extra" is not one`},
		{[]string{"runn"}, "(`envsched --help` says what each does)"},
		{[]string{"help", "runn"}, "(`envsched --help` says what each does)"},
	} {
		code, out, msg := runApp(tc.args...)
		if code != exitUsage || !strings.Contains(msg, tc.want) {
			t.Errorf("envsched %s: exit %d, %q; want exit 2 saying %q", strings.Join(tc.args, " "), code, msg, tc.want)
		}
		if out != "" {
			t.Errorf("envsched %s printed help as well:\n%.200s", strings.Join(tc.args, " "), out)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "COMMANDS:"},
		{[]string{"--help"}, "--help, -h"},
		{[]string{"help", "run"}, "envsched run - "},
		{[]string{"help", "catalog", "import"}, "envsched catalog import [command options] FILE"},
		{[]string{"catalog", "help", "import"}, "envsched catalog import [command options] FILE"},
		{[]string{"help", "run", "--dir", "x"}, "envsched run - "},
	} {
		code, out, msg := runApp(tc.args...)
		if code != exitOK || !strings.Contains(out, tc.want) {
			t.Errorf("envsched %s: exit %d (%s), printed %.300q; want it to show %q", strings.Join(tc.args, " "), code, msg, out, tc.want)
		}
	}
}
