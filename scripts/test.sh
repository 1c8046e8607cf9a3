#!/usr/bin/env bash
# Install dependencies, build (Release) and run the whole test suite; then the filter tests with
# ThreadSanitizer (built with KSIEVE_PORTABLE_FALLBACKS: the fallbacks that macOS runs instead of the
# Linux-only calls, which the other builds run), the whole suite with AddressSanitizer +
# UndefinedBehaviorSanitizer, and the libFuzzer targets for a fixed number of inputs (tests/fuzz/fuzz.sh;
# at most KSIEVE_FUZZ_SECONDS per target, default 60).
# Usage: scripts/test.sh   (from anywhere; as root or with sudo)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)

# Each stage's duration, printed at the end (also when a stage fails).
stage_names=()
stage_starts=()
stage()
{
    echo "== $1"
    stage_names+=("$1")
    stage_starts+=("$SECONDS")
}
print_durations()
{
    local status=$? i end
    echo "== Stage durations"
    for i in "${!stage_names[@]}"; do
        end=${stage_starts[$((i + 1))]:-$SECONDS}
        printf '%6d s  %s\n' $((end - stage_starts[i])) "${stage_names[$i]}"
    done
    printf '%6d s  in all\n' "$SECONDS"
    return "$status"
}
trap print_durations EXIT
stage "Dependencies"

bash scripts/install-deps.sh

stage "Release build"
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Release -DKSIEVE_BUILD_TESTS=ON -DKSIEVE_BUILD_BENCH=ON >/dev/null
cmake --build build-test -j "$jobs"
stage "Release tests"
(cd build-test && ctest --output-on-failure -j "$jobs" --timeout 1500)

stage "ThreadSanitizer filter tests, on the portable fallbacks"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSIEVE_SANITIZER=thread -DKSIEVE_BUILD_PIPELINE=OFF \
      -DKSIEVE_PORTABLE_FALLBACKS=ON -DKSIEVE_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="-DKSIEVE_SANITIZED=1" >/dev/null
cmake --build build-tsan -j "$jobs"
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
    ctest --output-on-failure -j "$jobs" --timeout 1500)

stage "AddressSanitizer + UndefinedBehaviorSanitizer, the whole test suite"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSIEVE_SANITIZER=address,undefined \
      -DKSIEVE_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="-DKSIEVE_SANITIZED=1" >/dev/null
cmake --build build-asan -j "$jobs"
(cd build-asan && ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    ctest --output-on-failure -j "$jobs" --timeout 1500)

stage "Fuzzers"
bash tests/fuzz/fuzz.sh "${KSIEVE_FUZZ_SECONDS:-60}" build-test/bin/ksieve
