#!/usr/bin/env bash
# Install what ksieve needs to build, test and benchmark, from Debian 12 packages (idempotent).
# Runs apt-get only for packages that are missing; needs root (or sudo) only then.
set -euo pipefail

build_pkgs=(g++ cmake make pkg-config libseqan3-dev libhts-dev libcli11-dev nlohmann-json3-dev
            libdeflate-dev zlib1g-dev libisal-dev libbz2-dev liblzma-dev libzstd-dev libgtest-dev libbenchmark-dev
            pybind11-dev python3-dev)
# Real data and tools used by the tests: genomes, reads, the read simulator, gzip/BGZF/xz tools, clang for the
# fuzzers, Snakemake and MultiQC for the workflow tests, seqkit to compare dedup --exact with, pytest for the
# Python module's tests.
test_pkgs=(kleborate-examples bowtie2-examples gasic-examples art-nextgen-simulation-tools pigz xz-utils zstd bzip2
           tabix gzip universal-ctags clang libclang-rt-14-dev libomp-14-dev python3 snakemake multiqc man-db samtools
           seqkit python3-pytest)

want=("${build_pkgs[@]}")
if [ "${1:-}" != "--build-only" ]; then
    want+=("${test_pkgs[@]}")
fi

missing=()
for p in "${want[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
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
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
