package daemon

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
)

// Defaults of Config; a zero field takes them.
const (
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
	BatchSize int    // tasks in a batch when the request gives no size (0: schedule.DefaultSize)
	GroupSize int    // rollouts per task when the request gives no group_size (0: schedule.DefaultGroupSize)
	// RewardMin and RewardMax are the reward range rollouts are clipped into. They count only
	// when RewardGiven: otherwise an existing database keeps its own range (a new one gets
	// [0, 1]); a range other than the database's is refused by storage.
	RewardMin, RewardMax float64
	RewardGiven          bool

	// Schedule are the scheduler's parameters; nil takes schedule.DefaultParams. The decay of
	// prediction is always the database's.
	Schedule *schedule.Params

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

	// debounce, when set (by tests), replaces the watcher's debounce (watch.DefaultDebounce).
	debounce time.Duration
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.DB == "" && c.Dir != "" {
		c.DB = filepath.Join(c.Dir, "envsched.db")
	}
	if c.BatchSize == 0 {
		c.BatchSize = schedule.DefaultSize
	}
	if c.GroupSize == 0 {
		c.GroupSize = schedule.DefaultGroupSize
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
	case !schedule.ValidSize(c.BatchSize):
		return fmt.Errorf("--batch-size %d: must be 1 to %d", c.BatchSize, schedule.MaxSize)
	case !schedule.ValidGroupSize(c.GroupSize):
		return fmt.Errorf("--group-size %d: must be 1 to %d", c.GroupSize, schedule.MaxGroupSize)
	case (storage.Range{Min: c.RewardMin, Max: c.RewardMax}).Check() != nil:
		return fmt.Errorf("--reward-min %g, --reward-max %g: must be finite with min < max and max − min finite",
			c.RewardMin, c.RewardMax)
	}
	if _, err := parseCrashPoint(c.CrashPoint); err != nil {
		return err
	}
	return nil
}
