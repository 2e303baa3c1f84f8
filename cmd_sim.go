package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func simCommand() *cli.Command {
	return &cli.Command{
		Name:  "sim",
		Usage: "compare envsched with baselines on the simulated trainer",
		Action: func(*cli.Context) error {
			return errors.New("sim is not built yet (issue 5)")
		},
	}
}
