package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run the real daemon against a simulated trainer and compare with random choice",
		Action: func(*cli.Context) error {
			return errors.New("demo is not built yet (issue 5)")
		},
	}
}
