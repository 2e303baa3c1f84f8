package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// The messages of the three mistakes of a command line that urfave/cli words for its own use:
// a required flag left out (it printed the command's whole help, 60 lines for batch, then
// `Required flag "dir" not set`), an unknown command (`No help topic for 'runn'`), and an
// unknown flag (`flag provided but not defined: -dri`). Each now says, in one line, what is
// missing or meant and where the list is.

// requireFlags makes the Required flags of c checked by its action, after urfave/cli has read
// the command line and the environment: a flag left out is one line naming it, what it is and
// its ENVSCHED_* variable, exit code 2, without the help printed first.
func requireFlags(c *cli.Command) {
	if c.Action == nil {
		return
	}
	var required []*cli.StringFlag
	for _, f := range c.Flags {
		if sf, ok := f.(*cli.StringFlag); ok && sf.Required {
			sf.Required = false
			required = append(required, sf)
		}
	}
	if len(required) == 0 {
		return
	}
	action := c.Action
	c.Action = func(ctx *cli.Context) error {
		var missing []string
		for _, f := range required {
			if !ctx.IsSet(f.Name) {
				missing = append(missing, missingFlag(f))
			}
		}
		if len(missing) > 0 {
			return usageError{fmt.Errorf("envsched %s needs %s (`envsched %s --help` explains every flag)",
				ctx.Command.FullName(), strings.Join(missing, "; and "), ctx.Command.FullName())}
		}
		return action(ctx)
	}
}

// missingFlag says what a required flag left out is: `--dir DIR, the exchange DIR holding
// catalog/ and rollouts/ (or set ENVSCHED_DIR)`.
func missingFlag(f *cli.StringFlag) string {
	placeholder, usage := unquoteUsage(f.Usage)
	s := "--" + f.Name
	if placeholder != "" {
		s += " " + placeholder
	}
	if i := strings.Index(usage, " ("); i > 0 {
		usage = usage[:i] // what it is; --help has the rest
	}
	s += ", " + usage
	if len(f.EnvVars) > 0 {
		s += " (or set " + f.EnvVars[0] + ")"
	}
	return s
}

// unknownCommand is the app's action: with no argument the help, as before; with one, which
// is no command, a usage error naming the commands and the nearest one.
func unknownCommand(ctx *cli.Context) error {
	if ctx.NArg() == 0 {
		if ctx.Command != nil && ctx.Command.Name != "" {
			return cli.ShowSubcommandHelp(ctx)
		}
		return cli.ShowAppHelp(ctx)
	}
	cmds, where := ctx.App.Commands, "envsched"
	if !isRoot(ctx) { // a command's subcommand (catalog import)
		cmds, where = ctx.Command.Subcommands, "envsched "+ctx.Command.FullName()
	}
	return noCommand(ctx.Args().First(), cmds, where)
}

// isRoot says whether ctx is the app's own (the root command's, whose Name is the app's: the
// test `ctx.Command.Name != ""` took it for a subcommand and said "`envsched envsched --help`").
func isRoot(ctx *cli.Context) bool {
	l := ctx.Lineage()
	return ctx.Command == nil || len(l) < 2 || l[1].Command == nil
}

// noCommand is the usage error for word, which is none of cmds (the commands of where).
func noCommand(word string, cmds []*cli.Command, where string) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			names = append(names, c.Name)
		}
	}
	return usageError{fmt.Errorf("unknown command %q%s: the commands are %s (`%s --help` says what each does)",
		word, didYouMean(word, names, ""), strings.Join(names, ", "), where)}
}

// helpCommand is `help [COMMAND [SUBCOMMAND]]` (alias `h`), in place of urfave/cli's own: a word
// that is no command gets the usage error `envsched runn` gets, with the command meant (the
// library's said "No help topic for 'runn'"), and `help catalog import` shows import's help (the
// library's showed catalog's, whatever followed). What it prints otherwise is the library's.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "Shows a list of commands or help for one command",
		ArgsUsage: "[command]",
		Action:    helpAction,
	}
}

func helpAction(ctx *cli.Context) error {
	l := ctx.Lineage()
	if len(l) < 2 {
		return cli.ShowAppHelp(ctx)
	}
	parent := l[1] // the context of the command that holds this help: the app's or catalog's
	root := isRoot(parent)
	cmds, where := parent.App.Commands, "envsched"
	if !root {
		cmds, where = parent.Command.Subcommands, "envsched "+parent.Command.FullName()
	}
	args := ctx.Args().Slice()
	if len(args) == 0 {
		if root {
			return cli.ShowAppHelp(parent)
		}
		return cli.ShowSubcommandHelp(parent)
	}
	if i := slices.IndexFunc(args, func(a string) bool { return strings.HasPrefix(a, "-") }); i > 0 {
		args = args[:i] // `help run --dir x`: run's help, as before
	}
	var found *cli.Command
	for _, word := range args {
		found = nil
		for _, c := range cmds {
			if c.HasName(word) {
				found = c
				break
			}
		}
		if found == nil {
			if len(cmds) == 0 { // `help run extra`
				return usageError{fmt.Errorf("%s has no subcommands: %q is not one (`%s --help` says what it does)",
					where, word, where)}
			}
			return noCommand(word, cmds, where)
		}
		cmds, where = found.Subcommands, where+" "+found.Name
	}
	if len(args) == 1 {
		return cli.ShowCommandHelp(parent, args[0])
	}
	if found.HelpName == "" {
		found.HelpName = where
	}
	templ := cli.CommandHelpTemplate
	if len(found.Subcommands) > 0 {
		templ = cli.SubcommandHelpTemplate
	}
	cli.HelpPrinter(ctx.App.Writer, templ, found)
	return nil
}

// unknownFlag rewords urfave/cli's (the flag package's) "flag provided but not defined: -dri"
// as "unknown flag -dri (did you mean --dir?)", naming where the flags are listed; any other
// usage error is returned as it is.
func unknownFlag(ctx *cli.Context, err error) error {
	const prefix = "flag provided but not defined: "
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) || ctx == nil || ctx.Command == nil {
		return usageError{err}
	}
	given := strings.TrimPrefix(msg, prefix)
	var names []string
	for _, f := range ctx.Command.Flags {
		names = append(names, f.Names()...)
	}
	name := ctx.Command.FullName()
	if name == "" {
		name = ctx.App.Name
	} else {
		name = "envsched " + name
	}
	given = strings.TrimLeft(given, "-")
	dashes := "--"
	if len(given) == 1 {
		dashes = "-"
	}
	return usageError{fmt.Errorf("unknown flag %s%s%s (`%s --help` lists the flags)", dashes, given,
		didYouMean(given, names, "--"), name)}
}

// didYouMean is ` (did you mean X?)` for the name of names nearest to word: the fewest edits
// away (insertions, deletions, substitutions, swaps of two neighbouring letters), at most one
// for a word of four letters or fewer and two for a longer one; else the first name that word
// starts (three letters or more). "" when there is none. Names of one letter are never offered.
func didYouMean(word string, names []string, prefix string) string {
	limit := 2
	if len(word) <= 4 {
		limit = 1
	}
	best, bestRank := "", 2*limit+2
	for _, n := range names {
		if len(n) < 2 {
			continue
		}
		rank := 2 * editDistance(strings.ToLower(word), strings.ToLower(n))
		if rank > 2*limit {
			rank = 2*limit + 2
			if len(word) >= 3 && strings.HasPrefix(n, word) {
				rank = 2*limit + 1 // a start of the name: after every name within the edits
			}
		}
		if rank < bestRank {
			best, bestRank = n, rank
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s%s?)", prefix, best)
}

// editDistance is the optimal string alignment distance of a and b in runes: insertions,
// deletions, substitutions and swaps of two neighbouring runes ("dri" is one from "dir"). a and
// b are command and flag names typed by hand; longer than 64 runes they are as far as the
// longer is long.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return max(len(ra), len(rb))
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// unquoteUsage is a flag's usage text with its back-quoted placeholder unquoted, and the
// placeholder ("the exchange `DIR` holding ..." gives DIR and "the exchange DIR holding ...").
func unquoteUsage(usage string) (string, string) {
	start := strings.IndexByte(usage, '`')
	if start < 0 {
		return "", usage
	}
	end := strings.IndexByte(usage[start+1:], '`')
	if end < 0 {
		return "", usage
	}
	name := usage[start+1 : start+1+end]
	return name, usage[:start] + name + usage[start+2+end:]
}
