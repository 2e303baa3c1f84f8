// Package cli is envsched's command line: one file a command, the flags they share in flags.go.
// It only parses flags, calls the library packages and returns errors; NewApp builds the app and
// ExitCode maps the error Run returns to the process's exit code.
package cli

import (
	"errors"
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
