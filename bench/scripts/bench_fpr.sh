#!/usr/bin/env bash
# False-positive rate and bits per k-mer of each filter type against --fpr: for each type and target rate,
# `ksieve build --type TYPE --fpr EPS --sampling all` of KSIEVE_BENCH_FPR_KMERS distinct k-mers (a uniform
# random sequence), then `ksieve classify --exact-hits --stats` of KSIEVE_BENCH_FPR_QUERIES k-mers that are
# not in it (another random sequence, records of 10 kbp): the measured rate is hits / k-mers looked up, bits
# per k-mer are 8 x payload bytes (`info --json`) / k-mers stored.
# Writes $WORK/fpr.md (section) and $WORK/fpr.tsv (one row per filter) for plot_benchmarks.py.
# Usage: bench/scripts/bench_fpr.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

F=$WORK/fpr
TYPES=${KSIEVE_BENCH_FPR_TYPES:-qf bloom cuckoo counting-bloom bloom-classic}
RATES=${KSIEVE_BENCH_FPR_RATES:-0.03 0.01 0.003 0.001 0.0003 0.0001}
TSV=$WORK/fpr.tsv

find_ksieve
need_tools python3
mkdir -p "$F"

# random_fasta BASES SEED RECORD_LEN OUT: uniform random bases in records of RECORD_LEN (same bytes for the
# same arguments)
random_fasta()
{
    [[ -s $4 ]] && return
    python3 - "$@" <<'PY'
import random, sys
n, seed, rec, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
table = bytes(b"ACGT"[i & 3] for i in range(256))
s = random.Random(seed).randbytes(n).translate(table)
with open(out + ".tmp", "wb") as f:
    for i in range(0, n, rec):
        f.write(b">r%d\n%s\n" % (i // rec, s[i:i + rec]))
import os
os.replace(out + ".tmp", out)
PY
}

json_num() { sed -n "s/.*\"$2\": *\([-0-9.eE+]*\).*/\1/p" "$1" | head -n1; }

# one record holds the stored k-mers; queries in records of 10 kbp
random_fasta $((FPR_KMERS + K - 1)) 1 $((FPR_KMERS + K - 1)) "$F/stored-$FPR_KMERS.fa"
records=$(((FPR_QUERIES + 10000 - K) / (10001 - K)))
random_fasta $((records * 10000)) 2 10000 "$F/queries-$FPR_QUERIES.fa"

printf 'type\ttarget_fpr\tkmers\tpayload_bytes\tbits_per_kmer\tload\testimated_fpr\tqueries\thits\tmeasured_fpr\tcommand\n' > "$TSV.tmp"
for type in $TYPES; do
    for eps in $RATES; do
        # (a cuckoo filter's fingerprints give at least about 8 / 65536)
        if [[ $type == cuckoo ]] && fle "$eps" 0.000122; then continue; fi
        f=$F/$type-$eps.ksf
        log "build --type $type --fpr $eps"
        "$KSIEVE" build -q -t "$T" --type "$type" --fpr "$eps" --sampling all -o "$f" "$F/stored-$FPR_KMERS.fa"
        "$KSIEVE" info --json "$f" > "$f.info"
        "$KSIEVE" classify -q -t "$T" -f "$f" --exact-hits --stats "$f.stats" --novel /dev/null \
            "$F/queries-$FPR_QUERIES.fa"
        payload=$(json_num "$f.info" payload_bytes)
        kmers=$(json_num "$f.stats" kmers)
        hits=$(json_num "$f.stats" hits)
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$type" "$eps" "$FPR_KMERS" "$payload" \
            "$(awk -v p="$payload" -v n="$FPR_KMERS" 'BEGIN { printf "%.2f", 8 * p / n }')" \
            "$(awk -v x="$(json_num "$f.info" load)" 'BEGIN { printf "%.3f", x }')" \
            "$(awk -v x="$(json_num "$f.info" estimated_fpr)" 'BEGIN { printf "%.3g", x }')" "$kmers" "$hits" \
            "$(awk -v h="$hits" -v n="$kmers" 'BEGIN { printf "%.3g", h / n }')" \
            "$(cmd_text "$KSIEVE" build -t "$T" --type "$type" --fpr "$eps" --sampling all -o "${f#"$F"/}" "stored-$FPR_KMERS.fa")" \
            >> "$TSV.tmp"
        rm -f "$f" "$f.info" "$f.stats"
    done
done
mv "$TSV.tmp" "$TSV"
{
    echo "Each filter type built with \`--fpr EPS --sampling all\` from $FPR_KMERS distinct random k-mers (k = $K;"
    echo "sized by build's count of them), then asked for $(awk 'NR == 2 { print $8 }' "$TSV") random k-mers"
    echo "that are not in it (\`classify --exact-hits\`: every k-mer looked up). Bits per k-mer: 8 x the tables'"
    echo "bytes / $FPR_KMERS; load and estimated rate from \`ksieve info --json\`."
    echo
    echo "![measured false-positive rate and bits per k-mer against --fpr](plots/fpr_bits.png)"
    echo
    echo "| type | --fpr | bits per k-mer | load | estimated rate | absent k-mers found | measured rate |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    awk -F'\t' 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $5, $6, $7, $9, $10 }' "$TSV"
    echo
    above=$(awk -F'\t' 'NR > 1 && $10 + 0 > $2 + 0 { printf "%s%s --fpr %s (%s)", n++ ? ", " : "", $1, $2, $10 }' "$TSV")
    echo "Measured rate above its --fpr: ${above:-none}."
    echo
    echo "<details><summary>Commands</summary>"
    echo
    echo '```'
    echo "# stored-$FPR_KMERS.fa: one record of $((FPR_KMERS + K - 1)) random bases; queries-$FPR_QUERIES.fa:" \
        "$records records of 10000 random bases"
    echo "# for each TYPE and EPS:"
    echo "ksieve build -t $T --type TYPE --fpr EPS --sampling all -o TYPE-EPS.ksf stored-$FPR_KMERS.fa"
    echo "ksieve info --json TYPE-EPS.ksf"
    echo "ksieve classify -t $T -f TYPE-EPS.ksf --exact-hits --stats TYPE-EPS.stats --novel /dev/null queries-$FPR_QUERIES.fa"
    echo '```'
    echo
    echo "</details>"
} > "$WORK/fpr.md.tmp"
mv "$WORK/fpr.md.tmp" "$WORK/fpr.md"
cat "$WORK/fpr.md"
