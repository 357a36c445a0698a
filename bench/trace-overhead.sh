#!/bin/bash
# Tracing overhead on 4 KiB random O_DIRECT writes (see docs/design/tracing.md).
# Makes a fully allocated 1 GiB image in a fresh temp dir under IMAGE_PARENT (default /dev/shm:
# a RAM-backed device is the worst case for the *relative* cost, since each I/O is cheap, and
# it keeps other disk users on the host out of the figure), attaches it as a loop device with
# direct I/O, runs examples/trace_overhead.rs (alternating traced and untraced runs), then
# detaches the device and removes the directory. Needs root.
#   [IMAGE_PARENT=/var/tmp] bench/trace-overhead.sh [SECONDS_PER_RUN=3] [ROUNDS=12] [THREADS=1]
# fsbench lengthens a timed phase shorter than --min-time by repeating it; peers do the work once.
export FSBENCH_MIN_TIME=${FSBENCH_MIN_TIME:-0}
set -euo pipefail
secs=${1:-3}
rounds=${2:-12}
threads=${3:-1}
cd "$(dirname "$0")/.."
cargo build --release --example trace_overhead
bin=${CARGO_TARGET_DIR:-target}/release/examples/trace_overhead
dir=$(mktemp -d "${IMAGE_PARENT:-/dev/shm}/fsbench-trace-overhead-XXXXXX")
dev=
cleanup() {
    if [ -n "$dev" ]; then losetup -d "$dev"; fi
    rm -rf "$dir"
}
trap cleanup EXIT
fallocate -l 1G "$dir/bench.img"
dev=$(losetup --find --show --direct-io=on "$dir/bench.img")
echo "device $dev ($(cat /sys/block/"${dev#/dev/}"/queue/scheduler)), dio $(cat /sys/block/"${dev#/dev/}"/loop/dio)"
"$bin" "${dev#/dev/}" "$secs" "$rounds" "$threads"
