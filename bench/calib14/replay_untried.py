# Offline replay of the never-tried factor on the acceptance harness's picks (--picks-out), for
# 0/1 environments' never-tried picks: each pick's count is recovered from its answer (mean,
# p_degenerate, G) and main's factor as replayed, then answered again under a variant.
# Usage: python3 replay_untried.py PICKS.jsonl main|window|shift '{"skip1":1}'
# (calib14, BENCHMARKS.md "Never-tried picks' level"; shift with skip1 is what was built).
import json,sys,math,collections,statistics as st
from functools import lru_cache
G_OF={'unlock':16,'lookalike':4}
def graded_env(world,env):
    if world=='lookalike': return True
    if world=='agentic': return env.startswith('ace') or env.startswith('tau2')
    return False
def bbdeg(a,b,n):
    p=1.0;q=1.0
    for j in range(n):
        p*= (a+j)/(a+b+j); q*=(b+j)/(a+b+j)
    return p+q
def inv_count(m,pd,n):
    lo,hi=math.log(1e-4),math.log(1e5)
    for _ in range(60):
        mid=(lo+hi)/2; c=math.exp(mid)
        if bbdeg(m*c,(1-m)*c,n)>pd: lo=mid
        else: hi=mid
    return math.exp((lo+hi)/2)
FMIN,FMAX,RATE,MING=1/16,4,0.2,8
def match(groups):
    # groups: (m,c,n,deg)
    if len(groups)<MING: return None
    real=sum(g[3] for g in groups)/len(groups)
    def pred(lf):
        f=math.exp(lf); return sum(bbdeg(m*c*f,(1-m)*c*f,n) for m,c,n,d in groups)/len(groups)
    lo,hi=math.log(FMIN),math.log(FMAX)
    if pred(lo)<=real: return FMIN
    if pred(hi)>=real: return FMAX
    for _ in range(30):
        mid=(lo+hi)/2
        if pred(mid)>real: lo=mid
        else: hi=mid
    return math.exp((lo+hi)/2)
def towards(prev,f,rate=RATE):
    return min(max(math.exp((1-rate)*math.log(prev)+rate*math.log(f)),FMIN),FMAX)
def load(path):
    runs=collections.defaultdict(list)
    for l in open(path):
        r=json.loads(l)
        if r.get('policy')!='envsched': continue
        runs[(r['world'],r['seed'])].append(r)
    return runs

def logit(p): return math.log(p/(1-p))
def sig(x): return 1/(1+math.exp(-x))
def shift_match(groups):
    # delta such that sum n*sig(logit m + delta) = sum k  (k from realised mean)
    S=sum(g[4]*g[2] for g in groups)
    lo,hi=-4,4
    for _ in range(40):
        mid=(lo+hi)/2
        if sum(g[2]*sig(logit(g[0])+mid) for g in groups)<S: lo=mid
        else: hi=mid
    return (lo+hi)/2

def replay(run, scheme, opts):
    world=run[0]['world']; G=G_OF.get(world,8)
    steps=collections.defaultdict(list)
    for r in run: steps[r['step']].append(r)
    f_main=None; pend_main=[]
    f=None; pend=[]; win=[]; delta=0.0
    deltas=[]
    out=[]  # (step, pred_main, pred_new, deg, graded)
    last=[]
    for t in sorted(steps):
        # measure last step's groups
        if last:
            obs=pend_main+last
            if len(obs)>=MING:
                f_main=towards(f_main or 1, match([g[:4] for g in obs])); pend_main=[]
            else: pend_main=obs
            if scheme=='main':
                f=f_main
            elif scheme=='window':
                win=(win+last)[-opts.get('W',32):]
                m=match([g[:4] for g in win])
                if m: f=m
            elif scheme=='shift':
                obs=pend+last
                if len(obs)>=MING:
                    d=shift_match(obs)
                    r=opts.get('drate',0.2)
                    if not (opts.get('skip1') and t==2):
                        delta=(1-r)*delta+r*d
                        B=opts.get('bound',4); delta=max(-B,min(B,delta))
                    deltas.append((t,delta))
                    sh=[(sig(logit(g[0])+delta),g[1],g[2],g[3]) for g in obs]
                    f=towards(f or 1, match(sh)); pend=[]
                else: pend=obs
        cur=[]
        for r in steps[t]:
            if r['channel']!='never_tried': continue
            g=graded_env(world,r['env'])
            m=min(max(r['predicted_mean'],1e-6),1-1e-6); pd=r['p_degenerate']
            if g or t==1:
                out.append((t,pd,pd,r['degenerate'],g))
                if not g: cur.append((m,inv_count(m,pd,G),G,1 if r['degenerate'] else 0, r['mean']))
                continue
            c=inv_count(m,pd,G)/(f_main or 1)
            mm=m
            if scheme=='shift': mm=sig(logit(m)+delta)
            fn=f or 1
            pn=bbdeg(mm*c*fn,(1-mm)*c*fn,G)
            out.append((t,pd,pn,r['degenerate'],g))
            cur.append((m,c,G,1 if r['degenerate'] else 0, r['mean']))
        last=cur
    if opts.get('vd'): print(run[0]['world'],run[0]['seed'],'delta',[(t,round(d,2)) for t,d in deltas[::10]], 'f',round(f or 1,3))
    return out, f_main

def cells(outs):
    res={}
    for ph,sel in (('1-10',lambda t:t<=10),('11+',lambda t:t>10)):
        o=[x for x in outs if sel(x[0])]
        if not o: continue
        n=len(o); res[ph]=(n, sum(x[1] for x in o)/n, sum(x[2] for x in o)/n, sum(x[3] for x in o)/n)
    return res

if __name__=='__main__':
    runs=load(sys.argv[1]); scheme=sys.argv[2]; opts=json.loads(sys.argv[3]) if len(sys.argv)>3 else {}
    byw=collections.defaultdict(list)
    for (w,s),run in sorted(runs.items()):
        o,fm=replay(run,scheme,opts); byw[w]+=o
        if opts.get('v'): print(w,s,'f_main end',fm)
    for w,o in byw.items():
        c=cells(o)
        print(f"{w:10s} "+"  ".join(f"{ph}: n={n} main {pm-r:+.3f} new {pn-r:+.3f}" for ph,(n,pm,pn,r) in c.items()))
