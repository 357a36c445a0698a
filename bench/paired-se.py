#!/usr/bin/env python3
"""Per test, the median standard error of the log gap between the two configurations of the
runs recorded by bench/flips.sh OUTDIR: two-sample (Yuen, as `diff` decides) against paired by
round (Yuen's trimmed t on each round's log ratio, as `compare` decides). Stdlib only.

Usage: bench/paired-se.py OUTDIR
"""
import json, math, os, statistics, sys


def parts(xs):
    """20% trimmed mean, winsorized variance term d, values kept h (as src/stats/significance.rs)."""
    v = sorted(xs)
    n = len(v)
    g = int(0.2 * n)
    h = n - 2 * g
    tm = sum(v[g:n - g]) / h
    lo, hi = v[g], v[n - g - 1]
    w = [min(max(x, lo), hi) for x in v]
    wm = sum(w) / n
    s2 = sum((x - wm) ** 2 for x in w) / (n - 1)
    return tm, (n - 1) * s2 / (h * (h - 1)), h


out = sys.argv[1]
two, paired = {}, {}
p = 1
while os.path.isdir(os.path.join(out, f"pair{p}")):
    for k in (1, 2):
        f = os.path.join(out, f"pair{p}", f"run{k}.json")
        if not os.path.exists(f):
            continue
        r = json.load(open(f))
        figs = []
        for c in r["configs"]:
            figs.append({t["id"]: [rep["mib_per_s" if t.get("figure", "mib_per_s") == "mib_per_s" else "ops_per_s"]
                                   for rep in t["reps"] if rep["complete"]] for t in c["run"]["tests"]})
        for tid, a in figs[0].items():
            b = figs[1][tid]
            n = min(len(a), len(b))
            if n < 3:
                continue
            la, lb = [math.log(x) for x in a[:n]], [math.log(x) for x in b[:n]]
            _, da, _ = parts(la)
            _, db, _ = parts(lb)
            two.setdefault(tid, []).append(math.sqrt(da + db))
            _, dd, _ = parts([x - y for x, y in zip(la, lb)])
            paired.setdefault(tid, []).append(math.sqrt(dd))
    p += 1
print("| test | " + " | ".join(two) + " |")
print("|---|" + "---|" * len(two))
print("| two-sample | " + " | ".join(f"{statistics.median(v):.3f}" for v in two.values()) + " |")
print("| paired | " + " | ".join(f"{statistics.median(paired[t]):.3f}" for t in two) + " |")
