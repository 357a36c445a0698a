#!/usr/bin/env bash
# Overhead of `fsbench profile`: cold wall time of a command with and without profiling,
# interleaved (ABBA), each run after `sync; echo 3 > /proc/sys/vm/drop_caches`.
#   bench/profile-overhead.sh ROUNDS MOUNT CMD ARGS...
# Prints per run: side, the command's wall time (s) and, for the profiled side, fsbench's own
# total (recording + analysis); then the medians and their ratio. Needs root.
set -euo pipefail
rounds=$1; mnt=$2; shift 2
fsbench=${FSBENCH:-$(dirname "$0")/../target/release/fsbench}
plain=(); prof=(); total=()
now() { date +%s.%N; }
run_plain() {
  sync; echo 3 > /proc/sys/vm/drop_caches
  local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
  plain+=("$(echo "$t1 - $t0" | bc -l)")
}
run_prof() {
  local t0 t1 json; json=$(mktemp); t0=$(now)
  "$fsbench" profile --cold --mount "$mnt" --json "$json" -- "$@" >/dev/null 2>&1
  t1=$(now)
  prof+=("$(grep -m1 '"wall_seconds"' "$json" | tr -dc '0-9.')"); total+=("$(echo "$t1 - $t0" | bc -l)")
  rm -f "$json"
}
for ((i = 0; i < rounds; i++)); do
  if ((i % 2 == 0)); then run_plain "$@"; run_prof "$@"; else run_prof "$@"; run_plain "$@"; fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "without profile: ${plain[*]}"
echo "with profile (command wall): ${prof[*]}"
echo "fsbench profile total: ${total[*]}"
mp=$(median "${plain[@]}"); mq=$(median "${prof[@]}"); mt=$(median "${total[@]}")
echo "median without $mp s, with $mq s (ratio $(echo "$mq / $mp" | bc -l | cut -c1-5)), fsbench total $mt s"
