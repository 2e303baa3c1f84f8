#!/usr/bin/env python3
"""A start and N batches of 512 through a profiling build of envsched (scale16, BENCHMARKS.md).

    go build -overlay OVERLAY.json -o envsched-prof .   # OVERLAY maps ROOT/prof_local.go to prof_local.go.txt
    python3 bench/scale16/drive.py envsched-prof FULL.db OUT 100 [DIR]

FULL.db is bench/scale.sh's database (WORK/tasks-100000-h0/full.db), DIR its exchange folder
(default WORK/tasks-100000-h0/full with WORK=/tmp/scale16). The daemon runs on a copy; its CPU
profile of the start (to the first batch) is OUT.first, that of the N batches OUT.steady, its
log OUT.log. Prints the first answer's and the batches' request-to-file times (s)."""
import os, sys, time, subprocess, signal, shutil
bin, src, base, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
d = sys.argv[5] if len(sys.argv) > 5 else '/tmp/scale16/tasks-100000-h0/full'
for sub in ('requests', 'batches'):
    shutil.rmtree(os.path.join(d, sub), ignore_errors=True)
os.makedirs(os.path.join(d, 'requests'))
db = base + '.db'
shutil.copyfile(src, db)
with open(os.path.join(d, 'requests', 'first.json'), 'w') as f: f.write('{"size": 512}')
env = dict(os.environ, ENVSCHED_PROF=base)
t0 = time.time()
log = open(base + '.log', 'w')
p = subprocess.Popen([bin, 'run', '--dir', d, '--db', db, '--log-format', 'json'], stderr=log, env=env)
def wait(id, t):
    path = os.path.join(d, 'batches', id + '.json')
    while not os.path.exists(path):
        time.sleep(0.0002)
    return time.time() - t
print('first', wait('first', t0))
p.send_signal(signal.SIGUSR1)
time.sleep(0.1)
lat = []
for i in range(n):
    tmp = os.path.join(d, 'requests', '.b%d.tmp' % i)
    with open(tmp, 'w') as f: f.write('{"size": 512}')
    t = time.time()
    os.rename(tmp, os.path.join(d, 'requests', 'b%d.json' % i))
    lat.append(wait('b%d' % i, t))
p.send_signal(signal.SIGUSR2)
time.sleep(0.3)
lat.sort()
print('batch median', lat[len(lat)//2], 'min', lat[0])
p.send_signal(signal.SIGTERM); p.wait()
os.remove(db)
