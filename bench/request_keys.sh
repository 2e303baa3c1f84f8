#!/bin/bash
# request_keys.sh BIN N WIDTH: starts `BIN run` on a fresh exchange folder (200 catalogue tasks),
# answers one request, then times a request of N keys that are no request field, each WIDTH
# bytes, from its rename into requests/ to its batch file (BENCHMARKS.md, hostile10).
set -eu
BIN=$1 N=$2 W=$3
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
mkdir -p "$D/catalog"
python3 - "$D" <<'PY'
import json, sys
with open(sys.argv[1] + "/catalog/c.jsonl", "w") as f:
    for i in range(200):
        f.write(json.dumps({"env": "e%d" % (i % 4), "task_id": i, "text": "t %d" % i}) + "\n")
PY
"$BIN" run --dir "$D" >"$D.log" 2>&1 &
P=$!
until [ -f "$D/status.json" ]; do sleep 0.05; done
python3 - "$D" "$N" "$W" <<'PY'
import json, sys
d, n, w = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
body = {"size": 2}
for i in range(n):
    k = "cfg_%d_" % i
    body[k + "x" * max(0, w - len(k))] = i
open(d + "/requests/.r1.json.tmp", "w").write(json.dumps(body))
open(d + "/requests/.r0.json.tmp", "w").write(json.dumps({"size": 2}))
PY
mv "$D/requests/.r0.json.tmp" "$D/requests/r0.json"
until [ -f "$D/batches/r0.json" ]; do sleep 0.01; done
t0=$(date +%s%N)
mv "$D/requests/.r1.json.tmp" "$D/requests/r1.json"
until [ -f "$D/batches/r1.json" ] || [ -f "$D/batches/r1.error.json" ]; do sleep 0.005; done
t1=$(date +%s%N)
echo "$N keys of $W bytes: $(( (t1 - t0) / 1000000 )) ms"
kill -TERM $P
wait $P || true
rm -f "$D.log"
