#!/usr/bin/env bash
# Digital normalization: reads kept by ksieve dedup vs khmer normalize-by-median.py, same k and cutoff.
#
# Usage: bench/scripts/bench_normalize.sh [WORK_DIR]
#   WORK_DIR (or $KSIEVE_BENCH_DIR; default /tmp/ksieve-bench): generated data and outputs (never commit).
# Environment: KSIEVE (executable), KSIEVE_BENCH_READS (default 2000000), KSIEVE_BENCH_THREADS (ksieve threads,
#   default 2), KSIEVE_BENCH_STRICT=1 (exit 1 when the counts differ by more than 5%).
#
# Compares, on the host-only reads (~53x coverage for 2 M reads, well above the cutoff; at low coverage both
# tools keep everything and the comparison means nothing):
#   ksieve dedup --min-count 20 --min-hit-fraction 0.5 -k 31   (known iff >= half the k-mers have count >= 20)
#   normalize-by-median.py -k 31 -C 20 -M 2e9                   (discard iff median k-mer count >= 20)
# and prints both kept counts, the relative difference and whether it is within 5%.
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

T=${KSIEVE_BENCH_THREADS:-2}
need_tools pigz "$KHMER_NORMALIZE" /usr/bin/time
find_ksieve
make_data

RES=$WORK/results-normalize
OUT=$WORK/out-normalize
rm -rf "$RES" "$OUT"
mkdir -p "$RES" "$OUT"

run_timed ksieve_dedup /dev/null "$KSIEVE" dedup -q -t "$T" -k "$K" --min-count 20 --min-hit-fraction 0.5 \
    --novel "$OUT/ksieve.fq" --stats "$RES/ksieve_dedup.json" "$NORM"
run_timed khmer "$RES/khmer.out" "$KHMER_NORMALIZE" -k "$K" -C 20 -M 2e9 --force_single -o "$OUT/khmer.fq" "$NORM"

kept_ksieve=$(fq_count "$OUT/ksieve.fq")
kept_khmer=$(fq_count "$OUT/khmer.fq")
# khmer's own estimate of its count-min sketch false-positive rate (overcounting makes it drop more reads)
khmer_fp=$(grep -ho 'fp rate estimated to be [0-9.e+-]*' "$RES/khmer.err" "$RES/khmer.out" | awk '{ print $NF }' | head -n1)
rm -rf "$OUT"

rel=$(awk -v a="$kept_ksieve" -v b="$kept_khmer" 'BEGIN { printf "%+.4f", 100 * (a - b) / b }')
within=no
awk -v r="$rel" 'BEGIN { exit !(r <= 5 && r >= -5) }' && within=yes

echo "input:   $NORM ($NORM_READS reads, host only, ~$(awk -v n="$NORM_READS" -v g="$(genome_len "$GENOMES/host.fa")" \
    'BEGIN { printf "%.0f", n * 150 / g }')x coverage)"
printf '%-8s kept %9d of %d (%s%%)  %6.2f s  peak RSS %5d MB  %s\n' \
    ksieve "$kept_ksieve" "$NORM_READS" "$(pct "$kept_ksieve" "$NORM_READS")" "$(wall_s ksieve_dedup)" \
    "$(rss_mb ksieve_dedup)" "(dedup --min-count 20 --min-hit-fraction 0.5 -k $K -t $T)"
printf '%-8s kept %9d of %d (%s%%)  %6.2f s  peak RSS %5d MB  %s\n' \
    khmer "$kept_khmer" "$NORM_READS" "$(pct "$kept_khmer" "$NORM_READS")" "$(wall_s khmer)" \
    "$(rss_mb khmer)" "(normalize-by-median.py -k $K -C 20 -M 2e9; estimated FP rate ${khmer_fp:-?})"
echo "relative difference (ksieve - khmer) / khmer: ${rel}%  -> within 5%: $within"
if awk -v a="$kept_khmer" -v n="$NORM_READS" 'BEGIN { exit !(a > 0.9 * n) }'; then
    echo "warning: khmer kept more than 90% of the reads: coverage too low for a meaningful comparison" >&2
fi
if [[ ${KSIEVE_BENCH_STRICT:-0} == 1 && $within != yes ]]; then
    exit 1
fi
