# What a policy's groups could teach per step (accept16): per world and policy, steps 2-10 and
# 11-40, the mean over seeds and steps of the batch's sum of true p(1-p) (the expected size of a
# 0/1 group's REINFORCE step, the grader's flips aside) and of the true chance of unequal rewards.
# usage: python3 teach.py LABEL=PICKS.jsonl [LABEL=PICKS.jsonl ...]
import json, sys, collections, statistics as st
for arg in sys.argv[1:]:
    label, path = arg.split('=', 1)
    acc = collections.defaultdict(lambda: collections.defaultdict(list))
    per = collections.defaultdict(lambda: [0.0, 0.0])
    for l in open(path):
        r = json.loads(l)
        if r['step'] < 2 or r['step'] > 40: continue
        k = (r['world'], r['policy'], r['seed'], r['step'])
        per[k][0] += r['true_p'] * (1 - r['true_p']); per[k][1] += r['true_informative']
    for (w, pol, s, step), (a, b) in per.items():
        ph = '2-10' if step <= 10 else '11-40'
        acc[(w, pol)][ph + ' p(1-p)'].append(a); acc[(w, pol)][ph + ' inf'].append(b)
    for (w, pol), d in sorted(acc.items()):
        print(f"{label:12s} {w:9s} {pol:8s} " + '  '.join(f"{k} {st.fmean(v):6.2f}" for k, v in sorted(d.items())))
