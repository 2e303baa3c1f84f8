package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func statsCommand() *cli.Command {
	return &cli.Command{
		Name:  "stats",
		Usage: "print per-environment statistics",
		Action: func(*cli.Context) error {
			return errors.New("stats is not built yet (issue 2)")
		},
	}
}
