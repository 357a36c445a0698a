# Shared by bench/vs-bonnie.sh, bench/vs-postmark.sh and bench/vs-stream.sh (sourced, not run):
# fresh testbeds, memory-limited cgroups, the commands printed as they run, and a cleanup that
# runs on exit, Ctrl-C and SIGTERM (testbeds down, cgroups removed, the scratch directory gone).
#
# A script sets FSBENCH (the binary) and calls peers_init; then peers_tb_up (sets PEERS_MNT),
# peers_cg_make (sets PEERS_CG), peers_in_cg and peers_run as it needs them. Everything made is
# recorded and undone by peers_cleanup, also when the script is interrupted. (The makers set a
# variable rather than print, so that their records are not lost in a $(...) subshell.)

PEERS_TBS=()     # testbed names to take down
PEERS_CGS=()     # cgroup directories to remove
PEERS_TMP=""     # scratch directory (raw outputs), removed unless KEEP is set

peers_init() {
    [ "$(id -u)" = 0 ] || { echo "$0: needs root (testbeds, cgroups, drop_caches)" >&2; exit 2; }
    [ -x "$FSBENCH" ] || { echo "$0: no fsbench binary at $FSBENCH (cargo build --release, or --fsbench PATH)" >&2; exit 2; }
    PEERS_TMP=$(mktemp -d /tmp/fsbench-peers.XXXXXX)
    trap peers_cleanup EXIT
    trap 'echo "$0: interrupted" >&2; exit 130' INT TERM
}

# Undo everything this script made: testbeds, cgroups, scratch files.
peers_cleanup() {
    local tb cg
    for tb in "${PEERS_TBS[@]}"; do
        "$FSBENCH" testbed down "$tb" >/dev/null 2>&1 || echo "$0: could not take testbed $tb down" >&2
    done
    PEERS_TBS=()
    for cg in "${PEERS_CGS[@]}"; do
        # A cgroup can be removed once its processes are gone; they exit with the script.
        for _ in 1 2 3 4 5; do rmdir "$cg" 2>/dev/null && break; sleep 0.2; done
        [ -d "$cg" ] && echo "$0: could not remove cgroup $cg" >&2
    done
    PEERS_CGS=()
    if [ -n "$PEERS_TMP" ] && [ -d "$PEERS_TMP" ]; then
        if [ -n "${KEEP:-}" ]; then echo "raw outputs kept in $PEERS_TMP" >&2; else rm -rf "$PEERS_TMP"; fi
    fi
}

# Print a command, then run it.
peers_run() {
    echo "+ $*" >&2
    "$@"
}

# peers_tb_up CONFIG SIZE: a fresh testbed; sets PEERS_MNT to its mount point.
peers_tb_up() {
    PEERS_MNT=$("$FSBENCH" testbed up "$1" --size "$2" 2>"$PEERS_TMP/tb.err") || { cat "$PEERS_TMP/tb.err" >&2; return 1; }
    echo "+ $FSBENCH testbed up $1 --size $2   # $PEERS_MNT" >&2
    # The testbed's name is its work directory's: /var/tmp/fsbench/tb-123-0/mnt -> tb-123-0.
    PEERS_TBS+=("$(basename "$(dirname "$PEERS_MNT")")")
}

# peers_tb_down MNT: take down the testbed mounted at MNT.
peers_tb_down() {
    local name keep=() tb
    name=$(basename "$(dirname "$1")")
    peers_run "$FSBENCH" testbed down "$name" >/dev/null
    for tb in "${PEERS_TBS[@]}"; do [ "$tb" = "$name" ] || keep+=("$tb"); done
    PEERS_TBS=("${keep[@]}")
}

# The memory cgroup this script runs in: cgroup v2 (unified, with the memory controller) or v1.
peers_cg_parent() {
    local rel
    if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
        rel=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
        echo "v2 /sys/fs/cgroup${rel%/}"
    elif [ -d /sys/fs/cgroup/memory ]; then
        rel=$(awk -F: '$2 == "memory" { print $3 }' /proc/self/cgroup)
        echo "v1 /sys/fs/cgroup/memory${rel%/}"
    else
        echo "$0: no memory cgroup controller (v2 memory or v1 /sys/fs/cgroup/memory)" >&2
        return 1
    fi
}

# peers_cg_make NAME LIMIT_MIB: a child of this script's own memory cgroup limited to LIMIT_MIB
# (page cache included); sets PEERS_CG to its directory. Made under the script's cgroup so the limits
# above it still hold. Under cgroup v2 the parent must delegate the memory controller to its
# children; a v2 parent that does not is reported, not changed.
peers_cg_make() {
    local ver parent dir where
    where=$(peers_cg_parent) || return 1
    read -r ver parent <<<"$where"
    dir="$parent/$1"
    mkdir "$dir" || return 1
    PEERS_CGS+=("$dir")
    if [ "$ver" = v2 ]; then
        [ -f "$dir/memory.max" ] || { echo "$0: $parent does not delegate the memory controller" >&2; return 1; }
        echo $(($2 << 20)) > "$dir/memory.max"
        echo 0 > "$dir/memory.swap.max" 2>/dev/null || true
    else
        echo $(($2 << 20)) > "$dir/memory.limit_in_bytes"
    fi
    echo "+ cgroup $dir: memory limit $2 MiB" >&2
    PEERS_CG=$dir
}

# peers_cg_peak DIR: the most memory the cgroup used, MiB (reset after reading where possible).
peers_cg_peak() {
    local f
    for f in memory.peak memory.max_usage_in_bytes; do
        if [ -f "$1/$f" ]; then
            echo $(($(cat "$1/$f") >> 20))
            echo 0 > "$1/$f" 2>/dev/null || true
            return
        fi
    done
    echo "?"
}

# peers_in_cg DIR CMD...: run CMD inside cgroup DIR (printed first).
peers_in_cg() {
    local cg=$1
    shift
    echo "+ [cgroup $(basename "$cg")] $*" >&2
    sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}

# Drop the page cache, dentries and inodes (everyone's: the machine is shared; say so).
peers_drop_caches() {
    sync
    echo 3 > /proc/sys/vm/drop_caches
}
