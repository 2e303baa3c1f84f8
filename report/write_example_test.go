package report_test

import (
	"os"
	"testing"

	"github.com/envsched/envsched/report"
	"github.com/envsched/envsched/report/reporttest"
	"github.com/envsched/envsched/storage/storagetest"
)

// TestWriteSample writes a sample report to $ENVSCHED_REPORT_SAMPLE for a person to look at.
func TestWriteSample(t *testing.T) {
	out := os.Getenv("ENVSCHED_REPORT_SAMPLE")
	if out == "" {
		t.Skip("set ENVSCHED_REPORT_SAMPLE=FILE.html to write a sample report")
	}
	db := storagetest.Open(t)
	if _, err := reporttest.Generate(db, reporttest.Options{Seed: 1, Steps: 40, Envs: 4}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := report.Write(f, collect(t, db)); err != nil {
		t.Fatal(err)
	}
}
