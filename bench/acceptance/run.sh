#!/usr/bin/env bash
# Independent acceptance harness (issue 13): builds the envsched binary of this checkout and runs
# bench/acceptance/harness.py against it on the real catalogue (../shared/data/catalog-real.jsonl;
# without it the harness says SKIP and exits 4). Every flag goes to the harness:
#
#   bench/acceptance/run.sh                                     # 10 seeds, all nine worlds, 120 steps
#   nice -n 19 bench/acceptance/run.sh --seeds 1-10 --world sharp,chain --json-out /tmp/acc.json
#   bench/acceptance/run.sh --smoke                             # a few steps on a few tasks (seconds)
#   bench/acceptance/run.sh --seeds 1-3 --steps 60 --world chain --policies envsched,random
#
# The first line says when, where and at what load it ran; one envsched run of 120 steps takes
# 20-40 s on 2 busy cores, the oracle 10-20 s, random a few.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/envsched" .)
echo "== $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$root" rev-parse --short HEAD)"
python3 "$root/bench/acceptance/harness.py" --bin "$work/envsched" "$@"
