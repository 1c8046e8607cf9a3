#!/usr/bin/env bash
# Deduplication / digital normalization at metagenome scale: ksieve dedup against khmer normalize-by-median
# and bbnorm, on
#   kleb-2M    the 2 M host-only Klebsiella reads of bench_common.sh (~53x coverage)
#   meta-2M    the first 2 M reads of a synthetic metagenome (synth_metagenome: 20 genomes of 2-6 Mbp,
#              skewed abundances, 0.5% substitutions)
#   meta-10M   its first 10 M reads (about 0.14x to 130x per genome)
#   meta-50M   50 M reads, once (KSIEVE_BENCH_50M=1; not alternated)
# with the same k (31) and cutoff C (20):
#   ksieve dedup --min-count 20 --min-hit-fraction 0.5 -t T   (known iff >= half the k-mers have count >= C)
#   the same with --sampling minimizer:9 (the rule over each read's minimizers), and on the 10 M reads
#   with --prefilter (k-mers seen once in a Bloom filter)
#   normalize-by-median.py -k 31 -C 20 -M BYTES (BYTES: ksieve's peak RSS on that input, and 4e9)
#   bbnorm.sh target=20 passes=1 threads=T -Xmx4g
# Alternated runs (KSIEVE_BENCH_REPEATS, default 3, on the 2 M-read inputs; KSIEVE_BENCH_REPEATS_LARGE,
# default 1, on 10 M): wall, CPU, peak RSS, kept reads, medians; kept reads per genome of the metagenome.
# Prints a Markdown report, also written to $WORK/normalize.md.
# Usage: bench/scripts/bench_normalize.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

T=${KSIEVE_BENCH_THREADS:-2}
REPEATS=${KSIEVE_BENCH_REPEATS:-3}
REPEATS_LARGE=${KSIEVE_BENCH_REPEATS_LARGE:-1}
N=$WORK/normalize
REPORT=$WORK/normalize.md
C=20

measure() { measure_in "$N" "$@"; }
median() { median_in "$N" "$1" "$2"; }
kept_of() { awk 'END { print NR / 4 }' "$N/$1.fq"; }
# per_genome NAME: "g0 n0 g1 n1 ..." of a kept-reads file (read names g<genome>_<n>)
per_genome() { awk 'NR % 4 == 1 { split(substr($1, 2), p, "_"); c[p[1]]++ } END { for (g in c) print g, c[g] }' "$N/$1.fq" | sort -V; }

make_meta()
{
    mkdir -p "$N"
    local synth
    synth=$(dirname "$KSIEVE")/../bench/synth_metagenome
    [[ -x $synth ]] || synth=$REPO/build/bench/synth_metagenome
    [[ -x $synth ]] || die "build the synth_metagenome target first (cmake --build build --target synth_metagenome)"
    [[ -s $N/meta-10M.fq.gz ]] || "$synth" 10000000 "$N/meta-10M.tsv" | pigz -p "$T" > "$N/meta-10M.fq.gz"
    [[ -s $N/meta-2M.fq.gz ]] || (set +o pipefail
        pigz -dc "$N/meta-10M.fq.gz" | head -n 8000000 | pigz -p "$T" > "$N/meta-2M.fq.gz")
    if [[ ${KSIEVE_BENCH_50M:-0} == 1 && ! -s $N/meta-50M.fq.gz ]]; then
        "$synth" 50000000 "$N/meta-50M.tsv" | pigz -p "$T" > "$N/meta-50M.fq.gz"
    fi
    ln -sf "$NORM" "$N/kleb-2M.fq.gz"
}

# round INPUT: one alternated round of every tool on INPUT
round()
{
    local in=$1 f=$N/$1.fq.gz kb
    measure "ksieve_$in" "$KSIEVE" dedup -q -t "$T" -k "$K" --min-count "$C" --min-hit-fraction 0.5 \
        --novel "$N/ksieve_$in.fq" "$f"
    measure "ksievem9_$in" "$KSIEVE" dedup -q -t "$T" -k "$K" --min-count "$C" --min-hit-fraction 0.5 \
        --sampling minimizer:9 --novel "$N/ksievem9_$in.fq" "$f"
    if [[ $in == meta-10M ]]; then
        measure "ksievepf_$in" "$KSIEVE" dedup -q -t "$T" -k "$K" --min-count "$C" --min-hit-fraction 0.5 \
            --prefilter --novel "$N/ksievepf_$in.fq" "$f"
    fi
    kb=$(($(median "ksieve_$in" 3) * 1024))
    measure "khmer_same_$in" "$KHMER_NORMALIZE" -q -k "$K" -C "$C" -M "$kb" --force_single -o "$N/khmer_same_$in.fq" "$f"
    measure "khmer_4g_$in" "$KHMER_NORMALIZE" -q -k "$K" -C "$C" -M 4e9 --force_single -o "$N/khmer_4g_$in.fq" "$f"
    measure "bbnorm_$in" bbnorm.sh -Xmx4g in="$f" out="$N/bbnorm_$in.fq" target="$C" passes=1 k="$K" threads="$T"
}

report_input()
{
    local in=$1 reads=$2 runs=$3 ks kh
    echo "### $in ($reads reads; $runs run(s) each)"
    echo
    echo "| tool | wall s | CPU s | peak RSS MB | reads/s | kept | ksieve's speed-up (all k-mers / minimizer:9) |"
    echo "|---|---|---|---|---|---|---|"
    ks=$(median "ksieve_$in" 1)
    local name label
    for name in ksieve ksievem9 ksievepf khmer_same khmer_4g bbnorm; do
        [[ -s $N/${name}_$in.times ]] || continue
        case $name in
            ksieve) label="ksieve dedup, $T threads" ;;
            ksievem9) label="ksieve dedup --sampling minimizer:9, $T threads" ;;
            ksievepf) label="ksieve dedup --prefilter, $T threads" ;;
            khmer_same) label="khmer, -M ksieve's RSS" ;;
            khmer_4g) label="khmer, -M 4e9" ;;
            bbnorm) label="bbnorm passes=1, $T threads" ;;
        esac
        kh=$(median "${name}_$in" 1)
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$kh" "$(median "${name}_$in" 2)" \
            "$(($(median "${name}_$in" 3) / 1024))" "$(fmt_rate "$reads" "$kh")" "$(kept_of "${name}_$in")" \
            "$(if [[ $name == ksieve* ]]; then echo -; else echo "$(fdiv "$kh" "$ks")x / $(fdiv "$kh" "$(median "ksievem9_$in" 1)")x"; fi)"
    done
    echo
}

report_genomes()
{
    local in=$1
    [[ -s $N/ksieve_$in.fq ]] || return 0
    echo "Kept reads per genome of $in (input reads and coverage from the generator's table):"
    echo
    echo "| genome | length | input reads | coverage | ksieve kept | ksieve minimizer:9 kept | khmer (-M 4e9) kept | bbnorm kept |"
    echo "|---|---|---|---|---|---|---|---|"
    join <(tail -n +2 "$N/meta-10M.tsv" | awk '{print $1, $2}' | sort) \
        <(pigz -dc "$N/$in.fq.gz" | awk 'NR % 4 == 1 { split(substr($1, 2), p, "_"); c[p[1]]++ } END { for (g in c) print g, c[g] }' | sort) |
        join - <(per_genome "ksieve_$in" | sort) | join -a1 -e0 -o auto - <(per_genome "ksievem9_$in" | sort) |
        join -a1 -e0 -o auto - <(per_genome "khmer_4g_$in" | sort) |
        join -a1 -e0 -o auto - <(per_genome "bbnorm_$in" | sort) | sort -V |
        awk '{printf "| %s | %s | %s | %.2fx | %s | %s | %s | %s |\n", $1, $2, $3, $3 * 150 / $2, $4, $5, $6, $7}'
    echo
}

need_tools pigz "$KHMER_NORMALIZE" bbnorm.sh /usr/bin/time
find_ksieve
make_data
make_meta
log "load: $(uptime)"
rm -f "$N"/*.times
for ((i = 0; i < REPEATS; ++i)); do round kleb-2M; round meta-2M; done
for ((i = 0; i < REPEATS_LARGE; ++i)); do round meta-10M; done
[[ ${KSIEVE_BENCH_50M:-0} == 1 ]] && round meta-50M
{
    echo "## Normalization ($(date -u +%Y-%m-%d), commit $(git -C "$REPO" rev-parse --short HEAD))"
    echo
    echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), ksieve and bbnorm"
    echo "at $T threads, khmer single-threaded; medians of alternated runs; k = $K, C = $C; kept reads written as"
    echo "plain FASTQ. Reproduce: \`bench/scripts/bench_normalize.sh\`."
    echo
    report_input kleb-2M "$NORM_READS" "$REPEATS"
    report_input meta-2M 2000000 "$REPEATS"
    report_input meta-10M 10000000 "$REPEATS_LARGE"
    [[ -s $N/meta-50M.times || -s $N/ksieve_meta-50M.times ]] && report_input meta-50M 50000000 1
    report_genomes meta-10M
} | tee "$REPORT"
rm -f "$N"/*.fq
