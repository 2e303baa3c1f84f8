package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "serve an exchange directory: ingest rollouts, answer batch requests",
		Action: func(*cli.Context) error {
			return errors.New("run is not built yet (issue 4)")
		},
	}
}
