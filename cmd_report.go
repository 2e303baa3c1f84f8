package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "write an HTML report with plots",
		Action: func(*cli.Context) error {
			return errors.New("report is not built yet (issue 7)")
		},
	}
}
