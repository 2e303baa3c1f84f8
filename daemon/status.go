package daemon

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/propagate"
)

// Status is DIR/status.json, field for field as PROTOCOL.md names them. The counts are over
// the whole database and survive restarts.
type Status struct {
	Version string `json:"version"`
	PID     int    `json:"pid"`
	// PIDView names where PID can be looked up (procview.View: the machine's boot and the
	// daemon's PID namespace); a reader of another view (another container or machine) cannot
	// tell from PID whether the daemon runs. Empty in the status.json of an older daemon.
	PIDView          string  `json:"pid_view,omitempty"`
	StartedAt        string  `json:"started_at"`
	UpdatedAt        string  `json:"updated_at"`
	DB               string  `json:"db"`
	Rollouts         int64   `json:"rollouts"`
	Quarantined      int64   `json:"quarantined"`
	Duplicates       int64   `json:"duplicates"`
	Clipped          int64   `json:"clipped"`
	Tasks            int64   `json:"tasks"`
	Envs             int64   `json:"envs"`
	RequestsAnswered int64   `json:"requests_answered"`
	LastRequest      *string `json:"last_request"`
	WatchMode        string  `json:"watch_mode"`
	// Calibration is envsched's measurement of its own predictions (package ledger), an extra
	// field of PROTOCOL.md's status
	Calibration ledger.Summary `json:"calibration"`
	// Corrections are the corrections stored with the last answer (schedule.Corrections),
	// another extra field
	Corrections *propagate.Corrections `json:"corrections"`
	// CorrectionsEnvsOmitted counts the environments left out of Corrections.Envs, which lists
	// at most StatusEnvsMax of them (the most groups first); absent when none is.
	CorrectionsEnvsOmitted int `json:"corrections_envs_omitted,omitempty"`
}

// StatusFile is the name of the status file the daemon rewrites in the exchange directory.
const StatusFile = "status.json"

// rfc3339 formats t the way every time in the protocol is written: RFC 3339, UTC, seconds.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// writeStatus publishes s as DIR/status.json.
func writeStatus(dir string, s Status) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode status: %w", err)
	}
	return writeAtomic(dir, StatusFile, append(data, '\n'), nil)
}
