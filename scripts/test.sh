#!/usr/bin/env bash
# Install dependencies, build (Release) and run the whole test suite, then build the filter tests with
# ThreadSanitizer and run them too. Usage: scripts/test.sh   (from anywhere; as root or with sudo)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/install-deps.sh

echo "== Release build"
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release -DKSIEVE_BUILD_TESTS=ON -DKSIEVE_BUILD_BENCH=ON >/dev/null
cmake --build build-test -j "$jobs"
echo "== Tests"
(cd build-test && ctest --output-on-failure -j "$jobs" --timeout 1500)

echo "== ThreadSanitizer build of the filter library tests"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSIEVE_SANITIZER=thread -DKSIEVE_BUILD_PIPELINE=OFF \
      -DKSIEVE_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="-DKSIEVE_SANITIZED=1" >/dev/null
cmake --build build-tsan -j "$jobs"
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --output-on-failure -j "$jobs" --timeout 1500)
