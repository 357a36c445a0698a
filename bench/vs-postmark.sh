#!/usr/bin/env bash
# PostMark (the Debian package: 1.53, which calls itself v1.51) against fsbench's `postmark`
# suite, side by side on fresh testbeds of one configuration, alternating which tool goes first
# each round; per phase (create the pool, the transactions, delete what is left) the ratio of
# rates fsbench/PostMark, median and min-max over the rounds.
#
#   bench/vs-postmark.sh [--fsbench BIN] [--fs ext4] [--files 20000] [--transactions 100000]
#                        [--rounds 3] [--seed N]
#
# Sizes: the suite is PostMark's defaults (500 files, 500 transactions), which PostMark finishes
# well inside one second. Both tools run a larger matched size here: PostMark with `set number`
# and `set transactions`, fsbench with the suite's own TOML (`fsbench suite show postmark`) with
# the pool (`ops` of `create`), the transactions (twice their number in `ops`: a transaction is a
# read-or-append and a create-or-delete) and the slots (`count`, twice the pool) set to match.
# Everything else is the suite's and PostMark's defaults (sizes 500 .. 10,000 bytes, 512-byte
# stdio blocks = 4 KiB system calls, biases 5 and 5, one directory, no sync).
#
# PostMark's clock: it times its phases with time(2), whole seconds. So bench/bonnie-timer.c
# (LD_PRELOAD; built here with gcc) logs each of its time() calls with CLOCK_MONOTONIC (it makes
# four: start, after the pool is made, after the transactions, at the end), and the phases are
# timed from those, to the nanosecond, at PostMark's own points. fsbench: each phase's wall time.
#
# Needs root (testbeds), postmark, gcc, python3, a release build of fsbench. Cleans up after
# itself (testbeds, scratch files), also on Ctrl-C; KEEP=1 keeps the raw outputs. Results:
# bench/results/*-vs-postmark.md.
set -euo pipefail
cd "$(dirname "$0")/.."
FSBENCH=target/release/fsbench
FS=ext4
FILES=20000
TRANS=100000
ROUNDS=3
SEED=$RANDOM
while [ $# -gt 0 ]; do
    case $1 in
        --fsbench) FSBENCH=$2; shift 2 ;;
        --fs) FS=$2; shift 2 ;;
        --files) FILES=$2; shift 2 ;;
        --transactions) TRANS=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
        *) echo "$0: unknown argument $1" >&2; exit 2 ;;
    esac
done
FSBENCH=$(realpath "$FSBENCH")
for p in postmark gcc python3; do
    command -v "$p" >/dev/null || { echo "$0: $p not found (apt-get install postmark gcc python3)" >&2; exit 2; }
done
. bench/peers-lib.sh
peers_init

# Files of up to 10,000 bytes (mean ~5 KiB, 4 KiB blocks): the pool and what the transactions add.
TB_SIZE=$((FILES * 24 / 1024 + 1024))M
echo "vs-postmark: $(date -u +%FT%TZ), $FS testbeds of $TB_SIZE; $FILES files, $TRANS transactions; $ROUNDS rounds (seed $SEED); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "fsbench: $FSBENCH ($("$FSBENCH" --version)); postmark $(dpkg-query -W -f '${Version}' postmark 2>/dev/null || echo '?')"

"$FSBENCH" suite show postmark \
    | sed -e "s/count = 1000,/count = $((FILES * 2)),/" -e "s/ops = 500 }/ops = $FILES }/" \
        -e "s/ops = 1000 }/ops = $((TRANS * 2)) }/" > "$PEERS_TMP/postmark.toml"
grep -q "count = $((FILES * 2))," "$PEERS_TMP/postmark.toml" && grep -q "ops = $FILES }" "$PEERS_TMP/postmark.toml" \
    && grep -q "ops = $((TRANS * 2)) }" "$PEERS_TMP/postmark.toml" \
    || { echo "$0: the postmark suite's sizes are not where this script expects them" >&2; exit 1; }
peers_run gcc -O2 -Wall -shared -fPIC -o "$PEERS_TMP/timer.so" bench/bonnie-timer.c

run_postmark() { # OUTDIR
    peers_tb_up "$FS" "$TB_SIZE"
    mkdir "$PEERS_MNT/pm"
    printf 'set location %s\nset number %d\nset transactions %d\nrun\nquit\n' "$PEERS_MNT/pm" "$FILES" "$TRANS" > "$1/pm.cfg"
    sync
    peers_run env BONNIE_TIMER_LOG="$1/postmark.log" LD_PRELOAD="$PEERS_TMP/timer.so" postmark "$1/pm.cfg" > "$1/postmark.txt"
    peers_tb_down "$PEERS_MNT"
}

run_fsbench() { # OUTDIR
    peers_tb_up "$FS" "$TB_SIZE"
    sync
    peers_run "$FSBENCH" run --dir "$PEERS_MNT" --workload "$PEERS_TMP/postmark.toml" --min-time 0 \
        --repeat 1 --no-store --format json > "$1/fsbench.json" 2> "$1/fsbench.err"
    peers_tb_down "$PEERS_MNT"
}

for r in $(seq 1 "$ROUNDS"); do
    out=$PEERS_TMP/round-$r
    mkdir -p "$out"
    if [ $(((SEED + r) % 2)) = 0 ]; then order="postmark fsbench"; else order="fsbench postmark"; fi
    echo "== round $r/$ROUNDS: $order (load $(cut -d' ' -f1 /proc/loadavg))" >&2
    for tool in $order; do "run_$tool" "$out"; done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$PEERS_TMP" "$ROUNDS" "$FILES" "$TRANS" <<'EOF'
import json, re, statistics, sys
tmp, rounds, files, trans = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def postmark(d):
    """Per phase (seconds, count) from PostMark's four time() calls and its report."""
    t = [int(l.split()[2]) / 1e9 for l in open(f"{d}/postmark.log") if l.startswith("time ")]
    assert len(t) == 4, f"{d}: {len(t)} time() calls by PostMark, not 4"
    txt = open(f"{d}/postmark.txt").read()
    alone = int(re.search(r"Deletion alone: (\d+) files", txt).group(1))
    mb = re.search(r"([0-9.]+) megabytes read.*\n\s*([0-9.]+) megabytes written", txt)
    return {"create": (t[1] - t[0], files), "transactions": (t[2] - t[1], trans),
            "delete": (t[3] - t[2], alone), "total": (t[3] - t[0], None),
            "mb": (float(mb.group(1)), float(mb.group(2)))}

def fsbench(d):
    v = json.load(open(f"{d}/fsbench.json"))
    x = v["tests"][0]
    assert x["status"]["state"] == "ok", f"{d}: {x['status']}"
    ph = {p["name"]: p for p in x["reps"][0]["phases"]}
    s = lambda n: ph[n]["wall_nanos"] / 1e9
    dele = ph["delete"]["file_ops"]
    rd = sum(p["bytes_read"] for p in ph.values()) / 1e6
    wr = sum(p["bytes_written"] for p in ph.values()) / 1e6
    return {"create": (s("create"), files), "transactions": (s("transactions"), trans),
            "delete": (s("delete"), dele), "total": (s("create") + s("transactions") + s("delete"), None),
            "mb": (rd, wr)}

P = [postmark(f"{tmp}/round-{r}") for r in range(1, rounds + 1)]
F = [fsbench(f"{tmp}/round-{r}") for r in range(1, rounds + 1)]
med = statistics.median
print()
print("| phase | unit | PostMark | fsbench | fsbench/PostMark (rate) | min-max | PostMark s | fsbench s |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for k, unit in [("create", "files/s"), ("transactions", "transactions/s"), ("delete", "files/s"), ("total", "s")]:
    if k == "total":
        ratios = [p[k][0] / f[k][0] for p, f in zip(P, F)]
        pv, fv = med(p[k][0] for p in P), med(f[k][0] for f in F)
        print(f"| total (3 phases) | s | {pv:.2f} | {fv:.2f} | {med(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} | {pv:.2f} | {fv:.2f} |")
        continue
    pr = [p[k][1] / p[k][0] for p in P]; fr = [f[k][1] / f[k][0] for f in F]
    ratios = [a / b for a, b in zip(fr, pr)]
    print(f"| {k} | {unit} | {med(pr):,.0f} | {med(fr):,.0f} | {med(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} "
          f"| {med(p[k][0] for p in P):.3f} | {med(f[k][0] for f in F):.3f} |")
print()
print(f"Data (median; PostMark: its report's megabytes; fsbench: MB of 10^6 bytes): PostMark read {med(p['mb'][0] for p in P):.0f}, wrote {med(p['mb'][1] for p in P):.0f}; "
      f"fsbench read {med(f['mb'][0] for f in F):.0f}, wrote {med(f['mb'][1] for f in F):.0f}. "
      f"Files deleted in the last phase: PostMark {med(p['delete'][1] for p in P):.0f}, fsbench {med(f['delete'][1] for f in F):.0f}.")
print()
print("Per round, fsbench/PostMark rates (create transactions delete):")
for r in range(rounds):
    print(f"- round {r + 1}: " + " ".join(f"{(F[r][k][1] / F[r][k][0]) / (P[r][k][1] / P[r][k][0]):.2f}" for k in ("create", "transactions", "delete")))
EOF
