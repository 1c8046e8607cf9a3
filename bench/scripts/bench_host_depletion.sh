#!/usr/bin/env bash
# Host depletion at scale: a synthetic host genome (KSIEVE_HOST_BASES, default 1 Gbp), KSIEVE_BENCH_READS reads
# of 150 bp (default 2 M; half from the host with 0.3% substitutions, half from an unrelated genome).
# Measures at KSIEVE_BENCH_THREADS threads, in alternated rounds (bench_common.sh: KSIEVE_BENCH_REPEATS runs
# of each ksieve command and fast peer, KSIEVE_BENCH_REPEATS_SLOW of kmc):
#   build: ksieve defaults (minimizer:8), --sampling minimizer:15, --sampling all, a Bloom filter of
#          every k-mer; kmc -ci1 (peer)
#   classify: each of those filters, plain outputs, against `pigz -dc` and `igzip -d -c` decompression;
#          host and foreign reads called known (accuracy)
#   gz: classify of the mostly novel reads against a lambda filter with --novel .fq.gz and .fq, and
#          bbduk out=.fq.gz (peer) at its default gzip level (zl=2) and its fastest (zl=1, ksieve's default)
#   paired: the same as pairs (the reads file as mate 1 and mate 2) with four .fq.gz / .fq outputs, and bbduk
# KSIEVE_BENCH_STEPS (default "build classify gz paired") selects parts; KSIEVE_BENCH_KMC=0 leaves out kmc.
# Writes $WORK/host.md (section), host.rows.tsv (every measured command) and host.accuracy.tsv (per filter:
# size, bits per k-mer, reads called known); the data and filters stay in $WORK/host-BASES.
# Usage: bench/scripts/bench_host_depletion.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

READS=$NREADS
H=$WORK/host-$HOST_BASES
OUT=$WORK/host

measure() { measure_in "$H" "$@"; }

make_data()
{
    mkdir -p "$H"
    if [[ ! -s $H/reads.fq.gz ]]; then
        log "generating a $HOST_BASES bp host and $READS reads in $H"
        local synth
        synth=$(dirname "$KSIEVE")/../bench/synth_host
        [[ -x $synth ]] || synth=$REPO/build/bench/synth_host
        [[ -x $synth ]] || die "build the synth_host target first (cmake --build build --target synth_host)"
        "$synth" "$HOST_BASES" "$READS" 0.003 "$H"
        pigz -f -p "$T" "$H/reads.fq"
    fi
    [[ -s $H/lambda.fa ]] || gzip -dc "$REPO/examples/data/lambda.fa.gz" > "$H/lambda.fa"
}

bench_build()
{
    rm -f "$H"/build_*.times
    local i
    for ((i = 0; i < ROUNDS; ++i)); do
        if fast "$i"; then
            measure build_default "$KSIEVE" build -q -t "$T" -o "$H/default.ksf" "$H/host.fa"
            measure build_m15 "$KSIEVE" build -q -t "$T" --sampling minimizer:15 -o "$H/m15.ksf" "$H/host.fa"
            measure build_all "$KSIEVE" build -q -t "$T" --sampling all -o "$H/all.ksf" "$H/host.fa"
            measure build_all_bloom "$KSIEVE" build -q -t "$T" --type bloom --sampling all --fpr 1e-4 \
                -o "$H/all_bloom.ksf" "$H/host.fa"
        fi
        # (KSIEVE_BENCH_KMC=0 leaves kmc out: its database of a human-sized host, about 7 bytes a k-mer, may
        # not fit the disk)
        if slow "$i" && [[ ${KSIEVE_BENCH_KMC:-1} != 0 ]]; then
            mkdir -p "$H/kmc-tmp"
            measure build_kmc kmc -k31 -ci1 -t"$T" -fm "$H/host.fa" "$H/kmc" "$H/kmc-tmp"
            rm -f "$H/kmc.kmc_pre" "$H/kmc.kmc_suf"
        fi
    done
}

# A filter as build leaves it: not in the page cache (build writes past it), so that the first classify
# maps it in 2 MiB pages; a copy cached in small pages by another reader (cp, cmp) would cost a page walk per
# lookup. One unmeasured run maps it in.
fresh_filter()
{
    dd if="$1" iflag=nocache count=0 status=none
    "$KSIEVE" classify -q -t "$T" -f "$1" --novel /dev/null "$H/reads.fq.gz"
}

# classify_run NAME FILTER: classify of the reads with FILTER, known and novel reads to new plain files
classify_run()
{
    rm -f "$H/$1.novel.fq" "$H/$1.known.fq"
    measure "$1" "$KSIEVE" classify -q -t "$T" -f "$2" --novel "$H/$1.novel.fq" --known "$H/$1.known.fq" \
        "$H/reads.fq.gz"
}

bench_classify()
{
    rm -f "$H"/classify_*.times "$H"/pigz.times "$H"/igzip.times
    local f i
    for f in default m15 all all_bloom; do fresh_filter "$H/$f.ksf"; done
    for ((i = 0; i < REPEATS; ++i)); do
        classify_run classify_default "$H/default.ksf"
        measure pigz pigz -dc -p "$T" "$H/reads.fq.gz"
        classify_run classify_m15 "$H/m15.ksf"
        classify_run classify_all "$H/all.ksf"
        measure igzip igzip -d -c "$H/reads.fq.gz"
        classify_run classify_all_bloom "$H/all_bloom.ksf"
    done
    rm -f "$H"/classify_*.novel.fq
}

bench_gz_output()
{
    rm -f "$H"/out_*.times
    "$KSIEVE" build -q -o "$H/lambda.ksf" "$H/lambda.fa"
    local i
    for ((i = 0; i < REPEATS; ++i)); do
        measure out_gz "$KSIEVE" classify -q -t "$T" -f "$H/lambda.ksf" --novel "$H/clean.fq.gz" "$H/reads.fq.gz"
        measure out_bbduk bbduk.sh -Xmx2g in="$H/reads.fq.gz" ref="$H/lambda.fa" out="$H/bbduk_clean.fq.gz" k=31 \
            threads="$T" overwrite=t
        measure out_bbduk_zl1 bbduk.sh -Xmx2g in="$H/reads.fq.gz" ref="$H/lambda.fa" out="$H/bbduk_clean1.fq.gz" \
            k=31 threads="$T" zl=1 overwrite=t
        measure out_plain "$KSIEVE" classify -q -t "$T" -f "$H/lambda.ksf" --novel "$H/clean.fq" "$H/reads.fq.gz"
    done
    rm -f "$H/clean.fq"
}

bench_paired()
{
    rm -f "$H"/pair_*.times
    local i r=$H/reads.fq.gz r2=$H/reads_2.fq.gz
    [[ -s $r2 ]] || cp "$r" "$r2" # mate 2: the same reads in a file of its own (bbduk refuses one file twice)
    for ((i = 0; i < REPEATS; ++i)); do
        measure pair_gz "$KSIEVE" classify -q -t "$T" -f "$H/lambda.ksf" --paired "$r" "$r2" --novel "$H/c1.fq.gz" \
            --novel2 "$H/c2.fq.gz" --known "$H/k1.fq.gz" --known2 "$H/k2.fq.gz"
        measure pair_bbduk bbduk.sh -Xmx2g in="$r" in2="$r2" ref="$H/lambda.fa" out="$H/b1.fq.gz" out2="$H/b2.fq.gz" \
            outm="$H/bk1.fq.gz" outm2="$H/bk2.fq.gz" k=31 threads="$T" overwrite=t
        measure pair_plain "$KSIEVE" classify -q -t "$T" -f "$H/lambda.ksf" --paired "$r" "$r2" --novel "$H/c1.fq" \
            --novel2 "$H/c2.fq" --known "$H/k1.fq" --known2 "$H/k2.fq"
    done
    rm -f "$H"/c[12].fq "$H"/k[12].fq "$H"/c[12].fq.gz "$H"/k[12].fq.gz "$H"/b[12].fq.gz "$H"/bk[12].fq.gz
}

# percent of host reads and of foreign reads called known, from a known-reads file (tab-separated)
accuracy()
{
    local n=$((READS / 2))
    awk -v n="$n" 'NR % 4 == 1 {if ($1 ~ /^@host/) h++; else v++}
        END {printf "%.4f\t%.4f", 100 * h / n, 100 * v / n}' "$1"
}

# info_of FILTER KEY: a number of `ksieve info --json FILTER` (kept next to the filter: info reads it whole)
info_of()
{
    [[ -s $1.info && $1.info -nt $1 ]] || "$KSIEVE" info --json "$1" > "$1.info"
    awk -F': ' -v k="\"$2\"" '$1 ~ k {gsub(/,/, "", $2); print $2}' "$1.info"
}

# the rows: NAME PANEL TOOL LABEL
ROW_SPECS=(
    "build_default|build|ksieve|ksieve build, defaults (minimizer:8)"
    "build_m15|-|ksieve|ksieve build --sampling minimizer:15"
    "build_all|build|ksieve|ksieve build --sampling all (every k-mer)"
    "build_all_bloom|-|ksieve|ksieve build --type bloom --sampling all --fpr 1e-4"
    "build_kmc|build|kmc|kmc -k31 -ci1 (k-mer counting; its defaults otherwise: -m12, bins on disk)"
    "classify_default|host|ksieve|ksieve classify, default filter (minimizer:8)"
    "classify_m15|-|ksieve|ksieve classify, minimizer:15 filter"
    "classify_all|-|ksieve|ksieve classify, all-k-mer filter"
    "classify_all_bloom|-|ksieve|ksieve classify, all-k-mer Bloom filter"
    "pigz|host|pigz|pigz -dc decompression of the reads"
    "igzip|host|igzip|igzip -d -c decompression of the reads (one thread)"
    "out_gz|host|ksieve|ksieve classify, lambda filter, --novel .fq.gz"
    "out_plain|-|ksieve|ksieve classify, lambda filter, --novel .fq"
    "out_bbduk|host|bbduk|bbduk ref=lambda, out=.fq.gz (defaults: zl=2)"
    "out_bbduk_zl1|-|bbduk|bbduk ref=lambda, out=.fq.gz zl=1 (its fastest gzip level)"
    "pair_gz|-|ksieve|ksieve classify --paired, lambda filter, four .fq.gz outputs"
    "pair_plain|-|ksieve|ksieve classify --paired, lambda filter, four .fq outputs"
    "pair_bbduk|-|bbduk|bbduk paired, ref=lambda, four .fq.gz outputs (defaults: zl=2)"
)

write_rows()
{
    local spec name panel tool label
    echo "$ROWS_HEADER"
    for spec in "${ROW_SPECS[@]}"; do
        IFS='|' read -r name panel tool label <<< "$spec"
        [[ -s $H/$name.times ]] && row_tsv "$H" "$name" "$panel" "$tool" "$label"
    done
    return 0
}

# sampling | classify row | filter file | known reads
ACC_SPECS=(
    "minimizer:8 (default)|classify_default|default"
    "minimizer:15|classify_m15|m15"
    "all k-mers|classify_all|all"
    "all k-mers, Bloom|classify_all_bloom|all_bloom"
)

write_accuracy()
{
    local spec sampling id f
    printf 'sampling\tid\tfilter_bytes\tbits_per_kmer\thost_known_pct\tforeign_known_pct\n'
    for spec in "${ACC_SPECS[@]}"; do
        IFS='|' read -r sampling id f <<< "$spec"
        [[ -s $H/$id.times && -s $H/$id.known.fq ]] || continue
        printf '%s\t%s\t%s\t%.2f\t%s\n' "$sampling" "$id" "$(info_of "$H/$f.ksf" file_bytes)" \
            "$(info_of "$H/$f.ksf" bits_per_kmer)" "$(accuracy "$H/$id.known.fq")"
    done
}

report()
{
    local rows=$OUT.rows.tsv acc=$OUT.accuracy.tsv
    write_rows > "$rows.tmp" && mv "$rows.tmp" "$rows"
    write_accuracy > "$acc.tmp" && mv "$acc.tmp" "$acc"
    {
        echo "A synthetic host of $HOST_BASES bp (uniform random sequence) and $READS reads of 150 bp, half from"
        echo "the host with 0.3% substitutions, half from an unrelated random genome (gzip'd FASTQ); $T threads."
        echo "classify writes its known and novel reads as plain FASTQ to new files unless the row says .fq.gz; the"
        echo "lambda rows classify the same reads against the lambda phage genome (almost every read novel), which"
        echo "measures reading, deciding and writing compressed output next to bbduk. bbduk indexes its"
        echo "reference in every run (included in its time)."
        echo
        rows_md "$rows"
        echo
        echo "Filters and the reads they call known (host reads: sensitivity; foreign reads: false positives):"
        echo
        echo "| filter | file bytes | bits per k-mer | host reads known | foreign reads known |"
        echo "|---|---:|---:|---:|---:|"
        awk -F'\t' 'NR > 1 { printf "| %s | %s | %s | %s%% | %s%% |\n", $1, $3, $4, $5, $6 }' "$acc"
        if [[ -s $H/clean.fq.gz && -s $H/bbduk_clean.fq.gz ]]; then
            echo
            echo "Novel reads written as .fq.gz: ksieve $(stat -c %s "$H/clean.fq.gz") bytes, bbduk" \
                "$(stat -c %s "$H/bbduk_clean.fq.gz") bytes."
        fi
        echo
        commands_md "$rows"
    } > "$OUT.md.tmp"
    mv "$OUT.md.tmp" "$OUT.md"
    cat "$OUT.md"
}

need_tools pigz igzip kmc bbduk.sh /usr/bin/time
find_ksieve
log "load: $(uptime)"
make_data
STEPS=${KSIEVE_BENCH_STEPS:-build classify gz paired}
[[ " $STEPS " == *" build "* ]] && bench_build
[[ " $STEPS " == *" classify "* ]] && bench_classify
[[ " $STEPS " == *" gz "* ]] && bench_gz_output
[[ " $STEPS " == *" paired "* ]] && bench_paired
report
