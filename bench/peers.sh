#!/usr/bin/env bash
# Peer check (a benchmark, not a timed test): run postmark, bonnie++ and dbench beside fsbench's
# `postmark`, `bonnie` and `mail` suites on the same directory, and keep every output.
#
#   bench/peers.sh [BASE_DIR]        (default /var/tmp; a temp dir is made there and removed)
#
# Environment: FSBENCH (binary, default target/release/fsbench), OUT (output directory, default
# bench/peers-out), BONNIE_MB (bonnie++ -s and fsbench's bonnie file, default 1024),
# DBENCH_SECS (default 5). Needs root for bonnie++ -u root and fsbench's uncached phases.
# bench/results/2026-11-22-peers.md holds the figures of one run side by side, with the
# reasons they differ.
# fsbench lengthens a timed phase shorter than --min-time by repeating it; peers do the work once.
export FSBENCH_MIN_TIME=${FSBENCH_MIN_TIME:-0}
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:-/var/tmp}
FSBENCH=${FSBENCH:-target/release/fsbench}
OUT=${OUT:-bench/peers-out}
BONNIE_MB=${BONNIE_MB:-1024}
DBENCH_SECS=${DBENCH_SECS:-5}
for p in postmark bonnie++ dbench "$FSBENCH"; do
    command -v "$p" >/dev/null || { echo "peers.sh: $p not found (apt-get install postmark bonnie++ dbench; cargo build --release)" >&2; exit 2; }
done
DIR=$(mktemp -d "$BASE/fsbench-peers.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
mkdir -p "$OUT"
echo "peers.sh: $(date -u +%FT%TZ) on $(findmnt -no FSTYPE,SOURCE -T "$DIR"), in $DIR" | tee "$OUT/when.txt"
scale=$(awk -v m="$BONNIE_MB" 'BEGIN { print m / 1024 }')

echo "== postmark (defaults: 500 files, 500 transactions)"
mkdir "$DIR/pm"
printf 'set location %s\nrun\nquit\n' "$DIR/pm" > "$DIR/pm.cfg"
postmark "$DIR/pm.cfg" > "$OUT/postmark.txt"
grep -E "Total time|transactions per second|Creation alone|Deletion alone|Mixed with" "$OUT/postmark.txt" || true
"$FSBENCH" run --dir "$DIR" --suite postmark --format json > "$OUT/fsbench-postmark.json"
"$FSBENCH" run --dir "$DIR" --suite postmark --repeat 5 > "$OUT/fsbench-postmark.txt"
cat "$OUT/fsbench-postmark.txt"
# PostMark times with time(): whole seconds, so its defaults (well under a second) cannot be
# resolved. A larger matched run: 20,000 files, 100,000 transactions, on both.
mkdir "$DIR/pm-big"
printf 'set location %s\nset number 20000\nset transactions 100000\nrun\nquit\n' "$DIR/pm-big" > "$DIR/pm-big.cfg"
/usr/bin/time -f "postmark wall %e s" postmark "$DIR/pm-big.cfg" > "$OUT/postmark-big.txt" 2>&1
grep -E "seconds|per second|wall" "$OUT/postmark-big.txt" | head -12
"$FSBENCH" suite show postmark | sed -e 's/count = 1000,/count = 40000,/' -e 's/ops = 500 }/ops = 20000 }/' \
    -e 's/ops = 1000 }/ops = 200000 }/' > "$DIR/postmark-big.toml"
"$FSBENCH" run --dir "$DIR" --workload "$DIR/postmark-big.toml" --format json > "$OUT/fsbench-postmark-big.json"
"$FSBENCH" run --dir "$DIR" --workload "$DIR/postmark-big.toml" | tee "$OUT/fsbench-postmark-big.txt"

echo "== bonnie++ -n 16 -s ${BONNIE_MB}"
mkdir "$DIR/bonnie"
bonnie++ -d "$DIR/bonnie" -u root -n 16 -s "$BONNIE_MB" -r $((BONNIE_MB / 2)) -q > "$OUT/bonnie.csv" 2> "$OUT/bonnie.err"
bon_csv2txt < "$OUT/bonnie.csv" | tee "$OUT/bonnie.txt"
"$FSBENCH" run --dir "$DIR" --suite bonnie --scale "$scale" --format bonnie | tee "$OUT/fsbench-bonnie.txt"

echo "== dbench (1 and 4 clients, ${DBENCH_SECS} s) and fsbench mail"
for c in 1 4; do
    mkdir -p "$DIR/dbench$c"
    dbench -c /usr/share/dbench/client.txt -D "$DIR/dbench$c" -t "$DBENCH_SECS" "$c" > "$OUT/dbench-$c.txt" 2>&1
    grep -E "^Throughput|^ *Operation|^ *(NTCreateX|Close|ReadX|WriteX|Unlink|Flush|QueryFileInfo) " "$OUT/dbench-$c.txt" || true
done
"$FSBENCH" run --dir "$DIR" --suite mail --format json > "$OUT/fsbench-mail.json"
"$FSBENCH" run --dir "$DIR" --suite mail --repeat 3 | tee "$OUT/fsbench-mail.txt"
