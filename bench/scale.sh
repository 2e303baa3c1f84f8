#!/usr/bin/env bash
# Scale benchmark (issue 14): the real binary as whole processes, with the defaults (feature
# prior on), REPS runs of each figure (min and median printed, with the load average):
#
#   10k tasks    first answer, batch of 512, request to batch file with a writer at 5,000 lines/s
#   100k tasks   the same, and the catalogue ingest with its graph build (wall time, peak RSS)
#   1M tasks     first answer, batch of 512, catalogue ingest + graph build; the daemon's memory
#                on a database of the 1M catalogue and 10M rollouts
#   restart      first answer of a daemon started on 10M stored rollouts with 1,000 new lines
#
# and every daemon's peak RSS (VmHWM) and, at its end, its anonymous and file-backed RSS.
#
#   bench/scale.sh                              # everything, 3 runs
#   OLD=/tmp/old-ms bench/scale.sh              # the same, a binary of another tree interleaved
#   SIZES=100000 ROLLOUTS=0 REPS=1 bench/scale.sh
#   PARTS_1000000=first,batch bench/scale.sh    # leave out the 1M catalogue ingests
#
# The exchange folders and the databases made from them are kept in WORK (default
# /tmp/envsched-scale) and reused by the next run: a database is made again only when the code
# that defines what it stores (storage, graph, ingest, catalog) differs from the code that made
# it (FRESH=1 makes them all again). Making the 1M database is the slow step.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-${TMPDIR:-/tmp}/envsched-scale}
sizes=${SIZES-10000 100000 1000000} # SIZES="" runs the restart only
rollouts=${ROLLOUTS:-10000000}
reps=${REPS:-3}
requests=${REQUESTS:-100}
mkdir -p "$work"
if [ "${FRESH:-}" = 1 ]; then rm -f "$work"/*/full.db "$work"/*/base.db; fi

# parts and history of each size (PARTS_N and HISTORY_N override)
parts_of() {
	local v="PARTS_$1"
	case $1 in
	10000) echo "${!v:-first,batch,latency}" ;;
	1000000) echo "${!v:-ingest,first,batch}" ;;
	*) echo "${!v:-ingest,first,batch,latency}" ;;
	esac
}
history_of() {
	local v="HISTORY_$1"
	case $1 in
	1000000) echo "${!v:-10000000}" ;;
	*) echo "${!v:-0}" ;;
	esac
}

(cd "$root" && go build -o "$work/envsched" . && go build -o "$work/scalebench" ./bench/scalebench)
bins="$work/envsched"
if [ -n "${OLD:-}" ]; then
	(cd "$OLD" && go build -o "$work/envsched-old" .)
	bins="new=$work/envsched,old=$work/envsched-old"
fi
code="storage graph ingest catalog record stats"
stamp="$(cd "$root" && git rev-parse $(printf 'HEAD:%s ' $code) | tr '\n' ' ')$(cd "$root" && git diff HEAD -- $code | sha1sum | cut -c1-12)"
echo "== $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$root" rev-parse --short HEAD), binaries: $bins"
for n in $sizes; do
	h=$(history_of "$n")
	dir="$work/tasks-$n-h$h"
	if [ ! -f "$dir/full/rollouts/history.jsonl" ]; then
		rm -rf "$dir"
		"$work/scalebench" gen -tasks "$n" -history "$h" "$dir"
	fi
	echo "== $n tasks ($(parts_of "$n"))"
	"$work/scalebench" measure -bin "$bins" -runs "$reps" -requests "$requests" -parts "$(parts_of "$n")" -stamp "$stamp" "$dir"
done
if [ "$rollouts" -gt 0 ]; then
	echo "== restart on $rollouts rollouts"
	"$work/scalebench" restart -bin "$bins" -rollouts "$rollouts" -runs "$reps" -stamp "$stamp" "$work/restart-$rollouts"
fi
