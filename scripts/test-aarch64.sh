#!/usr/bin/env bash
# The aarch64 stage of the tests: cross-compile ksieve with Debian's aarch64 toolchain (Release,
# cmake/toolchains/aarch64-linux-gnu.cmake), run the filter and engine test suites under qemu-user, and run
# the same commands with the x86-64 build and the aarch64 build on the bundled and generated data
# (tests/cross_arch/compare_binaries.sh): filters, read outputs, reports and statistics must be the same
# bytes, and each build must read the other's filters with the same answers.
# Usage: scripts/test-aarch64.sh [X86_64_KSIEVE]   (default build-test/bin/ksieve, built there if missing)
# Installs what it needs (scripts/install-deps.sh --aarch64: needs root or sudo then). Build folder:
# build-arm. KSIEVE_ARM_TEST_EXCLUDE: a ctest -E pattern of tests to leave out (default: none).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
x86_ksieve=${1:-build-test/bin/ksieve}
build="build-arm"
qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib) # as the toolchain file

bash scripts/install-deps.sh --aarch64

# ISA-L: Debian's libisal-dev cannot be installed for arm64 beside the amd64 one that the native builds use
# (the package is not multi-arch). Its arm64 packages are unpacked into the build folder instead; where
# that fails, the aarch64 build reads gzip through zlib (the documented fallback).
isal_options=()
if dpkg-query -W -f='${Status}' libisal-dev:arm64 2>/dev/null | grep -q "install ok installed"; then
    isal_options=(-DISAL_LIBRARY=/usr/lib/aarch64-linux-gnu/libisal.so)
else
    isal=$build/isal-arm64
    if [ ! -f "$isal/usr/include/isa-l/igzip_lib.h" ]; then
        rm -rf "$isal" "$build/isal-debs"
        mkdir -p "$build/isal-debs"
        if (cd "$build/isal-debs" && apt-get download libisal-dev:arm64 libisal2:arm64 >/dev/null 2>&1); then
            for deb in "$build"/isal-debs/*.deb; do dpkg-deb -x "$deb" "$isal"; done
        fi
    fi
    if [ -f "$isal/usr/include/isa-l/igzip_lib.h" ]; then
        isal_options=(-DISAL_INCLUDE_DIR="$root/$isal/usr/include"
                      -DISAL_LIBRARY="$root/$isal/usr/lib/aarch64-linux-gnu/libisal.so")
    else
        echo "test-aarch64: ISA-L for arm64 not available: gzip input through zlib"
        isal_options=(-DKSIEVE_WITH_ISAL=OFF)
    fi
fi

echo "== aarch64 build"
# (no Python module: an aarch64 module cannot be loaded into the x86-64 interpreter; the man page needs the
# executable at build time: no install rules)
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
      -DKSIEVE_GTEST_SOURCE_DIR=/usr/src/googletest -DKSIEVE_INSTALL=OFF -DKSIEVE_BUILD_BENCH=OFF \
      -DKSIEVE_BUILD_PYTHON=OFF -DKSIEVE_TEST_PIPELINE_LAYERS=engine "${isal_options[@]}" >/dev/null
targets=(ksieve)
for src in tests/filters/test_*.cpp tests/pipeline/engine/test_*.cpp; do
    targets+=("$(basename "$src" .cpp)")
done
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
file "$build/bin/ksieve" | grep -q aarch64 || { echo "test-aarch64: $build/bin/ksieve is not an aarch64 executable" >&2; exit 1; }

echo "== aarch64 filter and engine tests (qemu-user)"
# The engine tests use the generated test data of the native build where it is complete (the same files).
if [ -f build-test/test-data/.complete ] && [ ! -e "$build/test-data" ]; then
    ln -s "$root/build-test/test-data" "$build/test-data"
fi
exclude=${KSIEVE_ARM_TEST_EXCLUDE-}
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 1500 -L '^(filters|engine)$' ${exclude:+-E "$exclude"})

echo "== aarch64 and x86-64 outputs"
if [ ! -x "$x86_ksieve" ]; then
    cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build-test -j "$jobs" --target ksieve
fi
bash tests/cross_arch/compare_binaries.sh "$build/compare" "$x86_ksieve" "${qemu[*]} $build/bin/ksieve"
