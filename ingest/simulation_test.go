package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/envsched/envsched/storage"
)

// The simulation drives real files in a real exchange directory through random sequences of
// the changes a trainer can make (append, a line finished in two writes, truncate and rewrite
// in place, rewrite by rename, rename inside rollouts/, move out of rollouts/ or to a dot-name
// and back, delete, re-create under the same name, which ext4 does on the freed inode), with
// full scans, hinted scans and restarts in between, and checks the database against a model
// of what must be stored (after bbolt's simulation_test.go):
//
//   - a line that was in a rollout file at a full scan must be stored (nothing lost);
//   - a line may be stored only if it was in a rollout file at some scan that looked at it;
//   - no line is stored twice (every line written is unique, and has no rollout_id: dedupe
//     cannot hide a line read twice).

// simFile is one file of the model: where it is and the complete lines it holds.
type simFile struct {
	path    string   // relative to DIR
	lines   []string // complete lines, newline included
	partial string   // the first half of the last line, when it is not finished yet
	rest    string   // the rest of that line
}

// visible reports whether ingest reads the file at its path.
func (f *simFile) visible() bool {
	_, ok := classify(f.path)
	return ok
}

type sim struct {
	t     *testing.T
	e     *env
	rng   *rand.Rand
	files []*simFile
	next  int             // next line id
	must  map[string]bool // lines in a rollout file at a full scan
	may   map[string]bool // lines in a rollout file at any scan that looked at it
	names int
	log   []string

	commits, failAt int // the scan's commits so far, and the one that crashes (0: none)
}

// newSim makes a simulation whose commits hold 1 to 6 records, so that a scan commits often
// and a crash can fall between any two of its commits.
func newSim(t *testing.T, seed uint64, opt Options) *sim {
	s := &sim{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		must: map[string]bool{}, may: map[string]bool{}}
	opt.MaxRecords = 1 + s.rng.IntN(6)
	opt.commitHook = func(*storage.Batch) error {
		if s.commits++; s.commits == s.failAt {
			return errCrash
		}
		return nil
	}
	s.e = newEnv(t, opt)
	return s
}

// newLines returns n unique lines whose first 64 bytes are all alike.
func (s *sim) newLines(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"pad":"%s","env":"e","reward":1,"task":"l%d"}`+"\n", strings.Repeat("p", 60), s.next)
		s.next++
	}
	return out
}

func (s *sim) content(f *simFile) string { return strings.Join(f.lines, "") + f.partial }

func (s *sim) freshName(visible bool) string {
	s.names++
	switch {
	case !visible && s.rng.IntN(2) == 0:
		return fmt.Sprintf("aside/f%d.jsonl", s.names)
	case !visible:
		return fmt.Sprintf("rollouts/.f%d.jsonl", s.names)
	case s.rng.IntN(3) == 0:
		return fmt.Sprintf("rollouts/sub%d/f%d.jsonl", s.rng.IntN(2), s.names)
	}
	return fmt.Sprintf("rollouts/f%d.jsonl", s.names)
}

func (s *sim) pick() *simFile {
	if len(s.files) == 0 {
		return nil
	}
	return s.files[s.rng.IntN(len(s.files))]
}

func (s *sim) step() {
	f := s.pick()
	op := s.rng.IntN(15)
	if f == nil && op < 10 {
		op = 10
	}
	switch op {
	case 0, 1, 2:
		lines := s.newLines(1 + s.rng.IntN(5))
		s.record("append %d lines to %s", len(lines), f.path)
		text := f.rest + strings.Join(lines, "")
		f.lines, f.partial, f.rest = append(f.lines, lines...), "", ""
		if s.rng.IntN(4) == 0 { // leave the next line half written
			half := s.newLines(1)[0]
			f.partial, f.rest = half[:len(half)/2], half[len(half)/2:]
			text += f.partial
			f.lines = append(f.lines, half) // complete once the rest is written
		}
		s.e.append(f.path, text)
	case 3:
		s.record("truncate and rewrite %s in place", f.path)
		f.lines, f.partial, f.rest = s.newLines(s.rng.IntN(8)), "", ""
		s.e.write(f.path, s.content(f))
	case 4:
		s.record("rewrite %s by rename", f.path)
		f.lines, f.partial, f.rest = s.newLines(s.rng.IntN(8)), "", ""
		tmp := filepath.Join(filepath.Dir(f.path), ".new.tmp")
		s.e.write(tmp, s.content(f))
		mustRename(s.e, tmp, f.path)
	case 5:
		to := s.freshName(true)
		s.record("rename %s to %s", f.path, to)
		mustRename(s.e, f.path, to)
		f.path = to
	case 6:
		to := s.freshName(false)
		s.record("move %s out to %s", f.path, to)
		mustRename(s.e, f.path, to)
		f.path = to
	case 7:
		if f.visible() {
			return
		}
		to := s.freshName(true)
		s.record("move %s back to %s", f.path, to)
		mustRename(s.e, f.path, to)
		f.path = to
	case 8:
		s.record("delete %s", f.path)
		mustRemove(s.e, f.path)
		s.drop(f)
	case 9:
		s.record("delete %s and make it again", f.path)
		mustRemove(s.e, f.path)
		f.lines, f.partial, f.rest = s.newLines(s.rng.IntN(8)), "", ""
		s.e.write(f.path, s.content(f))
	case 10, 11:
		f := &simFile{path: s.freshName(true), lines: s.newLines(s.rng.IntN(6))}
		s.record("create %s", f.path)
		s.files = append(s.files, f)
		s.e.write(f.path, s.content(f))
	case 12:
		s.scanHints()
	case 13:
		if s.rng.IntN(3) == 0 {
			s.record("restart")
			s.e.reopen()
		}
		s.scanFull()
	case 14:
		s.crash()
	}
}

func (s *sim) drop(f *simFile) {
	for i, g := range s.files {
		if g == f {
			s.files = append(s.files[:i], s.files[i+1:]...)
			return
		}
	}
}

func (s *sim) record(format string, args ...any) { s.log = append(s.log, fmt.Sprintf(format, args...)) }

// complete returns the complete lines of f as they are on disk now.
func (s *sim) complete(f *simFile) []string {
	if f.partial == "" {
		return f.lines
	}
	return f.lines[:len(f.lines)-1] // the last is only half written
}

func (s *sim) scanFull() {
	s.record("full scan")
	s.e.scan()
	for _, f := range s.files {
		if f.visible() {
			for _, l := range s.complete(f) {
				s.must[l], s.may[l] = true, true
			}
		}
	}
	s.check()
}

// crash runs a full scan that dies before one of its commits (the process is killed between
// reading and committing), and restarts: what was committed before stays, the rest is read again.
func (s *sim) crash() {
	s.commits, s.failAt = 0, 1+s.rng.IntN(4)
	defer func() { s.failAt = 0 }()
	s.record("full scan killed before commit %d, restart", s.failAt)
	_, err := s.e.in.Scan(context.Background())
	if err != nil && !errors.Is(err, errCrash) {
		s.t.Fatalf("scan: %v", err)
	}
	for _, f := range s.files {
		if f.visible() {
			for _, l := range s.complete(f) {
				s.may[l] = true
			}
		}
	}
	s.e.reopen()
	s.check()
}

func (s *sim) scanHints() {
	var paths []string
	for _, f := range s.files {
		if f.visible() && s.rng.IntN(2) == 0 {
			paths = append(paths, s.e.path(f.path))
			for _, l := range s.complete(f) {
				s.may[l] = true
			}
		}
	}
	s.record("scan of %d hinted paths", len(paths))
	if _, err := s.e.in.ScanPaths(context.Background(), paths); err != nil {
		s.t.Fatalf("scan paths: %v", err)
	}
	s.check()
}

// check compares the database with the model.
func (s *sim) check() {
	counts := map[string]int{}
	for _, r := range s.e.rollouts() {
		counts[r.Task]++
	}
	var faults []string
	for l := range s.must {
		if counts[taskOf(l)] == 0 {
			faults = append(faults, "lost "+taskOf(l))
		}
	}
	may := map[string]bool{}
	for l := range s.may {
		may[taskOf(l)] = true
	}
	for task, n := range counts {
		if n > 1 {
			faults = append(faults, fmt.Sprintf("%s stored %d times", task, n))
		}
		if !may[task] {
			faults = append(faults, task+" stored but never in a file a scan looked at")
		}
	}
	if len(faults) > 0 {
		sort.Strings(faults)
		s.t.Fatalf("after:\n  %s\nfaults: %v", strings.Join(s.log, "\n  "), faults)
	}
}

func taskOf(line string) string {
	i := strings.Index(line, `"task":"`)
	rest := line[i+len(`"task":"`):]
	return rest[:strings.IndexByte(rest, '"')]
}

// run makes n random steps and a final full scan.
func (s *sim) run(n int) {
	for i := range n {
		if i == n/2 {
			s.letSettle()
		}
		s.step()
	}
	s.letSettle()
	s.scanFull()
}

// letSettle waits out a short settleAfter (odd seeds: see simOptions), so that the files left
// alone from here on settle at their next check and the stat-only check of unchanged files is
// exercised: without the wait whether any file settled depended on how fast the machine ran
// the steps (on an idle one, none did, and the test failed).
func (s *sim) letSettle() {
	if d := s.e.in.opts.settleAfter; d > 0 && d < time.Second {
		time.Sleep(d + 5*time.Millisecond)
	}
}

// TestFileIdentitySimulation runs the simulation for a number of seeds, with and without birth
// times (without them, a re-created file on a reused inode is told apart by content alone).
func TestFileIdentitySimulation(t *testing.T) {
	seeds, steps := 20, 80
	if testing.Short() {
		seeds = 8
	}
	settledRuns := 0
	for seed := range uint64(seeds) {
		for _, noBirth := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed=%d/noBirth=%v", seed, noBirth), func(t *testing.T) {
				s := newSim(t, seed, simOptions(seed, noBirth))
				s.run(steps)
				if len(s.e.in.reg.settled) > 0 {
					settledRuns++
				}
			})
		}
	}
	if settledRuns == 0 {
		t.Errorf("no run had a settled file: the stat-only check of unchanged files was never exercised")
	}
}

// simOptions gives odd seeds a settling time of 30 ms (well above the timestamp granularity of
// Linux filesystems, a few ms), so that files left alone for a while are checked by their stat
// alone, as they are in a long-running daemon.
func simOptions(seed uint64, noBirth bool) Options {
	o := Options{noBirth: noBirth}
	if seed%2 == 1 {
		o.settleAfter = 30 * time.Millisecond
	}
	return o
}

// FuzzFileIdentity is the simulation with the seed, the number of steps and the birth-time
// switch chosen by the fuzzer.
func FuzzFileIdentity(f *testing.F) {
	f.Add(uint64(1), uint8(40), false)
	f.Add(uint64(7), uint8(120), true)
	f.Fuzz(func(t *testing.T, seed uint64, steps uint8, noBirth bool) {
		newSim(t, seed, simOptions(seed, noBirth)).run(int(steps))
	})
}
