#!/usr/bin/env bash
# The kernel families' micro-benchmarks (Google Benchmark): the quotient filter's inserts and lookups
# (2^22 slots at 90% load), the blocked Bloom filter's (2^20 keys), the minimizers of 150 bp reads
# (ksieve_bench_filters) and hit_set's lookups (ksieve_bench_engine, where the build has the pipeline).
#
#   bench_kernels.sh BUILD            the CPU level the dispatcher picks against KSIEVE_SIMD=generic, in
#                                     one build (on aarch64: the NEON copies against the generic ones)
#   bench_kernels.sh BUILD_A BUILD_B  two builds (say, before and after a change) at the picked level
#
# The two sides run alternately (first, second, first, second ...), KSIEVE_KERNEL_ROUNDS rounds (default 4) of
# KSIEVE_KERNEL_REPEATS repetitions each (default 3); the table gives each benchmark's CPU time per
# side (median, min and max over all repetitions: the spread is the noise) and the median ratio second / first.
# KSIEVE_KERNEL_FILTER replaces the benchmark filter (a Google Benchmark regular expression).
# Run it on a quiet machine (see `uptime`). Results go to KSIEVE_BENCH_DIR (default
# /tmp/ksieve-bench)/kernels.
set -euo pipefail
[[ $# -ge 1 && $# -le 2 ]] || { sed -n '2,16p' "$0" >&2; exit 2; }
a=$1
b=${2:-$1}
rounds=${KSIEVE_KERNEL_ROUNDS:-4}
repeats=${KSIEVE_KERNEL_REPEATS:-3}
out=${KSIEVE_BENCH_DIR:-/tmp/ksieve-bench}/kernels
filters_re=${KSIEVE_KERNEL_FILTER:-'BM_qf_(insert|lookup)/log2n:22/load:90/(mode|batch):[01]/|BM_bloom_(insert|lookup)<blocked_budget>/log2n:20/(mode|batch):[01](/|$)|BM_record_minimizers/|BM_hit_set_lookup/'}
[[ -x $a/bench/ksieve_bench_filters ]] ||
    { echo "bench_kernels: no $a/bench/ksieve_bench_filters (cmake -DKSIEVE_BUILD_BENCH=ON, target ksieve_bench_filters)" >&2; exit 1; }
[[ -x $b/bench/ksieve_bench_filters ]] || { echo "bench_kernels: no $b/bench/ksieve_bench_filters" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
echo "bench_kernels: load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"

# run SIDE BUILD SIMD ROUND: every binary of BUILD, KSIEVE_SIMD=SIMD ("" for the dispatcher's choice)
run() {
    local side=$1 build=$2 simd=$3 round=$4 bin
    for bin in ksieve_bench_filters ksieve_bench_engine; do
        [[ -x $build/bench/$bin ]] || continue
        KSIEVE_SIMD=$simd "$build/bench/$bin" --benchmark_filter="$filters_re" \
            --benchmark_repetitions="$repeats" --benchmark_format=json \
            > "$out/$side-$round-$bin.json" 2> "$out/$side-$round-$bin.err" ||
            { echo "bench_kernels: $build/bench/$bin failed: $(tail -3 "$out/$side-$round-$bin.err")" >&2; exit 1; }
    done
}
for round in $(seq "$rounds"); do
    if [[ $# -eq 1 ]]; then
        run first "$a" "" "$round"
        run second "$a" generic "$round"
    else
        run first "$a" "" "$round"
        run second "$b" "" "$round"
    fi
    echo "bench_kernels: round $round of $rounds done"
done
if [[ $# -eq 1 ]]; then
    echo "first: $a at the dispatcher's level; second: the same with KSIEVE_SIMD=generic"
else
    echo "first: $a; second: $b (both at the dispatcher's level)"
fi
python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
cpu = {}
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    side = os.path.basename(path).split("-", 1)[0]
    try:
        runs = json.load(open(path))["benchmarks"]
    except ValueError:  # (no benchmark of the binary matched the filter)
        continue
    for r in runs:
        if r.get("run_type") == "iteration":
            scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[r["time_unit"]]
            cpu.setdefault(r["run_name"], {}).setdefault(side, []).append(r["cpu_time"] * scale)
print("| benchmark | first: CPU ms median (min - max) | second: CPU ms median (min - max) | second / first |")
print("|---|---:|---:|---:|")
for name in sorted(cpu):
    sides = cpu[name]
    if "first" not in sides or "second" not in sides:
        continue
    cells = ["%.3f (%.3f - %.3f)" % (statistics.median(v), min(v), max(v)) for v in (sides["first"], sides["second"])]
    ratio = statistics.median(sides["second"]) / statistics.median(sides["first"])
    print("| %s | %s | %s | %.3f |" % (name, cells[0], cells[1], ratio))
PY
