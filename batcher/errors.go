package batcher

import (
	"errors"
	"fmt"
	"strings"
)

// ErrEmptyCatalogue means the graph has no tasks at all.
var ErrEmptyCatalogue = errors.New("no tasks are known yet: add a catalogue to DIR/catalog or rollouts to DIR/rollouts first")

// UnknownEnvError means a request names an environment that has no tasks.
type UnknownEnvError struct {
	Field string   // "envs" (a name in exclude_envs that is not an environment excludes nothing)
	Env   string   // the name asked for
	Known []string // the environments that exist
	// Like is the known environment that Env reads as (the same once both are normalised,
	// case-folded and stripped of invisible characters: lookAlike); "" when there is none.
	Like string
}

// Error names the environment and lists the known ones: at most maxListed, each quoted and cut
// like the name asked for (an environment name may be 4 KiB, and the message goes into an error
// file and a log line), then how many more there are.
func (e *UnknownEnvError) Error() string {
	if e.Like != "" {
		what := "names unknown environment " + quoteCut(e.Env)
		if e.Field == "exclude_envs" {
			what = "names " + quoteCut(e.Env) + ", which has no tasks and so would exclude nothing"
		}
		return fmt.Sprintf("%s %s: the known environment %s reads the same but differs from it in Unicode form, "+
			"letter case, invisible characters or spaces at its ends (asked %s, known %s); names are compared byte for byte "+
			"(PROTOCOL.md, section 2): write the name as the catalogue does", e.Field, what, quoteCut(e.Like),
			quoteCutASCII(e.Env), quoteCutASCII(e.Like))
	}
	n := min(len(e.Known), maxListed)
	known := make([]string, n)
	for i, k := range e.Known[:n] {
		known[i] = quoteCut(k)
	}
	more := ""
	if len(e.Known) > n {
		more = fmt.Sprintf(" and %d more", len(e.Known)-n)
	}
	mean := ""
	if near := nearEnv(e.Env, e.Known); near != "" {
		mean = " (did you mean " + quoteCut(near) + "?)"
	}
	return fmt.Sprintf("%s names unknown environment %s%s: the %d known are %s%s", e.Field, quoteCut(e.Env), mean,
		len(e.Known), strings.Join(known, ", "), more)
}

// NearEnv is nearEnv, for the daemon's log of exclude_envs names that are no environment.
func NearEnv(name string, known []string) string { return nearEnv(name, known) }

// nearEnv is the known environment fewest edits from name (insertions, deletions,
// substitutions, swaps of two neighbouring bytes): at most one for a name of four bytes or
// fewer, two for a longer one; of two as near, the first. "" when none is that near. The list
// shows only the first maxListed environments, so a typo of the 41st (`tau2-retial`) was told
// nothing of `tau2-retail`. The work is bounded: names that differ in length by more than the
// limit, or are longer than maxNearName, are not compared, and a comparison stops once every
// alignment is past the limit.
func nearEnv(name string, known []string) string {
	limit := 2
	if len(name) <= 4 {
		limit = 1
	}
	if len(name) > maxNearName {
		return ""
	}
	best, bestD := "", limit+1
	for _, k := range known {
		if len(k) > maxNearName || len(k) < len(name)-limit || len(k) > len(name)+limit {
			continue
		}
		if d := editsWithin(name, k, bestD-1); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// maxNearName is the longest environment name nearEnv compares, in bytes.
const maxNearName = 256

// editsWithin is the optimal string alignment distance of a and b (bytes) when it is at most
// limit, else limit+1; it gives up as soon as a whole row of the table is past limit.
func editsWithin(a, b string, limit int) int {
	if limit < 0 {
		return 0
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], limit+1)
}

// maxListed is how many known environments a message lists.
const maxListed = 10

// quoteCut quotes a name for a message, cut to its first 100 bytes with its length said: a
// request may name a 100 KB environment, and its error file and log line need not repeat it.
func quoteCut(name string) string {
	if len(name) <= 100 {
		return fmt.Sprintf("%q", name)
	}
	return fmt.Sprintf("%q… (%d bytes)", name[:100], len(name))
}

// quoteCutASCII is quoteCut with every character that is not printable ASCII escaped, so that
// two names that look alike show how they differ ("cafe\u0301" and "caf\u00e9").
func quoteCutASCII(name string) string {
	if len(name) <= 100 {
		return fmt.Sprintf("%+q", name)
	}
	return fmt.Sprintf("%+q… (%d bytes)", name[:100], len(name))
}

// TooFewTasksError means fewer tasks are eligible than the batch size and repeats are not
// allowed.
type TooFewTasksError struct {
	Size, Eligible int
	Retired        int // tasks of the environments asked for that no catalogue lists any more
}

// Error says how many tasks are eligible and how to ask for a batch that fits.
func (e *TooFewTasksError) Error() string {
	if e.Eligible == 0 && e.Retired > 0 {
		return fmt.Sprintf("no task is eligible for a batch of %d: the %d tasks of the environments asked for are all "+
			"retired (no file in DIR/catalog lists them any more); list them in a catalogue file again", e.Size, e.Retired)
	}
	if e.Eligible == 0 {
		return fmt.Sprintf("no task is eligible for a batch of %d: envs and exclude_envs leave no environment", e.Size)
	}
	retired := ""
	if e.Retired > 0 { // a catalogue file deleted or rewritten: the user may not know its tasks went
		retired = fmt.Sprintf(" (%d more are retired: no file in DIR/catalog lists them any more)", e.Retired)
	}
	return fmt.Sprintf("size %d is larger than the %d eligible tasks%s: ask for at most %d, widen envs/exclude_envs, or set allow_repeats",
		e.Size, e.Eligible, retired, e.Eligible)
}

// RequestError means a field of a Request is out of range.
type RequestError struct {
	Field string
	Msg   string
}

// Error is "field: what is wrong".
func (e *RequestError) Error() string { return e.Field + ": " + e.Msg }
