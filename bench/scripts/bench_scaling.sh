#!/usr/bin/env bash
# classify throughput against threads, input size and filter size, and accuracy next to speed, on the host
# depletion data of bench_host_depletion.sh (run it first: this script reuses its host, reads and filters).
# Alternated runs (KSIEVE_BENCH_REPEATS, default 3); writes $WORK/scaling.tsv (one row per median) for
# plot_benchmarks.py:
#   figure series x wall_s cpu_s rss_mb reads host_known_pct foreign_known_pct
# Usage: bench/scripts/bench_scaling.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

HOST_BASES=${KSIEVE_HOST_BASES:-1000000000}
READS=${KSIEVE_BENCH_READS:-2000000}
THREAD_LIST=${KSIEVE_BENCH_THREAD_LIST:-"1 2"}
T=${KSIEVE_BENCH_THREADS:-2}
REPEATS=${KSIEVE_BENCH_REPEATS:-3}
H=$WORK/host-$HOST_BASES
S=$WORK/scaling
TSV=$WORK/scaling.tsv

measure() { measure_in "$S" "$@"; }
median() { median_in "$S" "$1" "$2"; }

# host reads and foreign reads called known, percent of each half of the reads (names @host... / other)
accuracy_of()
{
    awk -v n="$1" 'NR % 4 == 1 {if ($1 ~ /^@host/) h++; else v++}
        END {printf "%.4f\t%.4f", 200 * h / n, 200 * v / n}' "$2"
}

# row FIGURE SERIES X NAME READS [KNOWN_FILE]: the medians of NAME as one TSV row
row()
{
    local acc="-	-"
    [[ -n ${6:-} ]] && acc=$(accuracy_of "$5" "$6")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(median "$4" 1)" "$(median "$4" 2)" \
        "$(($(median "$4" 3) / 1024))" "$5" "$acc" >> "$TSV"
}

classify() # NAME FILTER THREADS INPUT
{
    measure "$1" "$KSIEVE" classify -q -t "$3" -f "$2" --novel "$S/$1.novel.fq" --known "$S/$1.known.fq" "$4"
}

make_inputs()
{
    mkdir -p "$S"
    local n
    for n in 250000 500000 1000000; do
        # (the decompressor stops early on a closed pipe: not an error here)
        [[ -s $S/reads-$n.fq.gz ]] || (set +o pipefail
            pigz -dc -p "$T" "$H/reads.fq.gz" | head -n $((4 * n)) | pigz -p "$T" > "$S/reads-$n.fq.gz")
    done
    ln -sf "$H/reads.fq.gz" "$S/reads-$READS.fq.gz"
    # filters of 5 Mbp and 100 Mbp of the host (defaults), next to the 1 Gbp ones of the host benchmark
    local b
    for b in 5000000 100000000; do
        [[ -s $S/host-$b.ksf ]] || {
            awk -v n="$b" 'NR == 1 {print; next} {if (t >= n) exit; print; t += length($0)}' "$H/host.fa" > "$S/part.fa"
            "$KSIEVE" build -q -t "$T" -o "$S/host-$b.ksf" "$S/part.fa"
            rm -f "$S/part.fa"
        }
    done
}

[[ -s $H/default.ksf && -s $H/all.ksf && -s $H/m15.ksf && -s $H/lambda.ksf ]] ||
    die "run bench_host_depletion.sh on $WORK first (it builds the filters this script reuses)"
need_tools pigz /usr/bin/time
find_ksieve
log "load: $(uptime)"
make_inputs
rm -f "$S"/*.times
printf 'figure\tseries\tx\twall_s\tcpu_s\trss_mb\treads\thost_known_pct\tforeign_known_pct\n' > "$TSV"
for ((i = 0; i < REPEATS; ++i)); do
    for t in $THREAD_LIST; do
        classify "thr_default_$t" "$H/default.ksf" "$t" "$H/reads.fq.gz"
        classify "thr_all_$t" "$H/all.ksf" "$t" "$H/reads.fq.gz"
        measure "thr_pigz_$t" pigz -dc -p "$t" "$H/reads.fq.gz"
    done
    for n in 250000 500000 1000000; do
        classify "size_$n" "$H/default.ksf" "$T" "$S/reads-$n.fq.gz"
    done
    classify "filter_lambda" "$H/lambda.ksf" "$T" "$H/reads.fq.gz"
    for b in 5000000 100000000; do
        classify "filter_$b" "$S/host-$b.ksf" "$T" "$H/reads.fq.gz"
    done
    classify "acc_m15" "$H/m15.ksf" "$T" "$H/reads.fq.gz"
done
for t in $THREAD_LIST; do
    row threads "minimizer:11 filter (default)" "$t" "thr_default_$t" "$READS"
    row threads "all-k-mer filter" "$t" "thr_all_$t" "$READS"
    row threads "pigz -dc (decompression floor)" "$t" "thr_pigz_$t" "$READS"
done
for n in 250000 500000 1000000; do row input "minimizer:11 filter (default)" "$n" "size_$n" "$n"; done
row input "minimizer:11 filter (default)" "$READS" "thr_default_$T" "$READS"
row filter "classify" "$(stat -L -c %s "$H/lambda.ksf")" filter_lambda "$READS"
for b in 5000000 100000000; do row filter "classify" "$(stat -c %s "$S/host-$b.ksf")" "filter_$b" "$READS"; done
row filter "classify" "$(stat -L -c %s "$H/default.ksf")" "thr_default_$T" "$READS"
row filter "classify" "$(stat -L -c %s "$H/all.ksf")" "thr_all_$T" "$READS"
row accuracy "all k-mers" "$(stat -L -c %s "$H/all.ksf")" "thr_all_$T" "$READS" "$S/thr_all_$T.known.fq"
row accuracy "minimizer:11 (default)" "$(stat -L -c %s "$H/default.ksf")" "thr_default_$T" "$READS" \
    "$S/thr_default_$T.known.fq"
row accuracy "minimizer:15" "$(stat -L -c %s "$H/m15.ksf")" acc_m15 "$READS" "$S/acc_m15.known.fq"
rm -f "$S"/*.novel.fq
column -t -s $'\t' "$TSV" >&2
