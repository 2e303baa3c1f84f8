package catalog_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/envsched/envsched/catalog"
)

// FuzzCheckParquet: any bytes give a report or a *catalog.FileError; never a panic (the daemon
// reads whatever a trainer drops into DIR/catalog).
func FuzzCheckParquet(f *testing.F) {
	var buf bytes.Buffer
	if err := writeRows(&buf, verlRows(5)); err != nil {
		f.Fatal(err)
	}
	good := buf.Bytes()
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte("PAR1PAR1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := catalog.CheckParquet(bytes.NewReader(data), int64(len(data)))
		var fe *catalog.FileError
		switch {
		case err != nil && !errors.As(err, &fe):
			t.Fatalf("error %v is not a *catalog.FileError", err)
		case err == nil && rep == nil:
			t.Fatal("no report and no error")
		}
	})
}
