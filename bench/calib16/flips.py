#!/usr/bin/env python3
"""For H16_OUT files of sim's TestAnalysisHeadlineCriterion: the seeds whose step 40 beats
random's best in 120 steps (per environment / per task) with envsched's random slots seeded as
the simulator seeds them and with each other seed (a change of nothing but the random slots'
draws), the standard deviation of the paired step-40 difference between those draws, the
median margin and the seeds within ±0.003 of random's best.

    python3 bench/calib16/flips.py F.json ...
"""
import json
import statistics as st
import sys

for f in sys.argv[1:]:
    a = json.load(open(f))
    out = []
    for k in range(len(a[0]["EnvschedAlt"] or [])):
        n1 = sum(s["EnvschedAlt"][k] > s["Env"]["random_best"] for s in a)
        n1t = sum(s["EnvschedAltTask"][k] > s["Task"]["random_best"] for s in a)
        out.append("%d/%d" % (n1, n1t))
    n0 = sum(s["Env"]["envsched"] > s["Env"]["random_best"] for s in a)
    n0t = sum(s["Task"]["envsched"] > s["Task"]["random_best"] for s in a)
    d = [s["EnvschedAlt"][k] - s["Env"]["envsched"] for s in a for k in range(len(s["EnvschedAlt"] or []))]
    m = [s["Env"]["envsched"] - s["Env"]["random_best"] for s in a]
    print("%s: as simulated %d/%d; random slots seeded otherwise: %s | sd of the paired step-40 difference %.4f | median margin %+.4f, seeds within ±0.003: %d"
          % (f, n0, n0t, " ".join(out), st.pstdev(d) if d else 0, st.median(m), sum(abs(x) < 0.003 for x in m)))
