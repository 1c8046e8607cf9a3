#!/usr/bin/env bash
# The memory system's view of one classify run: `perf stat` of `ksieve classify` with the hardware
# events that say where a lookup waits (cycles, instructions, dTLB load misses, last-level cache
# load misses), each divided by the reads that the run's --stats counted, and the run's CPU seconds
# per read. Events the machine does not expose (a virtual machine often exposes none) are printed as
# "not counted"; the CPU time per read is always there.
#
# Usage: bench/scripts/perf_classify.sh FILTER READS [CLASSIFY_OPTION ...]
#   e.g. bench/scripts/perf_classify.sh host.ksf reads.fq.gz --novel clean.fq.gz
# Environment: KSIEVE (the executable; see bench_common.sh), KSIEVE_BENCH_THREADS [2],
#   KSIEVE_PERF_EVENTS [cycles,instructions,dTLB-load-misses,LLC-load-misses]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

(($# >= 2)) || die "usage: perf_classify.sh FILTER READS [CLASSIFY_OPTION ...]"
filter=$1 reads=$2
shift 2
T=${KSIEVE_BENCH_THREADS:-2}
EVENTS=${KSIEVE_PERF_EVENTS:-cycles,instructions,dTLB-load-misses,LLC-load-misses}
need_tools perf python3
find_ksieve
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log "load: $(uptime)"
perf stat -x, -e "task-clock,$EVENTS" -o "$tmp/perf.csv" \
    "$KSIEVE" classify -q -t "$T" -f "$filter" --stats "$tmp/stats.json" "$@" "$reads"
python3 - "$tmp/perf.csv" "$tmp/stats.json" <<'EOF'
import json
import sys

reads = json.load(open(sys.argv[2]))["reads"]
print(f"reads\t{reads}")
for line in open(sys.argv[1]):
    fields = line.strip().split(",")
    if len(fields) < 3 or line.startswith("#"):
        continue
    value, event = fields[0], fields[2]
    if event == "task-clock":  # milliseconds
        print(f"cpu_us_per_read\t{float(value) * 1000 / max(reads, 1):.3f}")
    elif value.startswith("<"):
        print(f"{event}_per_read\tnot counted")
    else:
        print(f"{event}_per_read\t{float(value) / max(reads, 1):.2f}")
EOF
