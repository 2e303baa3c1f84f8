package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the running daemon's status.json",
		Action: func(*cli.Context) error {
			return errors.New("status is not built yet (issue 7)")
		},
	}
}
