package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func compactCommand() *cli.Command {
	return &cli.Command{
		Name:  "compact",
		Usage: "rewrite the database compactly (daemon stopped)",
		Action: func(*cli.Context) error {
			return errors.New("compact is not built yet (issue 7)")
		},
	}
}
