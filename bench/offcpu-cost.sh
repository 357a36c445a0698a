#!/bin/bash
# The cost of --offcpu: the same test with and without it, interleaved (off, on, on, off, ...),
# each a fresh filesystem (`fsbench run --fs`), one repetition, figures from the JSON.
#   bench/offcpu-cost.sh WORKLOAD.toml [FS=ext4] [ROUNDS=4] [EXTRA fsbench args...]
# Needs root. Prints one line per run and the median of each side.
set -euo pipefail
wl=$1
fs=${2:-ext4}
rounds=${3:-4}
shift $(( $# < 3 ? $# : 3 ))
cd "$(dirname "$0")/.."
bin=${FSBENCH:-target/release/fsbench}
out=$(mktemp -d /tmp/fsbench-offcpu-cost-XXXXXX)
trap 'rm -rf "$out"' EXIT
one() { # $1 = off|on
    local flag=()
    [ "$1" = on ] && flag=(--offcpu)
    shift
    "$bin" run --fs "$fs" --workload "$wl" --repeat 1 --min-time 0 --format json "${flag[@]}" "$@" \
        > "$out/r.json" 2> "$out/r.err"
    python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["tests"][0]; print("%.1f" % t["reps"][0]["mib_per_s"])' "$out/r.json"
}
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) -eq 1 ]; then order="off on"; else order="on off"; fi
    for side in $order; do
        v=$(one "$side" "$@")
        echo "round $r $side $v MiB/s"
        echo "$v" >> "$out/$side"
    done
done
for side in off on; do
    echo "$side median: $(sort -n "$out/$side" | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}') MiB/s"
done
