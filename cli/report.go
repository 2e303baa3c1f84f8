package cli

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/report"
	"github.com/envsched/envsched/storage"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "write a self-contained HTML report with plots",
		UsageText: "envsched report --dir DIR [--db PATH] --out FILE.html",
		Description: "report writes one HTML file with the plots embedded, to open in a browser after or " +
			"during a run: rollouts and mean reward per environment over steps, each environment's share " +
			"of the chosen batches, predicted against realised degenerate groups per answered request, a " +
			"reliability diagram of the predicted degenerate chance, a histogram of the predicted success of " +
			"every task now, the calibration tables with the estimated rollouts saved against random " +
			"choice, the corrections stored with the last answer, the most and least chosen tasks, and a " +
			"quarantine summary. While `envsched run` holds the database, report reads a consistent " +
			"copy the daemon writes into DIR/snapshots.",
		Flags: []cli.Flag{
			ingestDirFlag(),
			ingestDBFlag(),
			&cli.StringFlag{Name: "out", Required: true, EnvVars: []string{"ENVSCHED_REPORT_OUT"},
				Usage: "the HTML `FILE` to write (written whole, then renamed into place; a device or pipe such as /dev/stdout is written into)"},
			snapshotWaitFlag(),
		},
		Action: reportAction,
	}
}

func reportAction(c *cli.Context) error {
	if err := checkOutPlace(c.String("dir"), ingestDBPath(c), c.String("out")); err != nil {
		return usageError{err}
	}
	db, err := openForReading(c)
	if err != nil {
		return err
	}
	defer db.Close()
	var d *report.Data
	err = db.View(func(r *storage.Reader) error {
		d, err = report.Collect(r, db.Config())
		return err
	})
	if err != nil {
		return err
	}
	d.Source, d.Snapshot = db.Source, db.Snapshot
	out := c.String("out")
	n, err := writeFileWith(out, func(w io.Writer) (int64, error) {
		cw := &countingWriter{w: w}
		err := report.Write(cw, d)
		return cw.n, err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "wrote %s (%s): %d rollouts, %d answered requests\n", out, byteSize(n),
		d.Counters.Rollouts, d.Counters.RequestsAnswered)
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
