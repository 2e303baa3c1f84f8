# envsched's picks against known's, per world (accept16; BENCHMARKS.md "Where envsched is behind known").
# usage: python3 picks_gap.py PICKS.jsonl [PICKS2.jsonl ...]  (harness --picks-out of envsched and known)
# Per world and policy, steps 1-10 and 11-40: the share of picks re-chosen (tried before by that
# policy in that seed), and of them the true chance p's class: stuck (p<0.03 or >0.97: a group is
# mixed only by luck or the grader's flips), and the mean true p(1-p) (what a group teaches,
# flips aside) and true chance of unequal rewards; the same for fresh picks.
import json, sys, collections, statistics as st
rows = [json.loads(l) for f in sys.argv[1:] for l in open(f)]
runs = collections.defaultdict(list)
for r in rows:
    runs[(r['world'], r['policy'], r['seed'])].append(r)
out = collections.defaultdict(lambda: collections.defaultdict(list))
for (w, pol, s), rs in runs.items():
    seen = set()
    bystep = collections.defaultdict(list)
    for r in rs: bystep[r['step']].append(r)
    for step in sorted(bystep):
        for r in bystep[step]:
            k = (r['env'], r['task_id'])
            r['re'] = k in seen
        for r in bystep[step]: seen.add((r['env'], r['task_id']))
    for r in rs:
        ph = '1-10' if r['step'] <= 10 else '11-40'
        if r['step'] > 40: continue
        out[(w, pol)][ph].append(r)
def desc(rs):
    if not rs: return 'n=0'
    p = [r['true_p'] for r in rs]
    stuck = sum(1 for x in p if x < .03 or x > .97) / len(p)
    lo = sum(1 for x in p if x < .03) / len(p)
    return (f"n={len(rs):5d} stuck {stuck:5.1%} (lo {lo:5.1%}) p(1-p) {st.fmean(x*(1-x) for x in p):.3f} "
            f"inf {st.fmean(r['true_informative'] for r in rs):.3f} deg {st.fmean(r['degenerate'] for r in rs):.3f}")
for (w, pol) in sorted(out):
    for ph in ('1-10', '11-40'):
        rs = out[(w, pol)][ph]
        re = [r for r in rs if r['re']]; fr = [r for r in rs if not r['re']]
        print(f"{w:9s} {pol:8s} {ph:5s} re-chosen {len(re)/len(rs):5.1%}")
        print(f"     re-chosen: {desc(re)}")
        print(f"     fresh    : {desc(fr)}")
