#!/usr/bin/env bash
# The seqan3 bridge example against ksieve itself: for every read, the k-mers looked up and the hits of
# `example_seqan3_query` (seqan3 reads, ksieve::bridge::query asks) equal the kmers and hits columns of
# `ksieve classify --report` (exact hits), for an all-k-mer and a sampled filter, FASTA and gzip'd FASTQ.
# Usage: check_seqan3_query.sh EXAMPLE KSIEVE TEST_DATA_DIR
set -euo pipefail
example=$1 ksieve=$2 data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for sampling in all minimizer:11; do
    "$ksieve" build -q --sampling "$sampling" -o "$tmp/f.ksf" "$data/lambda.fa"
    for reads in "$data/lambda_reads.fq" "$data/sra.fq.gz" "$data/lambda.fa"; do
        "$example" "$tmp/f.ksf" "$reads" > "$tmp/bridge.tsv"
        "$ksieve" classify -q -f "$tmp/f.ksf" --min-hits 1 --report "$tmp/report.tsv" --novel "$tmp/novel.out" "$reads"
        cut -f 1-3 "$tmp/report.tsv" > "$tmp/expected.tsv"
        if ! cmp -s "$tmp/bridge.tsv" "$tmp/expected.tsv"; then
            echo "differs: $sampling $reads"
            diff "$tmp/bridge.tsv" "$tmp/expected.tsv" | head -5
            fail=1
        fi
        rows=$(($(wc -l < "$tmp/expected.tsv") - 1))
        hits=$(awk -F'\t' 'NR > 1 { h += $3 } END { print h + 0 }' "$tmp/expected.tsv")
        echo "$sampling $(basename "$reads"): $rows reads, $hits hits"
        [ "$rows" -gt 0 ] || fail=1
    done
done
exit "$fail"
