package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func batchCommand() *cli.Command {
	return &cli.Command{
		Name:  "batch",
		Usage: "choose a batch now, as the daemon would answer a request",
		Action: func(*cli.Context) error {
			return errors.New("batch is not built yet (issue 3)")
		},
	}
}
