#!/usr/bin/env bash
# Runs two ksieve executables on the benchmark data and compares every output byte for byte: build (each
# filter type and sampling, key-space parts, --no-counts, labels), classify (plain, gzip and zstd reads,
# reports, stats; a labeled filter), dedup (deduplication and normalization, --prefilter, a small
# --max-memory that samples and forgets, --exact with and without one), merge, intersect, subtract and
# info, at -t 1 and -t 2.
# For checking that a change that should not alter behaviour (a refactor, a speed-up) does not.
# Filters of other layouts (sized for their own k-mers) are compared by their answers (classify reports):
# the layout a merge of them chooses is not part of what this compares.
#
# Usage: bench/scripts/compare_executables.sh OLD_KSIEVE NEW_KSIEVE [WORK_DIR]
#   KSIEVE_BENCH_READS  reads per data set (default here 200000; see bench_common.sh)
# Exit 0 when every output is identical; otherwise lists the outputs that differ and exits 1.
# Options that a newer executable spells differently are passed in the spelling both accept.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 OLD_KSIEVE NEW_KSIEVE [WORK_DIR]" >&2; exit 2; }
old=$(realpath "$1")
new=$(realpath "$2")
shift 2
export KSIEVE_BENCH_READS=${KSIEVE_BENCH_READS:-200000}
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"
make_data
out=$WORK/compare
rm -rf "$out"
mkdir -p "$out/old" "$out/new"
host=$GENOMES/host.fa
other=$GENOMES/MGH78578.fa
lambda=$GENOMES/lambda.fa
differ=0

# run SIDE CMD...: runs CMD with the SIDE's executable in $out/SIDE (stderr to a log).
run()
{
    local side=$1 exe
    shift
    [[ $side == old ]] && exe=$old || exe=$new
    (cd "$out/$side" && "$exe" "$@" -q 2>> "$out/$side/stderr.log") ||
        die "$side: ksieve $* failed: $(tail -3 "$out/$side/stderr.log")"
}

# both CMD...: runs CMD on both sides.
both() { run old "$@"; run new "$@"; }

# JSON outputs carry run times, the command line and what the machine and the run measured (the memory
# limit and the peak resident set): compare them without those keys.
strip_times()
{
    python3 - "$1" << 'EOF'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in ("command_line", "memory_limit", "peak_resident_bytes", "memory_plan") and not any(t in k for t in ("seconds", "time", "rate", "per_s"))}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True, indent=1))
EOF
}

for t in 1 2; do
    log "builds at -t $t"
    both build -t "$t" -o "host.t$t.ksf" "$host"
    both build -t "$t" --sampling all --fpr 0 --expected 6000000 -o "host_all.t$t.ksf" "$host"
    both build -t "$t" --type bloom --sampling all -o "host_bloom.t$t.ksf" "$host"
    both build -t "$t" --type cuckoo -o "host_cuckoo.t$t.ksf" "$host"
    both build -t "$t" --sampling all --fpr 0 --expected 6000000 -o "other.t$t.ksf" "$other"
    both build -t "$t" --sampling all --fpr 0 --expected 6000000 -o "lambda.t$t.ksf" "$lambda"
    both build -t "$t" -o "lambda_own.t$t.ksf" "$lambda"
    both build -t "$t" --sampling all --shard 0/2 -o "part0.t$t.ksf" "$host"
    both build -t "$t" --sampling all --shard 1/2 -o "part1.t$t.ksf" "$host"
    both build -t "$t" --no-counts -o "host_nocounts.t$t.ksf" "$host"
    both build -t "$t" --label host="$host" --label other="$other" --label lambda="$lambda" \
        -o "labeled.t$t.ksf"
    log "classify at -t $t"
    for f in host host_all host_bloom host_cuckoo; do
        both classify -t "$t" -f "$f.t$t.ksf" --novel "c_$f.t$t.novel.fq" --known "c_$f.t$t.known.fq.gz" \
            --report "c_$f.t$t.report.tsv" --stats "c_$f.t$t.stats.json" "$MIX"
    done
    both classify -t "$t" -f "host.t$t.ksf" --novel "c_zst.t$t.fq.zst" "$MIX"
    both classify -t "$t" -f "labeled.t$t.ksf" --novel "c_lab.t$t.novel.fq" --report "c_lab.t$t.report.tsv" \
        --stats "c_lab.t$t.stats.json" "$MIX"
    log "dedup at -t $t"
    both dedup -t "$t" --novel "d.t$t.fq" --report "d.t$t.report.tsv" "$NORM"
    both dedup -t "$t" --min-count 20 --novel "d20.t$t.fq.gz" "$NORM"
    both dedup -t "$t" --min-count 20 --sampling minimizer:9 --novel "d20m.t$t.fq" "$NORM"
    both dedup -t "$t" --min-count 20 --prefilter --novel "d20p.t$t.fq" "$NORM"
    both dedup -t "$t" --max-memory 40M --novel "dmem.t$t.fq" --stats "dmem.t$t.stats.json" "$NORM"
    both dedup -t "$t" --exact --novel "dx.t$t.fq" --report "dx.t$t.report.tsv" "$MIX"
    both dedup -t "$t" --exact --max-memory 24M --novel "dxmem.t$t.fq" "$MIX"
    log "set operations at -t $t"
    both merge -t "$t" -o "merged.t$t.ksf" "host_all.t$t.ksf" "other.t$t.ksf" "lambda.t$t.ksf"
    both merge -t "$t" -o "gathered.t$t.ksf" "part0.t$t.ksf" "part1.t$t.ksf"
    # filters sized for their own k-mers (other layouts): the merged filters answer alike (reports)
    both merge -t "$t" -o "own_sizes.t$t.ksf" "host.t$t.ksf" "lambda_own.t$t.ksf"
    both classify -t "$t" -f "own_sizes.t$t.ksf" --report "own_sizes.t$t.report.tsv" "$MIX"
    both intersect -t "$t" -o "inter.t$t.ksf" "host_all.t$t.ksf" "other.t$t.ksf"
    both subtract -t "$t" -o "sub.t$t.ksf" "host_all.t$t.ksf" "other.t$t.ksf"
    for f in merged host labeled host_nocounts; do
        (cd "$out/old" && "$old" info --json "$f.t$t.ksf" > "info_$f.t$t.json")
        (cd "$out/new" && "$new" info --json "$f.t$t.ksf" > "info_$f.t$t.json")
    done
done

n=0
for a in "$out"/old/*; do
    name=$(basename "$a")
    [[ $name == stderr.log ]] && continue
    # (filters of other layouts merge into the layout the executable chooses: compared by their answers)
    [[ $name == own_sizes.t?.ksf ]] && continue
    b=$out/new/$name
    n=$((n + 1))
    if [[ ! -e $b ]]; then
        echo "missing in new: $name"; differ=1; continue
    fi
    if [[ $name == *.json ]]; then
        if ! cmp -s <(strip_times "$a") <(strip_times "$b"); then echo "differs: $name"; differ=1; fi
    elif ! cmp -s "$a" "$b"; then
        echo "differs: $name"; differ=1
    fi
done
if [[ $differ -eq 0 ]]; then
    echo "compare_executables: all $n outputs identical (reads: $MIX_READS mixed, $NORM_READS host)"
fi
exit $differ
