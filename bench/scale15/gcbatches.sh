#!/bin/bash
# Collections and CPU of one daemon over N batches of 512 after its first answer (scale15,
# BENCHMARKS "Scale14's cuts measured apart"): scalebench's 20 batches can hold one collection
# more or less depending on how much garbage the start left, which moved "the daemon's CPU a
# request" by 10% with no change of the request path.
#
#   bench/scale15/gcbatches.sh BIN TAG N DIR DB   # DIR: an exchange folder (catalog/, rollouts/)
#                                                 # hard-linked, not copied; DB: its database
set -euo pipefail
B=$1 T=$2 N=$3 DIR=$4 DB=$5
W=${TMPDIR:-/tmp}/gcbatches-$T
rm -rf "$W"; mkdir -p "$W/full/requests"
cp -al "$DIR/catalog" "$DIR/rollouts" "$W/full/"
rm -f "$W"/full/rollouts/stream-*
cp "$DB" "$W/d.db"
echo '{"size": 512}' >"$W/full/requests/first.json"
: >"$W/log.txt"
GODEBUG=gctrace=1 nice -n 10 "$B" run --dir "$W/full" --db "$W/d.db" --log-format json >>"$W/log.txt" 2>&1 &
pid=$!
while [ ! -f "$W/full/batches/first.json" ]; do sleep 0.05; done
echo MARK-FIRST >>"$W/log.txt"
c0=$(awk '{print $14+$15}' /proc/$pid/stat)
for i in $(seq 1 "$N"); do
	echo '{"size": 512}' >"$W/full/requests/.b$i.tmp"
	mv "$W/full/requests/.b$i.tmp" "$W/full/requests/b$i.json"
	while [ ! -f "$W/full/batches/b$i.json" ]; do sleep 0.01; done
done
c1=$(awk '{print $14+$15}' /proc/$pid/stat)
echo MARK-END >>"$W/log.txt"
kill -TERM $pid
wait $pid || true
echo "$T: the daemon's CPU a batch $(((c1 - c0) * 10 / N)) ms (10 ms ticks)"
awk '/MARK-FIRST/{p=1; next} /MARK-END/{p=2; next} /^gc /{if (p == 0) b++; else if (p == 1) n++}
	END{print "'"$T"': collections before the first answer " b+0 ", among the batches " n+0}' "$W/log.txt"
