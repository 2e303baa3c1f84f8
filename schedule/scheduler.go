package schedule

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/envsched/envsched/batcher"
	"github.com/envsched/envsched/propagate"
	"github.com/envsched/envsched/record"
	"github.com/envsched/envsched/storage"
)

// Policy names the algorithm in every answer.
const Policy = "envsched/1"

// Options configure a Scheduler. Zero fields take their defaults.
type Options struct {
	// Size and GroupSize are the defaults of a request's size and group_size; 0 takes
	// DefaultSize and DefaultGroupSize.
	Size, GroupSize int
	// Predict are the prediction parameters; the zero value means propagate.DefaultParams
	// with the database's decay. A Decay different from the database's is an error. Its
	// GroupSize is not used: every request is predicted at its own group_size.
	Predict *propagate.Params
	// Select are the selection parameters; nil means batcher.DefaultParams.
	Select *batcher.Params
	// BuildGraph builds the graph from the catalogue when the database stores no edges; nil
	// leaves such a graph without edges (every task then leans on its environment prior).
	BuildGraph BuildGraph
	// Now is the clock of created_at; nil means time.Now.
	Now func() time.Time
	// Logger receives one line per answer; nil discards.
	Logger *slog.Logger
}

func (o Options) withDefaults(decay float64) (Options, error) {
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	if o.GroupSize == 0 {
		o.GroupSize = DefaultGroupSize
	}
	if !ValidSize(o.Size) || !ValidGroupSize(o.GroupSize) {
		return o, fmt.Errorf("default batch size %d and group size %d: want 1 to %d and 1 to %d", o.Size, o.GroupSize, MaxSize, MaxGroupSize)
	}
	if o.Predict == nil {
		p := propagate.DefaultParams()
		p.Decay = decay
		o.Predict = &p
	}
	if o.Predict.Decay != decay {
		return o, fmt.Errorf("decay %g differs from the database's %g, with which its statistics were decayed", o.Predict.Decay, decay)
	}
	if o.Select == nil {
		p := batcher.DefaultParams()
		o.Select = &p
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o, o.Select.Validate()
}

// Scheduler answers requests over one database. Its methods are safe for concurrent use; they
// run one at a time.
type Scheduler struct {
	mu   sync.Mutex
	db   *storage.DB
	opts Options
	load loader
	pred *propagate.Predictor
	sel  batcher.Selector
	// saved is the predictor state stored with the last answer (or restored at start)
	saved savedState
}

// New returns a Scheduler over db. Every prediction takes its drift state (offsets,
// re-chosen offset, baseline) from what is stored with the last answer, so that a restart (or
// a new process per request) answers as a scheduler that kept running.
func New(db *storage.DB, opts Options) (*Scheduler, error) {
	opts, err := opts.withDefaults(db.Config().Decay)
	if err != nil {
		return nil, fmt.Errorf("scheduler options: %w", err)
	}
	pp := *opts.Predict
	pp.Loads = opts.Select.Transfer > 0 // the transfer factor's loads, in the prediction's pass over the edges
	pp.Lean = true                      // nothing here reads SD or PDeg (see propagate.Params.Lean)
	pred, err := propagate.NewPredictor(pp)
	if err != nil {
		return nil, fmt.Errorf("scheduler options: %w", err)
	}
	s := &Scheduler{db: db, opts: opts, load: loader{db: db, build: opts.BuildGraph, follow: db.Follow()}, pred: pred}
	if err := s.restore(); err != nil {
		return nil, err
	}
	return s, nil
}

// savedState is what a Scheduler stores with each answer (storage's predictor state) and
// predicts the next answer with: the drift offsets by environment name, the re-chosen offset
// and the baseline the next answer measures against (propagate.State). So the drift state is
// a function of the database, whatever the process did before (a restart, a failed request).
type savedState struct {
	DriftOffsets map[string]float64 `json:"drift_offsets"`
	Rechosen     float64            `json:"rechosen_offset"`
	// Baseline is what the next answer measures drift against, in this process or the next:
	// the tasks of the last answer, and those of up to baselineAnswers−1 answers before whose
	// rollouts may still be coming (a trainer whose rollouts lag its requests), each with its
	// statistics as of the last answer.
	Baseline []baselineEntry `json:"baseline,omitempty"`
	// Dispersion is what the dispersion correction measured (propagate.Dispersion).
	Dispersion *propagate.Dispersion `json:"dispersion,omitempty"`
	// PriorStart is where the next fit of the feature prior starts (propagate.WarmStart,
	// encoded): the fit of the last answer. It saves about half the fit's iterations, and,
	// stored, keeps the next answer a function of the database.
	PriorStart []byte `json:"prior_start,omitempty"`
	// nodes holds, when this process made Baseline, the graph node of each of its entries
	// as of then: a hint that saves the next answer a search by name for each entry, used
	// only once the node at it is seen to be the entry's task. It is not stored (a restored
	// state has none and searches).
	nodes []int
}

// baselineEntry is one task's drift baseline and the number of answers it has been carried
// since its task was chosen.
type baselineEntry struct {
	propagate.Baseline
	Age int `json:"age,omitempty"`
}

// baselineAnswers is how many answers a chosen task's baseline is kept for.
const baselineAnswers = 4

// predictState is the propagate.State of st.
func (st savedState) predictState() propagate.State {
	base := make([]propagate.Baseline, len(st.Baseline))
	for i, e := range st.Baseline {
		base[i] = e.Baseline
	}
	out := propagate.State{Offsets: st.DriftOffsets, Rechosen: st.Rechosen, Baseline: base, Nodes: st.nodes}
	if st.Dispersion != nil {
		out.Dispersion = *st.Dispersion
	}
	if out.Warm.UnmarshalBinary(st.PriorStart) != nil {
		out.Warm = propagate.WarmStart{} // none stored, or unreadable: the fit starts from zero
	}
	return out
}

// DecodeState decodes the predictor state stored with the last answer (storage's
// PredictorState), so that a reader predicts with it as the next request would. nil decodes
// to the zero State.
func DecodeState(data []byte) (propagate.State, error) {
	st, err := decodeSaved(data)
	if err != nil {
		return propagate.State{}, err
	}
	return st.predictState(), nil
}

func decodeSaved(data []byte) (savedState, error) {
	var st savedState
	if data == nil {
		return st, nil
	}
	if len(data) > 0 && (data[0] == stateVersion || data[0] == stateVersion3 || data[0] == stateVersion2 || data[0] == stateVersion1) {
		return decodeBinaryState(data)
	}
	if err := json.Unmarshal(data, &st); err != nil { // as stored before the binary form
		return savedState{}, fmt.Errorf("predictor state: %w", err)
	}
	return st, nil
}

// restore reads the predictor state stored with the last answer. A state that does not
// decode is logged and left: answering does not need it.
func (s *Scheduler) restore() error {
	data, err := s.db.PredictorState()
	if err != nil || data == nil {
		return err
	}
	st, err := decodeSaved(data)
	if err != nil {
		s.opts.Logger.Warn("stored predictor state is unreadable; starting without drift offsets", "err", err)
		return nil
	}
	s.saved = st
	return nil
}

// Answer answers request id with body: the stored answer when id was answered before (which
// changes nothing); otherwise it chooses a batch, stores it with the Predictor's drift offsets
// (storage.StoreAnswer: durable together before this returns) and returns its bytes. A
// request that cannot be served returns a *RequestError (its BadRequest method says so) and
// changes nothing.
func (s *Scheduler) Answer(id string, body []byte) ([]byte, error) {
	return s.AnswerEarly(id, body, nil)
}

// AnswerEarly is Answer that hands a new answer's bytes to early just before it stores them, so
// that the caller can write them somewhere while the answer's fsync'd commit runs. early, when
// not nil, is called at most once, from this goroutine, and never for an answer stored before
// or a bad request. The bytes it gets are what AnswerEarly returns when the store succeeds; they
// are not durable when early runs, and the store may still fail: nothing may show them until
// AnswerEarly has returned without an error.
func (s *Scheduler) AnswerEarly(id string, body []byte, early func(answer []byte)) ([]byte, error) {
	return s.answer(id, func() Parsed { return s.Parse(body) }, early)
}

// Parsed is a request body parsed once (Scheduler.Parse): the request, or the *RequestError
// that says why it cannot be served.
type Parsed struct {
	Request Request
	Err     error
}

// Parse parses a request body with the Scheduler's default size and group size (ParseRequest).
func (s *Scheduler) Parse(body []byte) Parsed {
	req, err := ParseRequest(body, s.opts.Size, s.opts.GroupSize)
	return Parsed{Request: req, Err: err}
}

// AnswerParsed is AnswerEarly of a body parsed already by Parse, so that a caller that reads the
// parse itself (the daemon logs the keys it ignored) parses each body once: a body of many keys
// was parsed once to answer and once more for the log.
func (s *Scheduler) AnswerParsed(id string, p Parsed, early func(answer []byte)) ([]byte, error) {
	return s.answer(id, func() Parsed { return p }, early)
}

// answer is AnswerEarly with the body's parse asked for only when id has no stored answer.
func (s *Scheduler) answer(id string, parse func() Parsed, early func(answer []byte)) ([]byte, error) {
	if !ValidID(id) {
		return nil, badf("request ID %q: want %s", id, IDRule)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, err := s.db.Answer(id); err == nil {
		return old, nil
	} else if !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	parsed := parse()
	req, err := parsed.Request, parsed.Err
	if err != nil {
		return nil, err
	}
	ans, chosen, next, err := s.choose(id, req)
	if err != nil {
		return nil, err
	}
	data, err := encodeAnswer(ans)
	if err != nil {
		return nil, fmt.Errorf("encode answer %s: %w", id, err)
	}
	data = append(data, '\n')
	var state []byte // nil leaves the stored state as it is
	saved, p := s.saved, s.pred.Params()
	// A channel that is off (an ablation) has no offsets: storing its zero would erase
	// what the daemon measured, so its stored value is carried over.
	if p.DriftRate > 0 {
		saved.DriftOffsets = next.DriftOffsets
	}
	if p.RechosenRate > 0 {
		saved.Rechosen = next.Rechosen
	}
	if p.DispersionMemory > 0 {
		saved.Dispersion = next.Dispersion
	}
	if p.FeatureRidge > 0 {
		saved.PriorStart = next.PriorStart
	}
	if p.DriftRate > 0 || p.RechosenRate > 0 || p.DispersionMemory > 0 {
		saved.Baseline, saved.nodes = next.Baseline, next.nodes
	}
	if p.DriftRate > 0 || p.RechosenRate > 0 || p.DispersionMemory > 0 || p.FeatureRidge > 0 {
		if state, err = encodeState(&saved); err != nil {
			return nil, fmt.Errorf("encode predictor state of %s: %w", id, err)
		}
	}
	rec := storage.AnswerRecord{ID: id, Step: ans.Step, Answer: data, Chosen: chosen, State: state,
		GroupSize: ans.GroupSize, Predictions: ans.predictions()}
	if early != nil {
		early(data)
	}
	if err := s.db.StoreAnswerRecord(rec); err != nil {
		return nil, err
	}
	s.saved = saved
	s.opts.Logger.Info("answered", "id", id, "step", ans.Step, "size", ans.Size, "envs", len(ans.Envs))
	return data, nil
}

// Close stops following the database's commits (see storage.Follower): a Scheduler that is
// no longer used should be closed so that its database stops recording changes for it. A
// closed Scheduler may still answer: it then reads every task again and follows anew.
func (s *Scheduler) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.load.follow.Close()
	s.load.g = nil
}

// Warm loads the statistics and builds the graph now, so that the first request does not wait
// for the graph build (seconds for a large catalogue without stored edges). The daemon may call
// it after its first scan; answering does not need it.
func (s *Scheduler) Warm() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.load.load()
	return err
}

// NextStep is the step of a request: the one it names, or the previous answer's step + 1,
// held within 0 to record.MaxStep. A request without a step never fails and never overflows:
// after an answer at record.MaxStep the next one is for record.MaxStep again, and a stored step
// outside the bounds (a database from before steps were bounded) is taken as the nearest bound.
func NextStep(last int64, asked *int64) int64 {
	if asked != nil {
		return *asked
	}
	return min(max(last, 0), record.MaxStep-1) + 1
}

// choose loads the state, predicts and selects. It returns the predictor state to store
// with the answer.
func (s *Scheduler) choose(id string, req Request) (*Answer, []storage.TaskKey, savedState, error) {
	st, err := s.load.load()
	if err != nil {
		return nil, nil, savedState{}, err
	}
	step := NextStep(st.lastStep, req.Step)
	seed := SeedOf(id)
	if req.Seed != nil {
		seed = *req.Seed
	}
	// The drift state comes from the stored state alone, never from what this process did
	// before: a restart changes nothing, and a request that fails moves nothing.
	// The trainer's own group size (not a fixed 8): the re-chosen trend measures training in
	// its groups. The request's, so the same request on the same database predicts the same.
	if err := s.pred.SetGroupSize(req.GroupSize); err != nil {
		return nil, nil, savedState{}, err
	}
	preds, next, err := s.pred.Predict(st.g, st.tasks, step, s.saved.predictState())
	if err != nil {
		return nil, nil, savedState{}, err
	}
	breq := batcher.Request{Size: req.Size, GroupSize: req.GroupSize, Step: step, Envs: req.Envs,
		ExcludeEnvs: req.ExcludeEnvs, AllowRepeats: req.AllowRepeats, Seed: seed, Retired: st.retired,
		Loads: s.pred.Loads()}
	b, err := s.sel.Select(st.g, preds, st.tasks, breq, selectParams(*s.opts.Select, next))
	if err != nil {
		return nil, nil, savedState{}, selectError(err)
	}
	pick := s.pred.Picker(next)
	answered := make([]propagate.Prediction, len(b.Picks)) // corrected for how each was picked
	nodes := make([]int, len(b.Picks))
	for i, pk := range b.Picks {
		answered[i] = pick(preds[pk.Node], st.tasks[pk.Node].Rollouts > 0, pk.Random)
		nodes[i] = pk.Node
	}
	ans := newAnswer(id, step, s.opts.Now(), breq, st, answered, b)
	picked := propagate.Baselines(st.g, st.tasks, preds, nodes)
	atStart := next.AtStart()
	for i, pk := range b.Picks {
		picked[i].Random, picked[i].Cover = pk.Random, pk.ForCoverage()
		picked[i].Start = atStart && !picked[i].Tried
		if pp := s.pred.Params(); pp.GradedCal && pp.DispersionMemory > 0 {
			picked[i].Graded = answered[i].GradedBase(req.GroupSize)
		}
	}
	saved := savedState{DriftOffsets: next.Offsets, Rechosen: next.Rechosen, Dispersion: &next.Dispersion}
	saved.Baseline, saved.nodes = s.nextBaseline(st, picked, nodes)
	if saved.PriorStart, err = next.Warm.MarshalBinary(); err != nil {
		return nil, nil, savedState{}, fmt.Errorf("encode the feature prior's warm start: %w", err)
	}
	return ans, chosenKeys(st, b), saved, nil
}

// nextBaseline is the baseline to store with an answer: chosen, the baselines of the tasks
// it chose as of this call (at the given nodes), then the entries of the stored baseline
// younger than baselineAnswers whose tasks were not chosen again, with their statistics
// brought up to now (so that every rollout is measured once). It returns each entry's node.
func (s *Scheduler) nextBaseline(st *state, picked []propagate.Baseline, nodes []int) ([]baselineEntry, []int) {
	out := make([]baselineEntry, 0, len(picked)+len(s.saved.Baseline))
	at := make([]int, 0, cap(out))
	// Nodes stand for tasks one to one within a graph, so a task chosen twice in one answer
	// (allow_repeats) is its node twice.
	chosen := make(map[int]bool, len(picked))
	for k, b := range picked {
		if i := nodes[k]; !chosen[i] {
			out = append(out, baselineEntry{Baseline: b})
			at = append(at, i)
			chosen[i] = true
		}
	}
	for k, e := range s.saved.Baseline {
		if e.Age+1 >= baselineAnswers {
			continue
		}
		i, ok := s.saved.nodeOf(st, k)
		if !ok || chosen[i] {
			continue
		}
		// the mean stays the one its task was chosen on, and Tried with it: a group that
		// arrives in parts still measures the channel it was chosen in
		e.Rollouts, e.Sum, e.Age = st.tasks[i].Rollouts, st.tasks[i].Sum, e.Age+1
		e.Groups, e.Degenerate = st.tasks[i].Groups, st.tasks[i].Degenerate
		out = append(out, e)
		at = append(at, i)
	}
	if len(out) == 0 {
		return nil, nil // as stored and read back: none
	}
	return out, at
}

// nodeOf is the node of baseline entry k in st's graph: its hint when the node there is the
// entry's task, else found by name.
func (sv *savedState) nodeOf(st *state, k int) (int, bool) {
	e := &sv.Baseline[k]
	if k < len(sv.nodes) {
		if i := sv.nodes[k]; i >= 0 && i < len(st.g.Nodes) {
			if nd := st.g.Nodes[i]; nd.Task == e.Task && st.g.Envs[nd.Env] == e.Env {
				return i, true
			}
		}
	}
	return st.find(e.Env, e.Task)
}

// selectParams are the selection parameters of a request: p with its coverage weight
// multiplied by what exploring has measurably returned and its random slots by what they
// returned (propagate.State.ExplorationReturn and RandomReturn of the state the prediction
// left), so that the share of exploration follows its return; with CoverReturn on, the
// coverage of re-tries too (propagate.State.CoverReturn).
func selectParams(p batcher.Params, next propagate.State) batcher.Params {
	p.CoverageWeight *= next.ExplorationReturn()
	p.RandomReturn *= next.RandomReturn()
	if p.CoverReturn {
		p.RetryCoverage *= next.CoverReturn()
	}
	return p
}

// selectError makes the batcher's errors about the request RequestErrors.
func selectError(err error) error {
	var unknown *batcher.UnknownEnvError
	var few *batcher.TooFewTasksError
	var bad *batcher.RequestError
	if errors.As(err, &unknown) || errors.As(err, &few) || errors.As(err, &bad) || errors.Is(err, batcher.ErrEmptyCatalogue) {
		return &RequestError{Msg: err.Error()}
	}
	return err
}

func chosenKeys(st *state, b batcher.Batch) []storage.TaskKey {
	keys := make([]storage.TaskKey, len(b.Picks))
	for i, pk := range b.Picks {
		nd := st.g.Nodes[pk.Node]
		keys[i] = storage.TaskKey{Env: st.g.Envs[nd.Env], Task: nd.Task}
	}
	return keys
}
