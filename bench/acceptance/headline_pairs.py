"""Step-40 headline per world against the same seeds' random best, and paired step-40 differences.

usage: python3 headline_pairs.py BASE.json [VARIANT.json ...]
BASE.json is a harness --json-out with policies envsched and random; each VARIANT.json one with
envsched on the same seeds and worlds. Prints per world and weighting (env, task): seeds whose
step 40 beats random's best, the median margin, and for each variant the mean paired difference
at step 40 against BASE (± its standard error; seeds up / down); then the degenerate shares.
"""
import json,sys,statistics as st
# usage: cmp.py main.json(with random) variant.json [variant2.json ...]
base=json.load(open(sys.argv[1])); vs=[json.load(open(f)) for f in sys.argv[2:]]
names=['main']+[f.split('/')[-1].replace('.json','') for f in sys.argv[2:]]
for wn in base['worlds']:
    wb=base['worlds'][wn]
    for cname in ('curves','curves_tasks'):
        rnd={k.split('/')[1]:max(v) for k,v in wb[cname].items() if k.startswith('random/')}
        row=[]
        for nm,d in zip(names,[base]+vs):
            w=d['worlds'].get(wn)
            if w is None: row.append(f"{nm}: -"); continue
            m=[];d40=[]
            for k,cur in w[cname].items():
                if not k.startswith('envsched/'): continue
                s=k.split('/')[1]
                if s not in rnd: continue
                m.append(cur[40]-rnd[s])
                cb=wb[cname].get(k)
                if cb is not None: d40.append(cur[40]-cb[40])
            beats=sum(x>0 for x in m)
            pd = f" d40 {st.mean(d40):+.4f}±{(st.stdev(d40)/len(d40)**.5 if len(d40)>1 else 0):.4f} (+{sum(x>0 for x in d40)}/-{sum(x<0 for x in d40)})" if nm!='main' else ''
            row.append(f"{nm}: {beats}/{len(m)} med {st.median(m):+.4f}{pd}")
        print(f"{wn:8s} {'env' if cname=='curves' else 'task'}  "+" | ".join(row))
    degs=[]
    for nm,d in zip(names,[base]+vs):
        w=d['worlds'].get(wn)
        if w: degs.append(f"{nm} {w['headline']['envsched']['degenerate']:.3f}")
    if 'random' in wb['headline']: degs.append(f"random {wb['headline']['random']['degenerate']:.3f}")
    print(f"{wn:8s} degenerate  "+"  ".join(degs))
