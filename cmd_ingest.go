package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:  "ingest",
		Usage: "read everything new under DIR/catalog and DIR/rollouts into the database",
		Action: func(*cli.Context) error {
			return errors.New("ingest is not built yet (issue 2)")
		},
	}
}
