package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchSeedTakesEverySeedARequestDoes: a request's seed is any 64-bit integer, signed or
// not (PROTOCOL.md section 4); --seed was a signed 64-bit flag, so the seeds from 2^63 on could
// not be given (urfave/cli refused 18446744073709551615). The largest unsigned seed and its
// two's complement -1 choose the same batch; a seed no request takes exits 2 naming --seed
// before the database is made.
func TestBatchSeedTakesEverySeedARequestDoes(t *testing.T) {
	seedOf := func(dir, id, seed string) (uint64, string) {
		t.Helper()
		code, out, msg := runApp("batch", "--dir", dir, "--id", id, "--size", "6", "--seed", seed, "--json")
		if code != 0 {
			t.Fatalf("--seed %s: exit %d: %s", seed, code, msg)
		}
		var b struct {
			Seed  uint64            `json:"seed"`
			Tasks []json.RawMessage `json:"tasks"`
		}
		if err := json.Unmarshal([]byte(out), &b); err != nil {
			t.Fatalf("--seed %s: %v: %s", seed, err, out)
		}
		tasks, _ := json.Marshal(b.Tasks)
		return b.Seed, string(tasks)
	}
	// each in a database of its own: a stored answer moves the next one's state
	top, topTasks := seedOf(exchangeDir(t), "top", "18446744073709551615")
	if top != 1<<64-1 {
		t.Errorf("--seed 18446744073709551615 answered with seed %d", top)
	}
	neg, negTasks := seedOf(exchangeDir(t), "neg", "-1")
	if neg != top || negTasks != topTasks {
		t.Errorf("--seed -1 (seed %d) chose otherwise than its two's complement (seed %d)", neg, top)
	}
	if big, _ := seedOf(exchangeDir(t), "big", "9223372036854775808"); big != 1<<63 {
		t.Errorf("--seed 2^63 answered with seed %d", big)
	}

	for _, bad := range []string{"18446744073709551616", "-9223372036854775809", "1.5", "1e3", "seven", ""} {
		fresh := exchangeDir(t)
		code, _, msg := runApp("batch", "--dir", fresh, "--seed", bad)
		if code != exitUsage || !strings.HasPrefix(msg, "--seed") {
			t.Errorf("--seed %q: exit %d, %q; want exit %d naming --seed", bad, code, msg, exitUsage)
		}
		if _, err := os.Stat(filepath.Join(fresh, "envsched.db")); !os.IsNotExist(err) {
			t.Errorf("--seed %q: the database was made before the flag was refused (%v)", bad, err)
		}
	}
}

// TestBatchSeedWithSignOrLeadingZeros (review13): validSeed takes what strconv takes ("+7",
// "007"), but batchBody writes the flag's text as a JSON number, which JSON has no such form of:
// json.Marshal fails, its error is dropped, and the request body is empty. The batch is then
// chosen and stored with the seed derived from the ID, and without --step, --env, --exclude-env
// or --allow-repeats, exit 0 (cli/batch.go:186-188). Either the seed is 7 or the flag is refused; never a batch that
// ignores what was asked.
func TestBatchSeedWithSignOrLeadingZeros(t *testing.T) {
	for _, seed := range []string{"+7", "007"} {
		dir := exchangeDir(t)
		code, out, msg := runApp("batch", "--dir", dir, "--id", "s", "--size", "2", "--seed", seed,
			"--exclude-env", "env-0", "--json")
		if code == exitUsage && strings.HasPrefix(msg, "--seed") {
			continue // refused naming the flag: fine
		}
		if code != 0 {
			t.Fatalf("--seed %s: exit %d: %s", seed, code, msg)
		}
		var b struct {
			Seed uint64         `json:"seed"`
			Envs map[string]int `json:"envs"`
		}
		if err := json.Unmarshal([]byte(out), &b); err != nil {
			t.Fatalf("--seed %s: %v: %s", seed, err, out)
		}
		if b.Seed != 7 || b.Envs["env-0"] != 0 {
			t.Errorf("--seed %s --exclude-env env-0: answered with seed %d and envs %v: the request body was lost",
				seed, b.Seed, b.Envs)
		}
	}
}
