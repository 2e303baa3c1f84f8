# envsched's re-tries after step 10 in the extreme channel of --dispersion-extreme (extreme16;
# BENCHMARKS.md "Re-tries whose own evidence is extreme"): tasks whose earlier groups (2 or
# more) pooled a mean reward of at most 0.15 or at least 0.85, the rest of the re-tries, and the
# never-tried picks: their share of the picks and predicted / realised degenerate share.
# usage: python3 channel.py PICKS.jsonl [PICKS.jsonl ...]   (harness --picks-out)
import json, sys, collections
for f in sys.argv[1:]:
    runs = collections.defaultdict(list)
    for l in open(f):
        r = json.loads(l)
        if r['policy'] == 'envsched':
            runs[(r['world'], r['seed'])].append(r)
    cells = collections.defaultdict(lambda: [0, 0.0, 0])
    for (w, s), rs in runs.items():
        hist = collections.defaultdict(list)
        for step in sorted({r['step'] for r in rs}):
            now = [r for r in rs if r['step'] == step]
            for r in now:
                h = hist[(r['env'], r['task_id'])]
                if step <= 10:
                    continue
                if not h:
                    c = 'never tried'
                else:
                    m = sum(h) / len(h)
                    c = 'extreme, 2+ groups' if len(h) >= 2 and (m <= 0.15 or m >= 0.85) else 'other re-tries'
                x = cells[(w, c)]
                x[0] += 1; x[1] += float(r['p_degenerate']); x[2] += bool(r['degenerate'])
            for r in now:
                hist[(r['env'], r['task_id'])].append(r['mean'])
    tot = collections.Counter()
    for (w, c), x in cells.items():
        tot[w] += x[0]
    print(f)
    for (w, c), x in sorted(cells.items()):
        print(f"  {w:8s} {c:19s} share {x[0]/tot[w]:.3f}  predicted {x[1]/x[0]:.3f} realised {x[2]/x[0]:.3f}  (n={x[0]})")
