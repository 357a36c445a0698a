#!/usr/bin/env bash
# bonnie++ 2.00a against fsbench's `bonnie` suite, side by side: alternating rounds, each tool on a
# fresh testbed of the same configuration; per phase the ratio fsbench/bonnie++, median and
# min-max over the rounds.
#
#   bench/vs-bonnie.sh [--fsbench BIN] [--fs ext2] [--scale quick|1|F] [--rounds 3]
#                      [--cache-mib N] [--seed N]
#
# --scale: fsbench's --scale; bonnie++ gets -s (1024 x F MiB) and -n (16 x F, at least 1), the
# sizes fsbench's suite has at that scale. fsbench runs with --min-time 0 (one pass of each
# phase, as bonnie++) and --repeat 1 per round.
#
# The page cache: bonnie++ defeats it with a file of twice the RAM, fsbench by evicting before
# its uncached phases. Here each tool's I/O phases (bonnie++ -n 0; fsbench --test
# char,block,seeks) run in a memory-limited cgroup (v2 memory.max or v1 memory.limit_in_bytes,
# a child of this script's own cgroup, removed at the end), so neither tool's reads are served
# from a cache larger than the file: the limit is --cache-mib (default an eighth of the file) +
# 16 MiB for bonnie++ and + 64 MiB for fsbench (its peak RSS on this suite is ~50 MiB). The file
# phases (bonnie++ -s 0; fsbench --test files-seq,files-rand) read no data and run without a
# limit, as bonnie++ means them (its -r check only asks that the names fit in half the RAM).
#
# bonnie++'s figures: it prints "+++++" for any phase under 0.5 s, and its plain-text file rates
# are wrong in 2.00a (a double printed with %d). So its phases are timed from its own timer:
# bonnie++ calls getrusage(2) beside its clock at the start and the end of every phase, and
# bench/bonnie-timer.c (LD_PRELOAD, built here with gcc) logs those calls and its sync(2)s, and
# nothing else. Where bonnie++'s CSV has a figure it is checked against these times (2%).
#
# Needs root, bonnie++ (Debian 2.00a), gcc, python3, and a release build of fsbench.
# Cleans up after itself (testbeds, cgroups, temp files), also on Ctrl-C. Set KEEP=1 to keep the
# raw outputs. Results: bench/results/*-vs-bonnie.md. The machine is shared: rounds alternate
# which tool goes first, and the ratios are per round.
set -euo pipefail
cd "$(dirname "$0")/.."
FSBENCH=target/release/fsbench
FS=ext2
SCALE=quick
ROUNDS=3
CACHE_MIB=""
SEED=$RANDOM
while [ $# -gt 0 ]; do
    case $1 in
        --fsbench) FSBENCH=$2; shift 2 ;;
        --fs) FS=$2; shift 2 ;;
        --scale) SCALE=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --cache-mib) CACHE_MIB=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
        *) echo "$0: unknown argument $1" >&2; exit 2 ;;
    esac
done
FSBENCH=$(realpath "$FSBENCH")
for p in bonnie++ gcc python3; do
    command -v "$p" >/dev/null || { echo "$0: $p not found (apt-get install bonnie++ gcc python3)" >&2; exit 2; }
done
. bench/peers-lib.sh
peers_init

# bonnie++'s -s and -n for fsbench's scale (quick = 1/4).
read -r SIZE_MIB NFILES_K < <(python3 -c "
from fractions import Fraction as F
s = '$SCALE'
f = F(1, 4) if s == 'quick' else F(1) if s == 'paper' else F(s)
mib, n = 1024 * f, 16 * f
assert mib.denominator == 1 and mib >= 4, 'the file must be whole MiB, at least 4'
print(int(mib), max(1, round(n)))")
CACHE_MIB=${CACHE_MIB:-$((SIZE_MIB / 8))}
TB_SIZE=$((SIZE_MIB * 2 + 512))M
echo "vs-bonnie: $(date -u +%FT%TZ), $FS testbeds of $TB_SIZE, bonnie++ -s $SIZE_MIB -n $NFILES_K against fsbench --suite bonnie --scale $SCALE; $ROUNDS rounds (seed $SEED); page cache $CACHE_MIB MiB per tool; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "fsbench: $FSBENCH ($("$FSBENCH" --version)), bonnie++ $(dpkg-query -W -f '${Version}' bonnie++ 2>/dev/null || echo '?')"

peers_cg_make "vs-bonnie-$$-bonnie" $((CACHE_MIB + 16)); CG_B=$PEERS_CG
peers_cg_make "vs-bonnie-$$-fsbench" $((CACHE_MIB + 64)); CG_F=$PEERS_CG
peers_run gcc -O2 -Wall -shared -fPIC -o "$PEERS_TMP/bonnie-timer.so" bench/bonnie-timer.c

run_bonnie() { # OUTDIR
    peers_tb_up "$FS" "$TB_SIZE"
    sync
    # -r: the "RAM" bonnie++ checks its sizes against: the cache it may use.
    peers_in_cg "$CG_B" env BONNIE_TIMER_LOG="$1/bonnie-io.log" LD_PRELOAD="$PEERS_TMP/bonnie-timer.so" \
        bonnie++ -d "$PEERS_MNT" -u root -s "$SIZE_MIB" -r "$CACHE_MIB" -n 0 -m vs-bonnie -q \
        > "$1/bonnie-io.csv" 2> "$1/bonnie-io.txt"
    echo "bonnie++ I/O phases: cgroup peak $(peers_cg_peak "$CG_B") MiB" > "$1/bonnie.mem"
    sync
    peers_run env BONNIE_TIMER_LOG="$1/bonnie-files.log" LD_PRELOAD="$PEERS_TMP/bonnie-timer.so" \
        bonnie++ -d "$PEERS_MNT" -u root -s 0 -n "$NFILES_K" -m vs-bonnie -q \
        > "$1/bonnie-files.csv" 2> "$1/bonnie-files.txt"
    peers_tb_down "$PEERS_MNT"
}

run_fsbench() { # OUTDIR
    peers_tb_up "$FS" "$TB_SIZE"
    sync
    peers_in_cg "$CG_F" "$FSBENCH" run --dir "$PEERS_MNT" --suite bonnie --scale "$SCALE" --min-time 0 \
        --repeat 1 --test char,block,seeks --no-store --format json > "$1/fsbench-io.json" 2> "$1/fsbench-io.err"
    echo "fsbench I/O tests: cgroup peak $(peers_cg_peak "$CG_F") MiB" > "$1/fsbench.mem"
    sync
    peers_run "$FSBENCH" run --dir "$PEERS_MNT" --suite bonnie --scale "$SCALE" --min-time 0 \
        --repeat 1 --test files-seq,files-rand --no-store --format json > "$1/fsbench-files.json" 2> "$1/fsbench-files.err"
    peers_tb_down "$PEERS_MNT"
}

for r in $(seq 1 "$ROUNDS"); do
    out=$PEERS_TMP/round-$r
    mkdir -p "$out"
    # Alternate which tool goes first (seeded): a slow patch of the machine hits both.
    if [ $(((SEED + r) % 2)) = 0 ]; then order="bonnie fsbench"; else order="fsbench bonnie"; fi
    echo "== round $r/$ROUNDS: $order (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    for tool in $order; do "run_$tool" "$out"; done
    cat "$out"/*.mem >&2
done

python3 - "$PEERS_TMP" "$ROUNDS" "$SIZE_MIB" "$NFILES_K" <<'EOF'
import json, statistics, sys
tmp, rounds, size_mib, nk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
MiB, KiB = 1 << 20, 1 << 10
nfiles = nk * 1024
# (phase, unit, bonnie++ CSV column, fsbench test, fsbench phase, what the rate counts)
PHASES = [
    ("putc", "KiB/s", 9, "char", "putc", "w"),
    ("block write", "MiB/s", 11, "block", "write", "w"),
    ("rewrite", "MiB/s", 13, "block", "rewrite", "w"),
    ("getc", "KiB/s", 15, "char", "getc", "r"),
    ("block read", "MiB/s", 17, "block", "read", "r"),
    ("seeks", "/s", 19, "seeks", "seeks", "seeks"),
    ("seq create", "/s", 26, "files-seq", "create", "f"),
    ("seq stat", "/s", 28, "files-seq", "stat", "f"),
    ("seq delete", "/s", 30, "files-seq", "delete", "f"),
    ("rand create", "/s", 32, "files-rand", "create", "f"),
    ("rand stat", "/s", 34, "files-rand", "stat", "f"),
    ("rand delete", "/s", 36, "files-rand", "delete", "f"),
]

def timer_log(path):
    """bonnie-timer.so's log: getrusage calls (tid, s, cpu s) and syncs (start s, end s)."""
    calls, syncs = [], []
    for line in open(path):
        w = line.split()
        if w[0] == "getrusage":
            calls.append((int(w[1]), int(w[2]) / 1e9, (int(w[3]) + int(w[4])) / 1e6))
        elif w[0] == "sync":
            syncs.append((int(w[2]) / 1e9, int(w[3]) / 1e9))
    return calls, syncs

def bonnie(d):
    """Per phase: (seconds, sync seconds inside it, CPU seconds) from bonnie++'s own timer."""
    calls, _ = timer_log(f"{d}/bonnie-io.log")
    main = calls[0][0]
    own = [(t, c) for tid, t, c in calls if tid == main]
    seekers = {}
    for tid, t, c in calls:
        if tid != main:
            seekers.setdefault(tid, []).append((t, c))
    # -n 0: 5 I/O phases (start, end) and the seek test's unused start; 5 seekers (start, end).
    assert len(own) == 11, f"{d}: {len(own)} getrusage calls by bonnie++'s main thread, not 11"
    assert len(seekers) == 5 and all(len(v) == 2 for v in seekers.values()), f"{d}: seekers {seekers}"
    spans = [(own[2 * i], own[2 * i + 1]) for i in range(5)]
    # The seeks: the first seeker's start to the last one's end (bonnie++'s own rule). The
    # CPU: getrusage(RUSAGE_SELF) is the whole process's in every thread, so its growth over
    # that span (bonnie++ sums the 5 seekers' overlapping deltas: up to 5 times too much).
    first = min((v[0] for v in seekers.values()))
    last = max((v[1] for v in seekers.values()))
    spans.append((first, last))
    out = [(b[0] - a[0], 0.0, b[1] - a[1]) for a, b in spans]
    calls, syncs = timer_log(f"{d}/bonnie-files.log")
    own = [(t, c) for tid, t, c in calls]
    assert len(own) == 12, f"{d}: {len(own)} getrusage calls in the file phases, not 12"
    for i in range(6):
        (a, ca), (b, cb) = own[2 * i], own[2 * i + 1]
        out.append((b - a, sum(e - s for s, e in syncs if a <= s <= b), cb - ca))
    return out

def rates_bonnie(d):
    ph = bonnie(d)
    sizes = [3 * MiB, size_mib * MiB, size_mib * MiB, 3 * MiB, size_mib * MiB, 8192] + [nfiles] * 6
    csv = {
        "io": open(f"{d}/bonnie-io.csv").read().strip().split(","),
        "files": open(f"{d}/bonnie-files.csv").read().strip().split(","),
    }
    out = []
    for k, ((name, unit, col, *_), (secs, sync, cpu), n) in enumerate(zip(PHASES, ph, sizes)):
        div = KiB if unit == "KiB/s" else MiB if unit == "MiB/s" else 1
        rate = n / div / secs
        # bonnie++'s CSV: KiB/s for bytes, per second otherwise; "+++++" under 0.5 s.
        c = csv["io" if k < 6 else "files"][col]
        if c.isdigit():
            c = float(c) / (1024 if unit == "MiB/s" else 1)
            assert abs(c - rate) <= 0.02 * rate + 1, f"{d} {name}: CSV {c} vs timed {rate}"
        out.append((rate, secs, sync, cpu / secs))
    return out

def rates_fsbench(d):
    tests = {}
    for part in ("io", "files"):
        v = json.load(open(f"{d}/fsbench-{part}.json"))
        tests.update({t["id"]: t for t in v["tests"]})
    out = []
    for name, unit, col, tid, pname, what in PHASES:
        t = tests[tid]
        assert t["status"]["state"] == "ok", f"{d}: {tid} {t['status']}"
        p = next(p for p in t["reps"][0]["phases"] if p["name"] == pname)
        assert p["cache"]["met"], f"{d}: {tid}/{pname} cache precondition not met"
        secs = p["wall_nanos"] / 1e9
        lat = {l["op"]: l for l in p["latency"]}
        n = {"w": p["bytes_written"], "r": p["bytes_read"], "f": p["file_ops"],
             "seeks": lat["read"]["count"] if "read" in lat else 0}[what]
        div = KiB if unit == "KiB/s" else MiB if unit == "MiB/s" else 1
        sync = lat["syncfs"]["max_nanos"] / 1e9 if "syncfs" in lat else 0.0
        cpu = (p["cpu_user_nanos"] + p["cpu_sys_nanos"]) / 1e9
        out.append((n / div / secs, secs, sync, cpu / secs))
    return out

B = [rates_bonnie(f"{tmp}/round-{r}") for r in range(1, rounds + 1)]
Fs = [rates_fsbench(f"{tmp}/round-{r}") for r in range(1, rounds + 1)]
med = statistics.median
def fmt(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"
print()
print("| phase | unit | bonnie++ 2.00a | fsbench | fsbench/bonnie++ | min-max | bonnie++ s | fsbench s | %CP bonnie++ | %CP fsbench |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for i, (name, unit, *_ ) in enumerate(PHASES):
    b = [x[i][0] for x in B]; f = [x[i][0] for x in Fs]
    ratios = [fi / bi for fi, bi in zip(f, b)]
    print(f"| {name} | {unit} | {fmt(med(b))} | {fmt(med(f))} | {med(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} "
          f"| {med(x[i][1] for x in B):.3f} | {med(x[i][1] for x in Fs):.3f} "
          f"| {100 * med(x[i][3] for x in B):.0f} | {100 * med(x[i][3] for x in Fs):.0f} |")
print()
print("The file phases without their syncs (bonnie++: sync(2) of every filesystem; fsbench: syncfs(2) of the testbed):")
print()
print("| phase | bonnie++ /s | its sync s | fsbench /s | its syncfs s | fsbench/bonnie++ | min-max |")
print("|---|---:|---:|---:|---:|---:|---:|")
for i, (name, *_ ) in enumerate(PHASES):
    if "create" not in name and "delete" not in name:
        continue
    b = [nfiles / (x[i][1] - x[i][2]) for x in B]; f = [nfiles / (x[i][1] - x[i][2]) for x in Fs]
    ratios = [fi / bi for fi, bi in zip(f, b)]
    print(f"| {name} | {fmt(med(b))} | {med(x[i][2] for x in B):.3f} | {fmt(med(f))} | {med(x[i][2] for x in Fs):.3f} "
          f"| {med(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} |")
print()
print("Per round, fsbench/bonnie++ in the order of the first table:")
for r in range(rounds):
    print(f"- round {r + 1}: " + " ".join(f"{Fs[r][i][0] / B[r][i][0]:.2f}" for i in range(len(PHASES))))
EOF
