// Package cli is envsched's command line: one file a command, the flags they share in flags.go.
// It only parses flags, calls the library packages and returns errors; NewApp builds the app and
// ExitCode maps the error Run returns to the process's exit code.
package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/daemon"
	"github.com/envsched/envsched/storage"
)

// version is the release of envsched; the exchange protocol version is separate (1).
const version = "0.1.0"

// Exit codes of every command (PROTOCOL.md gives those of run).
const (
	exitOK     = 0
	exitError  = 1
	exitUsage  = 2
	exitLocked = 3
)

// usageError marks an error in how the command was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// NewApp builds the envsched command line with all its commands.
func NewApp() *cli.App {
	app := &cli.App{
		Name:    "envsched",
		Usage:   "choose which (environment, task) pairs an agent-RL trainer rolls out next",
		Version: version,
		Description: "envsched watches a trainer's rollout files, keeps statistics and a task graph in a bbolt " +
			"database, and answers batch requests (files in DIR/requests) with the tasks whose groups are most " +
			"likely to teach something. Start with `envsched demo`.",
		Commands: []*cli.Command{
			demoCommand(),
			runCommand(),
			ingestCommand(),
			statsCommand(),
			batchCommand(),
			simCommand(),
			catalogCommand(),
			statusCommand(),
			reportCommand(),
			exportCommand(),
			compactCommand(),
			helpCommand(),
		},
		Flags:          []cli.Flag{cli.HelpFlag}, // urfave/cli adds it only when it adds its own help command
		OnUsageError:   func(ctx *cli.Context, err error, _ bool) error { return unknownFlag(ctx, err) },
		ExitErrHandler: func(*cli.Context, error) {},
		Action:         unknownCommand,
	}
	markUsage(app.Commands)
	return app
}

// markUsage makes a bad flag of every command (and subcommand) a usageError, exit code 2, and
// an argument that is not a flag one too for every command that takes only flags (onlyFlags).
func markUsage(cmds []*cli.Command) {
	for _, c := range cmds {
		c.OnUsageError = func(ctx *cli.Context, err error, _ bool) error { return unknownFlag(ctx, err) }
		onlyFlags(c)
		requireFlags(c)
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = unknownCommand // `catalog importt`: urfave/cli said "No help topic for 'importt'"
		}
		if len(c.Subcommands) > 0 && c.Command("help") == nil {
			c.Subcommands = append(c.Subcommands, helpCommand()) // `catalog help importt` likewise
		}
		markUsage(c.Subcommands)
	}
}

// onlyFlags refuses, as a bad command line (exit 2), an argument that is not a flag given to
// a command that takes none (one without ArgsUsage, such as `catalog import FILE`): urfave/cli
// stops reading flags at the first such word, so every flag after it was dropped unread and the
// command ran with their defaults (`batch --dir D x --size 6` chose 64 tasks, `ingest --dir D x
// --db OTHER` wrote into DIR/envsched.db, `compact --dir D x --db OTHER` compacted the wrong
// database).
func onlyFlags(c *cli.Command) {
	if c.Action == nil || c.ArgsUsage != "" {
		return
	}
	action, hint := c.Action, ""
	for _, f := range c.Flags {
		if slices.Contains(f.Names(), "dir") {
			hint = " (the exchange directory is --dir DIR)"
		}
	}
	c.Action = func(ctx *cli.Context) error {
		if ctx.NArg() > 0 {
			return usageError{fmt.Errorf("envsched %s takes no arguments, only flags: %q and everything after it "+
				"were not read%s", ctx.Command.FullName(), ctx.Args().First(), hint)}
		}
		return action(ctx)
	}
}

// cliUsage reports the two usage errors urfave/cli makes without calling OnUsageError: a
// required flag left out, and an unknown command (its error types are not exported, so their
// messages are matched).
func cliUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "Required flag") || strings.HasPrefix(msg, "No help topic for")
}

// ExitCode maps an error returned by the app's Run to the process's exit code: 3 when the
// database or the exchange directory is held by another process, 2 for bad usage, 1 otherwise (0 is for a nil error).
func ExitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ue usageError
	switch {
	case errors.Is(err, storage.ErrLocked), errors.Is(err, daemon.ErrDirHeld):
		return exitLocked
	case errors.As(err, &ue), cliUsage(err):
		return exitUsage
	default:
		return exitError
	}
}
