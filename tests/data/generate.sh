#!/usr/bin/env bash
# Generate the pipeline tests' data from Debian packages (deterministic: fixed seeds). Usage: generate.sh OUTDIR
# Produces in OUTDIR:
#   HS11286.fa             Klebsiella pneumoniae HS11286 genome (kleborate-examples)
#   klebs4.fa              the 4 Klebsiella genomes
#   lambda.fa              lambda phage (bowtie2-examples)
#   hs_errfree.fq          error-free 150 bp reads simulated from HS11286 (art_illumina -ef, seed 42)
#   hs_reads.fq.gz         realistic 150 bp reads from HS11286 (with errors)
#   hs_R1.fq, hs_R2.fq     paired realistic reads from HS11286
#   lambda_reads.fq        realistic reads from lambda
#   sra.fq.gz              real SRA reads (gasic-examples SRR059298 subset)
#   mixed.fq               HS11286 reads + lambda reads, interleaved by position
# A marker file OUTDIR/.complete is written last; an existing complete directory is reused.
set -euo pipefail
out=${1:?usage: generate.sh OUTDIR}
mkdir -p "$out"
if [ -f "$out/.complete" ]; then
    exit 0
fi
klebs=/usr/share/doc/kleborate/examples/data
bt2=/usr/share/doc/bowtie2/examples
gasic=/usr/share/doc/gasic/examples
for f in "$klebs/Klebs_HS11286.fna.xz" "$bt2/reference/lambda_virus.fa.gz" "$gasic/reads/SRR059298_subset.fastq.gz"; do
    [ -f "$f" ] || { echo "generate.sh: missing $f (run scripts/install-deps.sh)" >&2; exit 1; }
done
command -v art_illumina >/dev/null || { echo "generate.sh: art_illumina missing (art-nextgen-simulation-tools)" >&2; exit 1; }

tmp=$(mktemp -d "$out/tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

xz -dc "$klebs/Klebs_HS11286.fna.xz" > "$tmp/HS11286.fa"
: > "$tmp/klebs4.fa"
for g in "$klebs"/*.fna.xz; do xz -dc "$g" >> "$tmp/klebs4.fa"; done
gzip -dc "$bt2/reference/lambda_virus.fa.gz" > "$tmp/lambda.fa"
cp "$gasic/reads/SRR059298_subset.fastq.gz" "$tmp/sra.fq.gz"

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
