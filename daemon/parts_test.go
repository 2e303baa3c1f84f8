package daemon

import (
	"context"

	"github.com/envsched/envsched/storage"
)

// nopIngester stands in until package ingest lands: request handling needs no rollouts.
type nopIngester struct{}

func (nopIngester) All(context.Context) (IngestReport, error)             { return IngestReport{}, nil }
func (nopIngester) Paths(context.Context, []string) (IngestReport, error) { return IngestReport{}, nil }

// testParts are the collaborators of the daemons under test.
func testParts() []Option {
	return []Option{
		WithIngester(func(*storage.DB, string, func()) (Ingester, error) { return nopIngester{}, nil }),
		WithAnswerer(testAnswererFunc),
	}
}
