package summary

import (
	"fmt"

	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/schedule"
)

// CorrectionRow is one row of the dispersion table that `envsched stats` and the report show:
// a channel, or an environment's tasks never tried ("ENV / never_tried", with its drift
// offset).
type CorrectionRow struct {
	Name string
	propagate.Correction
	DriftOffset float64
	HasDrift    bool // an environment's row
}

// FactorRow is one measured factor of the table of factors, by its name in status.json; Groups
// and ReferenceGroups when HasGroups.
type FactorRow struct {
	Name                    string
	Value                   float64
	Groups, ReferenceGroups float64
	HasGroups               bool
}

// Corrections are the rows of the two tables of c: the channels (never_tried, rechosen,
// random_slot) then the environments by name; the returns by name, then the re-chosen
// factor and offset.
func Corrections(c propagate.Corrections) ([]CorrectionRow, []FactorRow) {
	var disp []CorrectionRow
	for _, ch := range []string{"never_tried", "rechosen", "random_slot"} {
		disp = append(disp, CorrectionRow{Name: ch, Correction: c.Dispersion[ch]})
	}
	for _, env := range Names(c.Envs) {
		e := c.Envs[env]
		disp = append(disp, CorrectionRow{Name: env + " / never_tried", Correction: e.Correction, DriftOffset: e.DriftOffset, HasDrift: true})
	}
	var factors []FactorRow
	returns := c.Returns()
	for _, name := range Names(returns) {
		r := returns[name]
		factors = append(factors, FactorRow{Name: name, Value: r.Factor, Groups: r.Groups, ReferenceGroups: r.ReferenceGroups, HasGroups: true})
	}
	factors = append(factors, FactorRow{Name: "rechosen_factor", Value: c.RechosenFactor},
		FactorRow{Name: "never_tried_factor", Value: c.NeverTriedFactor},
		FactorRow{Name: "never_tried_offset", Value: c.NeverTriedOffset},
		FactorRow{Name: "rechosen_low_factor", Value: c.RechosenLowFactor},
		FactorRow{Name: "random_factor", Value: c.RandomFactor},
		FactorRow{Name: "rechosen_offset", Value: c.RechosenOffset})
	return disp, factors
}

// TrendText says the re-chosen trend in one line.
func TrendText(t *propagate.TrendShown) string {
	if t == nil {
		return "none fitted yet"
	}
	return fmt.Sprintf("coef %+.4f %+.4f %+.4f %+.4f (intercept, own-evidence gap, log2 rollouts/G, log2 1+age), groups %.1f, weight %.4f",
		t.Coef[0], t.Coef[1], t.Coef[2], t.Coef[3], t.Groups, t.Weight)
}

// GradedText says the graded calibration's maps in one line, channel by channel in the
// ledger's order ("" while there are none: a database of 0/1 rewards never has one).
func GradedText(maps map[string]*propagate.TrendShown) string {
	var out string
	for _, ch := range []string{"never_tried", "rechosen", "random_slot"} {
		m := maps[ch]
		if m == nil {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += fmt.Sprintf("%s %+.4f %+.4f·logit (groups %.1f)", ch, m.Coef[0], m.Coef[1], m.Groups)
	}
	return out
}

// CorrectionsNote says, for the corrections' State (schedule.Corrections), why they are not
// those of a stored state: none stored yet, or the stored one does not decode; "" when they
// are (or the State is not known: a status.json of an earlier version).
func CorrectionsNote(state string) string {
	switch state {
	case schedule.CorrectionsNone:
		return "no answer has stored its corrections yet; shown is where the first answer starts"
	case schedule.CorrectionsUnreadable:
		return "the predictor state stored with the last answer does not decode: damaged, or written by another version; " +
			"the next answer starts without it, from what is shown"
	}
	return ""
}
