#!/usr/bin/env bash
# Ingestion benchmark: `envsched ingest` (fsync'd commits, per-task statistics and groups kept),
# the parse-only floor (the record parser over the same lines, no database) and the peer
# ../shared/bench/py_ingest.py (Python json.loads into SQLite), on the same files, interleaved,
# REPS times each. Skips the peer when ../shared is absent.
#
#   bench/ingest.sh                  # 1M compact lines, 50k verl-like lines, 3 repetitions
#   COMPACT=200000 VERL=10000 REPS=1 bench/ingest.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$(mktemp -d)}
compact=${COMPACT:-1000000}
verl=${VERL:-50000}
reps=${REPS:-3}
peer="$root/../shared/bench/py_ingest.py"

(cd "$root" && go build -o "$work/envsched" . && go build -o "$work/ingestbench" ./bench/ingestbench)

# rate LINES BYTES SECONDS prints records/s and MB/s like the peer does.
rate() { awk -v n="$1" -v b="$2" -v s="$3" 'BEGIN { printf "%d records in %.2fs: %.0f rec/s, %.1f MB/s\n", n, s, n/s, b/s/1e6 }'; }

for shape in compact verl; do
	lines=$compact
	[ "$shape" = verl ] && lines=$verl
	dir="$work/$shape"
	rm -rf "$dir"
	"$work/ingestbench" gen -shape "$shape" -lines "$lines" -files 4 "$dir"
	bytes=$(cat "$dir"/rollouts/*.jsonl | wc -c)
	echo "== $shape: $lines lines, $bytes bytes"
	for i in $(seq "$reps"); do
		printf 'parse-only: '
		"$work/ingestbench" parse "$dir"
		rm -f "$dir/envsched.db"
		sync
		start=$(date +%s.%N)
		"$work/envsched" ingest --dir "$dir" >/dev/null
		end=$(date +%s.%N)
		printf 'envsched:   '
		rate "$lines" "$bytes" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
		if [ -f "$peer" ]; then
			rm -f "$dir"/py.db*
			sync
			printf 'py-peer:    '
			python3 "$peer" "$dir" "$dir/py.db"
		fi
	done
	rm -rf "$dir"
done
[ -z "${WORK:-}" ] && rm -rf "$work"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
