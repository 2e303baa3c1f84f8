#!/usr/bin/env python3
"""Paired ratios of scalebench measure output (scale15, BENCHMARKS "Scale14's cuts measured apart").

    python3 bench/scale15/pair.py OUTPUT BASE "first answer after start ms"

For every binary but BASE: the median of its per-run ratios to BASE's run of the same round
(the binaries run interleaved, so each ratio compares runs made next to each other)."""
import re
import statistics as st
import sys

out, base, metric = sys.argv[1:4]
vals = {}
for line in open(out):
    m = re.match(r"\s+(\S+): " + re.escape(metric) + r"\s+([\d.]+)\s*$", line)
    if m:
        vals.setdefault(m.group(1), []).append(float(m.group(2)))
for b, v in vals.items():
    if b == base:
        continue
    r = [x / y for x, y in zip(v, vals[base])]
    print(f"{metric}: {b}/{base} median ratio {st.median(r):.3f} (n={len(r)}, min {min(r):.2f}, max {max(r):.2f}); "
          f"medians {st.median(v):.0f} against {st.median(vals[base]):.0f}")
