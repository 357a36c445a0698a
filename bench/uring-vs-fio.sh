#!/usr/bin/env python3
# Python 3 (stdlib only), named .sh like its sibling vs-fio.sh.
"""fsbench's io_uring engine vs fio's io_uring engine: 4K random reads, interleaved.

Lines: O_DIRECT at iodepth 1, 16 and 128 on an ext4 loop device whose backing file is in
/dev/shm (RAM: per-op overhead shows), the same on a loop device backed by a file on the disk
(/var/tmp), buffered reads of a cached file at the same depths (on the /dev/shm-backed ext4), and
the harness's own cost: fsbench's `null` engine at iodepth 128 against fio's `null` engine at
iodepth 128 (no I/O at all; the figure is nanoseconds per op, wall and CPU).

Buffered lines must read from the page cache. Other users of the machine may drop the page cache
at any time (`echo 3 > drop_caches` is global), so every buffered round is checked: fsbench's own
residency check before its phase and the device's read counters during it (its JSON), and for
fio `fincore` before and after plus the loop device's read sectors (/sys/block/DEV/stat) during
the run; and for both, /proc/vmstat's `drop_pagecache` counter, which counts every write to
drop_caches by anyone. A round in which either tool read more than 1% of its bytes from the
device, found its file less than 95% resident, or ran while someone dropped the caches, is
flagged and left out of that line's ratio.
Both tools run one thread for the same seconds on a file of the same size in the same ext4,
with their defaults otherwise (fio: no registered files/buffers, no SQ polling; fsbench registers
its file). Per round, each line runs both tools in a shuffled order; a line's figure is the
median over rounds of the per-round ratio fsbench/fio. IOPS per core is IOPS divided by the CPU
seconds the I/O thread used (fsbench: the worker threads' CPU time over the timed phase; fio:
usr_cpu + sys_cpu of the job), as t/io_uring reports it.

On a KVM guest whose idle vCPUs halt without polling (cpuidle `haltpoll`, `guest_halt_poll_ns`
0, as on the VM these figures come from), every wake-up of a sleeping reader is a host round
trip, and the depth-1 lines measure mostly that. The header prints the setting;
`--guest-halt-poll-ns NS` sets it for the run and puts the old value back at the end (also on
Ctrl-C or SIGTERM), so the lines can be measured both ways.

Needs root (loop devices, mkfs.ext4, mount), fio and a release fsbench. Everything it makes
(images, loop devices, mounts) is removed at the end, also on Ctrl-C.

Usage: bench/uring-vs-fio.sh [--rounds 3] [--seconds 3] [--fsbench PATH] [--json FILE]
       [--lines null,direct-shm,direct-disk,buffered] [--file-size MIB]
       [--fsbench-option 'KEY = VALUE']... [--guest-halt-poll-ns NS]
"""

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# fsbench lengthens a timed phase shorter than --min-time (0.5 s) by repeating it; a peer
# does the work once, so every fsbench run here does too (older binaries ignore this).
os.environ.setdefault("FSBENCH_MIN_TIME", "0")

REPO = Path(__file__).resolve().parent.parent
FILE_SIZE = 256 << 20
DEPTHS = [1, 16, 128]
# The null lines move no data; the file only has to exist (fsbench prefills it).
NULL_FILE_SIZE = 16 << 20
NULL_DEPTH = 128


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
            # fio's file, fsbench's, and room for the previous run's fsbench file: io_uring
            # releases a ring's registered file in a kernel work item after the process exits,
            # which on a loaded machine can come after the next run's space check.
            run(["fallocate", "-l", str(3 * FILE_SIZE + (512 << 20)), str(img)])
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
            # fio's io_uring closes its files asynchronously after it exits: the first umount
            # can find the filesystem busy for a moment.
            for _ in range(20):
                if subprocess.run(["umount", str(self.mnt)], capture_output=True).returncode == 0:
                    break
                time.sleep(0.5)
            else:
                print(f"could not unmount {self.mnt}; remove it by hand", file=sys.stderr)
            self.mounted = False
        if self.dev:
            subprocess.run(["losetup", "-d", self.dev])
            self.dev = None
        shutil.rmtree(self.dir, ignore_errors=True)


def cache_drops():
    """How many times anyone wrote to /proc/sys/vm/drop_caches since boot (/proc/vmstat)."""
    for line in Path("/proc/vmstat").read_text().splitlines():
        if line.startswith("drop_pagecache "):
            return int(line.split()[1])
    return 0


def dev_read_bytes(dev):
    """Bytes read from a block device so far (/sys/block/DEV/stat, field 3: sectors read)."""
    name = os.path.basename(dev)
    return int(Path(f"/sys/block/{name}/stat").read_text().split()[2]) * 512


def fsbench_line(fsbench, bed, depth, direct, seconds, work, engine="io_uring", extra=()):
    cache = "" if direct or engine == "null" else 'cache = "cached"\n'
    size = NULL_FILE_SIZE if engine == "null" else FILE_SIZE
    toml = work / f"l-{bed.name}-{engine}-{depth}-{direct}.toml"
    toml.write_text(
        f"""[[test]]
id = "l"
name = "randread-4k"
engine = "{engine}"
iodepth = {depth}
direct = {str(direct).lower()}
{"".join(e + chr(10) for e in extra)}file = {{ size = "{size}" }}
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
    m = {"iops": r["ops_per_s"], "iops_per_core": r["data_ops"] / cpu_s if cpu_s else 0.0,
         "cpu_ns_per_op": 1e9 * cpu_s / r["data_ops"] if r["data_ops"] else 0.0}
    if not direct and engine != "null":
        # Residency checked by fsbench just before the phase, and the device's reads during it.
        ph = next(p for p in r["phases"] if p["timed"])
        m["resident_pct"] = 100.0 * ph["cache"]["resident_fraction"]
        dev = ph.get("device") or {}
        m["device_read_pct"] = 100.0 * dev.get("read_bytes", 0) / max(ph["bytes_read"], 1)
    return m


def fio_line(bed, depth, direct, seconds, engine="io_uring"):
    path = bed.mnt / "fio.dat"
    size = NULL_FILE_SIZE if engine == "null" else FILE_SIZE
    a = ["fio", "--name=l", f"--filename={path}", f"--size={size}", f"--ioengine={engine}",
         f"--iodepth={depth}", f"--direct={int(direct)}", "--rw=randread", "--bs=4k",
         "--time_based", f"--runtime={seconds}", "--norandommap", "--randrepeat=0", "--thread",
         "--output-format=json"]
    buffered = not direct and engine != "null"
    if buffered:
        a.append("--invalidate=0")
        if not path.exists():  # fio lays out its file
            run(a + ["--create_only=1"])
        with open(path, "rb", buffering=0) as f:  # cached, as fsbench's cache = "cached"
            while f.read(1 << 20):
                pass
    before = resident_pct(path) if buffered else None
    dev0 = dev_read_bytes(bed.dev) if buffered else 0
    j = json.loads(run(a))["jobs"][0]
    iops = j["read"]["iops"]
    core = (j["usr_cpu"] + j["sys_cpu"]) / 100.0
    ops = j["read"]["total_ios"]
    m = {"iops": iops, "iops_per_core": iops / core if core else 0.0,
         "cpu_ns_per_op": 1e9 * core * j["job_runtime"] / 1000.0 / ops if ops else 0.0}
    if buffered:
        # Cached before, still cached after, and nothing read from the device in between?
        # Something that drops caches (another user's `echo 3 > drop_caches`) makes a buffered
        # line a device line: such rounds are flagged and left out.
        m["resident_pct"] = min(before, resident_pct(path))
        m["device_read_pct"] = 100.0 * (dev_read_bytes(bed.dev) - dev0) / max(
            j["read"]["io_bytes"], 1)
    return m


HALT_POLL = Path("/sys/module/haltpoll/parameters/guest_halt_poll_ns")


def idle_policy():
    """The cpuidle driver, with haltpoll's guest_halt_poll_ns when it is loaded."""
    try:
        driver = Path("/sys/devices/system/cpu/cpuidle/current_driver").read_text().strip()
    except OSError:
        driver = "none"
    if HALT_POLL.exists():
        return f"{driver}, guest_halt_poll_ns {HALT_POLL.read_text().strip()}"
    return driver


def resident_pct(path):
    out = run(["fincore", "--bytes", "--noheadings", "--raw", "-o", "RES,SIZE", str(path)])
    res, size = (int(x) for x in out.split())
    return 100.0 * res / size if size else 100.0


def main():
    global FILE_SIZE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--fsbench", default=os.environ.get("FSBENCH") or str(
        Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "fsbench"))
    ap.add_argument("--json")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--file-size", type=int, default=256, metavar="MIB",
                    help="file size of the I/O lines in MiB (default 256); smaller files make "
                         "rounds shorter, so fewer are lost to others' drop_caches")
    ap.add_argument("--fsbench-option", action="append", default=[], metavar="'KEY = VALUE'",
                    help="a workload key for fsbench's io_uring lines, as TOML (repeatable), "
                         "e.g. 'iodepth_batch = 1' to submit each request at once as fio does")
    ap.add_argument("--lines", default="",
                    help="comma-separated prefixes of the lines to run (null, direct-shm, "
                         "direct-disk, buffered); default: all")
    ap.add_argument("--guest-halt-poll-ns", type=int, metavar="NS",
                    help="set haltpoll's guest_halt_poll_ns (how long an idle vCPU polls before "
                         "halting) for the run, and restore it at the end")
    args = ap.parse_args()
    FILE_SIZE = args.file_size << 20
    if os.geteuid() != 0:
        sys.exit("uring-vs-fio.sh needs root (loop devices, mkfs, mount)")
    for tool in ("fio", "mkfs.ext4", "losetup"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found (scripts/install-deps.sh bench)")
    if args.guest_halt_poll_ns is not None and not HALT_POLL.exists():
        sys.exit(f"--guest-halt-poll-ns: {HALT_POLL} does not exist (not a guest using the "
                 "haltpoll cpuidle driver)")
    # SIGTERM unwinds like Ctrl-C, so the finally below restores what was changed.
    def interrupted(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, interrupted)
    beds = []
    old_poll = None
    work = Path(tempfile.mkdtemp(prefix="fsbench-uring-bench-"))
    try:
        if args.guest_halt_poll_ns is not None:
            old_poll = HALT_POLL.read_text().strip()
            HALT_POLL.write_text(str(args.guest_halt_poll_ns))
        shm = Bed("/dev/shm", "shm")
        beds.append(shm)
        want = [w for w in args.lines.split(",") if w]
        keep = lambda n: not want or any(n.startswith(w) for w in want)
        disk = None
        if any(keep(f"direct-disk-qd{d}") for d in DEPTHS):
            disk = Bed("/var/tmp", "disk")
            beds.append(disk)
        lines = [(f"null-qd{NULL_DEPTH}", shm, NULL_DEPTH, False, "null")]
        lines += [(f"direct-{b.name}-qd{d}", b, d, True, "io_uring")
                  for b in (shm, disk) if b for d in DEPTHS]
        lines += [(f"buffered-cached-qd{d}", shm, d, False, "io_uring") for d in DEPTHS]
        lines = [l for l in lines if keep(l[0])]
        print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %z')}  kernel {os.uname().release}, "
              f"{os.cpu_count()} CPUs, {run(['fio', '--version']).strip()}, fsbench {args.fsbench}")
        print(f"cpuidle: {idle_policy()}"
              + (f" (set for this run; was {old_poll})" if old_poll is not None else ""))
        print(f"rounds {args.rounds} x {args.seconds} s per tool and line, file {FILE_SIZE >> 20} MiB, "
              f"load average at start %.2f %.2f %.2f" % os.getloadavg())
        if args.fsbench_option:
            print(f"fsbench io_uring lines with: {'; '.join(args.fsbench_option)}")
        rng = random.Random(args.seed)
        res = {n: {"fsbench": [], "fio": [], "flagged": [], "load": []} for n, *_ in lines}
        for r in range(args.rounds):
            for name, bed, depth, direct, engine in lines:
                order = ["fsbench", "fio"]
                rng.shuffle(order)
                flagged = False
                for tool in order:
                    drops = cache_drops()
                    if tool == "fsbench":
                        extra = args.fsbench_option if engine == "io_uring" else ()
                        m = fsbench_line(args.fsbench, bed, depth, direct, args.seconds, work,
                                         engine, extra)
                    else:
                        m = fio_line(bed, depth, direct, args.seconds, engine)
                    m["cache_drops"] = cache_drops() - drops
                    res[name][tool].append(m)
                    buffered = "resident_pct" in m
                    if buffered and (m["resident_pct"] < 95 or m["device_read_pct"] > 1
                                     or m["cache_drops"] > 0):
                        flagged = True
                        print(f"warning: {name} round {r + 1} {tool}: {m['resident_pct']:.0f}% "
                              f"of the file cached, {m['device_read_pct']:.1f}% of the bytes read "
                              f"from the device, {m['cache_drops']} drop_caches by others during "
                              "the run: not a cached figure, round left out")
                    print(f"round {r + 1} {name:<22} {tool:<8} {m['iops']:>10.0f} IOPS "
                          f"{m['iops_per_core']:>10.0f} IOPS/core {m['cpu_ns_per_op']:>7.1f} CPU ns/op",
                          file=sys.stderr)
                res[name]["flagged"].append(flagged)
                res[name]["load"].append(os.getloadavg()[0])
        print()
        print(f"{'line':<22} {'fsbench IOPS':>12} {'fio IOPS':>10} {'ratio [min-max]':>22} "
              f"{'fsb IOPS/core':>13} {'fio IOPS/core':>13} {'ratio':>6} {'rounds':>7} {'load':>10}")
        for name, *_ in lines:
            ok = [i for i, fl in enumerate(res[name]["flagged"]) if not fl]
            f = [res[name]["fsbench"][i] for i in ok]
            o = [res[name]["fio"][i] for i in ok]
            load = res[name]["load"]
            loads = f"{min(load):.1f}-{max(load):.1f}"
            if not ok:
                print(f"{name:<22} every round flagged (cache lost): no figure  load {loads}")
                continue
            rat = [a["iops"] / b["iops"] for a, b in zip(f, o)]
            core = [a["iops_per_core"] / b["iops_per_core"] for a, b in zip(f, o) if b["iops_per_core"]]
            med = lambda xs, k: statistics.median(x[k] for x in xs)
            print(f"{name:<22} {med(f, 'iops'):>12.0f} {med(o, 'iops'):>10.0f} "
                  f"{statistics.median(rat):>7.3f} [{min(rat):.3f}-{max(rat):.3f}] "
                  f"{med(f, 'iops_per_core'):>13.0f} {med(o, 'iops_per_core'):>13.0f} "
                  f"{statistics.median(core) if core else 0:>6.3f} "
                  f"{len(ok):>3}/{len(load):<3} {loads:>10}")
            if name.startswith("null"):
                print(f"{'':<22} harness cost per op: fsbench {1e9 / med(f, 'iops'):.1f} ns wall, "
                      f"{med(f, 'cpu_ns_per_op'):.1f} ns CPU; fio {1e9 / med(o, 'iops'):.1f} ns wall, "
                      f"{med(o, 'cpu_ns_per_op'):.1f} ns CPU (medians over rounds)")
        print("load average at end: %.2f %.2f %.2f" % os.getloadavg())
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=1))
    except KeyboardInterrupt:
        print("interrupted; removing what was made", file=sys.stderr)
        return 130
    finally:
        if old_poll is not None:
            HALT_POLL.write_text(old_poll)
        for b in beds:
            b.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
