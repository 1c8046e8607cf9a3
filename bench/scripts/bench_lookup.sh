#!/usr/bin/env bash
# Lookups as the memory system sees them: BM_filter_lookup of build/bench/ksieve_bench_filters
# (bench/filters/bench_lookup_memory.cpp), classify's batched lookups into sharded quotient filters
# of about 2 MB (in L2: the compute floor), 16 MB, 400 MB and 4 GB, each with 4 KiB pages, mapped as
# classify maps it, and read into transparent huge pages, at 0%, 50% and 100% of the keys present;
# next to BM_dependent_load (one dependent random load over 128 MB: the latency a lookup hides).
# KSIEVE_BENCH_REPEATS repetitions in random order; medians with the spread.
# Writes WORK/lookup.json (Google Benchmark's output) and WORK/lookup.md, a page of its own
# (docs/lookup_memory.md). Needs about 9 GB of memory and KSIEVE_BENCH_TMP (default /tmp) room for
# 4.5 GB of filter files (removed at the end).
# Usage: bench/scripts/bench_lookup.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

find_ksieve
bin=$(dirname "$KSIEVE")/../bench/ksieve_bench_filters
[[ -x $bin ]] || bin=$REPO/build/bench/ksieve_bench_filters
[[ -x $bin ]] || die "build the ksieve_bench_filters target first (cmake --build build --target ksieve_bench_filters)"
need_tools python3 lscpu
mkdir -p "$WORK"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log "lookup benchmarks, $REPEATS repetitions (load: $load_start)"
"$bin" --benchmark_filter='BM_filter_lookup|BM_dependent_load' --benchmark_repetitions="$REPEATS" \
    --benchmark_enable_random_interleaving=true --benchmark_format=json > "$WORK/lookup.json.tmp" 2> "$WORK/lookup.err" ||
    die "ksieve_bench_filters failed: $(tail -3 "$WORK/lookup.err")"
mv "$WORK/lookup.json.tmp" "$WORK/lookup.json"
cpu=$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')
thp=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2> /dev/null || echo unknown)
{
    echo "# Lookups and the memory system"
    echo
    echo "<!-- Written by bench/scripts/bench_lookup.sh; edit the script, not this page. -->"
    echo
    echo "Commit \`$(git -C "$REPO" rev-parse --short=10 HEAD)\`, $(date -u '+%Y-%m-%d %H:%M') UTC, $cpu, $(nproc) cores," \
        "Linux $(uname -r), transparent huge pages \`$thp\` (load at the start: $load_start, at the end:" \
        "$(cut -d' ' -f1-3 /proc/loadavg)). Reproduce: \`bench/scripts/bench_lookup.sh WORK_DIR\` (after" \
        "building the target \`ksieve_bench_filters\`)."
    echo
    echo "One thread looks up random 62-bit keys in batches of 8192 (\`any_filter::count_keys\`, classify's" \
        "call: one software pipeline over all 64 shards) in a sharded quotient filter built at \`--fpr 1e-5\`" \
        "(the default of a filter of minimizers), its home slots 85% full, saved and loaded back. Pages:" \
        "4 KiB (transparent huge pages disabled for the process), the file mapped as classify maps it" \
        "(huge pages advised), and the file read into anonymous memory with huge pages advised" \
        "(\`KSIEVE_HUGEPAGE_FILTERS=1\`). Cells: ns per lookup, median of $REPEATS runs in random order" \
        "(min-max). Lines and pages: the 64-byte lines and 4 KiB pages the pipeline asks for per key, from" \
        "the table's geometry."
    echo
    python3 - "$WORK/lookup.json" << 'PY'
import json, statistics, sys
runs, dep = {}, []
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("run_type") != "iteration":
        continue
    name = b["run_name"]
    if name.startswith("BM_dependent_load"):
        dep.append(b["ns/op"])
        continue
    f = dict(p.split(":") for p in name.split("/")[1:] if ":" in p and not p.startswith("iterations"))
    runs.setdefault((int(f["MB"]), int(f["pages"])), {}).setdefault(int(f["present"]), []).append(b)
pages = {0: "4 KiB", 1: "file mapped", 2: "anonymous, huge"}
def cell(rs):
    v = sorted(r["ns/lookup"] for r in rs)
    return f"{statistics.median(v):.1f} ({v[0]:.1f}-{v[-1]:.1f})"
print("| filter MB | pages | 0% present | 50% present | 100% present | lines / lookup | pages / lookup | FPR (0% present) |")
print("|---:|---|---:|---:|---:|---:|---:|---:|")
for (mb, p) in sorted(runs):
    by = runs[(mb, p)]
    any_run = next(iter(by.values()))[0]
    fpr = statistics.median(r["hit"] for r in by.get(0, [{"hit": float("nan")}]))
    print(f"| {any_run['MB']:.0f} | {pages[p]} | " + " | ".join(cell(by[h]) if h in by else "-" for h in (0, 50, 100)) +
          f" | {any_run['lines/lookup']:.2f} | {any_run['pages/lookup']:.2f} | {fpr:.2g} |")
if dep:
    v = sorted(dep)
    print()
    print(f"One dependent random load over 128 MB (BM_dependent_load, the latency each lookup would pay alone): "
          f"{statistics.median(v):.1f} ns (min-max {v[0]:.1f}-{v[-1]:.1f}).")
PY
} > "$WORK/lookup.md.tmp"
mv "$WORK/lookup.md.tmp" "$WORK/lookup.md"
cat "$WORK/lookup.md"
