package daemon

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/propagate"
)

// TestProtocolNamesEveryStatusField checks that every key of status.json is in PROTOCOL.md.
func TestProtocolNamesEveryStatusField(t *testing.T) {
	doc, err := os.ReadFile("../PROTOCOL.md")
	if err != nil {
		t.Fatalf("PROTOCOL.md must be in the repository: %v", err)
	}
	typ := reflect.TypeOf(Status{})
	if typ.NumField() < 10 {
		t.Fatalf("Status has %d fields; the reflection found too few", typ.NumField())
	}
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("PROTOCOL.md does not name the status.json field `%s`", name)
		}
	}
	// the fields inside calibration and corrections, at every depth
	for _, typ := range []reflect.Type{reflect.TypeOf(ledger.Summary{}), reflect.TypeOf(ledger.Window{}),
		reflect.TypeOf(ledger.Savings{}), reflect.TypeOf(propagate.Corrections{}), reflect.TypeOf(propagate.Correction{}),
		reflect.TypeOf(propagate.EnvCorrection{}), reflect.TypeOf(propagate.Return{}), reflect.TypeOf(propagate.TrendShown{})} {
		for i := 0; i < typ.NumField(); i++ {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !strings.Contains(string(doc), "`"+name+"`") {
				t.Errorf("PROTOCOL.md does not name the status.json calibration field `%s`", name)
			}
		}
	}
	for ch := range ledger.NumChannels {
		if name := ch.String(); !strings.Contains(string(doc), "channels."+name) {
			t.Errorf("PROTOCOL.md does not name the calibration channel `%s`", name)
		}
	}
}
