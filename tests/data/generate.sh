#!/usr/bin/env bash
# Generate the pipeline tests' data from the files shipped beside this script (tests/data/genomes,
# tests/data/reads; see README.md there) and the lambda genome of examples/data (deterministic: fixed seeds).
# Usage: generate.sh OUTDIR
# Produces in OUTDIR:
#   HS11286.fa             Klebsiella pneumoniae HS11286 genome (chromosome and plasmids)
#   klebs4.fa              HS11286 and the first 40 kb of each record of 3 other Klebsiella genomes
#   lambda.fa              lambda phage
#   hs_errfree.fq          error-free 150 bp reads simulated from HS11286 (art_illumina -ef, seed 42)
#   hs_reads.fq.gz         realistic 150 bp reads from HS11286 (with errors)
#   hs_R1.fq, hs_R2.fq     paired realistic reads from HS11286
#   lambda_reads.fq        realistic reads from lambda
#   sra.fq.gz              real SRA reads (the first 10000 reads of SRR059298)
#   mixed.fq               HS11286 reads + lambda reads, interleaved by position
# A marker file OUTDIR/.complete is written last; an existing complete directory is reused.
set -euo pipefail
out=${1:?usage: generate.sh OUTDIR}
mkdir -p "$out"
if [ -f "$out/.complete" ]; then
    exit 0
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
genomes=$here/genomes
reads=$here/reads
lambda_gz=$here/../../examples/data/lambda.fa.gz
for f in "$genomes/Klebs_HS11286.fna.xz" "$lambda_gz" "$reads/SRR059298_head.fastq.gz"; do
    [ -f "$f" ] || { echo "generate.sh: missing $f (incomplete source tree)" >&2; exit 1; }
done
command -v art_illumina >/dev/null || { echo "generate.sh: art_illumina missing (Debian: art-nextgen-simulation-tools; conda: art)" >&2; exit 1; }

tmp=$(mktemp -d "$out/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

xz -dc "$genomes/Klebs_HS11286.fna.xz" > "$tmp/HS11286.fa"
cp "$tmp/HS11286.fa" "$tmp/klebs4.fa"
for g in Klebs_Kp1084 MGH78578 NTUH-K2044; do xz -dc "$genomes/${g}_cut.fna.xz" >> "$tmp/klebs4.fa"; done
gzip -dc "$lambda_gz" > "$tmp/lambda.fa"
cp "$reads/SRR059298_head.fastq.gz" "$tmp/sra.fq.gz"

# SAM (error-free alignment file of art) -> FASTQ; reverse-strand reads are stored reverse-complemented,
# which does not change canonical k-mers.
sam_to_fq() { awk -F'\t' '!/^@/ { print "@" $1 "\n" $10 "\n+\n" $11 }' "$1"; }

# Error-free reads from HS11286: about 0.5x coverage.
art_illumina -ss HS25 -i "$tmp/HS11286.fa" -l 150 -f 0.5 -o "$tmp/hs" -rs 42 -na -ef >/dev/null 2>&1
sam_to_fq "$tmp/hs_errFree.sam" > "$tmp/hs_errfree.fq"
gzip -n -c "$tmp/hs.fq" > "$tmp/hs_reads.fq.gz"
# Paired reads.
art_illumina -ss HS25 -i "$tmp/HS11286.fa" -p -l 150 -f 0.3 -m 300 -s 20 -o "$tmp/hs_R" -rs 43 -na >/dev/null 2>&1
# Lambda reads.
art_illumina -ss HS25 -i "$tmp/lambda.fa" -l 150 -f 30 -o "$tmp/lambda_reads" -rs 44 -na >/dev/null 2>&1
# Mixed: alternate blocks of HS11286 and lambda reads.
paste -d'\n' <(paste - - - - < "$tmp/hs.fq" | head -n 4000) <(paste - - - - < "$tmp/lambda_reads.fq" | head -n 4000) \
    | grep -v '^$' | tr '\t' '\n' > "$tmp/mixed.fq"

for f in HS11286.fa klebs4.fa lambda.fa sra.fq.gz hs_errfree.fq hs_reads.fq.gz hs_R1.fq hs_R2.fq lambda_reads.fq mixed.fq; do
    mv "$tmp/$f" "$out/$f"
done
touch "$out/.complete"
