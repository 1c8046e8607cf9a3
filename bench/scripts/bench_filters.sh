#!/usr/bin/env bash
# The filters alone (Google Benchmark, build/bench/ksieve_bench_filters): inserts and lookups of present and
# absent keys in tables of 2^KSIEVE_BENCH_FILTER_LOG2N keys (default 26: DRAM-sized), one thread, for the
# quotient, blocked Bloom and cuckoo filters and seqan3's interleaved Bloom filter (where built with seqan3).
# KSIEVE_BENCH_REPEATS repetitions, interleaved in random order (--benchmark_enable_random_interleaving).
# Writes $WORK/filters.md (section) and $WORK/filters.json (Google Benchmark's output).
# Usage: bench/scripts/bench_filters.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

find_ksieve
bin=$(dirname "$KSIEVE")/../bench/ksieve_bench_filters
[[ -x $bin ]] || bin=$REPO/build/bench/ksieve_bench_filters
[[ -x $bin ]] || die "build the ksieve_bench_filters target first (cmake --build build --target ksieve_bench_filters)"
n=$FILTER_LOG2N
re="BM_qf_(lookup|insert)/log2n:$n/load:90/(batch:1|mode:0)/|BM_bloom_(lookup|insert)<blocked_budget>/log2n:$n/(batch:1|mode:0)/"
re+="|BM_cuckoo_(lookup|insert)/log2n:$n/load95:0/batch:1/|BM_seqan3_ibf_lookup/log2n:$n/h:3/"
mkdir -p "$WORK"
log "filter benchmarks: $re"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
"$bin" --benchmark_filter="$re" --benchmark_repetitions="$REPEATS" --benchmark_enable_random_interleaving=true \
    --benchmark_report_aggregates_only=false --benchmark_format=json > "$WORK/filters.json.tmp" 2> "$WORK/filters.err" ||
    die "ksieve_bench_filters failed: $(tail -3 "$WORK/filters.err")"
mv "$WORK/filters.json.tmp" "$WORK/filters.json"
{
    echo "Google Benchmark (\`build/bench/ksieve_bench_filters\`), one thread, tables of 2^$n keys at the load each"
    echo "benchmark names (quotient filter 90%), lookups of present (hits:1) and absent (hits:0) keys in batches;"
    echo "$REPEATS repetitions in random order. Throughput in million keys per second; fpr the measured rate of"
    echo "absent keys found. Load average at the start: $load_start."
    echo
    python3 - "$WORK/filters.json" <<'PY'
import json, statistics, sys
runs = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("run_type") != "iteration":
        continue
    runs.setdefault(b["run_name"], []).append(b)
print("| benchmark | runs | M keys/s: min / median / max | ns per key (median) | bits per key | fpr |")
print("|---|---:|---:|---:|---:|---:|")
for name in sorted(runs):
    rs = runs[name]
    ips = sorted(r["items_per_second"] / 1e6 for r in rs)
    med = statistics.median(ips)
    bits = rs[0].get("bits/key")
    fpr = rs[0].get("fpr", rs[0].get("hit_rate") if "hits:0" in name else None)
    print("| %s | %d | %.1f / %.1f / %.1f | %.1f | %s | %s |" % (
        name.replace("/iterations:1", "").replace("/iterations:3", ""), len(rs), ips[0], med, ips[-1],
        1e3 / med, "%.2f" % bits if bits is not None else "",
        "%.3g" % fpr if fpr is not None and "hits:1" not in name else ""))
PY
    echo
    echo "<details><summary>Commands</summary>"
    echo
    echo '```'
    echo "build/bench/ksieve_bench_filters --benchmark_filter='$re' --benchmark_repetitions=$REPEATS --benchmark_enable_random_interleaving=true --benchmark_format=json"
    echo '```'
    echo
    echo "</details>"
} > "$WORK/filters.md.tmp"
mv "$WORK/filters.md.tmp" "$WORK/filters.md"
cat "$WORK/filters.md"
