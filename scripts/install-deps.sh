#!/usr/bin/env bash
# Install what ksieve needs to build, test and benchmark, from Debian 12 packages (idempotent).
# Runs apt-get only for packages that are missing; needs root (or sudo) only then.
# Usage: install-deps.sh [--build-only | --aarch64]
#   --build-only: only what a native build needs; --aarch64: what the aarch64 cross build and its tests under
#   qemu-user need (scripts/test-aarch64.sh), with the arm64 architecture added to dpkg.
set -euo pipefail

build_pkgs=(g++ cmake make pkg-config libseqan3-dev libhts-dev libcli11-dev nlohmann-json3-dev
            libdeflate-dev zlib1g-dev libisal-dev libbz2-dev liblzma-dev libzstd-dev libgtest-dev libbenchmark-dev
            pybind11-dev python3-dev ccache)
# Real data and tools used by the tests: genomes, reads, the read simulator, gzip/BGZF/xz tools, clang for the
# fuzzers, Snakemake and MultiQC for the workflow tests, seqkit to compare dedup --exact with, pytest for the
# Python module's tests, GNU time for the peak memory of runs under limits.
test_pkgs=(kleborate-examples bowtie2-examples gasic-examples art-nextgen-simulation-tools pigz xz-utils zstd bzip2
           tabix gzip universal-ctags clang libclang-rt-14-dev libomp-14-dev python3 snakemake multiqc man-db samtools
           seqkit python3-pytest libc++-dev libc++abi-dev time)
# The aarch64 cross build: the toolchain, qemu-user, and the arm64 libraries (GoogleTest is built from the
# sources of libgtest-dev; CLI11 and nlohmann-json are header libraries). ISA-L is not among them: see
# scripts/test-aarch64.sh.
aarch64_pkgs=(g++-aarch64-linux-gnu qemu-user cmake make pkg-config file libgtest-dev libcli11-dev nlohmann-json3-dev
              python3 zstd art-nextgen-simulation-tools xz-utils libhts-dev:arm64 zlib1g-dev:arm64
              libzstd-dev:arm64 libdeflate-dev:arm64 libbz2-dev:arm64 liblzma-dev:arm64)
# The Python module's wheel, built and installed offline (tests/python/check_wheel.py): setuptools, wheel,
# build and venv.
wheel_pkgs=(python3-setuptools python3-wheel python3-build python3-venv)

want=("${build_pkgs[@]}")
if [ "${1:-}" = "--aarch64" ]; then
    want=("${aarch64_pkgs[@]}")
elif [ "${1:-}" != "--build-only" ]; then
    want+=("${test_pkgs[@]}" "${wheel_pkgs[@]}")
fi

# Whether package $1 (NAME or NAME:ARCH; NAME alone is the native architecture) is installed, held or not.
installed()
{
    local name=${1%%:*} arch
    arch=$(dpkg --print-architecture)
    [[ $1 == *:* ]] && arch=${1#*:}
    dpkg-query -W -f='${db:Status-Status} ${Architecture}\n' "$name" 2>/dev/null | grep -qE "^installed ($arch|all)$"
}
missing=()
for p in "${want[@]}"; do
    if ! installed "$p"; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all packages present"
    exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
if [ "${1:-}" = "--aarch64" ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
