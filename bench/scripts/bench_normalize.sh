#!/usr/bin/env bash
# Deduplication / digital normalization: ksieve dedup against khmer normalize-by-median and bbnorm, on
#   kleb-N      the host-only Klebsiella reads of bench_common.sh (KSIEVE_BENCH_READS, ~53x for 2 M)
#   meta-N      the first KSIEVE_BENCH_META_READS reads (default 2 M) of a synthetic metagenome
#               (synth_metagenome: 20 genomes of 2-6 Mbp, skewed abundances, 0.5% substitutions)
#   meta-L      its first KSIEVE_BENCH_META_LARGE_READS reads (default 10 M; about 0.14x to 130x per
#               genome): ksieve only, unless KSIEVE_BENCH_META_LARGE_PEERS=1 (the large scale) adds the peers
# with the same k (31) and cutoff C (20):
#   ksieve dedup --min-count 20 --min-hit-fraction 0.5 -t T   (known iff >= half the k-mers have count >= C)
#   the same with --sampling minimizer:9 (the rule over each read's minimizers), and on meta-L with
#   --prefilter (k-mers seen once in a Bloom filter)
#   normalize-by-median.py -k 31 -C 20 -M BYTES (BYTES: ksieve's peak RSS on that input, and
#   KSIEVE_BENCH_KHMER_M, default 4e9)
#   bbnorm.sh target=20 threads=T -Xmx4g at its default passes=2, and passes=1 (its fastest mode: one pass)
# Alternated rounds: ksieve KSIEVE_BENCH_REPEATS runs, khmer and bbnorm KSIEVE_BENCH_REPEATS_SLOW; on meta-L
# every tool KSIEVE_BENCH_REPEATS_SLOW runs. Kept reads per genome of the metagenome sets.
# Writes $WORK/normalize.md (section), normalize.rows.tsv (every measured command) and normalize.genomes.tsv
# (input, genome, length, input reads, coverage, tool, kept reads).
# Usage: bench/scripts/bench_normalize.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

N=$WORK/normalize
C=20
KHMER_M=${KSIEVE_BENCH_KHMER_M:-4e9}
KLEB=kleb-$(count_name "$NREADS")
META=meta-$(count_name "$META_READS")
META_L=meta-$(count_name "$META_LARGE_READS")
ROWS=$WORK/normalize.rows.tsv
GENOMES_TSV=$WORK/normalize.genomes.tsv

measure() { measure_in "$N" "$@"; }
median() { median_in "$N" "$1" "$2"; }
kept_of() { awk 'END { print NR / 4 }' "$N/$1.fq"; }
# per_genome FASTQ: "genome reads" lines of a FASTQ (read names g<genome>_<n>; plain or gzip)
per_genome()
{
    { case $1 in *.gz) pigz -dc "$1" ;; *) cat "$1" ;; esac; } |
        awk 'NR % 4 == 1 { split(substr($1, 2), p, "_"); c[p[1]]++ } END { for (g in c) print g, c[g] }' | sort
}

make_meta()
{
    mkdir -p "$N"
    local synth
    synth=$(dirname "$KSIEVE")/../bench/synth_metagenome
    [[ -x $synth ]] || synth=$REPO/build/bench/synth_metagenome
    [[ -x $synth ]] || die "build the synth_metagenome target first (cmake --build build --target synth_metagenome)"
    local big=$N/$META_L.fq.gz
    [[ -s $big ]] || "$synth" "$META_LARGE_READS" "$N/genomes.tsv" | pigz -p "$T" > "$big"
    (( META_READS <= META_LARGE_READS )) || die "KSIEVE_BENCH_META_READS must not exceed KSIEVE_BENCH_META_LARGE_READS"
    [[ -s $N/$META.fq.gz ]] || (set +o pipefail
        pigz -dc "$big" | head -n $((4 * META_READS)) | pigz -p "$T" > "$N/$META.fq.gz")
    ln -sf "$NORM" "$N/$KLEB.fq.gz"
}

# run_tools INPUT ROUND PEERS: the tools of one alternated round on INPUT (PEERS 1: khmer and bbnorm too)
run_tools()
{
    local in=$1 r=$2 peers=$3 f=$N/$1.fq.gz kb
    local fast_run=0 slow_run=0
    if [[ $in == "$META_L" ]]; then slow "$r" && fast_run=1; else fast "$r" && fast_run=1; fi
    slow "$r" && [[ $peers == 1 ]] && slow_run=1
    if ((fast_run)); then
        measure "ksieve_$in" "$KSIEVE" dedup -q -t "$T" -k "$K" --min-count "$C" --min-hit-fraction 0.5 \
            --novel "$N/ksieve_$in.fq" "$f"
        measure "ksievem9_$in" "$KSIEVE" dedup -q -t "$T" -k "$K" --min-count "$C" --min-hit-fraction 0.5 \
            --sampling minimizer:9 --novel "$N/ksievem9_$in.fq" "$f"
        if [[ $in == "$META_L" ]]; then
            measure "ksievepf_$in" "$KSIEVE" dedup -q -t "$T" -k "$K" --min-count "$C" --min-hit-fraction 0.5 \
                --prefilter --novel "$N/ksievepf_$in.fq" "$f"
        fi
    fi
    if ((slow_run)); then
        # (khmer's memory: ksieve's peak RSS of its first run on this input, fixed for the later rounds)
        [[ -s $N/khmer_m_$in ]] || echo $(($(median "ksieve_$in" 3) * 1024)) > "$N/khmer_m_$in"
        kb=$(< "$N/khmer_m_$in")
        measure "khmer_same_$in" "$KHMER_NORMALIZE" -q -k "$K" -C "$C" -M "$kb" --force_single \
            -o "$N/khmer_same_$in.fq" "$f"
        measure "khmer_big_$in" "$KHMER_NORMALIZE" -q -k "$K" -C "$C" -M "$KHMER_M" --force_single \
            -o "$N/khmer_big_$in.fq" "$f"
        measure "bbnorm_$in" bbnorm.sh -Xmx4g in="$f" out="$N/bbnorm_$in.fq" target="$C" k="$K" threads="$T"
        measure "bbnorm1_$in" bbnorm.sh -Xmx4g in="$f" out="$N/bbnorm1_$in.fq" target="$C" passes=1 k="$K" \
            threads="$T"
    fi
}

TOOLS="ksieve ksievem9 ksievepf khmer_same khmer_big bbnorm bbnorm1"
tool_of() { case $1 in ksieve*) echo ksieve ;; khmer*) echo khmer ;; *) echo bbnorm ;; esac; }
label_of()
{
    case $1 in
        ksieve) echo "ksieve dedup" ;;
        ksievem9) echo "ksieve dedup --sampling minimizer:9" ;;
        ksievepf) echo "ksieve dedup --prefilter" ;;
        khmer_same) echo "khmer, -M ksieve's peak RSS" ;;
        khmer_big) echo "khmer, -M $KHMER_M" ;;
        bbnorm) echo "bbnorm, defaults (passes=2)" ;;
        bbnorm1) echo "bbnorm passes=1 (its fastest mode)" ;;
    esac
}

write_rows()
{
    local in name panel
    echo "$ROWS_HEADER"
    for in in "$KLEB" "$META" "$META_L"; do
        for name in $TOOLS; do
            [[ -s $N/${name}_$in.times ]] || continue
            panel=-
            [[ $in == "$META" ]] && panel=dedup
            row_tsv "$N" "${name}_$in" "$panel" "$(tool_of "$name")" "$(label_of "$name"), $in"
        done
    done
}

# kept_table INPUT READS: kept reads of each tool (and each one's ratio to ksieve's median wall seconds)
kept_table()
{
    local in=$1 reads=$2 name ks
    ks=$(median "ksieve_$in" 1)
    echo "| run | kept reads | kept % | wall s (median) / ksieve dedup's |"
    echo "|---|---:|---:|---:|"
    for name in $TOOLS; do
        [[ -s $N/${name}_$in.times ]] || continue
        local k
        k=$(kept_of "${name}_$in")
        echo "| $(label_of "$name"), $in | $k | $(pct "$k" "$reads")% | $(fdiv "$(median "${name}_$in" 1)" "$ks")x |"
    done
}

# genome rows of INPUT: input genome length reads coverage tool kept
write_genomes()
{
    local in name
    printf 'input\tgenome\tlength\tinput_reads\tcoverage\ttool\tkept\n'
    for in in "$META" "$META_L"; do
        for name in $TOOLS; do
            [[ -e $N/${name}_$in.fq ]] || continue
            [[ -s $N/$in.genomes && $N/$in.genomes -nt $N/$in.fq.gz ]] || per_genome "$N/$in.fq.gz" > "$N/$in.genomes"
            join <(tail -n +2 "$N/genomes.tsv" | awk '{print $1, $2}' | sort) "$N/$in.genomes" |
                join -a1 -e0 -o 0,1.2,1.3,2.2 - <(per_genome "$N/${name}_$in.fq") | sort -V |
                awk -v in_="$in" -v tool="$(label_of "$name")" \
                    '{ printf "%s\t%s\t%s\t%s\t%.3f\t%s\t%s\n", in_, $1, $2, $3, $3 * 150 / $2, tool, $4 }'
        done
    done
}

# genome_table INPUT: kept reads per genome, one column per tool
genome_table()
{
    local in=$1
    awk -F'\t' -v in_="$in" '
        NR > 1 && $1 == in_ {
            if (!($2 in seen)) { seen[$2] = 1; g[++ng] = $2; len[$2] = $3; reads[$2] = $4; cov[$2] = $5 }
            if (!($6 in tseen)) { tseen[$6] = 1; t[++nt] = $6 }
            kept[$2, $6] = $7
        }
        END {
            if (ng == 0) exit
            printf "| genome | length | input reads | coverage |"; for (j = 1; j <= nt; ++j) printf " %s |", t[j]; print ""
            printf "|---|---:|---:|---:|"; for (j = 1; j <= nt; ++j) printf "---:|"; print ""
            for (i = 1; i <= ng; ++i) {
                printf "| %s | %s | %s | %.2fx |", g[i], len[g[i]], reads[g[i]], cov[g[i]]
                for (j = 1; j <= nt; ++j) printf " %s |", kept[g[i], t[j]]
                print ""
            }
        }' "$GENOMES_TSV"
}

need_tools pigz "$KHMER_NORMALIZE" bbnorm.sh /usr/bin/time
find_ksieve
make_data
make_meta
log "load: $(uptime)"
rm -f "$N"/*.times "$N"/khmer_m_*
for ((i = 0; i < ROUNDS; ++i)); do
    run_tools "$KLEB" "$i" 1
    run_tools "$META" "$i" 1
    run_tools "$META_L" "$i" "$META_LARGE_PEERS"
done
write_rows > "$ROWS.tmp" && mv "$ROWS.tmp" "$ROWS"
write_genomes > "$GENOMES_TSV.tmp" && mv "$GENOMES_TSV.tmp" "$GENOMES_TSV"
{
    echo "Inputs: $KLEB, the $NORM_READS host-only Klebsiella reads of the Klebsiella sample's section (one"
    echo "genome, high coverage); $META and $META_L, the first $META_READS and $META_LARGE_READS reads of a synthetic"
    echo "metagenome (20 uniform random genomes of 2 to 6 Mbp at coverages spread over three orders of magnitude,"
    echo "0.5% substitutions, 150 bp reads). Every tool keeps a read unless its k-mers (k = $K) were already seen"
    echo "about $C times; kept reads are written as plain FASTQ. ksieve and bbnorm at $T threads, khmer"
    echo "single-threaded."
    if [[ $META_LARGE_PEERS != 1 ]]; then
        echo "On $META_L ksieve runs alone (its kept reads per genome are the coverage plot's)."
    fi
    echo
    echo "![kept reads against genome coverage](plots/dedup_coverage.png)"
    echo
    rows_md "$ROWS"
    echo
    for in in "$KLEB" "$META" "$META_L"; do
        case $in in
            "$KLEB") reads=$NORM_READS ;;
            "$META") reads=$META_READS ;;
            *) reads=$META_LARGE_READS ;;
        esac
        echo "Kept reads of $in ($reads reads):"
        echo
        kept_table "$in" "$reads"
        echo
    done
    for in in "$META" "$META_L"; do
        echo "Kept reads per genome of $in (coverage: input reads x 150 / length):"
        echo
        genome_table "$in"
        echo
    done
    commands_md "$ROWS"
} > "$WORK/normalize.md.tmp"
mv "$WORK/normalize.md.tmp" "$WORK/normalize.md"
rm -f "$N"/*.fq
cat "$WORK/normalize.md"
