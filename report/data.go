package report

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/envsched/envsched/export"
	"github.com/envsched/envsched/ledger"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/schedule"
	"github.com/envsched/envsched/storage"
	"github.com/envsched/envsched/summary"
)

// Data is everything the report shows, read from one consistent state of a database.
type Data struct {
	Generated time.Time
	Source    string // the database file
	Snapshot  bool   // read through a copy the running daemon wrote
	Config    storage.Config
	Counters  storage.Counters

	Envs    []EnvRow                        // per environment, by name
	Steps   map[string]map[int64]*StepStats // env -> round -> rollouts of that round
	Batches []Batch                         // stored answers, by step then ID
	// Predicted is the predicted success (posterior mean, in [0, 1]) of every task now.
	Predicted  []float64
	Tasks      int            // tasks known
	Never      int            // tasks never chosen
	NeverByEnv map[string]int // tasks never chosen, per environment
	Most       []TaskRow      // most chosen tasks, most first
	Least      []TaskRow      // least chosen of the tasks chosen at least once, least first
	Quarantine Quarantine     // what was set aside
	// Calib is the calibration ledger (package ledger) with its last ledger.RecentAnswers answers
	Calib ledger.Detail
	// Corrections are the corrections stored with the last answer (schedule.Corrections)
	Corrections propagate.Corrections
}

// EnvRow is one environment's totals, its mean reward in the configured reward range.
type EnvRow = summary.Env

// StepStats are the rollouts of one environment counted at one round.
type StepStats struct {
	Rollouts int64
	Sum      float64 // Σ reward, normalised into [0, 1]
}

// Batch is one stored answer with what its rollouts realised.
type Batch struct {
	ID        string
	Step      int64
	Size      int
	Envs      map[string]int
	Predicted float64 // mean p_degenerate of its tasks
	Groups    int     // groups of two or more rollouts that answer it
	Realised  float64 // share of those groups with all rewards equal; valid when Groups > 0
}

// TaskRow is one task in the chosen-tasks tables.
type TaskRow struct {
	Env, Task  string
	Chosen     int64
	LastChosen int64
	Rollouts   int64
	MeanReward float64 // in the configured reward range; 0 without rollouts
	Predicted  float64 // predicted success now
}

// Quarantine summarises the quarantined lines.
type Quarantine struct {
	Total    int64
	ByReason []Count
	ByFile   []Count
	Recent   []storage.QuarantineEntry // the last few, newest first
}

// Count is a name and how often it occurred.
type Count struct {
	Name string
	N    int64
}

// ListLen is how many tasks each chosen-tasks table and the recent quarantine list hold.
const ListLen = 10

// Collect reads the report's data from r. It reads every rollout once.
func Collect(r *storage.Reader, cfg storage.Config) (*Data, error) {
	d := &Data{Generated: time.Now().UTC(), Config: cfg, Steps: map[string]map[int64]*StepStats{}}
	var err error
	if d.Counters, err = r.Counters(); err != nil {
		return nil, err
	}
	steps := []func(*storage.Reader) error{d.readEnvs, d.readRollouts, d.readTasks, d.readQuarantine, d.readCalib}
	for _, f := range steps {
		if err := f(r); err != nil {
			return nil, fmt.Errorf("collect report data: %w", err)
		}
	}
	return d, nil
}

func (d *Data) readCalib(r *storage.Reader) error {
	l, err := r.Calibration(ledger.RecentAnswers)
	if err != nil {
		return err
	}
	envs, err := r.Envs()
	if err != nil {
		return err
	}
	d.Calib = ledger.Detailed(l, ledger.EnvMeans(envs))
	d.Corrections = schedule.Corrections(r.PredictorState())
	return nil
}

func (d *Data) readEnvs(r *storage.Reader) error {
	envs, err := r.Envs()
	if err != nil {
		return err
	}
	d.Envs, _ = summary.Envs(envs, d.Config.Reward)
	return nil
}

// scale maps a normalised mean back into the reward range; 0 without rollouts.
func (d *Data) scale(mean float64, n int64) float64 {
	if n == 0 {
		return 0
	}
	return d.Config.Reward.Scale(mean)
}

// groupRef names one group of rollouts: the request it answers (or the round, without one).
type groupRef struct {
	request   string
	round     int64
	env, task string
	group     string
}

// groupAcc is enough of a group to tell whether it is degenerate.
type groupAcc struct {
	n        int
	min, max float64
}

// readRollouts counts rollouts per env and round, and gathers the groups that answer batches.
func (d *Data) readRollouts(r *storage.Reader) error {
	groups := map[groupRef]*groupAcc{}
	err := r.Rollouts(func(sr *storage.StoredRollout) error {
		d.addStep(sr)
		ref := groupRef{request: sr.RequestID, env: sr.Env, task: sr.Task, group: sr.Group}
		if ref.request == "" {
			ref.round = sr.Round
		}
		g := groups[ref]
		if g == nil {
			g = &groupAcc{min: sr.Reward, max: sr.Reward}
			groups[ref] = g
		}
		g.n++
		g.min, g.max = min(g.min, sr.Reward), max(g.max, sr.Reward)
		return nil
	})
	if err != nil {
		return err
	}
	return d.readBatches(r, groups)
}

func (d *Data) addStep(sr *storage.StoredRollout) {
	m := d.Steps[sr.Env]
	if m == nil {
		m = map[int64]*StepStats{}
		d.Steps[sr.Env] = m
	}
	s := m[sr.Round]
	if s == nil {
		s = &StepStats{}
		m[sr.Round] = s
	}
	s.Rollouts++
	s.Sum += d.Config.Reward.Normalise(sr.Reward)
}

// degTally counts groups of two or more and the degenerate ones.
type degTally struct{ groups, degenerate int }

// readBatches decodes every stored answer and sets what its groups realised: the groups whose
// rollouts name its request ID, or, for rollouts that name none, the groups counted at its
// step among the tasks it chose.
func (d *Data) readBatches(r *storage.Reader, groups map[groupRef]*groupAcc) error {
	byRequest, byRound := map[string]*degTally{}, map[groupRef]*degTally{}
	for ref, g := range groups {
		if g.n < 2 {
			continue
		}
		key := ref.request
		var t *degTally
		if key != "" {
			t = tally(byRequest, key)
		} else {
			t = tally(byRound, groupRef{round: ref.round, env: ref.env, task: ref.task})
		}
		t.groups++
		if g.min == g.max {
			t.degenerate++
		}
	}
	err := r.Answers(func(id string, data []byte) error {
		a, err := export.DecodeAnswer(id, data)
		if err != nil {
			return err
		}
		d.Batches = append(d.Batches, newBatch(a, byRequest[id], byRound))
		return nil
	})
	slices.SortStableFunc(d.Batches, func(a, b Batch) int { return cmp.Compare(a.Step, b.Step) })
	return err
}

func tally[K comparable](m map[K]*degTally, k K) *degTally {
	t := m[k]
	if t == nil {
		t = &degTally{}
		m[k] = t
	}
	return t
}

func newBatch(a export.Answer, t *degTally, byRound map[groupRef]*degTally) Batch {
	b := Batch{ID: a.ID, Step: a.Step, Size: len(a.Tasks), Envs: a.Envs}
	var sum degTally
	if t != nil {
		sum = *t
	}
	for _, task := range a.Tasks {
		b.Predicted += task.PDegenerate
		if t == nil {
			if rt := byRound[groupRef{round: a.Step, env: task.Env, task: task.TaskID}]; rt != nil {
				sum.groups += rt.groups
				sum.degenerate += rt.degenerate
			}
		}
	}
	if len(a.Tasks) > 0 {
		b.Predicted /= float64(len(a.Tasks))
	}
	if b.Envs == nil {
		b.Envs = map[string]int{}
		for _, task := range a.Tasks {
			b.Envs[task.Env]++
		}
	}
	b.Groups = sum.groups
	if sum.groups > 0 {
		b.Realised = float64(sum.degenerate) / float64(sum.groups)
	}
	return b
}

// readTasks reads every task's statistics, predicts its success now with package propagate
// over the stored graph, and picks the most and least chosen.
func (d *Data) readTasks(r *storage.Reader) error {
	var infos []storage.TaskInfo
	if err := r.Tasks(true, func(ti storage.TaskInfo) error { infos = append(infos, ti); return nil }); err != nil {
		return err
	}
	preds, err := predict(r, d.Counters.Round+1, d.Config.Decay)
	if err != nil {
		return err
	}
	rows := make([]TaskRow, len(infos))
	d.Predicted = make([]float64, len(infos))
	d.NeverByEnv = map[string]int{}
	for i, ti := range infos {
		d.Predicted[i] = preds[i].Mean
		rows[i] = TaskRow{Env: ti.Env, Task: ti.Task.Task, Chosen: ti.Stats.Chosen, LastChosen: ti.Stats.LastChosen,
			Rollouts: ti.Stats.Rollouts, MeanReward: d.scale(ti.Stats.Mean(), ti.Stats.Rollouts), Predicted: preds[i].Mean}
		if ti.Stats.Chosen == 0 {
			d.Never++
			d.NeverByEnv[ti.Env]++
		}
	}
	d.Tasks = len(rows)
	d.pickChosen(rows)
	return nil
}

// pickChosen keeps the ListLen most chosen tasks, and the ListLen least chosen of those chosen
// at least once (the never chosen are counted, not listed: there are usually many).
func (d *Data) pickChosen(rows []TaskRow) {
	slices.SortStableFunc(rows, func(a, b TaskRow) int { return cmp.Compare(b.Chosen, a.Chosen) })
	chosen := rows[:len(rows)-d.Never]
	d.Most = slices.Clone(chosen[:min(ListLen, len(chosen))])
	slices.Reverse(chosen)
	d.Least = slices.Clone(chosen[:min(ListLen, len(chosen))])
}

// predict runs package propagate as the scheduler would for the next request, over what the
// scheduler loads (schedule.Load: the stored graph, or the one built from the catalogue when no
// edges are stored, with the catalogue features), with the database's decay and the predictor
// state stored with the last answer (drift offsets and baseline). The predictions are in
// storage order, as r.Tasks gives the tasks.
func predict(r *storage.Reader, round int64, decay float64) ([]propagate.Prediction, error) {
	g, tasks, err := schedule.Load(r, schedule.DefaultBuildGraph)
	if err != nil {
		return nil, err
	}
	p := propagate.DefaultParams()
	p.Decay = decay
	pr, err := propagate.NewPredictor(p)
	if err != nil {
		return nil, err
	}
	// a state that does not decode is passed over, as the scheduler passes over it
	st, _ := schedule.DecodeState(r.PredictorState())
	preds, _, err := pr.Predict(g, tasks, round, st)
	if err != nil {
		return nil, fmt.Errorf("predict: %w", err)
	}
	return preds, nil
}

func (d *Data) readQuarantine(r *storage.Reader) error {
	reasons, files := map[string]int64{}, map[string]int64{}
	err := r.Quarantine(func(q storage.QuarantineEntry) error {
		d.Quarantine.Total++
		reasons[q.Reason]++
		files[q.Path]++
		d.Quarantine.Recent = append(d.Quarantine.Recent, q)
		if len(d.Quarantine.Recent) > 4*ListLen {
			d.Quarantine.Recent = slices.Clone(d.Quarantine.Recent[len(d.Quarantine.Recent)-ListLen:])
		}
		return nil
	})
	rec := d.Quarantine.Recent
	rec = rec[max(0, len(rec)-ListLen):]
	slices.Reverse(rec)
	d.Quarantine.Recent = rec
	d.Quarantine.ByReason, d.Quarantine.ByFile = counts(reasons), counts(files)
	return err
}

// counts sorts a tally, most frequent first.
func counts(m map[string]int64) []Count {
	out := make([]Count, 0, len(m))
	for k, n := range m {
		out = append(out, Count{k, n})
	}
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Name, b.Name))
	})
	return out
}
