# Share of tasks re-picked the step after a group of k successes of 8 (accept16), per phase.
# usage: python3 repick.py PICKS.jsonl WORLD POLICY
import json, sys, collections, statistics as st
rows=[json.loads(l) for l in open(sys.argv[1])]
w=sys.argv[2]; pol=sys.argv[3]
runs=collections.defaultdict(list)
for r in rows:
    if r['world']==w and r['policy']==pol: runs[r['seed']].append(r)
G=8
res=collections.defaultdict(lambda:[0,0])
for s,rs in runs.items():
    by=collections.defaultdict(dict)
    for r in rs: by[r['step']][(r['env'],r['task_id'])]=r
    for step in range(1,40):
        nxt=by[step+1]
        for k,r in by[step].items():
            c=round(r['mean']*G); ph='1-9' if step<10 else '10-39'
            res[(ph,c)][0]+=1; res[(ph,c)][1]+= k in nxt
for k in sorted(res): print(w,pol,k,f"n={res[k][0]} re-picked next step {res[k][1]/res[k][0]:.2f}")
