# envsched's re-chosen picks split by what the trainer had seen of the task (accept16;
# BENCHMARKS.md "Where envsched is behind known"). usage: python3 rechosen_by_own.py PICKS.jsonl [WORLD]
# For steps 11-40: the pooled mean of the task's earlier groups (0, below 0.2, 0.2-0.8, above
# 0.8, 1) and whether it had one group or more; per cell the predicted and realised mean reward
# and degenerate share, and the true p(1-p) (what a group teaches, the grader's flips aside).
import json, sys, collections, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
only = sys.argv[2] if len(sys.argv) > 2 else None
runs = collections.defaultdict(list)
for r in rows:
    if r['policy'] == 'envsched' and (only is None or r['world'] == only):
        runs[(r['world'], r['seed'])].append(r)
cls = collections.defaultdict(list)
for (w, s), rs in runs.items():
    hist = collections.defaultdict(list)
    bystep = collections.defaultdict(list)
    for r in rs: bystep[r['step']].append(r)
    for step in sorted(bystep):
        for r in bystep[step]:
            h = hist[(r['env'], r['task_id'])]
            if h and step > 10:
                m = sum(h) / len(h)
                b = '0' if m == 0 else '1' if m == 1 else '<.2' if m < .2 else '>.8' if m > .8 else 'mid'
                cls[(w, b, '1 group' if len(h) == 1 else '2+')].append(r)
        for r in bystep[step]: hist[(r['env'], r['task_id'])].append(r['mean'])
for k in sorted(cls):
    v = cls[k]
    if len(v) < 50: continue
    f = lambda key: st.fmean(float(r[key]) for r in v)
    print(f"{k[0]:9s} own {k[1]:4s} {k[2]:7s} n={len(v):5d} mean pred {f('predicted_mean'):.3f} real {f('mean'):.3f}  "
          f"degenerate pred {f('p_degenerate'):.3f} real {f('degenerate'):.3f} (gap {f('p_degenerate') - f('degenerate'):+.3f})  "
          f"true p(1-p) {st.fmean(r['true_p'] * (1 - r['true_p']) for r in v):.3f}")
