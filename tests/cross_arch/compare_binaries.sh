#!/usr/bin/env bash
# Runs the same ksieve commands with two builds (such as x86-64 and aarch64 under qemu-user) and checks that
# they write the same bytes: filters of every type (cmp), info, classify (plain, labeled, paired, long
# records; every output format), dedup (k-mer rule, normalization, exact, paired, minimizers) and merge,
# intersect and subtract, on the bundled data (examples/data) and small generated data (make_data.py). Then
# each build classifies with the filters that the other one wrote, and gives the answers of its own.
# Usage: compare_binaries.sh WORKDIR KSIEVE_A KSIEVE_B
#   KSIEVE_A, KSIEVE_B: command lines that run ksieve (split at spaces), such as
#   build-test/bin/ksieve and "qemu-aarch64 -L /usr/aarch64-linux-gnu build-arm/bin/ksieve".
# Exit status 0 when every output matches; the differences are listed otherwise. Needs python3, zstd.
set -euo pipefail
work=${1:?usage: compare_binaries.sh WORKDIR KSIEVE_A KSIEVE_B}
ksieve_a=${2:?usage: compare_binaries.sh WORKDIR KSIEVE_A KSIEVE_B}
ksieve_b=${3:?usage: compare_binaries.sh WORKDIR KSIEVE_A KSIEVE_B}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
examples=$here/../../examples/data
threads=${KSIEVE_COMPARE_THREADS:-2}

# The command lines with their relative paths made absolute (the commands run in subdirectories).
absolute()
{
    local w out=()
    for w in $1; do
        if [[ $w == */* && -e $w ]]; then
            w=$(cd "$(dirname "$w")" && pwd)/$(basename "$w")
        fi
        out+=("$w")
    done
    echo "${out[*]}"
}
ksieve_a=$(absolute "$ksieve_a")
ksieve_b=$(absolute "$ksieve_b")

rm -rf "$work"
mkdir -p "$work/data" "$work/a" "$work/b" "$work/ab" "$work/ba"
work=$(cd "$work" && pwd)
cp "$examples/lambda.fa.gz" "$examples/reads.fq.gz" "$work/data/"
python3 "$here/make_data.py" "$work/data"

# The filters and the commands that need no filter of the other build; runs in the current directory with
# the ksieve command line "$@" (inputs are in ../data).
build_and_dedup()
{
    local r=("$@") t
    "${r[@]}" build -q -t "$threads" -o qf.ksf ../data/lambda.fa.gz
    "${r[@]}" build -q -t "$threads" --sampling all --fpr 0 -o exact.ksf ../data/lambda.fa.gz ../data/genome.fa
    "${r[@]}" build -q --sampling all --fpr 0 --expected 100000 -o exact_l.ksf ../data/lambda.fa.gz
    "${r[@]}" build -q --sampling all --fpr 0 --expected 100000 -o exact_g.ksf ../data/genome.fa
    for t in bloom cuckoo counting-bloom bloom-classic; do
        "${r[@]}" build -q -t "$threads" --type "$t" -o "$t.ksf" ../data/lambda.fa.gz ../data/genome.fa
    done
    "${r[@]}" build -q -k 21 --no-canonical --sampling minimizer:5 --mask dust --seed 0x1234 -o k21.ksf \
        ../data/genome.fa ../data/long.fa
    "${r[@]}" build -q -k 13 --shards 4 --max-load 0.6 --no-counts -o k13.ksf ../data/genome.fa
    "${r[@]}" build -q --label lambda=../data/lambda.fa.gz --label genome=../data/genome.fa -o labeled.ksf
    "${r[@]}" build -q --label-by record -o records.ksf ../data/genome.fa ../data/long.fa
    "${r[@]}" build -q --part 0/2 --expected 40000 -o part0.ksf ../data/lambda.fa.gz ../data/genome.fa
    "${r[@]}" build -q --part 1/2 --expected 40000 -o part1.ksf ../data/lambda.fa.gz ../data/genome.fa
    "${r[@]}" merge -q -o merged.ksf part0.ksf part1.ksf
    "${r[@]}" merge -q -o merged_exact.ksf exact_l.ksf exact_g.ksf
    "${r[@]}" merge -q --label-inputs -o label_inputs.ksf exact_l.ksf exact_g.ksf
    "${r[@]}" intersect -q -o intersect.ksf exact.ksf exact_l.ksf
    "${r[@]}" subtract -q -o subtract.ksf exact.ksf exact_l.ksf
    for t in *.ksf; do
        "${r[@]}" info --json "$t" > "info_${t%.ksf}.json"
    done
    "${r[@]}" dedup -q -t "$threads" --novel dedup.fq --known dedup_dups.fq --save-filter dedup.ksf \
        --stats dedup.json ../data/reads.fq.gz
    "${r[@]}" dedup -q -t "$threads" --min-count 3 --min-hit-fraction 0.5 --novel norm.fq ../data/reads.fq
    "${r[@]}" dedup -q -t "$threads" --min-count 3 --prefilter --novel norm_prefilter.fq ../data/reads.fq
    "${r[@]}" dedup -q -t "$threads" --sampling minimizer:8 --novel dedup_min.fq.gz ../data/reads.fq
    "${r[@]}" dedup -q -t "$threads" --exact --novel dedup_exact.fq --stats dedup_exact.json ../data/reads.fq
    "${r[@]}" dedup -q -t "$threads" --paired --novel dedup_R1.fq --novel2 dedup_R2.fq \
        ../data/reads_R1.fq ../data/reads_R2.fq
}

# Classification with the filters in the current directory (written by this build or by the other one).
classify_all()
{
    local r=("$@") f
    for f in qf exact bloom cuckoo counting-bloom bloom-classic merged merged_exact intersect subtract; do
        "${r[@]}" classify -q -t "$threads" -f "$f.ksf" --novel "cl_$f.novel.fq" --known "cl_$f.known.fq" \
            --report "cl_$f.tsv" --stats "cl_$f.json" --exact-hits ../data/reads.fq.gz
    done
    "${r[@]}" classify -q -t "$threads" -f k21.ksf --min-hits 1 --report cl_k21.tsv \
        --novel cl_k21.novel.fa --known cl_k21.known.sam ../data/reads.fq ../data/long.fa
    "${r[@]}" classify -q -t "$threads" -f k13.ksf --min-hit-fraction 0.5 --report cl_k13.tsv ../data/reads.fq
    "${r[@]}" classify -q -t "$threads" -f dedup.ksf --min-count 2 --report cl_dedup.tsv ../data/reads.fq
    "${r[@]}" classify -q -t "$threads" -f labeled.ksf --report labeled.tsv --stats labeled.json \
        --split-by-label 'labeled_{label}.fq' --novel labeled_novel.fq ../data/reads.fq ../data/reads.fq.gz
    "${r[@]}" classify -q -t "$threads" -f records.ksf --report records.tsv --stats records.json \
        --multiqc records_mqc.json ../data/reads.fq
    "${r[@]}" classify -q -t "$threads" -f label_inputs.ksf --report label_inputs.tsv \
        ../data/reads.fq
    "${r[@]}" classify -q -t "$threads" -f exact.ksf --paired --novel paired_novel_R1.fq.gz \
        --novel2 paired_novel_R2.fq.gz --known paired_known.fq.zst --report paired.tsv \
        ../data/reads_R1.fq ../data/reads_R2.fq
    "${r[@]}" classify -q -t "$threads" -f exact.ksf --novel long_novel.fa.xz --known long_known.fa.bz2 \
        --report long.tsv ../data/long.fa
    "${r[@]}" classify -q -t "$threads" -f qf.ksf --known known.bam --novel novel.sam ../data/reads.fq.gz
}

# (subshells, not && lists: a failing command stops the script; the command lines are split at spaces)
# shellcheck disable=SC2086
(cd "$work/a"; build_and_dedup $ksieve_a; classify_all $ksieve_a)
# shellcheck disable=SC2086
(cd "$work/b"; build_and_dedup $ksieve_b; classify_all $ksieve_b)
cp "$work"/b/*.ksf "$work/ab/"
cp "$work"/a/*.ksf "$work/ba/"
# shellcheck disable=SC2086
(cd "$work/ab"; classify_all $ksieve_a)
# shellcheck disable=SC2086
(cd "$work/ba"; classify_all $ksieve_b)

status=0
echo "compare_binaries: the outputs of each build"
python3 "$here/compare_dirs.py" "$work/a" "$work/b" || status=1
echo "compare_binaries: A with B's filters, as A with its own"
python3 "$here/compare_dirs.py" "$work/a" "$work/ab" --only-in-a-ok || status=1
echo "compare_binaries: B with A's filters, as B with its own"
python3 "$here/compare_dirs.py" "$work/b" "$work/ba" --only-in-a-ok || status=1
exit "$status"
