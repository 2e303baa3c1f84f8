// Command envsched is a task scheduler for agent reinforcement learning that runs beside any
// trainer and speaks to it through files (see README.md and PROTOCOL.md). The commands live in
// package cli; this is only the entry that runs them and turns their error into an exit code.
package main

import (
	"fmt"
	"os"

	"github.com/envsched/envsched/cli"
)

func main() {
	os.Exit(run(os.Args))
}

// run executes the app, prints its error and returns the exit code (cli.ExitCode: 0, 1, 2 bad
// usage, 3 database held); it is main without os.Exit, so that tests can call it.
func run(args []string) int {
	err := cli.NewApp().Run(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "envsched: %v\n", err)
	}
	return cli.ExitCode(err)
}
