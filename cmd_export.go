package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "export rollouts, tasks or batches as JSONL or CSV",
		Action: func(*cli.Context) error {
			return errors.New("export is not built yet (issue 7)")
		},
	}
}
