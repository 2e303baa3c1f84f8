#!/usr/bin/env bash
# Scale benchmark (issue 14): the real binary as whole processes, the defaults (feature prior
# on), on exchange folders of 100k and 1M catalogue tasks, REPS runs each (min and median):
# catalogue ingest with its graph build (wall time, peak RSS), the daemon's first answer after
# start, a batch of 512 (request to batch file, and the daemon's own "choose" time), request to
# batch file with a writer at 5,000 lines/s (p50, p99), the daemon's peak RSS (VmHWM); then a
# restart on ROLLOUTS stored rollouts with 1,000 new lines and a request waiting. The load
# average is printed with every run: the machine may be shared.
#
#   bench/scale.sh                                # 100k and 1M tasks, 10M rollouts, 3 runs
#   SIZES="10000 100000" ROLLOUTS=0 REPS=1 bench/scale.sh
#   WORK=/tmp/scale bench/scale.sh                # keep (and reuse) the generated folders
#   INGEST=false bench/scale.sh                   # leave out the repeated catalogue ingests
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$(mktemp -d)}
sizes=${SIZES:-100000 1000000}
rollouts=${ROLLOUTS:-10000000}
reps=${REPS:-3}
requests=${REQUESTS:-100}
ingest=${INGEST:-true}

(cd "$root" && go build -o "$work/envsched" . && go build -o "$work/scalebench" ./bench/scalebench)
echo "== $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$root" rev-parse --short HEAD)"
for n in $sizes; do
	dir="$work/tasks-$n"
	if [ ! -d "$dir/cat" ]; then
		rm -rf "$dir"
		"$work/scalebench" gen -tasks "$n" "$dir"
	fi
	echo "== $n tasks"
	"$work/scalebench" measure -bin "$work/envsched" -runs "$reps" -requests "$requests" -ingest="$ingest" "$dir"
done
if [ "$rollouts" -gt 0 ]; then
	echo "== restart on $rollouts rollouts"
	"$work/scalebench" restart -bin "$work/envsched" -rollouts "$rollouts" -runs "$reps" "$work/restart-$rollouts"
fi
