package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func catalogCommand() *cli.Command {
	return &cli.Command{
		Name:  "catalog",
		Usage: "manage the task catalogue (import)",
		Action: func(*cli.Context) error {
			return errors.New("catalog is not built yet (issue 6)")
		},
	}
}
