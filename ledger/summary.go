package ledger

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/envsched/envsched/stats"
)

// Window is what a set of measured groups shows: predicted against realised. Shares are of
// groups; every field is 0 when Groups is 0.
type Window struct {
	Groups              int64   `json:"groups"`
	PredictedDegenerate float64 `json:"predicted_degenerate"` // mean p_degenerate of the groups
	RealisedDegenerate  float64 `json:"realised_degenerate"`  // share that came back all-equal
	DegenerateGap       float64 `json:"degenerate_gap"`       // realised − predicted
	PredictedMean       float64 `json:"predicted_mean"`       // mean predicted reward, normalised
	RealisedMean        float64 `json:"realised_mean"`        // mean realised reward, normalised
}

// WindowOf is c as a Window, rounded to 4 decimals.
func WindowOf(c Cell) Window {
	pd, rd, pm, rm := c.Shares()
	return Window{Groups: c.Groups, PredictedDegenerate: r4(pd), RealisedDegenerate: r4(rd),
		DegenerateGap: r4(rd - pd), PredictedMean: r4(pm), RealisedMean: r4(rm)}
}

func r4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Summary is the ledger in a few numbers: what status.json, `envsched stats --json` and the
// metrics show.
type Summary struct {
	Overall Window `json:"overall"`
	// Recent is over the groups measured of the last RecentAnswers answers
	Recent        Window            `json:"recent"`
	RecentAnswers int               `json:"recent_answers"`
	Channels      map[string]Window `json:"channels"`  // by Channel.String
	Open          int64             `json:"open"`      // predictions waiting for their group
	Expired       int64             `json:"expired"`   // never completed, pushed out by later answers
	Unmatched     int64             `json:"unmatched"` // rollouts of a task with open predictions that answered none
	Restarted     int64             `json:"restarted"` // unfinished groups begun again under a new group key
	Savings       Savings           `json:"savings"`
}

// Savings estimates the rollouts envsched saved against random choice. It is an estimate:
// random choice was not run. Source says where its degenerate share comes from:
//
//   - "random_slots": the realised degenerate share of the random slots (tasks drawn uniformly
//     among the eligible ones), once they have at least MinRandomGroups measured groups;
//   - "env_means": else, Σ_e w_e (m_e^G + (1 − m_e)^G) over the environments with rollouts,
//     m_e the environment's mean reward, w_e its share of tasks and G the mean measured group
//     size: what a task of mean m_e would give with 0/1 rewards. Tasks of one environment differ,
//     so for 0/1 rewards this is a lower bound of random choice's share (by convexity) and the
//     estimate errs towards fewer rollouts saved;
//   - "none": nothing measured yet.
//
// RolloutsSaved = InformativeGroups × G / (1 − RandomDegenerate) − Rollouts: the rollouts random
// choice would have spent to get as many informative (not all-equal) groups as the answers got,
// less what the answers spent. Negative when envsched did worse than the estimate.
type Savings struct {
	Source             string  `json:"source"`
	RandomDegenerate   float64 `json:"random_degenerate"`  // estimated degenerate share of random choice
	RandomSlotGroups   int64   `json:"random_slot_groups"` // measured groups of random slots
	AnswersDegenerate  float64 `json:"answers_degenerate"` // realised degenerate share of all answers
	Rollouts           int64   `json:"rollouts"`           // rollouts of the measured groups
	InformativeGroups  int64   `json:"informative_groups"`
	WastedRollouts     int64   `json:"wasted_rollouts"`            // rollouts of all-equal groups
	RandomWastedApprox float64 `json:"random_wasted_rollouts_est"` // RandomDegenerate × Rollouts
	RolloutsSaved      float64 `json:"rollouts_saved_est"`
}

// RecentAnswers is how many last answers the Recent window of status.json, stats and the
// metrics covers.
const RecentAnswers = 20

// MinRandomGroups is how many measured random-slot groups the savings estimate needs before it
// trusts their share over the environment means.
const MinRandomGroups = 30

// EnvMean is one environment as the savings estimate sees it.
type EnvMean struct {
	Tasks    int64   // tasks known
	Rollouts int64   // rollouts counted
	Mean     float64 // mean normalised reward
}

// Summarize reduces l (read with its last answers) and the environments' means to a Summary.
func Summarize(l Ledger, envs []EnvMean) Summary {
	ov := l.Overall()
	s := Summary{Overall: WindowOf(l.Total()), Recent: WindowOf(l.Recent()), RecentAnswers: len(l.Answers),
		Channels: map[string]Window{}, Open: l.Totals.Open(), Expired: l.Totals.Expired, Unmatched: l.Totals.Unmatched,
		Restarted: l.Totals.Restarted}
	for ch := range ov {
		s.Channels[Channel(ch).String()] = WindowOf(ov[ch])
	}
	s.Savings = estimateSavings(l.Total(), ov[Random], envs)
	return s
}

func estimateSavings(all, random Cell, envs []EnvMean) Savings {
	sv := Savings{Source: "none", RandomSlotGroups: random.Groups, Rollouts: all.Rollouts,
		InformativeGroups: all.Groups - all.Degenerate}
	if all.Groups == 0 {
		return sv
	}
	g := float64(all.Rollouts) / float64(all.Groups)
	_, sv.AnswersDegenerate, _, _ = all.Shares()
	sv.AnswersDegenerate = r4(sv.AnswersDegenerate)
	sv.WastedRollouts = wasted(all)
	if random.Groups >= MinRandomGroups {
		_, rd, _, _ := random.Shares()
		sv.Source, sv.RandomDegenerate = "random_slots", rd
	} else if rd, ok := envMeansShare(envs, g); ok {
		sv.Source, sv.RandomDegenerate = "env_means", rd
	} else {
		return sv
	}
	sv.RandomDegenerate = r4(sv.RandomDegenerate)
	sv.RandomWastedApprox = math.Round(sv.RandomDegenerate * float64(all.Rollouts))
	if sv.RandomDegenerate < 1 {
		sv.RolloutsSaved = math.Round(float64(sv.InformativeGroups)*g/(1-sv.RandomDegenerate) - float64(all.Rollouts))
	}
	return sv
}

// wasted is the rollouts of c's all-equal groups, at c's mean group size.
func wasted(c Cell) int64 {
	return int64(math.Round(float64(c.Degenerate) * float64(c.Rollouts) / float64(c.Groups)))
}

// envMeansShare is Σ_e w_e (m_e^g + (1 − m_e)^g) over environments with rollouts.
func envMeansShare(envs []EnvMean, g float64) (float64, bool) {
	var sum, w float64
	for _, e := range envs {
		if e.Rollouts == 0 || e.Tasks == 0 {
			continue
		}
		m := min(max(e.Mean, 0), 1)
		sum += float64(e.Tasks) * (math.Pow(m, g) + math.Pow(1-m, g))
		w += float64(e.Tasks)
	}
	if w == 0 {
		return 0, false
	}
	return sum / w, true
}

// EnvMeans turns environment statistics into the savings estimate's input, in name order (so
// that the sum, and the estimate, are the same on every read).
func EnvMeans(envs map[string]stats.Env) []EnvMean {
	out := make([]EnvMean, 0, len(envs))
	for _, name := range slices.Sorted(maps.Keys(envs)) {
		e := envs[name]
		out = append(out, EnvMean{Tasks: e.Tasks, Rollouts: e.Rollouts, Mean: e.Mean()})
	}
	return out
}

// BinRow is one row of a reliability table: the groups whose predicted p_degenerate fell in
// [Low, High), and what came.
type BinRow struct {
	Low, High float64 `json:"-"`
	Range     string  `json:"range"` // "0.0-0.1"
	Window
}

// Detail is the whole ledger for `envsched stats` and the report: the Summary, every
// environment per channel, and the reliability table overall and per channel.
type Detail struct {
	Summary
	Envs               map[string]map[string]Window `json:"envs"` // env -> channel -> window
	Reliability        []BinRow                     `json:"reliability"`
	ChannelReliability map[string][]BinRow          `json:"channel_reliability"`
}

// Detailed is Summarize with the per-environment cells and the reliability tables.
func Detailed(l Ledger, envs []EnvMean) Detail {
	d := Detail{Summary: Summarize(l, envs), Envs: map[string]map[string]Window{},
		Reliability: binRows(l.Reliability()), ChannelReliability: map[string][]BinRow{}}
	for name, cells := range l.Cells {
		m := map[string]Window{}
		for ch, c := range cells {
			m[Channel(ch).String()] = WindowOf(c)
		}
		d.Envs[name] = m
	}
	for ch := range l.Bins {
		d.ChannelReliability[Channel(ch).String()] = binRows(l.Bins[ch])
	}
	return d
}

func binRows(bins [Bins]Cell) []BinRow {
	out := make([]BinRow, Bins)
	for b, c := range bins {
		lo, hi := float64(b)/Bins, float64(b+1)/Bins
		out[b] = BinRow{Low: lo, High: hi, Range: fmt.Sprintf("%.1f-%.1f", lo, hi), Window: WindowOf(c)}
	}
	return out
}
