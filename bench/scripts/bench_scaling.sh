#!/usr/bin/env bash
# classify throughput against threads, input size and filter size, on the host depletion data of
# bench_host_depletion.sh (run it first: this script reuses its host, reads and filters). Alternated rounds
# (KSIEVE_BENCH_REPEATS); thread counts KSIEVE_BENCH_THREAD_LIST (default "1 2"). Writes $WORK/scaling.tsv for
# plot_benchmarks.py (one row per point: figure series x reads and the runs' wall seconds min / median / max),
# $WORK/scaling.rows.tsv (every measured command) and $WORK/scaling.md (section).
# Usage: bench/scripts/bench_scaling.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

READS=$NREADS
THREAD_LIST=${KSIEVE_BENCH_THREAD_LIST:-"1 2"}
H=$WORK/host-$HOST_BASES
S=$WORK/scaling
TSV=$WORK/scaling.tsv
ROWS=$WORK/scaling.rows.tsv
SIZES="$((READS / 8)) $((READS / 4)) $((READS / 2))"
PARTS="$((HOST_BASES / 200)) $((HOST_BASES / 10))"

measure() { measure_in "$S" "$@"; }

classify() # NAME FILTER THREADS INPUT
{
    measure "$1" "$KSIEVE" classify -q -t "$3" -f "$2" --novel "$S/$1.novel.fq" --known "$S/$1.known.fq" "$4"
}

make_inputs()
{
    mkdir -p "$S"
    local n
    for n in $SIZES; do
        # (the decompressor stops early on a closed pipe: not an error here)
        [[ -s $S/reads-$n.fq.gz ]] || (set +o pipefail
            pigz -dc -p "$T" "$H/reads.fq.gz" | head -n $((4 * n)) | pigz -p "$T" > "$S/reads-$n.fq.gz")
    done
    # filters of a two-hundredth and a tenth of the host (defaults), next to those of the host benchmark
    local b
    for b in $PARTS; do
        [[ -s $S/host-$b.ksf ]] || {
            awk -v n="$b" 'NR == 1 {print; next} {if (t >= n) exit; print; t += length($0)}' "$H/host.fa" > "$S/part.fa"
            "$KSIEVE" build -q -t "$T" -o "$S/host-$b.ksf" "$S/part.fa"
            rm -f "$S/part.fa"
        }
    done
}

# point FIGURE SERIES X NAME READS: one plotted point from NAME's runs
point()
{
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$(stats_in "$S" "$4" 1 | tr ' ' '\t')" >> "$TSV.tmp"
}

[[ -s $H/default.ksf && -s $H/all.ksf && -s $H/lambda.ksf ]] ||
    die "run bench_host_depletion.sh on $WORK first (it builds the filters this script reuses)"
need_tools pigz igzip /usr/bin/time
find_ksieve
log "load: $(uptime)"
make_inputs
rm -f "$S"/*.times
for ((i = 0; i < REPEATS; ++i)); do
    for t in $THREAD_LIST; do
        classify "thr_default_$t" "$H/default.ksf" "$t" "$H/reads.fq.gz"
        classify "thr_all_$t" "$H/all.ksf" "$t" "$H/reads.fq.gz"
        measure "thr_pigz_$t" pigz -dc -p "$t" "$H/reads.fq.gz"
    done
    measure thr_igzip igzip -d -c "$H/reads.fq.gz"
    for n in $SIZES; do
        classify "size_$n" "$H/default.ksf" "$T" "$S/reads-$n.fq.gz"
    done
    classify "filter_lambda" "$H/lambda.ksf" "$T" "$H/reads.fq.gz"
    for b in $PARTS; do
        classify "filter_$b" "$S/host-$b.ksf" "$T" "$H/reads.fq.gz"
    done
    rm -f "$S"/*.novel.fq "$S"/*.known.fq
done

printf 'figure\tseries\tx\tid\treads\twall_min\twall_med\twall_max\n' > "$TSV.tmp"
{
    echo "$ROWS_HEADER"
    for t in $THREAD_LIST; do
        point threads "minimizer:8 filter (default)" "$t" "thr_default_$t" "$READS"
        point threads "all-k-mer filter" "$t" "thr_all_$t" "$READS"
        point threads "pigz -dc decompression" "$t" "thr_pigz_$t" "$READS"
        point threads "igzip -d -c decompression (one thread)" "$t" thr_igzip "$READS"
        row_tsv "$S" "thr_default_$t" - ksieve "ksieve classify, default filter, $t thread(s)"
        row_tsv "$S" "thr_all_$t" - ksieve "ksieve classify, all-k-mer filter, $t thread(s)"
        row_tsv "$S" "thr_pigz_$t" - pigz "pigz -dc -p $t decompression"
    done
    row_tsv "$S" thr_igzip - igzip "igzip -d -c decompression (one thread)"
    for n in $SIZES; do
        point input "minimizer:8 filter (default)" "$n" "size_$n" "$n"
        row_tsv "$S" "size_$n" - ksieve "ksieve classify, default filter, $n reads"
    done
    point input "minimizer:8 filter (default)" "$READS" "thr_default_$T" "$READS"
    point filter classify "$(stat -L -c %s "$H/lambda.ksf")" filter_lambda "$READS"
    row_tsv "$S" filter_lambda - ksieve "ksieve classify, lambda filter ($(stat -L -c %s "$H/lambda.ksf") bytes)"
    for b in $PARTS; do
        point filter classify "$(stat -c %s "$S/host-$b.ksf")" "filter_$b" "$READS"
        row_tsv "$S" "filter_$b" - ksieve "ksieve classify, filter of $b bp of the host ($(stat -c %s "$S/host-$b.ksf") bytes)"
    done
    point filter classify "$(stat -L -c %s "$H/default.ksf")" "thr_default_$T" "$READS"
    point filter classify "$(stat -L -c %s "$H/all.ksf")" "thr_all_$T" "$READS"
} > "$ROWS.tmp"
mv "$TSV.tmp" "$TSV"
mv "$ROWS.tmp" "$ROWS"

{
    echo "classify of the host depletion reads and filters (above) at 1 to $(echo "$THREAD_LIST" | awk '{print $NF}')"
    echo "threads, on the first $((READS / 8)) to $READS reads, and with filters of the lambda phage genome, of"
    echo "a two-hundredth and a tenth of the host, and of the whole host (default and every k-mer); known and"
    echo "novel reads written as plain FASTQ."
    echo
    echo "![throughput against threads](plots/threads.png) ![throughput against input size](plots/input.png)"
    echo "![throughput against filter size](plots/filter.png)"
    echo
    echo "| figure | series | x | reads | wall s: min / median / max |"
    echo "|---|---|---:|---:|---:|"
    awk -F'\t' 'NR > 1 { printf "| %s | %s | %s | %s | %.2f / %.2f / %.2f |\n", $1, $2, $3, $5, $6, $7, $8 }' "$TSV"
    echo
    commands_md "$ROWS"
} > "$WORK/scaling.md.tmp"
mv "$WORK/scaling.md.tmp" "$WORK/scaling.md"
cat "$WORK/scaling.md"
