package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/catalog"
)

// maxBadRowsShown bounds the bad rows `catalog import` lists.
const maxBadRowsShown = 100

func catalogCommand() *cli.Command {
	return &cli.Command{
		Name:  "catalog",
		Usage: "manage the task catalogue (import)",
		Subcommands: []*cli.Command{
			catalogImportCommand(),
		},
	}
}

func catalogImportCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "check a JSONL or parquet catalogue file and copy it atomically into DIR/catalog",
		ArgsUsage: "FILE",
		Description: "import reads FILE (*.jsonl, or *.parquet such as a verl training file), checks every " +
			"row with the key rules of PROTOCOL.md, and lists the bad ones by number (\"row 17: missing " +
			"task\"). With no bad rows it copies FILE into DIR/catalog atomically, so that a running " +
			"envsched reads it once, whole. With bad rows it writes nothing and exits 1, unless " +
			"--skip-bad, which writes the good rows alone as DIR/catalog/NAME.jsonl.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", EnvVars: []string{"ENVSCHED_DIR"},
				Usage: "the exchange `DIR` (the file goes into DIR/catalog)"},
			&cli.BoolFlag{Name: "skip-bad", Usage: "write only the good rows (as JSON lines) instead of refusing the file"},
			&cli.StringFlag{Name: "name", Usage: "the file `NAME` in DIR/catalog (default: FILE's base name)"},
			&cli.BoolFlag{Name: "replace", Usage: "replace a file of that name in DIR/catalog that holds other bytes " +
				"(refused otherwise: the tasks only it lists would be retired)"},
		},
		Action: catalogImportAction,
	}
}

// importArgs are the arguments of `catalog import`.
type importArgs struct {
	file, dir, name  string
	skipBad, replace bool
}

// parseImportArgs reads the flags urfave/cli parsed before FILE and those after it (cli stops
// at the first argument, but `envsched catalog import FILE --dir DIR` is the natural order).
func parseImportArgs(c *cli.Context) (importArgs, error) {
	set := flag.NewFlagSet("import", flag.ContinueOnError)
	set.SetOutput(io.Discard)
	dir := set.String("dir", c.String("dir"), "")
	name := set.String("name", c.String("name"), "")
	skip := set.Bool("skip-bad", c.Bool("skip-bad"), "")
	replace := set.Bool("replace", c.Bool("replace"), "")
	var files []string
	for args := c.Args().Slice(); len(args) > 0; {
		if err := set.Parse(args); err != nil {
			return importArgs{}, err
		}
		if args = set.Args(); len(args) > 0 {
			files, args = append(files, args[0]), args[1:]
		}
	}
	a := importArgs{dir: *dir, name: *name, skipBad: *skip, replace: *replace}
	switch {
	case len(files) != 1:
		return a, errors.New("catalog import takes exactly one FILE")
	case a.dir == "":
		return a, errors.New("catalog import needs --dir DIR (or ENVSCHED_DIR)")
	}
	a.file = files[0]
	return a, nil
}

func catalogImportAction(c *cli.Context) error {
	a, err := parseImportArgs(c)
	if errors.Is(err, flag.ErrHelp) {
		// --help after FILE (`catalog import FILE --help`), which urfave/cli leaves unread: it
		// exited 2 with "flag: help requested".
		if l := c.Lineage(); len(l) > 1 {
			return cli.ShowCommandHelp(l[1], c.Command.Name)
		}
	}
	if err != nil {
		return usageError{err}
	}
	src := a.file
	// An interrupt (Ctrl-C, SIGTERM, SIGHUP) removes the temporary copy being written and checked
	// in DIR/catalog: killed by the signal, the import left it there for good, as large as the
	// source (a dot name, never read, never swept).
	onTemp, done := removeOnInterrupt("catalog import of " + src)
	res, err := catalog.Import(src, a.dir, catalog.ImportOptions{SkipBad: a.skipBad, Name: a.name,
		Replace: a.replace, OnTemp: onTemp})
	done()
	if res != nil && res.Report != nil {
		printBadRows(c.App.ErrWriter, res.Report.Bad)
	}
	if err != nil {
		return err
	}
	w := c.App.Writer
	if n := len(res.Report.Bad); n > 0 {
		fmt.Fprintf(w, "skipped %d bad rows\n", n)
	}
	fmt.Fprintf(w, "imported %s in %s from %s into %s\n", plural(res.Tasks, "task"), plural(res.Envs, "environment"), src, res.Path)
	if res.Rows != res.Tasks {
		fmt.Fprintf(w, "%s of it name a task of an earlier row again: such a task takes its last row\n", plural(res.Rows-res.Tasks, "row"))
	}
	return nil
}

// printBadRows lists bad rows, one a line, at most maxBadRowsShown of them.
func printBadRows(w io.Writer, bad []catalog.BadRow) {
	for i, b := range bad {
		if i == maxBadRowsShown {
			fmt.Fprintf(w, "... and %d more bad rows\n", len(bad)-i)
			return
		}
		fmt.Fprintln(w, b)
	}
}

// plural is n and noun, with an s when n is not 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
