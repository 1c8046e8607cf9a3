#!/usr/bin/env bash
# Build the libFuzzer targets (clang, AddressSanitizer + UndefinedBehaviorSanitizer) and run each for a
# bounded number of inputs, seeded from small real inputs; first every saved regression input is replayed.
# Usage: tests/fuzz/fuzz.sh [SECONDS_PER_TARGET (default 60)] [KSIEVE_BINARY for making seeds (default: build-test/bin/ksieve)]
# A run is repeatable: the mutation sequence is seeded by KSIEVE_FUZZ_SEED (default 1) and each target stops
# after a fixed number of inputs (KSIEVE_FUZZ_RUNS_READER, default 10000; KSIEVE_FUZZ_RUNS_FILTER, default
# 1000000), or at SECONDS_PER_TARGET on a slow machine. Set another seed (0: a random one) and more runs to
# explore further; a test suite that found a new input on every run would fail at random.
# A finding is written to build-fuzz/findings/<target>/ and fails the script; copy it to
# tests/fuzz/regressions/<target>/ once fixed, so that every later run replays it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
seconds=${1:-60}
seed=${KSIEVE_FUZZ_SEED:-1}
declare -A runs=([fuzz_reader]=${KSIEVE_FUZZ_RUNS_READER:-10000} [fuzz_filter_file]=${KSIEVE_FUZZ_RUNS_FILTER:-1000000})
ksieve=${2:-build-test/bin/ksieve}
jobs=$(nproc 2>/dev/null || echo 2)

echo "== Fuzzer build (clang, address + undefined)"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSIEVE_BUILD_FUZZERS=ON \
    -DKSIEVE_SANITIZER=address,undefined -DKSIEVE_BUILD_TESTS=OFF -DKSIEVE_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j "$jobs" --target fuzz_reader fuzz_filter_file

# Seeds: a few records of each input kind, and small filters of each type.
seeds=build-fuzz/seeds
rm -rf "$seeds" build-fuzz/findings
mkdir -p "$seeds/fuzz_reader" "$seeds/fuzz_filter_file" build-fuzz/findings/fuzz_reader build-fuzz/findings/fuzz_filter_file
zcat examples/data/reads.fq.gz | head -n 24 > "$seeds/fuzz_reader/reads.fq" || true # SIGPIPE of zcat
zcat examples/data/lambda.fa.gz | head -c 3000 > "$seeds/fuzz_reader/ref.fa" || true
gzip -n -c "$seeds/fuzz_reader/reads.fq" > "$seeds/fuzz_reader/reads.fq.gz"
bgzip -c "$seeds/fuzz_reader/ref.fa" > "$seeds/fuzz_reader/ref.fa.bgz"
zstd -q -c "$seeds/fuzz_reader/reads.fq" > "$seeds/fuzz_reader/reads.fq.zst"
if [ -x "$ksieve" ]; then
    "$ksieve" build -q -k 11 --shards 1 --sampling all -o "$seeds/filter.tmp" "$seeds/fuzz_reader/ref.fa"
    "$ksieve" classify -q -f "$seeds/filter.tmp" --min-hits 1 --min-hit-fraction 1 \
        --novel "$seeds/fuzz_reader/reads.sam" "$seeds/fuzz_reader/reads.fq" || true
    "$ksieve" classify -q -f "$seeds/filter.tmp" --min-hits 1 --min-hit-fraction 1 \
        --novel "$seeds/fuzz_reader/reads.bam" "$seeds/fuzz_reader/reads.fq" || true
    for type in qf bloom cuckoo counting-bloom bloom-classic; do
        "$ksieve" build -q -k 11 --shards 1 --type "$type" --expected 5000 --sampling all \
            -o "$seeds/fuzz_filter_file/$type.ksf" "$seeds/fuzz_reader/ref.fa"
    done
    "$ksieve" build -q -k 11 --shards 1 --fpr 0 --expected 5000 -o "$seeds/fuzz_filter_file/exact.ksf" \
        "$seeds/fuzz_reader/ref.fa"
    # Labeled filters: labels a and b over two halves of the reference that share its middle third
    # (k-mers of both), and labels by record (three overlapping records).
    sequence=$(grep -v '^>' "$seeds/fuzz_reader/ref.fa" | tr -d '\n')
    n=${#sequence}
    printf '>a\n%s\n' "${sequence:0:$((n * 2 / 3))}" > "$seeds/label_a.fa"
    printf '>b\n%s\n' "${sequence:$((n / 3))}" > "$seeds/label_b.fa"
    printf '>left\n%s\n>middle\n%s\n>right\n%s\n' "${sequence:0:$((n / 2))}" \
        "${sequence:$((n / 4)):$((n / 2))}" "${sequence:$((n / 2))}" > "$seeds/label_records.fa"
    "$ksieve" build -q -k 11 --shards 1 --expected 5000 --sampling all --label a="$seeds/label_a.fa" \
        --label b="$seeds/label_b.fa" -o "$seeds/fuzz_filter_file/labeled.ksf"
    "$ksieve" build -q -k 11 --shards 1 --expected 5000 --sampling all --label-by record \
        -o "$seeds/fuzz_filter_file/labeled_records.ksf" "$seeds/label_records.fa"
    rm -f "$seeds/label_a.fa" "$seeds/label_b.fa" "$seeds/label_records.fa"
    rm -f "$seeds/filter.tmp"
else
    echo "fuzz.sh: $ksieve not found: no SAM/BAM or filter seeds" >&2
fi

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export LSAN_OPTIONS=suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
status=0
for target in fuzz_reader fuzz_filter_file; do
    regressions=tests/fuzz/regressions/$target
    if compgen -G "$regressions/*" >/dev/null; then
        echo "== $target: replaying $(ls "$regressions" | wc -l) regression inputs"
        build-fuzz/tests/fuzz/$target -runs=0 "$regressions"/* || status=1
    fi
    echo "== $target: ${runs[$target]} inputs (at most ${seconds} s)"
    mkdir -p "build-fuzz/corpus/$target"
    # -rss_limit_mb: an input that makes the loader allocate by a crafted size is a finding.
    build-fuzz/tests/fuzz/$target -runs="${runs[$target]}" -max_total_time="$seconds" -seed="$seed" -max_len=65536 -rss_limit_mb=1024 -timeout=20 \
        -artifact_prefix="build-fuzz/findings/$target/" -print_final_stats=1 \
        "build-fuzz/corpus/$target" "$seeds/$target" > "build-fuzz/$target.log" 2>&1 || status=1
    # a finding's stack trace and the final statistics
    grep -E -A 40 '^==[0-9]+==|ERROR: libFuzzer' "build-fuzz/$target.log" | head -n 60 || true
    tail -n 8 "build-fuzz/$target.log"
done
if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: findings in build-fuzz/findings/" >&2
fi
exit "$status"
