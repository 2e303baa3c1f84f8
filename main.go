// Command envsched is a task scheduler for agent reinforcement learning that runs beside any
// trainer and speaks to it through files (see README.md and PROTOCOL.md).
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

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

func newApp() *cli.App {
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
		},
		OnUsageError:   func(_ *cli.Context, err error, _ bool) error { return usageError{err} },
		ExitErrHandler: func(*cli.Context, error) {},
	}
	markUsage(app.Commands)
	return app
}

// markUsage makes a bad flag of every command (and subcommand) a usageError, exit code 2.
func markUsage(cmds []*cli.Command) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usageError{err} }
		}
		markUsage(c.Subcommands)
	}
}

// cliUsage reports the two usage errors urfave/cli makes without calling OnUsageError: a
// required flag left out, and an unknown command (its error types are not exported, so their
// messages are matched).
func cliUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "Required flag") || strings.HasPrefix(msg, "No help topic for")
}

func main() {
	os.Exit(run(os.Args))
}

// run executes the app and maps its error to an exit code; it is main without os.Exit, so that
// tests can call it.
func run(args []string) int {
	err := newApp().Run(args)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(os.Stderr, "envsched: %v\n", err)
	return exitCode(err)
}

func exitCode(err error) int {
	var ue usageError
	switch {
	case errors.Is(err, storage.ErrLocked):
		return exitLocked
	case errors.As(err, &ue), cliUsage(err):
		return exitUsage
	default:
		return exitError
	}
}
