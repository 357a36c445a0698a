#!/usr/bin/env python3
"""Where each read of a depth-1 io_uring reader went: on one CPU, or across to the other.

Runs COMMAND (a reader that makes io_uring reads one at a time: fio, fsbench, bench/uring1), and
from --after seconds into it traces --span seconds with a private tracefs instance (sched_switch,
sched_wakeup, io_uring_submit_req). Each read is the span between two submissions of the thread
named --comm. On a loop device the read's chain is: the reader queues the loop device's work, a
loop kworker does it, the completion runs in a deferred softirq (`ksoftirqd`), which wakes the
reader. A read is classed by where the kworker ran (the reader's CPU or the other), whether the
reader's next submission is on the same CPU, and whether the reader slept or was preempted
between. Printed: the share of reads and the median and mean span per class (classes under 2%
left out), and the reads per second while traced (tracing slows every class).

Needs root and tracefs. The instance is removed at the end, also on error or Ctrl-C.

Usage: bench/wake-chain.py --comm NAME [--after 1.5] [--span 0.4] -- COMMAND...
Example: bench/wake-chain.py --comm fio -- fio --name=l --filename=F --ioengine=io_uring \\
         --iodepth=1 --direct=1 --rw=randread --bs=4k --time_based --runtime=3
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import time
from pathlib import Path

TRACING = Path("/sys/kernel/tracing")
EVENTS = ["sched/sched_switch", "sched/sched_wakeup", "io_uring/io_uring_submit_req"]
LINE = re.compile(r"\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s*(.*)")


def classes(lines, comm):
    """{(kworker on reader's cpu, reader stays, preempted): [span seconds]}."""
    out = collections.defaultdict(list)
    cur = None
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        who, _, cpu, t, ev, rest = m.groups()
        cpu, t = int(cpu), float(t)
        if ev == "io_uring_submit_req" and who.startswith(comm):
            if cur and "kworker" in cur:
                key = (cur["kworker"] == cur["cpu"], cpu == cur["cpu"], cur.get("state") == "R")
                out[key].append(t - cur["t"])
            cur = {"t": t, "cpu": cpu}
        elif cur and ev == "sched_switch":
            nxt = re.search(r"next_comm=(.+?) next_pid", rest).group(1)
            prev = re.search(r"prev_comm=(.+?) prev_pid", rest).group(1)
            if nxt.startswith("kworker/u") and "kworker" not in cur:
                cur["kworker"] = cpu
            if prev.startswith(comm) and "state" not in cur:
                cur["state"] = re.search(r"prev_state=(\S)", rest).group(1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--comm", required=True, help="the reading thread's name (its comm)")
    ap.add_argument("--after", type=float, default=1.5)
    ap.add_argument("--span", type=float, default=0.4)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        sys.exit("give the command after --")
    if os.geteuid() != 0 or not (TRACING / "instances").is_dir():
        sys.exit("needs root and tracefs at /sys/kernel/tracing")
    inst = TRACING / "instances" / f"fsbench-wake-chain-{os.getpid()}"
    inst.mkdir()
    proc = None
    try:
        (inst / "tracing_on").write_text("0")  # a new instance traces from the start
        (inst / "buffer_size_kb").write_text("65536")
        for e in EVENTS:
            (inst / "events" / e / "enable").write_text("1")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        time.sleep(a.after)
        (inst / "tracing_on").write_text("1")
        time.sleep(a.span)
        (inst / "tracing_on").write_text("0")
        text = (inst / "trace").read_text()
        out, _ = proc.communicate()
        print(out.strip().splitlines()[-1] if out.strip() else "(no output)")
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        inst.rmdir()
    got = classes(text.splitlines(), a.comm)
    n = sum(len(v) for v in got.values())
    if not n:
        sys.exit(f"no reads by a thread named {a.comm!r} in the trace")
    total = sum(sum(v) for v in got.values())
    print(f"{n} reads traced, {n / total:.0f}/s while traced")
    for (same, stays, pre), v in sorted(got.items(), key=lambda kv: -len(kv[1])):
        if len(v) < 0.02 * n:
            continue
        v.sort()
        print(f"  {100 * len(v) / n:5.1f}%  median {1e6 * v[len(v) // 2]:5.1f} us  "
              f"mean {1e6 * sum(v) / len(v):5.1f} us  kworker on {'its' if same else 'the other'} "
              f"CPU, reader {'stays' if stays else 'moves'}, "
              f"{'preempted' if pre else 'sleeps'}")
    one = [x for (same, stays, _), v in got.items() if same and stays for x in v]
    print(f"  all on one CPU: {100 * len(one) / n:.1f}% of reads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
