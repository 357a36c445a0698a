#!/usr/bin/env python3
# The name ends in .sh because the issue asks for `bench/fio-parity.sh`; it is Python 3 (stdlib
# only) because reading fio's JSON is clearer here than in bash.
"""fsbench fio vs fio 3.33 on the same job files, side by side on one fresh ext4 testbed.

For every job file (*.fio) in DIR: is it accepted (`fsbench fio --parse-only FILE`)? If so, ROUNDS
rounds, each running `fio FILE` and `fsbench fio FILE` (both `--directory=` the testbed's mount
point, `--output-format=json`) in alternating order, the mount point emptied and the page cache
dropped before each run, /sys/block/DEV/stat read around each run. Both JSONs are read through
the same field paths (fio's). Per file: bytes moved per direction, the median over rounds of the
per-round ratios fsbench/fio of IOPS, bandwidth, p50 and p99 completion latency, and device
bytes read+written. Timing figures on a shared VM are noisy: the ratios are paired per round,
their range is shown beside each tool's own spread over the rounds, and a file is judged to
agree, to be within noise (a tool differs from itself as much as from the other) or to differ.

Job files are never copied into the repository: point DIR at a checkout of fio's examples, e.g.
  git -C /work/.mirror/axboe+fio/repo archive HEAD examples | tar -x -C /tmp/fio-ex

Usage (root: the testbed): bench/fio-parity.sh DIR [--rounds 3] [--fsbench PATH] [--fio PATH]
                           [--size 2G] [--timeout 120] [--only a.fio,b.fio] [--out FILE.md]
                           [--override size=256m,runtime=5]
Every job file is run from a temporary copy (removed at the end), the same copy for both tools:
- `directory=` lines are removed, so both tools run in the testbed's mount point (`--directory=`
  on the command line is only fio's default: a job file's own `directory=` would win, and fio's
  examples name directories that do not exist here, e.g. `/data1`, `tmp`).
- A `filename=` path (not under /dev) becomes its base name: the same file name in the testbed's
  mount point for both tools (fio's examples name `/tmp/testfile`, `/tmp/data`, off the testbed).
- A file that fills the filesystem (`fill_device`) gets no `runtime` or `loops` override (its
  fill ends at ENOSPC; fsbench refuses a fill with either).
- --override K=V,... sets those options in every job: existing `K=` lines are rewritten and a
  `[global]` section with K=V is put first (fio's examples ask for 10G
  files and 900 s runs; a `runtime` the file did not set is a cap in both tools without
  `time_based`, which bounds rate-limited jobs such as `rate_iops=50`). An overridden `size` also
  rewrites `filesize=` (fio lays files out at `filesize` when both are set). `loops=1` bounds
  files such as fsx.fio (`loops=500000`).
- The testbed is sized from the jobs: the largest sum over a file's jobs of numjobs x nrfiles x
  size (after overrides; a file shared by name counted once) plus a quarter, if more than --size.
The note at the top of the report says what was changed. A row whose jobs ran under 100 ms says
so (too short to time). fio 3.33 hangs at the end of a job with `io_submit_mode=offload` and
libaio (fixed-rate-submission, poisson-rate-submission: "hasn't exited in 300 seconds", then a
double free), so those two time out on fio's side; `--override io_submit_mode=inline` runs them
(both tools alike, a different submission path).
"""

import argparse
import atexit
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def key_of(line):
    """The option a job-file line sets (None for sections, comments and blank lines)."""
    t = line.strip()
    if not t or t[0] in "#;[":
        return None
    return t.split("=", 1)[0].strip()


def bounded_copy(f, tmpdir, sets):
    """The job file as both tools run it here: `directory=` removed, a `filename=` path reduced
    to its base name (a file in the testbed), `sets` applied to every job (not `runtime` to a
    file that fills the filesystem, nor `loops`: its fill ends at ENOSPC)."""
    text = f.read_text(errors="replace")
    if re.search(r"^\s*fill_(device|fs)\s*=\s*1", text, re.M):
        sets = {k: v for k, v in sets.items() if k not in ("runtime", "loops")}
    out = []
    for line in text.splitlines():
        key = key_of(line)
        if key == "directory":
            continue
        if key == "filename" and "=" in line:
            value = line.split("=", 1)[1].split(";")[0].split("#")[0].strip()
            if value.startswith("/") and not value.startswith("/dev/"):
                out.append(f"filename={os.path.basename(value)}")
                continue
        if key == "filesize" and "size" in sets:
            key_set = "size"
        else:
            key_set = key
        if key_set in sets and "=" in line:
            out.append(f"{key}={sets[key_set]}")
        else:
            out.append(line)
    # First, so every job inherits it; the lines rewritten above cover jobs that set it themselves.
    head = ["[global]"] + [f"{k}={v}" for k, v in sets.items()] if sets else []
    c = tmpdir / f.name
    c.write_text("\n".join(head + out) + "\n")
    return c


def size_bytes(v):
    """fio's size syntax (k/m/g/t suffixes, base 1024); None for what this does not read (%, ranges)."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmgtp]?)i?b?\s*", v.split(";")[0].split("#")[0], re.I)
    if not m:
        return None
    return int(m.group(1)) * 1024 ** "_kmgtp".index((m.group(2) or "_").lower())


def space_needed(f):
    """Bytes a job file lays out: per job numjobs x nrfiles x (filesize or size), a named file once."""
    glob, job, jobs = {}, None, []
    for line in f.read_text(errors="replace").splitlines():
        t = line.strip()
        if t.startswith("["):
            name = t.strip("[]").strip()
            job = glob if name == "global" else {}
            if job is not glob:
                jobs.append(job)
            continue
        key = key_of(line)
        if key and job is not None and "=" in t:
            job[key] = t.split("=", 1)[1].split(";")[0].split("#")[0].strip()
    named, total = {}, 0
    for j in jobs:
        o = dict(glob, **j)
        each = size_bytes(o.get("filesize", o.get("size", "0"))) or 0
        n = (size_bytes(o.get("numjobs", "1")) or 1) * (size_bytes(o.get("nrfiles", "1")) or 1)
        if "filename" in o:
            named[o["filename"]] = max(named.get(o["filename"], 0), each)
        else:
            total += n * each
    return total + sum(named.values())


def view(doc):
    """What fio's JSON says, by fio's field paths (the same for both tools)."""
    out = {"read": 0, "write": 0, "iops": 0.0, "bw": 0.0, "p50": [], "p99": [], "jobs": 0, "ms": 0}
    for j in doc.get("jobs", []):
        out["jobs"] += 1
        for d in ("read", "write"):
            x = j.get(d, {})
            out[d] += int(x.get("io_bytes", 0))
            out["iops"] += float(x.get("iops", 0.0))
            out["bw"] += float(x.get("bw_bytes", 0.0))
            out["ms"] = max(out["ms"], int(x.get("runtime", 0)))
            pct = x.get("clat_ns", {}).get("percentile", {})
            if int(x.get("total_ios", 0)) > 0 and pct:
                out["p50"].append(float(pct.get("50.000000", 0)))
                out["p99"].append(float(pct.get("99.000000", 0)))
    out["p50"] = statistics.median(out["p50"]) if out["p50"] else 0.0
    out["p99"] = statistics.median(out["p99"]) if out["p99"] else 0.0
    return out


def disk_bytes(dev):
    f = Path(f"/sys/block/{dev}/stat").read_text().split()
    return (int(f[2]) + int(f[6])) * 512


def empty(mnt):
    for p in Path(mnt).iterdir():
        if p.name == "lost+found":
            continue
        if p.is_dir() and not p.is_symlink():
            sh(["rm", "-rf", "--one-file-system", str(p)])
        else:
            p.unlink()


def drop_caches():
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        pass


def descendants(root):
    """PIDs of the processes below `root` (from /proc's parent links), children first."""
    kids = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [root]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def run_tool(cmd, mnt, dev, timeout, env):
    empty(mnt)
    drop_caches()
    before = disk_bytes(dev)
    t = time.monotonic()
    # On a timeout the tool and every process it started are killed by PID: fio's job
    # processes call setsid (so a process group is not enough) and a hung fio leaves them
    # behind, holding the mount point (the testbed cannot go down) and our pipes.
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=mnt, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        r = subprocess.CompletedProcess(cmd, p.returncode, out, err)
    except subprocess.TimeoutExpired:
        for pid in [p.pid] + descendants(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        empty(mnt)
        return None, "timeout"
    wall = time.monotonic() - t
    dev_bytes = disk_bytes(dev) - before
    empty(mnt)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1][:120]
    try:
        # fio may print notes before its JSON.
        text = r.stdout[r.stdout.index("{"):]
        v = view(json.loads(text))
    except (ValueError, json.JSONDecodeError) as e:
        return None, f"not JSON: {e}"
    v["dev"] = dev_bytes
    v["wall"] = wall
    return v, ""


def short(fs, fi):
    """A note when a tool's longest job ran under 100 ms: its ratios are then mostly start-up
    and millisecond rounding of fio's `runtime`, not the I/O (e.g. a null engine at 64m)."""
    tools = [t for t, xs in (("fsbench", fs), ("fio", fi)) if xs and med([x["ms"] for x in xs]) < 100]
    return {f"{' and '.join(tools)} ran under 100 ms: too short to time"} if tools else set()


def ratio(a, b):
    return a / b if b else float("nan")


def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def spread(xs):
    """A tool's own run-to-run spread over the rounds: its largest IOPS over its smallest."""
    xs = [x for x in xs if x > 0]
    return max(xs) / min(xs) if len(xs) > 1 else float("nan")


def verdict(rs, fs, fi):
    """`agrees`: the median IOPS ratio is within 0.9-1.1. `within noise`: it is not, but one
    tool's own rounds differ from each other at least as much (max/min) as fsbench differs from
    fio, so the rounds cannot tell the tools apart. `differs`: a gap larger than both tools'
    own spreads. `-`: too few rounds to tell."""
    m = med(rs)
    if m != m:
        return "-"
    if 0.9 <= m <= 1.1:
        return "agrees"
    own = max((x for x in (spread(fs), spread(fi)) if x == x), default=float("nan"))
    if own != own:
        return "-"
    return "within noise" if own >= max(m, 1 / m) else "differs"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--fsbench", default=str(REPO / "target/release/fsbench"))
    ap.add_argument("--fio", default="fio")
    ap.add_argument("--size", default="2G")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="")
    ap.add_argument("--override", default="")
    a = ap.parse_args()

    files = sorted(Path(a.dir).glob("*.fio"))
    if a.only:
        keep = set(a.only.split(","))
        files = [f for f in files if f.name in keep]
    sets = dict(kv.split("=", 1) for kv in a.override.split(",")) if a.override else {}
    tmpdir = Path(tempfile.mkdtemp(prefix="fio-parity-"))
    atexit.register(shutil.rmtree, tmpdir, True)
    files = [bounded_copy(f, tmpdir, sets) for f in files]
    env = dict(os.environ, FSBENCH_MIN_TIME="0")
    env.setdefault("SIZE", "64m")

    # Acceptance needs no testbed.
    accepted = []
    rows = []
    for f in files:
        r = sh([a.fsbench, "fio", "--parse-only", "--directory=/tmp", str(f)], env=env)
        if r.returncode == 0:
            accepted.append(f)
        else:
            # The first problem (after the "N problems" header, when there are several).
            errs = [l.strip() for l in r.stderr.splitlines() if l.strip()]
            many = bool(errs) and "problems (fix them all" in errs[0]
            first = (errs[1] + f" (+{len(errs) - 3} more)") if many and len(errs) > 2 else (errs[0] if errs else "")
            first = first.replace("fsbench: error: ", "")
            rows.append((f.name, "refused", first[:200]))
    print(f"{len(accepted)} of {len(files)} job files accepted", file=sys.stderr)

    need = max((space_needed(f) for f in accepted), default=0) * 5 // 4
    tb_size = a.size
    if need > (size_bytes(a.size) or 0):
        tb_size = f"{-(-need // 1048576)}m"
        print(f"testbed sized {tb_size} from the jobs (--size {a.size} is less)", file=sys.stderr)
    up = sh([a.fsbench, "testbed", "up", "ext4", "--size", tb_size])
    if up.returncode != 0:
        sys.exit("testbed up failed: " + up.stderr)
    mnt = up.stdout.strip().splitlines()[-1].strip()
    # Only the testbed made here is removed (others may keep their own): its name is in the
    # hint `fsbench testbed down NAME` on stderr.
    name = next((l.rsplit(" ", 1)[-1].strip("`") for l in up.stderr.splitlines()
                 if "fsbench testbed down " in l), "")
    if not name:
        sys.exit("testbed up did not say its name: " + up.stderr)
    src = sh(["findmnt", "-no", "SOURCE", mnt]).stdout.strip()
    dev = Path(src).name
    results = {}
    try:
        for f in accepted:
            per = {"fsbench": [], "fio": []}
            errs = []
            for rnd in range(a.rounds):
                order = ["fio", "fsbench"] if rnd % 2 == 0 else ["fsbench", "fio"]
                for tool in order:
                    if tool == "fio":
                        cmd = [a.fio, f"--directory={mnt}", "--output-format=json", str(f)]
                    else:
                        cmd = [a.fsbench, "fio", f"--directory={mnt}", "--output-format=json",
                               "--no-store", str(f)]
                    v, err = run_tool(cmd, mnt, dev, a.timeout, env)
                    if v is None:
                        errs.append(f"{tool}: {err}")
                    else:
                        per[tool].append(v)
                print(f"{f.name} round {rnd + 1} done", file=sys.stderr)
            results[f.name] = (per, errs)
    finally:
        sh([a.fsbench, "testbed", "down", name])

    lines = [
        f"fsbench fio vs fio on one fresh ext4 testbed ({tb_size}, loop device {dev}), "
        f"{a.rounds} rounds, alternating; ratios are fsbench/fio, medians of per-round ratios."
        " Every job file's `directory=` removed and a `filename=` path reduced to its base name"
        " (both tools run in the testbed's mount point)."
        + (f" Set in every job (a first [global], and rewritten where the file sets it;"
           f" `size` also rewrites `filesize`): {a.override}." if a.override else ""),
        "",
        f"Accepted: {len(accepted)} of {len(files)} job files.",
        "",
        "IOPS rounds: the per-round ratios' range. Own spread: each tool's largest IOPS over its"
        " smallest across the rounds (fsbench, fio). Verdict: `agrees` (median IOPS ratio in"
        " 0.9-1.1), `within noise` (outside, but a tool's own rounds differ at least as much),"
        " `differs` (a gap larger than both tools' own spreads).",
        "",
        "| job file | accepted | read MiB fsbench/fio | write MiB fsbench/fio | IOPS | IOPS rounds | own spread | verdict | BW | p50 | p99 | device bytes | notes |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, (per, errs) in sorted(results.items()):
        fs, fi = per["fsbench"], per["fio"]
        pairs = list(zip(fs, fi))
        mib = lambda xs, k: "%.1f" % (med([x[k] for x in xs]) / 1048576) if xs else "-"
        cell = lambda k: "%.2f" % med([ratio(x[k], y[k]) for x, y in pairs]) if pairs else "-"
        rs = [ratio(x["iops"], y["iops"]) for x, y in pairs]
        rs_ok = [r for r in rs if r == r]
        rng = "%.2f-%.2f" % (min(rs_ok), max(rs_ok)) if rs_ok else "-"
        own = "%.2f, %.2f" % (spread([x["iops"] for x in fs]), spread([x["iops"] for x in fi]))
        judged = verdict(rs, [x["iops"] for x in fs], [x["iops"] for x in fi])
        lines.append(
            f"| {name} | yes | {mib(fs, 'read')}/{mib(fi, 'read')} | {mib(fs, 'write')}/{mib(fi, 'write')} "
            f"| {cell('iops')} | {rng} | {own} | {judged} | {cell('bw')} | {cell('p50')} | {cell('p99')} | {cell('dev')} "
            f"| {'; '.join(sorted(set(errs) | short(fs, fi)))[:160]} |")
    for name, status, why in rows:
        lines.append(f"| {name} | no | | | | | | | | | | | {why.replace('|', '/').replace(str(tmpdir), '')} |")
    text = "\n".join(lines) + "\n"
    if a.out:
        Path(a.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
