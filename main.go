// Command envsched is a task scheduler for agent reinforcement learning that runs beside any
// trainer and speaks to it through files (see README.md and PROTOCOL.md).
package main

import (
	"errors"
	"fmt"
	"os"

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
	return &cli.App{
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
	case errors.As(err, &ue):
		return exitUsage
	default:
		return exitError
	}
}
