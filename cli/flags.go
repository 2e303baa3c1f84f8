package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/daemon"
	"github.com/envsched/envsched/fsutil"
	"github.com/envsched/envsched/ingest"
	"github.com/envsched/envsched/schedule"
)

func ingestDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "dir", EnvVars: []string{"ENVSCHED_DIR"}, Required: true,
		Usage: "the exchange `DIR` holding catalog/ and rollouts/"}
}

func ingestDBFlag() cli.Flag {
	return &cli.StringFlag{Name: "db", EnvVars: []string{"ENVSCHED_DB"},
		Usage: "the database `PATH` (default DIR/envsched.db)"}
}

// checkDBPlace refuses a database inside one of DIR's folders that envsched reads or
// publishes: in rollouts/ or catalog/ (as `x.jsonl`, or anything, since a later rename could
// make it one) envsched read its own database as input, quarantined its pages, stored that,
// saw the file change and read it again, for ever; in requests/, batches/ or snapshots/ it would
// be taken for a request or removed as a stale copy. Links on the path are resolved as far as
// it exists.
//
// Nor may it be one of the files the daemon writes in DIR itself: status.json, rewritten by
// rename every heartbeat, would replace the database with a status file (everything stored
// lost, the next start said "invalid database"), and a name of fsutil's temporary files
// (.NAME.tmp-RANDOM) is removed by the daemon's start-up sweep. A hard link to status.json
// (another name of the same file) is refused too.
func checkDBPlace(dir, db string) error {
	if f, ok := insideExchange(dir, db); ok {
		return fmt.Errorf("--db %s is inside %s: envsched would read (or remove) its own database there; "+
			"put it in DIR itself (the default, DIR/envsched.db) or outside DIR", db, filepath.Join(dir, f))
	}
	if what, ok := daemonFile(dir, db); ok {
		return fmt.Errorf("--db %s is %s, which envsched run writes: it would replace (or remove) the database; "+
			"use another name (the default is DIR/envsched.db)", db, what)
	}
	return nil
}

// daemonFile reports whether path names a file the daemon writes directly in DIR (status.json,
// or a temporary file its start-up sweep removes), and says which.
func daemonFile(dir, path string) (string, bool) {
	if path == "" {
		return "", false
	}
	status := filepath.Join(dir, daemon.StatusFile)
	if rp := resolved(path); rp == resolved(status) {
		return "DIR's " + daemon.StatusFile, true
	} else if filepath.Dir(rp) == resolved(dir) && fsutil.IsTemp(filepath.Base(rp)) {
		return "a temporary file's name in DIR (.NAME.tmp-X)", true
	}
	a, errA := os.Stat(path)
	b, errB := os.Stat(status)
	if errA == nil && errB == nil && os.SameFile(a, b) {
		return "DIR's " + daemon.StatusFile + " under another name", true
	}
	return "", false
}

// checkOutPlace refuses a file written by export or report (--out) into one of DIR's folders
// that envsched reads or publishes: rollouts exported into DIR/rollouts (they carry no
// rollout_id unless the trainer wrote one) were read again as new rollouts, every one counted
// twice; any other file there is read as input (and quarantined), taken for a request, or
// removed as a stale copy; DIR/status.json (or a daemon's temporary name in DIR) is replaced or
// removed by the daemon. Nor may it be the database db itself: the file written whole was
// renamed over it, and every rollout, statistic and stored answer was lost without a word.
func checkOutPlace(dir, db, out string) error {
	if out != "" {
		_, own, err := ownOut(out)
		if err != nil {
			return err
		}
		if !own { // a descriptor given is checked below by the file it names now
			if _, _, err := outTarget(out); err != nil {
				return err
			}
		}
	}
	ofi, oerr := os.Stat(out) // a descriptor given (/dev/fd/3): the file it has open
	dfi, derr := os.Stat(db)
	if out != "" && (resolved(out) == resolved(db) || oerr == nil && derr == nil && os.SameFile(ofi, dfi)) {
		return fmt.Errorf("--out %s is the database %s: writing there would replace it, losing everything it "+
			"holds; write the file elsewhere", out, db)
	}
	if what, ok := daemonFile(dir, out); ok {
		return fmt.Errorf("--out %s is %s, which envsched run writes: the daemon would replace (or remove) it; "+
			"write the file elsewhere", out, what)
	}
	if f, ok := insideExchange(dir, out); ok {
		return fmt.Errorf("--out %s is inside %s, which envsched reads or writes: a file there would be read "+
			"again (rollouts counted twice), taken for a request or removed; write it outside DIR's folders",
			out, filepath.Join(dir, f))
	}
	return nil
}

// exchangeFolders are DIR's folders that envsched reads or publishes.
var exchangeFolders = []string{"catalog", "rollouts", "requests", "batches", "snapshots"}

// insideExchange reports whether path lies in one of DIR's folders that envsched reads or
// publishes, and which: by its path (resolved, see resolved), by the identity of the folders
// that hold it (a bind mount's alias of DIR or of one of its folders names them under another
// path), or, for a file with more than one name, by being one of the files in those folders (a
// hard link: `--out /dev/stdout 1<>/tmp/link-of-a-rollout-file` writes into it in place).
func insideExchange(dir, path string) (string, bool) {
	if path == "" {
		return "", false
	}
	rdir, rpath := resolved(dir), resolved(path)
	for _, f := range exchangeFolders {
		if rel, err := filepath.Rel(filepath.Join(rdir, f), rpath); err == nil && rel != ".." &&
			!strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return f, true
		}
	}
	folders := make([]os.FileInfo, len(exchangeFolders))
	for i, f := range exchangeFolders {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil && fi.IsDir() {
			folders[i] = fi
		}
	}
	for p := rpath; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			for i, f := range folders {
				if f != nil && os.SameFile(fi, f) {
					return exchangeFolders[i], true
				}
			}
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && links(fi) > 1 {
		for i, f := range exchangeFolders {
			if folders[i] != nil && holds(filepath.Join(dir, f), fi) {
				return f, true
			}
		}
	}
	return "", false
}

// links is fi's count of names (hard links), or 1 when the system does not say.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// holds reports whether the tree under folder (links not followed) has the file fi among its
// names.
func holds(folder string, fi os.FileInfo) bool {
	found := false
	_ = filepath.WalkDir(folder, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeType != 0 {
			return nil
		}
		if f, err := d.Info(); err == nil && os.SameFile(f, fi) {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// resolved is path made absolute with the symbolic links of its longest existing prefix resolved.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if filepath.Dir(p) == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// checkInputFolders refuses DIR/catalog or DIR/rollouts (or the folders named) when it is there
// but not a folder (a symbolic link to one elsewhere, a file): envsched never reads through a
// link out of DIR, so `ingest` and `batch` read nothing from it, and said nothing of it ("0
// files"). `run` checks every folder of DIR the same way, so that all three exit 2 for it (run
// exited 1, from the daemon's own refusal at start).
func checkInputFolders(dir string, folders ...string) error {
	if len(folders) == 0 {
		folders = []string{ingest.CatalogDir, ingest.RolloutsDir}
	}
	for _, f := range folders {
		path := filepath.Join(dir, f)
		if fi, err := os.Lstat(path); err == nil && !fi.IsDir() {
			return fmt.Errorf("%s is a %s, not a folder: envsched reads and writes nothing through it; make it a real folder",
				path, fsutil.TypeName(fi.Mode()))
		}
	}
	return nil
}

// ingestDBPath is --db, or DIR/envsched.db.
func ingestDBPath(c *cli.Context) string {
	if p := c.String("db"); p != "" {
		return p
	}
	return filepath.Join(c.String("dir"), "envsched.db")
}

// schedulerFlags are the parameters of prediction and selection, shared by every command that
// chooses batches.
func schedulerFlags() []cli.Flag {
	def := schedule.DefaultParams()
	pp, bp := def.Predict, def.Select
	return []cli.Flag{
		&cli.Float64Flag{Name: "kappa", EnvVars: []string{"ENVSCHED_KAPPA"}, Value: pp.Kappa,
			Usage: "strength, in rollouts, of the prior that serves tasks never rolled out (above 0)"},
		&cli.Float64Flag{Name: "feature-ridge", EnvVars: []string{"ENVSCHED_FEATURE_RIDGE"}, Value: pp.FeatureRidge,
			Usage: "ridge penalty of the feature prior, which learns from the words and tools of tasks rolled out what tasks never rolled out will do (0 or more; 0 = environment means instead)"},
		&cli.Float64Flag{Name: "prior-refit", EnvVars: []string{"ENVSCHED_PRIOR_REFIT"}, Value: pp.PriorRefit,
			Usage: "the feature prior is fitted again once the rollouts have grown by this share since its last fit, and kept as stored until then (0 or more; 0 = fitted again whenever a rollout came)"},
		&cli.Float64Flag{Name: "gamma", EnvVars: []string{"ENVSCHED_GAMMA"}, Value: pp.Gamma,
			Usage: "share (0 to 1) of its graph neighbours' evidence a task borrows per hop (0 turns the graph off)"},
		&cli.IntFlag{Name: "hops", EnvVars: []string{"ENVSCHED_HOPS"}, Value: pp.Hops,
			Usage: "how far evidence travels along the graph: 0, 1 or 2 edges"},
		&cli.Float64Flag{Name: "borrow-cap", EnvVars: []string{"ENVSCHED_BORROW_CAP"}, Value: pp.BorrowCap,
			Usage: "most evidence, in rollouts, a task may borrow from its neighbours (0 or more)"},
		&cli.Float64Flag{Name: "drift-rate", EnvVars: []string{"ENVSCHED_DRIFT_RATE"}, Value: pp.DriftRate,
			Usage: "0-1: share of the gap, per request, by which an environment's stale predictions follow rewards that run away from them (a logit offset, at most ±1; 0 = off)"},
		&cli.Float64Flag{Name: "rechosen-rate", EnvVars: []string{"ENVSCHED_RECHOSEN_RATE"}, Value: pp.RechosenRate,
			Usage: "0-1: share of the gap, per request, by which the predictions of tasks rolled out before follow what such tasks do when chosen again (a logit offset, at most ±2; 0 = off)"},
		&cli.Float64Flag{Name: "rechosen-trend", EnvVars: []string{"ENVSCHED_RECHOSEN_TREND"}, Value: pp.RechosenTrend,
			Usage: "0 to below 1: share of its fit each answer keeps for the re-chosen offset as a function of the task (its own evidence against its prediction, how often it was rolled out, how old its evidence is); 0 = one offset for all (needs --rechosen-rate and --dispersion-memory above 0)"},
		&cli.Float64Flag{Name: "dispersion-memory", EnvVars: []string{"ENVSCHED_DISPERSION_MEMORY"}, Value: pp.DispersionMemory,
			Usage: "0 to below 1: share of the measured calibration (spread and slope of the predictions, what exploring and random slots return) each answer keeps; the rest is forgotten (0 = no such correction)"},
		&cli.BoolFlag{Name: "dispersion-stuck", EnvVars: []string{"ENVSCHED_DISPERSION_STUCK"}, Value: pp.DispersionStuck,
			Usage: "measure the spread of tasks tried before whose every group was all-equal (always or never solved) from their own re-tries' groups, as a calibration channel apart, and predict such tasks by it (false = as every task tried before)"},
		&cli.BoolFlag{Name: "dispersion-extreme", EnvVars: []string{"ENVSCHED_DISPERSION_EXTREME"}, Value: pp.DispersionExtreme,
			Usage: "measure the chance of an all-equal group of tasks tried before in two or more groups against how extreme their own mean is, from their own re-tries' groups, as a calibration channel apart, and predict such tasks by it (false = as every task tried before; experimental)"},
		&cli.BoolFlag{Name: "drift-centre", EnvVars: []string{"ENVSCHED_DRIFT_CENTRE"}, Value: pp.DriftCentre,
			Usage: "pull the predictions of an environment's untried tasks towards its level after its drift offset, not before it, when the measured correction shrinks their departures from it (false = before; experimental)"},
		&cli.BoolFlag{Name: "graded-fit", EnvVars: []string{"ENVSCHED_GRADED_FIT"}, Value: pp.GradedFit,
			Usage: "in environments with graded rewards, fit from the tasks' own groups how much a task's all-equal groups and within-group spread say about its next group (false = the model counts as 2 groups)"},
		&cli.BoolFlag{Name: "graded-calibration", EnvVars: []string{"ENVSCHED_GRADED_CALIBRATION"}, Value: pp.GradedCal,
			Usage: "in environments with graded rewards, measure per channel (never tried, re-chosen, random slot) how often the groups of the picks came back all-equal against the p_degenerate they were answered with, and answer by that calibration (false = such picks answered with the prediction uncalibrated; needs --dispersion-memory above 0)"},
		&cli.BoolFlag{Name: "graded-calibration-select", EnvVars: []string{"ENVSCHED_GRADED_CALIBRATION_SELECT"}, Value: pp.GradedCalSelect,
			Usage: "selection reads the calibrated p_degenerate of graded tasks too (--exploit-graded values them by it), not the answer alone (needs --graded-calibration)"},
		&cli.StringFlag{Name: "exploit", EnvVars: []string{"ENVSCHED_EXPLOIT"}, Value: bp.Exploit.String(),
			Usage: "exploitation value: variance (4 × predicted within-group variance), informative (1 − chance of a degenerate group), spread (expected spread of the group's rewards, 2 × their standard deviation), lasting (expected share of informative groups over this step and the next when re-chosen only if informative: prefers tasks that stay informative once found) or matched (the chance of an informative group on the scale of variance: 4p(1 − p) of the 0/1 task whose groups are all-equal as often)"},
		&cli.StringFlag{Name: "exploit-graded", EnvVars: []string{"ENVSCHED_EXPLOIT_GRADED"}, Value: bp.ExploitGraded.String(),
			Usage: "exploitation value of the tasks of environments with graded rewards (some reward not 0 or 1), whose mean does not tell their spread (a task always scoring 0.5 has never an unequal group): variance, informative, spread, lasting or matched (the default), as --exploit"},
		&cli.Float64Flag{Name: "coverage-weight", EnvVars: []string{"ENVSCHED_COVERAGE_WEIGHT"}, Value: bp.CoverageWeight,
			Usage: "weight of the coverage value (uncertainty, staleness, novelty) against exploitation (0 to 1e6)"},
		&cli.BoolFlag{Name: "coverage-return", EnvVars: []string{"ENVSCHED_COVERAGE_RETURN"}, Value: bp.CoverReturn,
			Usage: "weigh the uncertainty and staleness of tasks tried before by what re-tries chosen for coverage have measurably returned (their share of informative groups against re-tries chosen for predicted variance; --coverage-return=false: as given)"},
		&cli.Float64Flag{Name: "sim-penalty", EnvVars: []string{"ENVSCHED_SIM_PENALTY"}, Value: bp.SimPenalty,
			Usage: "penalty per unit of similarity to a task already in the batch (0 to 1e6; 0 allows near-duplicates)"},
		&cli.Float64Flag{Name: "random-share", EnvVars: []string{"ENVSCHED_RANDOM_SHARE"}, Value: bp.RandomShare,
			Usage: "share (0 to 1) of the batch drawn uniformly at random from the eligible tasks, times what such slots have measurably returned against chosen tasks (at least one slot when this share alone gives one)"},
		&cli.Float64Flag{Name: "quota-smoothing", EnvVars: []string{"ENVSCHED_QUOTA_SMOOTHING"}, Value: bp.QuotaSmoothing,
			Usage: "weight (0 to 1) of the uniform share in each environment's quota (1 = equal quotas)"},
		&cli.Float64Flag{Name: "quota-size", EnvVars: []string{"ENVSCHED_QUOTA_SIZE"}, Value: bp.QuotaSize,
			Usage: "how much an environment's size counts in its quota, 0-1: value = mean score × min(eligible, batch)^(1−α) × eligible^α, smoothed towards shares ∝ eligible^α (0 = equal quotas whatever the size, 1 = proportional to eligible tasks)"},
		&cli.Float64Flag{Name: "min-share", EnvVars: []string{"ENVSCHED_MIN_SHARE"}, Value: bp.MinShare,
			Usage: "least quota of an environment, as a fraction (0 to 1) of the uniform share"},
		&cli.BoolFlag{Name: "min-credit", EnvVars: []string{"ENVSCHED_MIN_CREDIT"}, Value: bp.MinCredit,
			Usage: "honour --min-share over batches when it is less than a whole slot: the fractional minima go a slot each to the environments behind their minimum so far, chosen least first (off: rounded down in each batch)"},
		&cli.BoolFlag{Name: "random-owed", EnvVars: []string{"ENVSCHED_RANDOM_OWED"}, Value: bp.RandomOwed,
			Usage: "give the environments that the quotas leave without a slot and that are behind --min-share over the batches so far a slot each (their best task), out of the random slots (all but one), chosen least first (off: every random slot drawn within the quotas)"},
		&cli.Float64Flag{Name: "max-share", EnvVars: []string{"ENVSCHED_MAX_SHARE"}, Value: bp.MaxShare,
			Usage: "largest quota of an environment, as a fraction (above 0, at most 1) of the batch"},
		&cli.Float64Flag{Name: "stale-rounds", EnvVars: []string{"ENVSCHED_STALE_ROUNDS"}, Value: bp.StaleRounds,
			Usage: "steps after which a task not chosen counts as mostly stale (the time constant of staleness; above 0)"},
		&cli.Float64Flag{Name: "transfer", EnvVars: []string{"ENVSCHED_TRANSFER"}, Value: bp.Transfer,
			Usage: "0-1: how much a task's exploitation value falls as its graph neighbours are trained, × (1 − d + d·G/(G + their mean recent rollouts)); a task among untried neighbours teaches what recent batches did not (0 = off)"},
		&cli.Float64Flag{Name: "fresh", EnvVars: []string{"ENVSCHED_FRESH"}, Value: bp.Fresh,
			Usage: "0-1: how much a tried task's exploitation value falls as its last rollouts age, × (1 − f·(1 − exp(−(steps since them − 1)/stale-rounds))); informative evidence is perishable (0 = off; experimental)"},
		&cli.Float64Flag{Name: "overlap", EnvVars: []string{"ENVSCHED_OVERLAP"}, Value: bp.Overlap,
			Usage: "penalty per unit of a candidate's catalogue words (weighted by rarity) already held by the batch's chosen tasks, each word's share halving what is left with every task that holds it (0 to 1e6; 0 = off)"},
	}
}

// schedulerParams reads the flags of schedulerFlags. Their decay is the default one: the
// scheduler (schedule.Configured) always takes the database's. A value out of its range is a
// usage error that names its flag: propagate and batcher word their checks by the parameter
// ("similarity penalty is 2e+06"), which is not always the flag's name (--sim-penalty).
func schedulerParams(c *cli.Context) (schedule.Params, error) {
	p := schedule.DefaultParams()
	exploit, err := batcher.ParseExploit(c.String("exploit"))
	if err != nil {
		return p, usageError{fmt.Errorf("--exploit: %w", err)}
	}
	graded, err := batcher.ParseExploit(c.String("exploit-graded"))
	if err != nil {
		return p, usageError{fmt.Errorf("--exploit-graded: %w", err)}
	}
	p.Select.Exploit, p.Select.ExploitGraded = exploit, graded
	for _, s := range schedulerSetters {
		s.set(&p, c)
	}
	if err := p.Validate(); err != nil {
		for _, s := range schedulerSetters { // the flag that alone is out of its range
			one := schedule.DefaultParams()
			s.set(&one, c)
			if oneErr := one.Validate(); oneErr != nil { // its own error: the range of the flag named
				return p, usageError{fmt.Errorf("--%s %v: %w", s.flag, c.Value(s.flag), oneErr)}
			}
		}
		return p, usageError{err}
	}
	return p, nil
}

// schedulerSetters put each flag of schedulerFlags but --exploit and --exploit-graded (parsed
// apart) into the parameters.
var schedulerSetters = []struct {
	flag string
	set  func(p *schedule.Params, c *cli.Context)
}{
	{"kappa", func(p *schedule.Params, c *cli.Context) { p.Predict.Kappa = c.Float64("kappa") }},
	{"feature-ridge", func(p *schedule.Params, c *cli.Context) { p.Predict.FeatureRidge = c.Float64("feature-ridge") }},
	{"prior-refit", func(p *schedule.Params, c *cli.Context) { p.Predict.PriorRefit = c.Float64("prior-refit") }},
	{"gamma", func(p *schedule.Params, c *cli.Context) { p.Predict.Gamma = c.Float64("gamma") }},
	{"hops", func(p *schedule.Params, c *cli.Context) { p.Predict.Hops = c.Int("hops") }},
	{"borrow-cap", func(p *schedule.Params, c *cli.Context) { p.Predict.BorrowCap = c.Float64("borrow-cap") }},
	{"drift-rate", func(p *schedule.Params, c *cli.Context) { p.Predict.DriftRate = c.Float64("drift-rate") }},
	{"rechosen-rate", func(p *schedule.Params, c *cli.Context) { p.Predict.RechosenRate = c.Float64("rechosen-rate") }},
	{"rechosen-trend", func(p *schedule.Params, c *cli.Context) { p.Predict.RechosenTrend = c.Float64("rechosen-trend") }},
	{"dispersion-memory", func(p *schedule.Params, c *cli.Context) {
		p.Predict.DispersionMemory = c.Float64("dispersion-memory")
	}},
	{"dispersion-stuck", func(p *schedule.Params, c *cli.Context) { p.Predict.DispersionStuck = c.Bool("dispersion-stuck") }},
	{"dispersion-extreme", func(p *schedule.Params, c *cli.Context) { p.Predict.DispersionExtreme = c.Bool("dispersion-extreme") }},
	{"drift-centre", func(p *schedule.Params, c *cli.Context) { p.Predict.DriftCentre = c.Bool("drift-centre") }},
	{"graded-fit", func(p *schedule.Params, c *cli.Context) { p.Predict.GradedFit = c.Bool("graded-fit") }},
	{"graded-calibration", func(p *schedule.Params, c *cli.Context) { p.Predict.GradedCal = c.Bool("graded-calibration") }},
	{"graded-calibration-select", func(p *schedule.Params, c *cli.Context) {
		p.Predict.GradedCalSelect = c.Bool("graded-calibration-select")
	}},
	{"coverage-weight", func(p *schedule.Params, c *cli.Context) { p.Select.CoverageWeight = c.Float64("coverage-weight") }},
	{"coverage-return", func(p *schedule.Params, c *cli.Context) { p.Select.CoverReturn = c.Bool("coverage-return") }},
	{"sim-penalty", func(p *schedule.Params, c *cli.Context) { p.Select.SimPenalty = c.Float64("sim-penalty") }},
	{"random-share", func(p *schedule.Params, c *cli.Context) { p.Select.RandomShare = c.Float64("random-share") }},
	{"quota-smoothing", func(p *schedule.Params, c *cli.Context) { p.Select.QuotaSmoothing = c.Float64("quota-smoothing") }},
	{"quota-size", func(p *schedule.Params, c *cli.Context) { p.Select.QuotaSize = c.Float64("quota-size") }},
	{"min-share", func(p *schedule.Params, c *cli.Context) { p.Select.MinShare = c.Float64("min-share") }},
	{"min-credit", func(p *schedule.Params, c *cli.Context) { p.Select.MinCredit = c.Bool("min-credit") }},
	{"random-owed", func(p *schedule.Params, c *cli.Context) { p.Select.RandomOwed = c.Bool("random-owed") }},
	{"max-share", func(p *schedule.Params, c *cli.Context) { p.Select.MaxShare = c.Float64("max-share") }},
	{"stale-rounds", func(p *schedule.Params, c *cli.Context) { p.Select.StaleRounds = c.Float64("stale-rounds") }},
	{"transfer", func(p *schedule.Params, c *cli.Context) { p.Select.Transfer = c.Float64("transfer") }},
	{"fresh", func(p *schedule.Params, c *cli.Context) { p.Select.Fresh = c.Float64("fresh") }},
	{"overlap", func(p *schedule.Params, c *cli.Context) { p.Select.Overlap = c.Float64("overlap") }},
}
