package daemon

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/propagate"
)

// Defaults of Config; a zero field takes them.
const (
	DefaultBatchSize      = 64
	DefaultGroupSize      = 8
	DefaultPollInterval   = 250 * time.Millisecond
	DefaultSafetyInterval = 10 * time.Second
	DefaultStatusInterval = 2 * time.Second
	DefaultDataDelay      = 100 * time.Millisecond
	// MaxRequestBytes is the largest request file read; a larger one gets an error file.
	MaxRequestBytes = 1 << 20
)

// Config is everything `envsched run` is told. main fills it from flags and ENVSCHED_*
// variables; Validate says what is wrong in words a user can act on.
type Config struct {
	Dir       string // the exchange directory (required)
	DB        string // the database file; "" means DIR/envsched.db
	Poll      bool   // find changes by polling alone
	BatchSize int    // tasks in a batch when the request gives no size
	GroupSize int    // rollouts per task when the request gives no group_size
	// RewardMin and RewardMax are the reward range rollouts are clipped into. They count only
	// when RewardGiven: otherwise an existing database keeps its own range (a new one gets
	// [0, 1]); a range other than the database's is refused by storage.
	RewardMin, RewardMax float64
	RewardGiven          bool

	// Predict and Select are the scheduler's parameters; nil takes package propagate's and
	// package batcher's defaults. Predict's Decay is replaced by the database's.
	Predict *propagate.Params
	Select  *batcher.Params

	PollInterval   time.Duration // poll period in poll mode
	SafetyInterval time.Duration // poll period in notify mode (a net under lost events)
	StatusInterval time.Duration // status.json is rewritten at least this often
	// DataDelay is how long changed rollout and catalogue files may wait to be read, so that
	// one commit takes many appends (a request never waits for it: its barrier reads them).
	DataDelay time.Duration
	// ProgressInterval is how often an ingest pass that runs long (the backlog at start-up)
	// logs how far it is.
	ProgressInterval time.Duration

	Version string // envsched's version, written into status.json

	// MetricsAddr is "HOST:PORT" to serve Prometheus metrics on (package metrics); "" serves
	// none. An empty HOST means loopback.
	MetricsAddr string

	// CrashPoint is a test-only knob: "name[:n]" kills the process the n-th time the named
	// point is reached (see the Crash* constants). main reads it from ENVSCHED_CRASHPOINT.
	CrashPoint string
	// OverflowEvery is a test-only knob: every n-th watcher event becomes a simulated event
	// overflow that loses the pending hints. main reads it from ENVSCHED_TEST_OVERFLOW_EVERY.
	OverflowEvery int
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.DB == "" && c.Dir != "" {
		c.DB = filepath.Join(c.Dir, "envsched.db")
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.GroupSize == 0 {
		c.GroupSize = DefaultGroupSize
	}
	if c.RewardMin == 0 && c.RewardMax == 0 {
		c.RewardMax = 1
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.SafetyInterval <= 0 {
		c.SafetyInterval = DefaultSafetyInterval
	}
	if c.StatusInterval <= 0 {
		c.StatusInterval = DefaultStatusInterval
	}
	if c.DataDelay <= 0 {
		c.DataDelay = DefaultDataDelay
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = DefaultProgressInterval
	}
	return c
}

// Validate reports the first setting that cannot work, saying how to fix it.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Dir == "":
		return errors.New("--dir is required: the exchange directory the trainer writes into")
	case c.BatchSize < 1 || c.BatchSize > 100000:
		return fmt.Errorf("--batch-size %d: must be 1 to 100000", c.BatchSize)
	case c.GroupSize < 1 || c.GroupSize > 1024:
		return fmt.Errorf("--group-size %d: must be 1 to 1024", c.GroupSize)
	case isBad(c.RewardMin) || isBad(c.RewardMax) || c.RewardMin >= c.RewardMax:
		return fmt.Errorf("--reward-min %g, --reward-max %g: must be finite with min < max",
			c.RewardMin, c.RewardMax)
	}
	if _, err := parseCrashPoint(c.CrashPoint); err != nil {
		return err
	}
	return nil
}

func isBad(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }
