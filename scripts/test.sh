#!/usr/bin/env bash
# Install dependencies, build (Release) and run the whole test suite; then the filter tests with
# ThreadSanitizer (built with KSIEVE_PORTABLE_FALLBACKS: the fallbacks that macOS runs instead of the
# Linux-only calls, which the other builds run), the whole suite built with clang and libc++ (the C++
# library of macOS) under AddressSanitizer + UndefinedBehaviorSanitizer (and the GenBank/EMBL reader, which
# builds with GCC only, under them with GCC), the libFuzzer targets for a fixed
# number of inputs (tests/fuzz/fuzz.sh; at most KSIEVE_FUZZ_SECONDS per target, default 60), and the
# aarch64 build under qemu-user against the x86-64 one (scripts/test-aarch64.sh).
# Usage: scripts/test.sh   (from anywhere; as root or with sudo)
# At the end it prints each stage's duration and the processor time of its commands (user + system, all
# cores together), which says what a stage costs on a machine shared with other work.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)

# Each stage's duration and processor time, printed at the end (also when a stage fails).
stage_names=()
stage_starts=()
stage_cpu=()
times_file=$(mktemp)
# cpu = processor seconds of the finished child processes so far (bash's `times`, user + system; the
# builtin must run in this shell, not in a $(...) subshell, which has no children of its own).
cpu=0
children_cpu()
{
    times > "$times_file"
    cpu=$(tail -n 1 "$times_file" | awk '{ for (i = 1; i <= NF; ++i) { split($i, t, "m"); s += t[1] * 60 + t[2] }
                                           printf "%.0f", s }')
}
stage()
{
    echo "== $1"
    children_cpu
    stage_names+=("$1")
    stage_starts+=("$SECONDS")
    stage_cpu+=("$cpu")
}
print_durations()
{
    local status=$? i end cpu_end all_cpu
    children_cpu
    all_cpu=$cpu
    echo "== Stage durations (wall; processor time of the stage's commands)"
    for i in "${!stage_names[@]}"; do
        end=${stage_starts[$((i + 1))]:-$SECONDS}
        cpu_end=${stage_cpu[$((i + 1))]:-$all_cpu}
        printf '%6d s  %6d CPU s  %s\n' $((end - stage_starts[i])) $((cpu_end - stage_cpu[i])) "${stage_names[$i]}"
    done
    printf '%6d s  %6d CPU s  in all\n' "$SECONDS" "$all_cpu"
    rm -f "$times_file"
    return "$status"
}
trap print_durations EXIT
stage "Dependencies"

bash scripts/install-deps.sh
# Every build goes through ccache: the several builds below share the compilations they have in common,
# and a machine that ran the suite before compiles only what changed (paths relative to the checkout, so
# that another clone of it hits the same entries). KSIEVE_NO_CCACHE=1 compiles everything.
if [ -z "${KSIEVE_NO_CCACHE:-}" ] && command -v ccache >/dev/null; then
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
    export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR=1
fi

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

stage "clang + libc++, AddressSanitizer + UndefinedBehaviorSanitizer, the whole test suite"
# One build for two checks: the code builds and passes with LLVM's libc++ (cmake/toolchains/clang-libcxx.cmake;
# GoogleTest built from its sources with it, no benchmarks), and every test runs under the sanitizers
# (optimized at -O1, which they need no more than). GenBank/EMBL input (seqan3, GCC only) is not built here:
# the next stage runs its tests under the same sanitizers with GCC.
cmake -S . -B build-clang -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/clang-libcxx.cmake -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" -DKSIEVE_SANITIZER=address,undefined \
      -DKSIEVE_GTEST_SOURCE_DIR=/usr/src/googletest -DKSIEVE_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS="-DKSIEVE_SANITIZED=1" \
      >/dev/null
cmake --build build-clang -j "$jobs"
# the test data that the Release tests generated (the same files)
if [ -f build-test/test-data/.complete ] && [ ! -e build-clang/test-data ]; then
    ln -s "$root/build-test/test-data" build-clang/test-data
fi
(cd build-clang && ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    ctest --output-on-failure -j "$jobs" --timeout 1500)

stage "GCC AddressSanitizer + UndefinedBehaviorSanitizer: GenBank/EMBL input (seqan3)"
# The one reader that the clang build leaves out (seqan3 builds with GCC only), under the same sanitizers.
cmake -S . -B build-gcc-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -DNDEBUG" \
      -DKSIEVE_SANITIZER=address,undefined -DKSIEVE_BUILD_BENCH=OFF -DKSIEVE_TEST_PIPELINE_LAYERS=app \
      -DCMAKE_CXX_FLAGS="-DKSIEVE_SANITIZED=1" >/dev/null
cmake --build build-gcc-asan -j "$jobs" --target ksieve test_annotated_input
if [ -f build-test/test-data/.complete ] && [ ! -e build-gcc-asan/test-data ]; then
    ln -s "$root/build-test/test-data" build-gcc-asan/test-data
fi
(cd build-gcc-asan && ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
    ctest --output-on-failure -R 'annotated_input' --no-tests=error --timeout 600)

stage "Fuzzers"
bash tests/fuzz/fuzz.sh "${KSIEVE_FUZZ_SECONDS:-60}" build-test/bin/ksieve

stage "aarch64: cross build, filter and engine tests under qemu-user, outputs as the x86-64 build's"
bash scripts/test-aarch64.sh build-test/bin/ksieve
