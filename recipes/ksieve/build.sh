#!/usr/bin/env bash
# Bioconda build of ksieve: the executable, its man page and bash completion, and the filter library with
# its CMake package (the Python module is left to a package of its own). Portable code: no
# -march=native (x86-64 builds target x86-64-v2, SSE4.2 + POPCNT).
set -euxo pipefail

cmake -S . -B build \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="${PREFIX}" \
    -DCMAKE_PREFIX_PATH="${PREFIX}" \
    -DCMAKE_INSTALL_LIBDIR=lib \
    -DKSIEVE_BUILD_TESTS=OFF \
    -DKSIEVE_BUILD_BENCH=OFF \
    -DKSIEVE_INSTALL=ON \
    -DKSIEVE_NATIVE=OFF \
    -DKSIEVE_BUILD_PYTHON=OFF \
    ${CMAKE_ARGS:-}
cmake --build build --parallel "${CPU_COUNT:-2}" --target ksieve ksieve_manpage
cmake --install build
