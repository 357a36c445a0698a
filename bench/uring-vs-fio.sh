#!/usr/bin/env python3
# Python 3 (stdlib only), named .sh like its sibling vs-fio.sh.
"""fsbench's io_uring engine vs fio's io_uring engine: 4K random reads, interleaved.

Lines: O_DIRECT at iodepth 1, 16 and 128 on an ext4 loop device whose backing file is in
/dev/shm (RAM: per-op overhead shows), the same on a loop device backed by a file on the disk
(/var/tmp), and buffered reads of a cached file at the same depths (on the /dev/shm-backed ext4).
Both tools run one thread for the same seconds on a file of the same size in the same ext4,
with their defaults otherwise (fio: no registered files/buffers, no SQ polling; fsbench registers
its file). Per round, each line runs both tools in a shuffled order; a line's figure is the
median over rounds of the per-round ratio fsbench/fio. IOPS per core is IOPS divided by the CPU
seconds the I/O thread used (fsbench: the worker threads' CPU time over the timed phase; fio:
usr_cpu + sys_cpu of the job), as t/io_uring reports it.

Needs root (loop devices, mkfs.ext4, mount), fio and a release fsbench. Everything it makes
(images, loop devices, mounts) is removed at the end, also on Ctrl-C.

Usage: bench/uring-vs-fio.sh [--rounds 3] [--seconds 3] [--fsbench PATH] [--json FILE]
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FILE_SIZE = 256 << 20
DEPTHS = [1, 16, 128]


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stderr[-3000:]}")
    return p.stdout


class Bed:
    """An ext4 on a loop device over an image file in `parent`; torn down by close()."""

    def __init__(self, parent, name):
        self.name = name
        self.dir = Path(tempfile.mkdtemp(prefix="fsbench-uring-bench-", dir=parent))
        self.dev = None
        self.mounted = False
        self.mnt = self.dir / "mnt"
        img = self.dir / "img"
        try:
            run(["fallocate", "-l", str(2 * FILE_SIZE + (256 << 20)), str(img)])
            self.dev = run(["losetup", "--find", "--show", "--direct-io=on", str(img)]).strip()
            run(["mkfs.ext4", "-q", "-F", self.dev])
            self.mnt.mkdir()
            run(["mount", self.dev, str(self.mnt)])
            self.mounted = True
        except BaseException:
            self.close()
            raise

    def close(self):
        if getattr(self, "mounted", False):
            subprocess.run(["umount", str(self.mnt)])
            self.mounted = False
        if self.dev:
            subprocess.run(["losetup", "-d", self.dev])
            self.dev = None
        shutil.rmtree(self.dir, ignore_errors=True)


def fsbench_line(fsbench, bed, depth, direct, seconds, work):
    cache = "" if direct else 'cache = "cached"\n'
    toml = work / f"l-{bed.name}-{depth}-{direct}.toml"
    toml.write_text(
        f"""[[test]]
id = "l"
name = "randread-4k"
engine = "io_uring"
iodepth = {depth}
direct = {str(direct).lower()}
file = {{ size = "{FILE_SIZE}" }}
[[test.phase]]
name = "randread"
{cache}pattern = [{{ op = "read", size = "4K", offset = "random", align = "4K" }}]
amount = {{ seconds = {seconds} }}
""")
    out = run([fsbench, "run", "--dir", str(bed.mnt), "--workload", str(toml), "--format", "json",
               "--no-store"])
    t = json.loads(out)["tests"][0]
    if t["status"].get("state") != "ok":
        raise RuntimeError(f"fsbench: {t['status']}")
    r = t["reps"][0]
    cpu_s = (r["cpu_user_nanos"] + r["cpu_sys_nanos"]) / 1e9
    m = {"iops": r["ops_per_s"], "iops_per_core": r["data_ops"] / cpu_s if cpu_s else 0.0}
    if not direct:
        # Residency checked by fsbench just before the phase, and whether it held.
        ph = next(p for p in r["phases"] if p["timed"])
        m["resident_pct"] = 100.0 * ph["cache"]["resident_fraction"]
    return m


def fio_line(bed, depth, direct, seconds):
    path = bed.mnt / "fio.dat"
    a = ["fio", "--name=l", f"--filename={path}", f"--size={FILE_SIZE}", "--ioengine=io_uring",
         f"--iodepth={depth}", f"--direct={int(direct)}", "--rw=randread", "--bs=4k",
         "--time_based", f"--runtime={seconds}", "--norandommap", "--randrepeat=0", "--thread",
         "--output-format=json"]
    if not direct:
        a.append("--invalidate=0")
        with open(path, "rb", buffering=0) as f:  # cached, as fsbench's cache = "cached"
            while f.read(1 << 20):
                pass
    before = resident_pct(path) if not direct else None
    j = json.loads(run(a))["jobs"][0]
    iops = j["read"]["iops"]
    core = (j["usr_cpu"] + j["sys_cpu"]) / 100.0
    m = {"iops": iops, "iops_per_core": iops / core if core else 0.0}
    if not direct:
        # Cached before, and still cached after? Something that drops caches (another user's
        # `echo 3 > drop_caches`) makes a buffered line a device line: such rounds are flagged.
        m["resident_pct"] = min(before, resident_pct(path))
    return m


def resident_pct(path):
    out = run(["fincore", "--bytes", "--noheadings", "--raw", "-o", "RES,SIZE", str(path)])
    res, size = (int(x) for x in out.split())
    return 100.0 * res / size if size else 100.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--fsbench", default=os.environ.get("FSBENCH") or str(
        Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "fsbench"))
    ap.add_argument("--json")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("uring-vs-fio.sh needs root (loop devices, mkfs, mount)")
    for tool in ("fio", "mkfs.ext4", "losetup"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found (scripts/install-deps.sh bench)")
    beds = []
    work = Path(tempfile.mkdtemp(prefix="fsbench-uring-bench-"))
    try:
        shm = Bed("/dev/shm", "shm")
        beds.append(shm)
        disk = Bed("/var/tmp", "disk")
        beds.append(disk)
        lines = [(f"direct-{b.name}-qd{d}", b, d, True) for b in (shm, disk) for d in DEPTHS]
        lines += [(f"buffered-cached-qd{d}", shm, d, False) for d in DEPTHS]
        print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %z')}  kernel {os.uname().release}, "
              f"{os.cpu_count()} CPUs, {run(['fio', '--version']).strip()}, fsbench {args.fsbench}")
        print(f"rounds {args.rounds} x {args.seconds} s per tool and line, file {FILE_SIZE >> 20} MiB, "
              f"load average at start %.2f %.2f %.2f" % os.getloadavg())
        rng = random.Random(args.seed)
        res = {n: {"fsbench": [], "fio": []} for n, *_ in lines}
        for r in range(args.rounds):
            for name, bed, depth, direct in lines:
                order = ["fsbench", "fio"]
                rng.shuffle(order)
                for tool in order:
                    if tool == "fsbench":
                        m = fsbench_line(args.fsbench, bed, depth, direct, args.seconds, work)
                    else:
                        m = fio_line(bed, depth, direct, args.seconds)
                    res[name][tool].append(m)
                    if m.get("resident_pct", 100.0) < 95:
                        print(f"warning: {name} round {r + 1} {tool}: only {m['resident_pct']:.0f}% "
                              "of the file was cached: this round is not a cached figure")
                    print(f"round {r + 1} {name:<22} {tool:<8} {m['iops']:>10.0f} IOPS "
                          f"{m['iops_per_core']:>10.0f} IOPS/core", file=sys.stderr)
        print()
        print(f"{'line':<22} {'fsbench IOPS':>12} {'fio IOPS':>10} {'ratio [min-max]':>22} "
              f"{'fsb IOPS/core':>13} {'fio IOPS/core':>13} {'ratio':>6}")
        for name, *_ in lines:
            f, o = res[name]["fsbench"], res[name]["fio"]
            rat = [a["iops"] / b["iops"] for a, b in zip(f, o)]
            core = [a["iops_per_core"] / b["iops_per_core"] for a, b in zip(f, o) if b["iops_per_core"]]
            med = lambda xs, k: statistics.median(x[k] for x in xs)
            print(f"{name:<22} {med(f, 'iops'):>12.0f} {med(o, 'iops'):>10.0f} "
                  f"{statistics.median(rat):>7.3f} [{min(rat):.3f}-{max(rat):.3f}] "
                  f"{med(f, 'iops_per_core'):>13.0f} {med(o, 'iops_per_core'):>13.0f} "
                  f"{statistics.median(core) if core else 0:>6.3f}")
        print("load average at end: %.2f %.2f %.2f" % os.getloadavg())
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=1))
    except KeyboardInterrupt:
        print("interrupted; removing what was made", file=sys.stderr)
        return 130
    finally:
        for b in beds:
            b.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
