#!/usr/bin/env bash
# Host depletion at scale: a synthetic host genome (1 Gbp by default, KSIEVE_HOST_BASES=3100000000 for human
# size), 2 M reads of 150 bp (half from the host with 0.3% substitutions, half from an unrelated genome).
# Measures, at KSIEVE_BENCH_THREADS threads (default 2), alternating runs (KSIEVE_BENCH_REPEATS, default 3):
#   build: ksieve defaults, --sampling all, --sampling minimizer:15; kmc -ci1 (peer)
#   classify: defaults and all-k-mer filter, plain outputs, against `pigz -dc` (the floor); accuracy
#   compressed output: classify of the mostly novel reads against the lambda filter with --novel .fq.gz,
#   plain, and bbduk out=.fq.gz (peer)
#   paired: the same as pairs (the reads file as mate 1 and mate 2) with --novel/--novel2 .fq.gz, and bbduk
#   KSIEVE_BENCH_STEPS (default "build classify gz paired") selects steps; a report row needs its step's run;
#   KSIEVE_BENCH_KMC=0 leaves out kmc
# Prints a Markdown report (machine, date, commit, commands, medians) and writes it to $WORK/host.md (other
# host sizes: $WORK/host-BASES.md).
# Usage: bench/scripts/bench_host_depletion.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

HOST_BASES=${KSIEVE_HOST_BASES:-1000000000}
READS=${KSIEVE_BENCH_READS:-2000000}
T=${KSIEVE_BENCH_THREADS:-2}
REPEATS=${KSIEVE_BENCH_REPEATS:-3}
H=$WORK/host-$HOST_BASES
REPORT=$WORK/host.md
[[ $HOST_BASES == 1000000000 ]] || REPORT=$WORK/host-$HOST_BASES.md

measure() { measure_in "$H" "$@"; }
median() { median_in "$H" "$1" "$2"; }
row() { printf '| %s | %s | %s | %s |\n' "$(label "$1")" "$(median "$1" 1)" "$(median "$1" 2)" "$(($(median "$1" 3) / 1024))"; }

label()
{
    case $1 in
        build_default) echo "ksieve build, defaults (minimizer:11)" ;;
        build_m15) echo "ksieve build --sampling minimizer:15" ;;
        build_all) echo "ksieve build --sampling all (every k-mer)" ;;
        build_all_bloom) echo "ksieve build --type bloom --sampling all --fpr 1e-4" ;;
        build_kmc) echo "kmc -k31 -ci1 (k-mer counting, for comparison)" ;;
        classify_default) echo "ksieve classify, default filter, plain outputs (replacing the last run's)" ;;
        classify_default_new) echo "ksieve classify, default filter, plain outputs (new files)" ;;
        classify_all) echo "ksieve classify, all-k-mer filter, plain outputs" ;;
        classify_all_bloom) echo "ksieve classify, all-k-mer Bloom filter, plain outputs" ;;
        pigz) echo "pigz -dc of the reads (decompression floor)" ;;
        out_gz) echo "ksieve classify, lambda filter, --novel .fq.gz" ;;
        out_plain) echo "ksieve classify, lambda filter, --novel .fq" ;;
        out_bbduk) echo "bbduk ref=lambda out=.fq.gz" ;;
        pair_gz) echo "ksieve classify --paired, four .fq.gz outputs" ;;
        pair_plain) echo "ksieve classify --paired, four .fq outputs" ;;
        pair_bbduk) echo "bbduk paired, four .fq.gz outputs" ;;
        *) echo "$1" ;;
    esac
}

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
    measure build_default "$KSIEVE" build -q -t "$T" -o "$H/default.ksf" "$H/host.fa"
    measure build_m15 "$KSIEVE" build -q -t "$T" --sampling minimizer:15 -o "$H/m15.ksf" "$H/host.fa"
    measure build_all "$KSIEVE" build -q -t "$T" --sampling all -o "$H/all.ksf" "$H/host.fa"
    measure build_all_bloom "$KSIEVE" build -q -t "$T" --type bloom --sampling all --fpr 1e-4 -o "$H/all_bloom.ksf" \
        "$H/host.fa"
    # (KSIEVE_BENCH_KMC=0 leaves kmc out: its database of a human-sized host, about 7 bytes a k-mer, may not
    # fit the disk)
    if [[ ${KSIEVE_BENCH_KMC:-1} != 0 ]]; then
        mkdir -p "$H/kmc-tmp"
        measure build_kmc kmc -k31 -ci1 -t"$T" -fm "$H/host.fa" "$H/kmc" "$H/kmc-tmp"
        rm -f "$H/kmc.kmc_pre" "$H/kmc.kmc_suf"
    fi
}

# A filter as build leaves it: not in the page cache (build writes past it), so that the first classify
# maps it in 2 MiB pages; a copy cached in small pages by another reader (cp, cmp) would cost a page walk per
# lookup. One unmeasured run maps it in.
fresh_filter()
{
    dd if="$1" iflag=nocache count=0 status=none
    "$KSIEVE" classify -q -t "$T" -f "$1" --novel /dev/null "$H/reads.fq.gz"
}

bench_classify()
{
    rm -f "$H"/classify_*.times "$H"/pigz.times
    local i
    fresh_filter "$H/default.ksf"
    fresh_filter "$H/all.ksf"
    if [[ -s $H/all_bloom.ksf ]]; then fresh_filter "$H/all_bloom.ksf"; fi
    for ((i = 0; i < REPEATS; ++i)); do
        measure classify_default "$KSIEVE" classify -q -t "$T" -f "$H/default.ksf" --novel "$H/novel.fq" \
            --known "$H/known.fq" "$H/reads.fq.gz"
        measure pigz pigz -dc -p "$T" "$H/reads.fq.gz"
        # (outputs that replace files wait, at the rename, for ext4 to write the data it still holds)
        rm -f "$H/novel_new.fq" "$H/known_new.fq"
        measure classify_default_new "$KSIEVE" classify -q -t "$T" -f "$H/default.ksf" --novel "$H/novel_new.fq" \
            --known "$H/known_new.fq" "$H/reads.fq.gz"
        measure classify_all "$KSIEVE" classify -q -t "$T" -f "$H/all.ksf" --novel "$H/novel_all.fq" \
            --known "$H/known_all.fq" "$H/reads.fq.gz"
        if [[ -s $H/all_bloom.ksf ]]; then
            measure classify_all_bloom "$KSIEVE" classify -q -t "$T" -f "$H/all_bloom.ksf" \
                --novel "$H/novel_all_bloom.fq" --known "$H/known_all_bloom.fq" "$H/reads.fq.gz"
        fi
    done
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
        measure out_plain "$KSIEVE" classify -q -t "$T" -f "$H/lambda.ksf" --novel "$H/clean.fq" "$H/reads.fq.gz"
    done
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
}

# percent of host reads called known and of novel reads called known, from a known-reads file
accuracy()
{
    local known=$1 n=$((READS / 2))
    awk -v n="$n" 'NR % 4 == 1 {if ($1 ~ /^@host/) h++; else v++} END {printf "%.4f%% | %.4f%%", 100 * h / n, 100 * v / n}' "$known"
}

info_of() { "$KSIEVE" info --json "$1" | awk -F': ' -v k="\"$2\"" '$1 ~ k {gsub(/,/, "", $2); print $2}'; }

report()
{
    local cpu
    cpu=$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')
    {
        echo "Host depletion benchmark: $(date -u +%Y-%m-%d), commit $(git -C "$REPO" rev-parse --short HEAD), $cpu, $(nproc) cores, $T threads, host $HOST_BASES bp, $READS reads, medians of $REPEATS alternated runs"
        echo
        echo "Builds run once each; the other rows alternate."
        echo
        echo "| step | wall s | CPU s | peak RSS MB |"
        echo "|---|---|---|---|"
        for n in build_default build_m15 build_all build_all_bloom build_kmc classify_default classify_default_new classify_all \
            classify_all_bloom pigz out_gz out_plain out_bbduk \
            pair_gz pair_plain pair_bbduk; do
            [[ -s $H/$n.times ]] && row "$n"
        done
        echo
        echo "| filter | file bytes | distinct k-mers | bits per k-mer | host reads known | novel reads known |"
        echo "|---|---|---|---|---|---|"
        [[ -s $H/all.ksf ]] || return 0
        echo "| default | $(info_of "$H/default.ksf" file_bytes) | $(info_of "$H/default.ksf" distinct_kmers) | $(info_of "$H/default.ksf" bits_per_kmer) | $(accuracy "$H/known.fq") |"
        echo "| minimizer:15 | $(info_of "$H/m15.ksf" file_bytes) | $(info_of "$H/m15.ksf" distinct_kmers) | $(info_of "$H/m15.ksf" bits_per_kmer) | | |"
        echo "| all k-mers | $(info_of "$H/all.ksf" file_bytes) | $(info_of "$H/all.ksf" distinct_kmers) | $(info_of "$H/all.ksf" bits_per_kmer) | $(accuracy "$H/known_all.fq") |"
        if [[ -s $H/known_all_bloom.fq ]]; then
            echo "| all k-mers, Bloom | $(info_of "$H/all_bloom.ksf" file_bytes) | | $(info_of "$H/all_bloom.ksf" bits_per_kmer) | $(accuracy "$H/known_all_bloom.fq") |"
        fi
        [[ -s $H/clean.fq.gz ]] || return 0
        echo
        echo "Output sizes: ksieve .fq.gz $(stat -c %s "$H/clean.fq.gz") bytes, bbduk .fq.gz $(stat -c %s "$H/bbduk_clean.fq.gz") bytes."
    } | tee "$REPORT"
}

need_tools pigz kmc bbduk.sh lscpu /usr/bin/time
find_ksieve
log "load: $(uptime)"
make_data
STEPS=${KSIEVE_BENCH_STEPS:-build classify gz paired}
[[ " $STEPS " == *" build "* ]] && bench_build
[[ " $STEPS " == *" classify "* ]] && bench_classify
[[ " $STEPS " == *" gz "* ]] && bench_gz_output
[[ " $STEPS " == *" paired "* ]] && bench_paired
report
