#!/usr/bin/env bash
# Install what fsbench needs on Debian/Ubuntu, skipping what is already there.
#   scripts/install-deps.sh          runtime: mkfs tools, zfs-fuse, util-linux
#   scripts/install-deps.sh test     + what the test suite uses (strace; chromium renders the HTML report)
#   scripts/install-deps.sh bench    + the reference peers (fio, bonnie++, dbench, postmark), and gcc
#                                      and python3 for the bench/ scripts
#   scripts/install-deps.sh mpi      + Open MPI and libclang for `cargo build --features mpi`
#                                      (rsmpi binds the system's MPI with bindgen), and what
#                                      shared/peers/build-ior.sh needs to build IOR and mdtest
set -euo pipefail

pkgs=(e2fsprogs xfsprogs btrfs-progs zfs-fuse util-linux)
for extra in "$@"; do
  case "$extra" in
    test) pkgs+=(strace chromium) ;;
    bench) pkgs+=(fio bonnie++ dbench postmark gcc python3) ;;
    mpi) pkgs+=(libopenmpi-dev openmpi-bin libclang-dev pkg-config gcc autoconf automake make) ;;
    *) echo "install-deps: unknown set '$extra' (known: test, bench, mpi)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]}; run as root (or: sudo apt-get install ${missing[*]})" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # zfs-fuse's post-install tries to start a service; without systemd that fails harmlessly.
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "install-deps: cargo (Rust) is not installed; install Rust 1.85 or newer (rustup)" >&2
  exit 1
fi
