#!/usr/bin/env bash
# ksieve against peer tools on simulated Klebsiella reads (bench_common.sh's make_data: a host genome, 2 M
# mixed reads of the host, three other Klebsiella genomes and lambda phage). At KSIEVE_BENCH_THREADS threads,
# in alternated rounds (KSIEVE_BENCH_REPEATS), with /usr/bin/time:
#   decompression  pigz -dc and igzip -d -c of the gzip'd reads
#   build          ksieve build against kmc -ci1, of the host genome (--expected auto) and of the mixed reads
#   classify       ksieve classify -f host.ksf against bbduk.sh ref=host.fa on the mixed reads, each with its
#                  default rule and with the other's (>= 1 hit in ksieve; exact k-mers, half the k-mers in
#                  bbduk), and with --exact-hits; the reads called known, by origin
# (dedup of the same reads against khmer and bbnorm is in bench_normalize.sh.)
# Writes $WORK/pipeline.md (section) and $WORK/pipeline.rows.tsv (every measured command).
# Usage: bench/scripts/bench_pipeline.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

need_tools pigz igzip kmc bbduk.sh java /usr/bin/time
find_ksieve
make_data

P=$WORK/pipeline
OUT=$P/out
HOST=$GENOMES/host.fa
rm -rf "$P"
mkdir -p "$P" "$OUT/kmctmp"

measure() { measure_in "$P" "$@"; }

# known_counts NAME: "all host other lambda" reads in NAME's known-reads file, kept in $P/NAME.known
known_counts()
{
    local h o l
    read -r h o l < <(fq_origin_counts "$OUT/$1.known.fq")
    echo "$((h + o + l)) $h $o $l" > "$P/$1.known"
    rm -f "$OUT/$1.known.fq" "$OUT/$1.novel.fq"
}

classify_ksieve() # NAME [OPTIONS...]
{
    local name=$1
    shift
    measure "$name" "$KSIEVE" classify -q -t "$T" -f "$OUT/host.ksf" "$@" --known "$OUT/$name.known.fq" \
        --novel "$OUT/$name.novel.fq" "$MIX"
    known_counts "$name"
}

classify_bbduk() # NAME [OPTIONS...]
{
    local name=$1
    shift
    measure "$name" bbduk.sh ref="$HOST" in="$MIX" out="$OUT/$name.novel.fq" outm="$OUT/$name.known.fq" k="$K" \
        threads="$T" "$@"
    known_counts "$name"
}

for ((i = 0; i < REPEATS; ++i)); do
    measure pigz_mix pigz -dc -p "$T" "$MIX"
    measure igzip_mix igzip -d -c "$MIX"
    measure ksieve_build_host "$KSIEVE" build -q -t "$T" -k "$K" --expected auto -o "$OUT/host.ksf" "$HOST"
    measure kmc_build_host kmc -k"$K" -t"$T" -ci1 -fm "$HOST" "$OUT/kmc_host" "$OUT/kmctmp"
    measure ksieve_build_mix "$KSIEVE" build -q -t "$T" -k "$K" -o "$OUT/mix.ksf" "$MIX"
    measure kmc_build_mix kmc -k"$K" -t"$T" -ci1 -fq "$MIX" "$OUT/kmc_mix" "$OUT/kmctmp"
    # (kmc's fastest documented mode: RAM-only, no bins on disk)
    measure kmc_build_host_ram kmc -k"$K" -t"$T" -ci1 -r -fm "$HOST" "$OUT/kmc_host_r" "$OUT/kmctmp"
    measure kmc_build_mix_ram kmc -k"$K" -t"$T" -ci1 -r -fq "$MIX" "$OUT/kmc_mix_r" "$OUT/kmctmp"
    classify_ksieve ksieve_classify
    classify_bbduk bbduk_classify
    classify_ksieve ksieve_classify_any --min-hits 1 --min-hit-fraction 0.000001
    classify_bbduk bbduk_classify_mkf mkf=0.5 mm=f
    classify_ksieve ksieve_classify_exact --exact-hits
done
FILTER_MB=$(du -m "$OUT/host.ksf" | cut -f1)
MIXF_MB=$(du -m "$OUT/mix.ksf" | cut -f1)
KMC_HOST_MB=$(du -cm "$OUT"/kmc_host.kmc_* | tail -n1 | cut -f1)
KMC_MIX_MB=$(du -cm "$OUT"/kmc_mix.kmc_* | tail -n1 | cut -f1)
rm -rf "$OUT"

ROWS=$WORK/pipeline.rows.tsv
{
    echo "$ROWS_HEADER"
    row_tsv "$P" pigz_mix host pigz "pigz -dc decompression of the mixed reads"
    row_tsv "$P" igzip_mix host igzip "igzip -d -c decompression of the mixed reads (one thread)"
    row_tsv "$P" ksieve_classify host ksieve "ksieve classify, Klebsiella host filter (defaults)"
    row_tsv "$P" bbduk_classify host bbduk "bbduk ref=Klebsiella host (defaults: k=31 t=$T)"
    row_tsv "$P" ksieve_classify_any - ksieve "ksieve classify, >= 1 hit (--min-hits 1 --min-hit-fraction 1e-6)"
    row_tsv "$P" bbduk_classify_mkf - bbduk "bbduk, exact k-mers, half the k-mers (mkf=0.5 mm=f)"
    row_tsv "$P" ksieve_classify_exact - ksieve "ksieve classify --exact-hits (every k-mer looked up)"
    row_tsv "$P" ksieve_build_host - ksieve "ksieve build of the host genome (--expected auto)"
    row_tsv "$P" kmc_build_host - kmc "kmc -ci1 of the host genome (defaults: -m12, bins on disk)"
    row_tsv "$P" kmc_build_host_ram - kmc "kmc -ci1 -r of the host genome (RAM-only, its fastest mode)"
    row_tsv "$P" ksieve_build_mix build ksieve "ksieve build of the mixed reads"
    row_tsv "$P" kmc_build_mix build kmc "kmc -ci1 of the mixed reads (defaults: -m12, bins on disk)"
    row_tsv "$P" kmc_build_mix_ram - kmc "kmc -ci1 -r of the mixed reads (RAM-only, its fastest mode)"
} > "$ROWS.tmp"
mv "$ROWS.tmp" "$ROWS"

sensitivity()
{
    echo "| run | known reads | host (sensitivity) | other Klebsiella | lambda |"
    echo "|---|---:|---:|---:|---:|"
    local n
    for n in ksieve_classify bbduk_classify ksieve_classify_any bbduk_classify_mkf ksieve_classify_exact; do
        read -r a h o l < "$P/$n.known"
        echo "| $(awk -F'\t' -v n="$n" '$1 == n { print $4 }' "$ROWS") | $a | $(pct "$h" "$MIX_H")% |" \
            "$(pct "$o" "$MIX_O")% | $(pct "$l" "$MIX_L")% |"
    done
}

host_len=$(genome_len "$HOST")
{
    echo "Reads simulated with \`art_illumina -ss HS25 -l 150 -na\` (HiSeq 2500 profile, 150 bp single end, fixed"
    echo "seeds) from the Debian packages kleborate-examples (Klebsiella pneumoniae genomes) and bowtie2-examples"
    echo "(lambda phage); records shuffled with a fixed seed, gzip'd with pigz -6."
    echo
    echo "- host.fa: K. pneumoniae HS11286, chromosome and plasmids, $host_len bp, $HOST_KMERS k-mers (k = $K)."
    echo "- mix: $MIX_READS reads, $MIX_KMERS k-mers: $MIX_H from the host" \
        "(~$(awk -v n="$MIX_H" -v g="$host_len" 'BEGIN { printf "%.0f", n * 150 / g }')x), $MIX_O from K. pneumoniae" \
        "Kp1084, MGH78578 and NTUH-K2044 (the same species: much of their sequence is shared with the host)," \
        "$MIX_L from lambda phage."
    echo "- norm: $NORM_READS reads, host only" \
        "(~$(awk -v n="$NORM_READS" -v g="$host_len" 'BEGIN { printf "%.0f", n * 150 / g }')x coverage; the" \
        "deduplication benchmark's kleb set)."
    echo
    echo "$T threads. ksieve classify reads a prebuilt filter of host.fa ($FILTER_MB MB; its build is a row of its"
    echo "own); bbduk indexes host.fa in every run (included in its time, like its Java start-up). Known and"
    echo "novel reads are written as plain FASTQ by both. The builds: ksieve filter of the reads $MIXF_MB MB,"
    echo "KMC databases $KMC_HOST_MB MB (host) and $KMC_MIX_MB MB (reads)."
    echo
    rows_md "$ROWS"
    echo
    echo "Reads called known, by origin ($MIX_H host, $MIX_O other Klebsiella, $MIX_L lambda reads):"
    echo
    sensitivity
    echo
    commands_md "$ROWS"
} > "$WORK/pipeline.md.tmp"
mv "$WORK/pipeline.md.tmp" "$WORK/pipeline.md"
cat "$WORK/pipeline.md"
