#!/usr/bin/env python3
"""Pairs two H16_OUT files of sim's TestAnalysisHeadlineCriterion (the same seeds and draws
of random; BASE without a change, NEW with it) and prints, per weighting, the expected share of
seeds whose step 40 beats random's best in 120 steps over every pair of draws (envsched's
random-slot seeds x random's draws, the first 4 of each), the one-draw count the simulator's
table gives, and the paired difference of envsched's step 40 averaged over its draws (mean
and standard error over seeds, seeds up).

    python3 bench/calib16/pair.py BASE.json NEW.json
"""
import json
import math
import statistics as st
import sys


def load(f):
    return {s["Seed"]: s for s in json.load(open(f))}


def es(s, task):
    if task:
        return ([s["Task"]["envsched"]] + (s["EnvschedAltTask"] or []))[:4]
    return ([s["Env"]["envsched"]] + (s["EnvschedAlt"] or []))[:4]


def rb(s, task):
    return (s["RandomTasks"] if task else s["RandomBests"])[:4]


def share(S, task):
    p = []
    for s in S.values():
        e, r = es(s, task), rb(s, task)
        p.append(sum(x > y for x in e for y in r) / len(e) / len(r))
    return sum(p) / len(p)


def single(S, task):
    return sum(es(s, task)[0] > rb(s, task)[0] for s in S.values())


def main():
    a, b = load(sys.argv[1]), load(sys.argv[2])
    for task in (False, True):
        d = [st.mean(es(b[k], task)) - st.mean(es(a[k], task)) for k in a]
        se = st.stdev(d) / math.sqrt(len(d))
        print("%s: expected share %.3f -> %.3f; one draw %d -> %d of %d; paired draw-mean @40 %+.4f ± %.4f (%d up)"
              % ("task" if task else "env ", share(a, task), share(b, task), single(a, task), single(b, task),
                 len(a), st.mean(d), se, sum(x > 0 for x in d)))


if __name__ == "__main__":
    main()
