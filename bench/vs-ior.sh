#!/usr/bin/env python3
# Python 3 (stdlib only), like bench/vs-fio.sh: parsing three tools' outputs is clearer here.
"""fsbench --mpi vs IOR and mdtest, side by side, interleaved, with 1, 2 and 4 ranks.

IOR and mdtest (github.com/hpc/ior, GPL-2.0) are references, not parts of fsbench: they are
built by ../shared/peers/build-ior.sh into /opt/ior (or --ior-bin) and only run here.

Lines (per rank: one process, one thread):
  easy-write  IOR `-a POSIX -w -F -t 1m -b B -e` (file per process, 1 MiB transfers, fsync at
              close) vs an fsbench phase writing B sequentially in 1 MiB writes, fsync at end
  easy-read   the read half (`-r`, right after the write, as IOR runs it: the data is cached
              in both) vs an fsbench phase reading the file back (cache = any)
  md-create / md-stat / md-remove
              mdtest `-F -u -n N` (files only, a directory per rank) vs an fsbench fileset test
              of N empty files per rank: create, stat, unlink. Both name each file by its full
              path (`paths = "absolute"`: open/stat/unlink("/mnt/.../f12"), as mdtest calls);
              `--md-paths relative` runs fsbench's default instead (openat/fstatat/unlinkat on
              the set's directory fd), which walks only the last component. fsbench's files
              are named like mdtest's (`name_prefix = "file.mdtest.0."`; `--md-names f` for
              fsbench's default): on ext4 here, creating 20,000 files named `f12` ran about
              15% slower than named `file.mdtest.0.12`, the same calls otherwise

Every round runs every line group with every rank count, the tools in a shuffled order; the
ratio of a line is fsbench / peer per round, and the table shows the median over rounds (paired,
so slow moments of a shared machine hit both sides of a ratio alike).

All runs use one ext4 filesystem on a loop-mounted image file this script makes (or --dir).

Usage: bench/vs-ior.sh [--rounds 3] [--block 128M] [--files 20000] [--ranks 1,2,4]
                       [--md-paths absolute|relative] [--md-names PREFIX] [--lines easy,md]
                       [--fsbench PATH] [--ior-bin DIR] [--dir DIR] [--json FILE]
"""

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# fsbench lengthens a timed phase shorter than --min-time (0.5 s) by repeating it; a peer
# does the work once, so every fsbench run here does too (older binaries ignore this).
os.environ.setdefault("FSBENCH_MIN_TIME", "0")

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
LINES = ["easy-write", "easy-read", "md-create", "md-stat", "md-remove"]


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"vs-ior: {' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return p.stdout


def easy_toml(block):
    return f"""[suite]
name = "vs-ior-easy"
description = "IOR easy: file per process, 1 MiB transfers, fsync at close"
[[test]]
id = "easy"
name = "ior-easy"
description = "write then read one file per rank in 1 MiB transfers"
threads = 1
file = {{ size = "{block}", prefill = false }}
[[test.phase]]
name = "write"
open = ["create", "trunc"]
pattern = [{{ op = "write", size = "1M", offset = "sequential" }}]
amount = {{ passes = 1 }}
sync = {{ at_end = "fsync" }}
[[test.phase]]
name = "read"
cache = "any"
pattern = [{{ op = "read", size = "1M", offset = "sequential" }}]
amount = {{ passes = 1 }}
"""


def md_toml(files, paths, prefix):
    return f"""[suite]
name = "vs-mdtest"
description = "mdtest -F: create, stat, remove empty files"
[[test]]
id = "md"
name = "mdtest-files"
description = "create, stat and remove N empty files per rank in its own directory"
threads = 1
fileset = {{ count = {files}, flat = true, size = "0", paths = "{paths}", name_prefix = "{prefix}" }}
[[test.phase]]
name = "create"
pattern = [{{ op = "create", pick = "next" }}]
amount = {{ passes = 1 }}
[[test.phase]]
name = "stat"
pattern = [{{ op = "stat", pick = "next" }}]
amount = {{ passes = 1 }}
[[test.phase]]
name = "remove"
pattern = [{{ op = "unlink", pick = "next" }}]
amount = {{ passes = 1 }}
"""


def fsbench(a, np, toml, dirpath):
    out = run(MPIRUN + ["-np", str(np), a.fsbench, "run", "--mpi", "--no-store", "--dir",
                        str(dirpath), "--workload", str(toml), "--format", "json"])
    rep = json.loads(out)["tests"][0]["reps"][0]
    figs = {}
    for p in rep["phases"]:
        secs = p["wall_nanos"] / 1e9
        if p["file_ops"]:
            figs[p["name"]] = p["file_ops"] / secs
        else:
            figs[p["name"]] = (p["bytes_read"] + p["bytes_written"]) / 2**20 / secs
    return figs


def ior(a, np, dirpath):
    out = run(MPIRUN + ["-np", str(np), str(Path(a.ior_bin) / "ior"), "-a", "POSIX", "-w",
                        "-r", "-F", "-t", "1m", "-b", a.block, "-e", "-i", "1",
                        "-o", str(dirpath / "ior-file")])
    # "Summary of all tests:" then one line per access: `write  Max(MiB) Min(MiB) ...`
    summary = out.split("Summary of all tests:")[-1]
    w = re.search(r"^write\s+([\d.]+)", summary, re.M)
    r = re.search(r"^read\s+([\d.]+)", summary, re.M)
    if not (w and r):
        sys.exit(f"vs-ior: could not read IOR's output:\n{out[-2000:]}")
    return {"write": float(w.group(1)), "read": float(r.group(1))}


def mdtest(a, np, dirpath):
    out = run(MPIRUN + ["-np", str(np), str(Path(a.ior_bin) / "mdtest"), "-F", "-u", "-n",
                        str(a.files), "-i", "1", "-d", str(dirpath / "md")])
    figs = {}
    for key, name in [("File creation", "create"), ("File stat", "stat"),
                      ("File removal", "remove")]:
        m = re.search(rf"^\s+{key}\s*:?\s+([\d.]+)", out, re.M)
        if not m:
            sys.exit(f"vs-ior: no '{key}' in mdtest's output:\n{out[-2000:]}")
        figs[name] = float(m.group(1))
    return figs


class Loop:
    """An ext4 filesystem on an image file, loop-mounted; removed on exit."""

    def __init__(self, size):
        self.tmp = Path(tempfile.mkdtemp(prefix="fsbench-vs-ior-", dir="/var/tmp"))
        self.img = self.tmp / "ext4.img"
        self.mnt = self.tmp / "mnt"
        self.mnt.mkdir()
        # Allocated, not sparse: with a sparse image the first write to each block allocates it
        # on the host too, and whichever tool's file lands on never-touched blocks pays for it
        # (fsbench's own testbeds are allocated for the same reason: --image-alloc).
        with open(self.img, "wb") as f:
            os.posix_fallocate(f.fileno(), 0, size)
        run(["mkfs.ext4", "-q", "-F", str(self.img)])
        run(["mount", "-o", "loop", str(self.img), str(self.mnt)])

    def close(self):
        subprocess.run(["umount", str(self.mnt)], check=False)
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--block", default="128M", help="bytes per rank (IOR -b)")
    ap.add_argument("--files", type=int, default=20000, help="files per rank (mdtest -n)")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--md-paths", default="absolute", choices=["absolute", "relative"],
                    help="how fsbench's md lines name files (mdtest: absolute)")
    ap.add_argument("--md-names", default="file.mdtest.0.",
                    help="fsbench's file name prefix (mdtest's names are file.mdtest.RANK.N; "
                         "fsbench's default is f: name length changes ext4's create rate)")
    ap.add_argument("--lines", default="easy,md", help="line groups to run: easy, md or both")
    ap.add_argument("--fsbench", default=str(REPO / "target/release/fsbench"))
    ap.add_argument("--ior-bin", default=None)
    ap.add_argument("--dir", default=None, help="run here instead of a fresh loop-mounted ext4")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    if a.ior_bin is None:
        build = REPO.parent / "shared/peers/build-ior.sh"
        a.ior_bin = run([str(build)]).strip().splitlines()[-1]
    ranks = [int(x) for x in a.ranks.split(",")]
    loop = None
    if a.dir:
        base = Path(a.dir)
    else:
        loop = Loop(8 << 30)
        base = loop.mnt
    work = Path(tempfile.mkdtemp(prefix="vs-ior-", dir=base))
    easy = work / "easy.toml"
    easy.write_text(easy_toml(a.block))
    md = work / "md.toml"
    md.write_text(md_toml(a.files, a.md_paths, a.md_names))
    groups = [g for g in a.lines.split(",") if g]
    if not groups or any(g not in ("easy", "md") for g in groups):
        sys.exit(f"vs-ior: --lines takes easy, md or easy,md, not {a.lines}")
    lines = [l for l in LINES if l.split("-")[0] in groups]
    ratios = {(l, n): [] for l in lines for n in ranks}
    raw = []
    try:
        for rnd in range(a.rounds):
            for n in ranks:
                for group in random.sample(groups, len(groups)):
                    tools = random.sample(["fsbench", "peer"], 2)
                    got = {}
                    for tool in tools:
                        d = Path(tempfile.mkdtemp(dir=work))
                        if group == "easy":
                            got[tool] = fsbench(a, n, easy, d) if tool == "fsbench" else ior(a, n, d)
                        else:
                            # As deep as mdtest's files (d/md/test-dir.0-0/mdtest_tree.R.0/):
                            # fsbench's are in d/md/.fsbench-PID-R/tmd.set/. Each directory in a
                            # full path is one more lookup per call.
                            (d / "md").mkdir()
                            got[tool] = fsbench(a, n, md, d / "md") if tool == "fsbench" else mdtest(a, n, d)
                        shutil.rmtree(d, ignore_errors=True)
                    keys = ["write", "read"] if group == "easy" else ["create", "stat", "remove"]
                    for k in keys:
                        line = f"{group}-{k}"
                        ratios[(line, n)].append(got["fsbench"][k] / got["peer"][k])
                        raw.append({"round": rnd, "ranks": n, "line": line, "order": tools,
                                    "fsbench": got["fsbench"][k], "peer": got["peer"][k]})
                        print(f"round {rnd + 1} ranks {n} {line:11} fsbench {got['fsbench'][k]:10.1f}"
                              f"  peer {got['peer'][k]:10.1f}  ratio {got['fsbench'][k] / got['peer'][k]:.3f}",
                              file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if loop:
            loop.close()
    unit = {"easy-write": "MiB/s", "easy-read": "MiB/s"}
    print(f"| line | ranks | fsbench (median) | IOR/mdtest (median) | unit | ratio fsbench/peer (median of {a.rounds} paired rounds) | ratio range |")
    print("|---|---|---|---|---|---|---|")
    for l in lines:
        for n in ranks:
            rs = ratios[(l, n)]
            fs = [x["fsbench"] for x in raw if x["line"] == l and x["ranks"] == n]
            pe = [x["peer"] for x in raw if x["line"] == l and x["ranks"] == n]
            print(f"| {l} | {n} | {statistics.median(fs):.1f} | {statistics.median(pe):.1f} | "
                  f"{unit.get(l, 'ops/s')} | {statistics.median(rs):.3f} | {min(rs):.3f}-{max(rs):.3f} |")
    if a.json:
        Path(a.json).write_text(json.dumps(raw, indent=1))


if __name__ == "__main__":
    main()
