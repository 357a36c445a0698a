#!/usr/bin/env python3
"""Old vs new fsbench binary on vs-fio.sh's lines, interleaved with the C loop.

Usage: bench/old-vs-new.py NEW_FSBENCH OLD_FSBENCH LINES ROUNDS [DIR]   (LINES: a,b,... of vs-fio.sh)

DIR (default /var/tmp) holds the files. On a machine where other processes drop the page cache
(`echo 3 > drop_caches`, as fsbench's own uncached tests do), cached lines measured on a disk
filesystem lose their cache mid-run; a tmpfs (`/dev/shm`) cannot be evicted, and the harness
does the same work on it (the kernel's copy path differs from a disk filesystem's page cache).

Per round the three tools run in a shuffled order. Reported per line: the median [min-max] of
the per-round ratios of ops/s (new/old, new/C, old/C) and of CPU time per op (user + sys of the
timed phase over its data ops, from fsbench's JSON), which a loaded machine disturbs much less
than wall time: when other processes take the CPUs, wall-time ratios spread widely while CPU
per op still compares the two binaries' own work.
"""
import importlib.machinery, json, random, statistics, sys, tempfile, shutil, os, subprocess
from pathlib import Path
HERE = Path(__file__).resolve().parent
vs = importlib.machinery.SourceFileLoader("vs", str(HERE / "vs-fio.sh")).load_module()
if len(sys.argv) not in (5, 6):
    sys.exit(__doc__)
NEW, OLD = sys.argv[1], sys.argv[2]
lines = sys.argv[3].split(","); rounds = int(sys.argv[4])
work = Path(tempfile.mkdtemp(prefix="fsbench-old-vs-new-", dir=sys.argv[5] if len(sys.argv) == 6 else "/var/tmp"))
CLOOP = str(work / "cloop")
subprocess.run(["gcc", "-O2", "-pthread", "-o", CLOOP, str(HERE / "cloop.c")], check=True)
def fsb(binary, line):
    out = vs.run([binary, "run", "--no-store", "--dir", str(work / "fsb"), "--workload", str(line.toml), "--format", "json"])
    t = json.loads(out)["tests"][0]
    p = [p for p in t["reps"][0]["phases"] if p["timed"]][0]
    return vs.summary_medians(t["summary"])[0], (p["cpu_user_nanos"] + p["cpu_sys_nanos"]) / p["data_ops"], t["warnings"]
try:
    (work / "fsb").mkdir()
    rng = random.Random(7)
    for name in lines:
        line = [vs.Line(*x) for x in vs.LINES if x[0] == name][0]
        path = work / "c.dat"; vs.make_file(path, line.file_size)
        res = {"new": [], "old": [], "cloop": []}
        for r in range(rounds):
            order = ["new", "old", "cloop"]; rng.shuffle(order)
            for tool in order:
                os.sync()
                if tool == "cloop":
                    if line.cached: vs.warm(path)
                    res[tool].append((vs.measure_cloop(line, path, CLOOP)["ops_s"], None))
                else:
                    ops, cpu, w = fsb(NEW if tool == "new" else OLD, line)
                    res[tool].append((ops, cpu))
                    for x in w: print(f"  {tool} warning: {x}", file=sys.stderr)
            print(f"{name} r{r+1}: " + " ".join(f"{t}={res[t][-1][0]:.0f}" for t in res), file=sys.stderr)
        def med(v): return statistics.median(v), min(v), max(v)
        wn = med([a[0] / b[0] for a, b in zip(res["new"], res["old"])])
        cn = med([a[1] / b[1] for a, b in zip(res["new"], res["old"])])
        nc = med([a[0] / b[0] for a, b in zip(res["new"], res["cloop"])])
        oc = med([a[0] / b[0] for a, b in zip(res["old"], res["cloop"])])
        print(f"{name:<19} rounds={rounds}  ops/s new/old {wn[0]:.3f} [{wn[1]:.3f}-{wn[2]:.3f}]  "
              f"CPU ns/op new/old {cn[0]:.3f} [{cn[1]:.3f}-{cn[2]:.3f}] (new {statistics.median(a[1] for a in res['new']):.0f} ns, old {statistics.median(a[1] for a in res['old']):.0f} ns)  "
              f"new/C {nc[0]:.3f} [{nc[1]:.3f}-{nc[2]:.3f}]  old/C {oc[0]:.3f} [{oc[1]:.3f}-{oc[2]:.3f}]")
        sys.stdout.flush()
finally:
    shutil.rmtree(work, ignore_errors=True)
