# Per-seed gap, bootstrap over seeds, by environment, reason and step of one channel of the
# acceptance harness's picks (--picks-out). Usage: python3 untried_gap.py PICKS.jsonl [never_tried [11 [120]]]
# (calib14, BENCHMARKS.md "Never-tried picks' level")
import json,sys,random,collections,statistics as st
rows=[json.loads(l) for l in open(sys.argv[1])]
rows=[r for r in rows if r.get('policy')=='envsched']
ch=sys.argv[2] if len(sys.argv)>2 else 'never_tried'
lo=int(sys.argv[3]) if len(sys.argv)>3 else 11
hi=int(sys.argv[4]) if len(sys.argv)>4 else 120
sel=[r for r in rows if r['channel']==ch and lo<=r['step']<=hi]
def graded(e): return e.startswith('ace') or e.startswith('tau2')
def gap(rs): return (st.fmean(r['p_degenerate'] for r in rs)-st.fmean(1.0 if r['degenerate'] else 0 for r in rs)) if rs else float('nan')
print(f"{ch} steps {lo}-{hi}: n={len(sel)} pred {st.fmean(r['p_degenerate'] for r in sel):.3f} real {st.fmean(r['degenerate'] for r in sel):.3f} gap {gap(sel):+.3f}")
seeds=sorted({r['seed'] for r in sel})
bys={s:[r for r in sel if r['seed']==s] for s in seeds}
for s in seeds: print(f"  seed {s:5d} n={len(bys[s]):4d} gap {gap(bys[s]):+.3f}  graded n={sum(graded(r['env']) for r in bys[s])}")
random.seed(1)
bs=[]
for _ in range(4000):
    rs=[r for s in random.choices(seeds,k=len(seeds)) for r in bys[s]]
    bs.append(gap(rs))
bs.sort()
print(f"  bootstrap over seeds: 2.5% {bs[100]:+.3f} 50% {bs[2000]:+.3f} 97.5% {bs[3900]:+.3f}  P(gap<-0.05)={sum(b< -0.05 for b in bs)/len(bs):.2f}")
for name,f in (('graded',lambda r:graded(r['env'])),('0/1',lambda r:not graded(r['env']))):
    g=[r for r in sel if f(r)]
    if g: print(f"  {name}: n={len(g)} pred {st.fmean(r['p_degenerate'] for r in g):.3f} real {st.fmean(r['degenerate'] for r in g):.3f} gap {gap(g):+.3f}")
byr=collections.defaultdict(list)
for r in sel: byr[r['reason']].append(r)
for k,v in sorted(byr.items(),key=lambda x:-len(x[1])): print(f"  reason {k!r}: n={len(v)} gap {gap(v):+.3f} pred {st.fmean(r['p_degenerate'] for r in v):.3f}")
bye=collections.defaultdict(list)
for r in sel: bye[r['env']].append(r)
print("  by env (n>=10):")
for k,v in sorted(bye.items(),key=lambda x:-len(x[1])):
    if len(v)>=10: print(f"    {k:50s} n={len(v):4d} pred {st.fmean(r['p_degenerate'] for r in v):.3f} real {st.fmean(r['degenerate'] for r in v):.3f} gap {gap(v):+.3f} truep {st.fmean(r['true_p'] for r in v):.3f}")
byst=collections.defaultdict(list)
for r in sel: byst[(r['step']-1)//10*10+1].append(r)
print("  by step bucket:")
for k in sorted(byst): v=byst[k]; print(f"    {k:3d}-{k+9:3d} n={len(v):4d} gap {gap(v):+.3f} pred {st.fmean(r['p_degenerate'] for r in v):.3f}")
