#!/usr/bin/env bash
# The `stream` suite's four figures beside the commands seed 001 timed, side by side on fresh
# testbeds of one configuration, alternating which tool goes first each round:
#
#   write   fsbench test `write`   vs  dd if=/dev/zero of=F bs=1M count=N conv=fsync
#                                  and dd if=RANDOM of=F bs=1M count=N conv=fsync
#   read    fsbench test `read`    vs  sync; echo 3 > drop_caches; dd if=F of=/dev/null bs=1M
#   untar   fsbench test `untar`   vs  tar -xf A -C DIR; sync -f DIR    (the same tree, see below)
#                                  and tar -xf A -C DIR --no-same-owner --no-same-permissions -m;
#                                      sync -f DIR (after the rm below, on the same testbed)
#   rm      fsbench test `rmtree`  vs  rm -rf DIR; sync -f DIR          (the tree tar made, synced)
#
#   bench/vs-stream.sh [--fsbench BIN] [--fs ext4] [--file-mib 1024] [--files-per-dir 4]
#                      [--rounds 3] [--seed N]
#
# Sizes: the suite's file is twice the free memory (`freemem*2`) and its tree has 17 files in
# each of 4,096 leaf directories. Both are settable here because twice the free memory of the
# development VM (~17 GiB free) is ~34 GiB per write per round: the script runs the suite's own
# TOML (`fsbench suite show stream`) with `file.size` set to --file-mib and `files_per_dir` to
# --files-per-dir (4 is `--scale quick`'s tree: 16,384 files in 4,368 directories), at --scale 1,
# and gives dd and tar the same sizes. The read is cold in both (fsbench evicts and checks; dd
# after drop_caches), so a file smaller than the RAM still reads from the device.
#
# The tree: fsbench makes 3 levels of 16 directories (`d0`..`d15`), N files `f0`.. in each leaf,
# sizes log-normal (median 6K, sigma 1.2, 100 bytes .. 1 MiB), random data. The script writes a
# tar archive of a tree of the same shape, names and size distribution (Python's tarfile, random
# data, its own draw of sizes: the totals are printed) into its scratch directory (on the root
# filesystem, read from the page cache by tar, as fsbench writes from memory).
#
# Data: fsbench writes incompressible (random) data; seed 001's dd wrote zeros, which a layer
# below the filesystem may store more cheaply (the development VM's virtual disk writes zeros
# faster). So dd writes twice: zeros (seed 001's command), then the same size from a random
# file of the script's, read into the page cache first (RANDOM above); the cold read is of the
# random file, as fsbench's read is of random data.
#
# tar's extras: as root, `tar -xf` restores each file's owner, mode and mtime (fchown, fchmod,
# utimensat: three inode updates per file and per directory that fsbench's untar does not
# make); with `--no-same-owner --no-same-permissions -m` it makes fsbench's system calls
# (mkdirat; openat O_CREAT|O_EXCL, write, close per file), so it is timed both ways.
#
# Timing: dd's own figure (it times from open to after the fsync: conv=fsync); tar and rm from
# the shell's clock around the command and `sync -f` (syncfs of the testbed, as fsbench's
# phases end with syncfs). fsbench: the phase's wall time (JSON), rmtree's unlink + rmdir.
#
# Needs root (testbeds, drop_caches), python3, GNU tar and coreutils, a release build of
# fsbench. Cleans up after itself (testbeds, scratch files), also on Ctrl-C; KEEP=1 keeps the
# raw outputs. drop_caches drops the whole machine's caches (it is shared: other users' reads
# slow down for a moment). Results: bench/results/*-vs-stream.md.
set -euo pipefail
cd "$(dirname "$0")/.."
FSBENCH=target/release/fsbench
FS=ext4
FILE_MIB=1024
FPD=4
ROUNDS=3
SEED=$RANDOM
while [ $# -gt 0 ]; do
    case $1 in
        --fsbench) FSBENCH=$2; shift 2 ;;
        --fs) FS=$2; shift 2 ;;
        --file-mib) FILE_MIB=$2; shift 2 ;;
        --files-per-dir) FPD=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        -h|--help) sed -n '2,48p' "$0"; exit 0 ;;
        *) echo "$0: unknown argument $1" >&2; exit 2 ;;
    esac
done
FSBENCH=$(realpath "$FSBENCH")
for p in python3 tar dd; do
    command -v "$p" >/dev/null || { echo "$0: $p not found" >&2; exit 2; }
done
. bench/peers-lib.sh
peers_init

NFILES=$((4096 * FPD))
# The testbed holds the file and the tree (~12K mean per file) with room to spare.
TB_SIZE=$((FILE_MIB + NFILES * 16 / 1024 + 1024))M
echo "vs-stream: $(date -u +%FT%TZ), $FS testbeds of $TB_SIZE; file $FILE_MIB MiB, tree 4,368 directories x $FPD files in each leaf ($NFILES files); $ROUNDS rounds (seed $SEED); load $(cut -d' ' -f1-3 /proc/loadavg); MemAvailable $(awk '/MemAvailable/ { print int($2 / 1024) }' /proc/meminfo) MiB"
echo "fsbench: $FSBENCH ($("$FSBENCH" --version)); $(dd --version | head -1); $(tar --version | head -1)"

# The suite as it is, with this run's sizes.
"$FSBENCH" suite show stream \
    | sed -e "s/size = \"freemem\\*2\"/size = \"${FILE_MIB}M\"/" -e "s/files_per_dir = 17/files_per_dir = $FPD/" \
    > "$PEERS_TMP/stream.toml"
grep -q "size = \"${FILE_MIB}M\"" "$PEERS_TMP/stream.toml" && grep -q "files_per_dir = $FPD" "$PEERS_TMP/stream.toml" \
    || { echo "$0: the stream suite's sizes are not where this script expects them" >&2; exit 1; }

# The archive: the tree fsbench makes, in tar's form.
python3 - "$PEERS_TMP/tree.tar" "$FPD" "$SEED" <<'EOF'
import io, math, os, random, sys, tarfile
path, fpd, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
pool = os.urandom(2 << 20)  # random data, sliced per file
total = 0
with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as t:
    def d(name):
        i = tarfile.TarInfo("tree/" + name); i.type = tarfile.DIRTYPE; i.mode = 0o755; t.addfile(i)
    d("")
    for a in range(16):
        d(f"d{a}")
        for b in range(16):
            d(f"d{a}/d{b}")
            for c in range(16):
                d(f"d{a}/d{b}/d{c}")
                for f in range(fpd):
                    size = int(min(max(rng.lognormvariate(math.log(6144), 1.2), 100), 1 << 20))
                    off = rng.randrange(0, len(pool) - size)
                    i = tarfile.TarInfo(f"tree/d{a}/d{b}/d{c}/f{f}"); i.size = size; i.mode = 0o644
                    t.addfile(i, io.BytesIO(pool[off:off + size]))
                    total += size
print(f"archive: {16 * 16 * 16 * fpd} files, {total / 2**20:.0f} MiB of data, {os.path.getsize(path) / 2**20:.0f} MiB archive", file=sys.stderr)
EOF

# dd's random source, read from the page cache while dd writes.
head -c "${FILE_MIB}M" /dev/urandom > "$PEERS_TMP/random"

# now: seconds since the epoch, to the nanosecond.
now() { date +%s.%N; }

run_fsbench() { # OUTDIR
    peers_tb_up "$FS" "$TB_SIZE"
    sync
    peers_run "$FSBENCH" run --dir "$PEERS_MNT" --workload "$PEERS_TMP/stream.toml" --scale 1 --min-time 0 \
        --repeat 1 --no-store --format json > "$1/fsbench.json" 2> "$1/fsbench.err"
    peers_tb_down "$PEERS_MNT"
}

run_tools() { # OUTDIR
    local t0 t1
    peers_tb_up "$FS" "$TB_SIZE"
    sync
    peers_run dd if=/dev/zero of="$PEERS_MNT/zeros" bs=1M count="$FILE_MIB" conv=fsync 2> "$1/dd-write.txt"
    rm -f "$PEERS_MNT/zeros"
    sync
    cat "$PEERS_TMP/random" > /dev/null
    peers_run dd if="$PEERS_TMP/random" of="$PEERS_MNT/stream" bs=1M count="$FILE_MIB" conv=fsync 2> "$1/dd-write-random.txt"
    peers_drop_caches
    peers_run dd if="$PEERS_MNT/stream" of=/dev/null bs=1M 2> "$1/dd-read.txt"
    rm -f "$PEERS_MNT/stream"
    sync
    # tar reads its archive from the page cache, as fsbench writes from memory.
    cat "$PEERS_TMP/tree.tar" > /dev/null
    echo "+ tar -xf tree.tar -C $PEERS_MNT; sync -f $PEERS_MNT" >&2
    t0=$(now); tar -xf "$PEERS_TMP/tree.tar" -C "$PEERS_MNT"; sync -f "$PEERS_MNT"; t1=$(now)
    echo "$t0 $t1" > "$1/tar.time"
    echo "+ rm -rf $PEERS_MNT/tree; sync -f $PEERS_MNT" >&2
    t0=$(now); rm -rf "$PEERS_MNT/tree"; sync -f "$PEERS_MNT"; t1=$(now)
    echo "$t0 $t1" > "$1/rm.time"
    echo "+ tar -xf tree.tar -C $PEERS_MNT --no-same-owner --no-same-permissions -m; sync -f $PEERS_MNT" >&2
    t0=$(now); tar -xf "$PEERS_TMP/tree.tar" -C "$PEERS_MNT" --no-same-owner --no-same-permissions -m; sync -f "$PEERS_MNT"; t1=$(now)
    echo "$t0 $t1" > "$1/tar-plain.time"
    peers_tb_down "$PEERS_MNT"
}

for r in $(seq 1 "$ROUNDS"); do
    out=$PEERS_TMP/round-$r
    mkdir -p "$out"
    if [ $(((SEED + r) % 2)) = 0 ]; then order="tools fsbench"; else order="fsbench tools"; fi
    echo "== round $r/$ROUNDS: $order (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    for tool in $order; do "run_$tool" "$out"; done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$PEERS_TMP" "$ROUNDS" "$FILE_MIB" "$NFILES" <<'EOF'
import json, re, statistics, sys
tmp, rounds, file_mib, nfiles = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
MiB = 1 << 20

def dd_secs(path):
    """dd's own elapsed seconds ("..., 1.23 s, ..." on its last line)."""
    m = re.search(r"copied, ([0-9.]+) s", open(path).read())
    assert m, f"no dd figure in {path}"
    return float(m.group(1))

def span(path):
    a, b = map(float, open(path).read().split())
    return b - a

def tools(d):
    return {"write": dd_secs(f"{d}/dd-write.txt"), "write-random": dd_secs(f"{d}/dd-write-random.txt"),
            "read": dd_secs(f"{d}/dd-read.txt"),
            "untar": span(f"{d}/tar.time"), "untar-plain": span(f"{d}/tar-plain.time"),
            "rm": span(f"{d}/rm.time")}

def fsbench(d):
    v = json.load(open(f"{d}/fsbench.json"))
    t = {t["id"]: t for t in v["tests"]}
    def ph(tid, name):
        x = t[tid]
        assert x["status"]["state"] == "ok", f"{d}: {tid} {x['status']}"
        p = next(p for p in x["reps"][0]["phases"] if p["name"] == name)
        assert p.get("passes", 1) == 1, f"{d}: {tid}/{name} ran {p['passes']} passes"
        return p
    w, r = ph("write", "write"), ph("read", "read")
    assert w["bytes_written"] == file_mib * MiB and r["bytes_read"] == file_mib * MiB
    assert r["cache"]["met"], f"{d}: the read's uncached precondition was not met"
    u = ph("untar", "untar")
    assert u["files_created"] == nfiles, u["files_created"]
    s = lambda p: p["wall_nanos"] / 1e9
    return {"write": s(w), "write-random": s(w), "read": s(r), "untar": s(u), "untar-plain": s(u),
            "rm": s(ph("rmtree", "unlink")) + s(ph("rmtree", "rmdir"))}

T = [tools(f"{tmp}/round-{r}") for r in range(1, rounds + 1)]
F = [fsbench(f"{tmp}/round-{r}") for r in range(1, rounds + 1)]
med = statistics.median
rows = [("write", "dd if=/dev/zero bs=1M conv=fsync", "MiB/s", file_mib),
        ("write-random", "dd if=RANDOM bs=1M conv=fsync", "MiB/s", file_mib),
        ("read", "dd bs=1M, cold (the random file)", "MiB/s", file_mib),
        ("untar", "tar -xf + sync -f", "files/s", nfiles),
        ("untar-plain", "tar -xf --no-same-owner --no-same-permissions -m + sync -f", "files/s", nfiles), ("rm", "rm -rf + sync -f", "files/s", nfiles)]
print()
print("| figure | peer | unit | peer | fsbench | fsbench/peer (rate) | min-max | peer s | fsbench s |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|")
for k, peer, unit, n in rows:
    p = [n / x[k] for x in T]; f = [n / x[k] for x in F]
    ratios = [fi / pi for fi, pi in zip(f, p)]
    print(f"| {k} | `{peer}` | {unit} | {med(p):,.0f} | {med(f):,.0f} | {med(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} "
          f"| {med(x[k] for x in T):.2f} | {med(x[k] for x in F):.2f} |")
print()
print("Per round, fsbench/peer (" + " ".join(k for k, *_ in rows) + "):")
for r in range(rounds):
    print(f"- round {r + 1}: " + " ".join(f"{T[r][k] / F[r][k]:.2f}" for k, *_ in rows))
EOF
