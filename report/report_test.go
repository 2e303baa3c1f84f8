package report_test

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/envsched/envsched/report"
	"github.com/envsched/envsched/report/reporttest"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/storage/storagetest"
)

func collect(t testing.TB, db *storage.DB) *report.Data {
	t.Helper()
	var d *report.Data
	err := db.View(func(r *storage.Reader) error {
		var err error
		d, err = report.Collect(r, db.Config())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// page is what a browser-free reading of the report finds.
type page struct {
	sections map[string]bool   // id of every <section>
	images   map[string]string // section id -> src of its <img>
	tables   map[string]int    // id of every <table> with one -> rows
	text     strings.Builder   // all text
}

// parse reads the page with a strict XML decoder (the page closes its void elements) and
// fails on unbalanced tags.
func parse(t *testing.T, data []byte) *page {
	t.Helper()
	p := &page{sections: map[string]bool{}, images: map[string]string{}, tables: map[string]int{}}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict, dec.Entity = true, xml.HTMLEntity
	var section, table string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("report is not well-formed HTML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			id := attr(tok, "id")
			switch tok.Name.Local {
			case "section":
				section = id
				p.sections[id] = true
			case "img":
				p.images[section] = attr(tok, "src")
			case "table":
				table = id
			case "tr":
				if table != "" {
					p.tables[table]++
				}
			}
		case xml.EndElement:
			if tok.Name.Local == "table" {
				table = ""
			}
		case xml.CharData:
			p.text.Write(tok)
		}
	}
	return p
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func TestReportOfGeneratedRun(t *testing.T) {
	db := storagetest.Open(t)
	run, err := reporttest.Generate(db, reporttest.Options{Seed: 11, Steps: 15})
	if err != nil {
		t.Fatal(err)
	}
	d := collect(t, db)
	if len(d.Batches) != run.Answers || len(d.Predicted) != run.Tasks || d.Quarantine.Total != int64(run.Quarantined) {
		t.Fatalf("collected %d batches, %d predictions, %d quarantined; want %d, %d, %d", len(d.Batches),
			len(d.Predicted), d.Quarantine.Total, run.Answers, run.Tasks, run.Quarantined)
	}
	for _, b := range d.Batches {
		if b.Groups != 8 || b.Realised < 0 || b.Realised > 1 || b.Predicted <= 0 || b.Predicted >= 1 {
			t.Fatalf("batch %s: %d groups, realised %g, predicted %g", b.ID, b.Groups, b.Realised, b.Predicted)
		}
	}
	checkChosen(t, d)
	var buf bytes.Buffer
	if err := report.Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	p := parse(t, buf.Bytes())
	for _, id := range report.FigureIDs {
		checkPNG(t, id, p.images[id])
	}
	for _, id := range []string{"summary", "environments", "chosen", "quarantine"} {
		if !p.sections[id] {
			t.Errorf("no section %q", id)
		}
	}
	checkCalibration(t, d, run, p)
	if p.tables["quarantine-recent"] != 1+min(report.ListLen, run.Quarantined) {
		t.Errorf("recent quarantine table has %d rows", p.tables["quarantine-recent"])
	}
	for _, want := range []string{"env-a", "env-c", "missing reward", "realised"} {
		if !strings.Contains(p.text.String(), want) {
			t.Errorf("report does not mention %q", want)
		}
	}
	if strings.Contains(buf.String(), "<script") || strings.Contains(buf.String(), "http") {
		t.Error("report is not self-contained (script or link)")
	}
}

// checkCalibration: every generated group completes, so the ledger measures one group per
// chosen task, the first of each answer in the random-slot channel, and the page shows it.
func checkCalibration(t *testing.T, d *report.Data, run reporttest.Run, p *page) {
	t.Helper()
	var picks int64
	for _, b := range d.Batches {
		picks += int64(b.Size)
	}
	c := d.Calib
	if c.Overall.Groups != picks || c.Channels["random_slot"].Groups != int64(run.Answers) || c.Open != 0 {
		t.Errorf("calibration %+v; want %d groups, %d of them random slots, none open", c.Summary, picks, run.Answers)
	}
	if p.tables["calibration-channels"] != 1+5 || p.tables["calibration-envs"] < 2 {
		t.Errorf("calibration tables have %d and %d rows", p.tables["calibration-channels"], p.tables["calibration-envs"])
	}
	if !strings.Contains(p.text.String(), "Estimated rollouts saved against random choice") {
		t.Error("report does not state the savings estimate")
	}
}

// checkPNG decodes a data URI and checks the image is a sane size.
func checkPNG(t *testing.T, id, src string) {
	t.Helper()
	b64, ok := strings.CutPrefix(src, "data:image/png;base64,")
	if !ok {
		t.Errorf("figure %s: no embedded PNG (src %.40q)", id, src)
		return
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Errorf("figure %s: base64: %v", id, err)
		return
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Errorf("figure %s: PNG does not decode: %v", id, err)
		return
	}
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	if w < 400 || w > 3000 || h < 200 || h > 2000 || len(raw) < 5000 {
		t.Errorf("figure %s: %dx%d pixels, %d bytes", id, w, h, len(raw))
	}
}

func TestReportOfEmptyDatabase(t *testing.T) {
	db := storagetest.Open(t)
	var buf bytes.Buffer
	if err := report.Write(&buf, collect(t, db)); err != nil {
		t.Fatal(err)
	}
	p := parse(t, buf.Bytes())
	if len(p.images) != 0 {
		t.Fatalf("an empty database has plots: %v", p.images)
	}
	for _, id := range report.FigureIDs {
		if !p.sections[id] {
			t.Errorf("no section %q", id)
		}
	}
	if !strings.Contains(p.text.String(), "Nothing was quarantined") {
		t.Error("empty quarantine not said")
	}
}

// checkChosen: the most chosen come first, the least chosen were chosen at least once, and
// the never chosen are counted per environment.
func checkChosen(t *testing.T, d *report.Data) {
	t.Helper()
	if len(d.Most) != report.ListLen || len(d.Least) != report.ListLen {
		t.Fatalf("%d most and %d least chosen tasks listed", len(d.Most), len(d.Least))
	}
	for i := 1; i < len(d.Most); i++ {
		if d.Most[i].Chosen > d.Most[i-1].Chosen || d.Least[i].Chosen < d.Least[i-1].Chosen {
			t.Fatalf("chosen tables out of order: %+v / %+v", d.Most, d.Least)
		}
	}
	if d.Least[0].Chosen < 1 || d.Most[0].Chosen < d.Least[len(d.Least)-1].Chosen {
		t.Fatalf("least chosen %+v", d.Least)
	}
	sum := 0
	for _, n := range d.NeverByEnv {
		sum += n
	}
	if sum != d.Never || d.Never == 0 || d.Never >= d.Tasks {
		t.Fatalf("never chosen: %d in total, %d by env, of %d tasks", d.Never, sum, d.Tasks)
	}
}

// TestReportShowsCorrections: the report's corrections tables show the state stored with the
// last answer (one stored in JSON, as an earlier version did): each channel, the environment
// with a drift offset, the measured factors by their status.json names (random_factor and
// never_tried_offset too).
func TestReportShowsCorrections(t *testing.T) {
	db := storagetest.Open(t)
	state := `{"drift_offsets": {"web": 0.25}, "rechosen_offset": 0.5, "dispersion": {"rechosen_factor": 1.5,` +
		` "cover_signal": {"sum": 0, "n": 96}, "exploit_signal": {"sum": 80, "n": 100}}}`
	if err := db.StoreAnswer("s1", 1, []byte(`{"id": "s1", "step": 1, "tasks": []}`), nil, []byte(state)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := report.Write(&buf, collect(t, db)); err != nil {
		t.Fatal(err)
	}
	p := parse(t, buf.Bytes())
	if !p.sections["corrections"] || p.tables["corrections-dispersion"] != 1+3+1 || p.tables["corrections-factors"] != 1+9 {
		t.Fatalf("corrections section %v, tables of %d and %d rows", p.sections["corrections"],
			p.tables["corrections-dispersion"], p.tables["corrections-factors"])
	}
	for _, want := range []string{"web / never_tried", "0.25", "coverage_return", "exploration_return", "random_return",
		"rechosen_factor", "1.5", "random_factor", "never_tried_offset", "Re-chosen trend: none fitted yet"} {
		if !strings.Contains(p.text.String(), want) {
			t.Errorf("report does not show %q", want)
		}
	}
}
