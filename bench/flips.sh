#!/bin/bash
# Agreement of identical default `fsbench compare` runs (flip count, A/A diff).
# Usage: bench/flips.sh FSBENCH OUTDIR [PAIRS] [ARGS...]
# Runs PAIRS (default 10) pairs of `fsbench compare ext4 xfs --scale quick ARGS` one after the
# other, each pair recorded in its own results database OUTDIR/pairN/results.sqlite, with an
# isolated HOME and XDG_DATA_HOME, and the load average before and after each run; then
# `fsbench diff 1 2` of each pair. fsbench removes its own testbeds. Analyse with
# bench/flips.py OUTDIR.
set -u
bin=$1; out=$2; pairs=${3:-10}; shift 3 || shift $#
mkdir -p "$out"
for p in $(seq 1 "$pairs"); do
  d="$out/pair$p"; mkdir -p "$d/home"
  for k in 1 2; do
    echo "pair $p run $k start $(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/log"
    s=$(date +%s.%N)
    ( cd "$d" && HOME="$d/home" XDG_DATA_HOME="$d/home/xdg" \
        "$bin" compare ext4 xfs --scale quick --db "$d/results.sqlite" --no-report \
        --format json "$@" > "$d/run$k.json" 2> "$d/run$k.err" )
    rc=$?
    e=$(date +%s.%N)
    echo "pair $p run $k end $(date +%T) rc $rc wall $(echo "$e - $s" | bc) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/log"
  done
  ( cd "$d" && HOME="$d/home" "$bin" diff 1 2 --db "$d/results.sqlite" > "$d/diff.txt" 2>&1; echo "diff rc $?" >> "$d/diff.txt" )
done
echo "done $(date +%T)" >> "$out/log"
