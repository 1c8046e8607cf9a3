#!/usr/bin/env bash
# Combining samples: union, intersection and subtraction of two per-sample filters (the 2 M-read "mix" and
# "norm" sets of bench_common.sh, every k-mer, k = 31), and a union of 16 per-sample filters (the mix reads
# split 16 ways), against kmc_tools on KMC databases of the same reads (kmc -ci1).
# Measures at KSIEVE_BENCH_THREADS threads in alternated rounds (KSIEVE_BENCH_REPEATS): wall, CPU, peak RSS
# and result size. Writes $WORK/algebra.md (section) and $WORK/algebra.rows.tsv (every measured command).
# Usage: bench/scripts/bench_algebra.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

A=$WORK/algebra
REPORT=$WORK/algebra.md

measure() { measure_in "$A" "$@"; }
median() { median_in "$A" "$1" "$2"; }
mb() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1048576 }'; }
kmc_bytes() { echo $(($(stat -c %s "$1.kmc_pre") + $(stat -c %s "$1.kmc_suf"))); }

find_ksieve
need_tools kmc kmc_tools pigz /usr/bin/time
make_data
mkdir -p "$A/kmc_tmp" "$A/parts"

log "filters and KMC databases of the two samples"
for s in mix norm; do
    f=$MIX; [[ $s == norm ]] && f=$NORM
    [[ -s $A/$s.ksf ]] || "$KSIEVE" build -q -t "$T" --sampling all -o "$A/$s.ksf" "$f"
    [[ -s $A/$s.kmc_suf ]] || kmc -k31 -ci1 -t"$T" -fq "$f" "$A/$s" "$A/kmc_tmp" > /dev/null
done
log "16 per-sample filters and databases (the mix reads split 16 ways)"
if [[ ! -s $A/parts/p15.kmc_suf ]]; then
    pigz -dc "$MIX" | awk -v d="$A/parts" '{ print > (d "/p" (int((NR - 1) / 4) % 16) ".fq") }'
    for i in $(seq 0 15); do
        "$KSIEVE" build -q -t "$T" --sampling all -o "$A/parts/p$i.ksf" "$A/parts/p$i.fq"
        kmc -k31 -ci1 -t"$T" -fq "$A/parts/p$i.fq" "$A/parts/p$i" "$A/kmc_tmp" > /dev/null
        rm -f "$A/parts/p$i.fq"
    done
fi
# kmc_tools complex fails on every input in Debian's kmc (std::regex_error in its parser), so the 16-input
# union is a tree of 15 `kmc_tools simple union` runs (8 + 4 + 2 + 1), as a user would run it.
cat > "$A/parts/union16.sh" <<'TREE'
set -e
cd "$(dirname "$0")"
t=$1
level=(p0 p1 p2 p3 p4 p5 p6 p7 p8 p9 p10 p11 p12 p13 p14 p15)
round=0
while [ ${#level[@]} -gt 1 ]; do
    next=()
    for ((i = 0; i < ${#level[@]}; i += 2)); do
        out=u${round}_$i
        [ ${#level[@]} -eq 2 ] && out=kmc_u16
        kmc_tools -t"$t" simple "${level[i]}" "${level[i+1]}" union "$out" > /dev/null
        next+=("$out")
    done
    level=("${next[@]}")
    round=$((round + 1))
done
rm -f u[0-9]*_*.kmc_pre u[0-9]*_*.kmc_suf
TREE

rm -f "$A"/*.times
parts=()
for i in $(seq 0 15); do parts+=("$A/parts/p$i.ksf"); done
for ((r = 0; r < REPEATS; ++r)); do
    log "round $((r + 1)) of $REPEATS"
    measure ks_union "$KSIEVE" merge -q -t "$T" -o "$A/u.ksf" "$A/mix.ksf" "$A/norm.ksf"
    measure kmc_union kmc_tools -t"$T" simple "$A/mix" "$A/norm" union "$A/kmc_u"
    measure ks_intersect "$KSIEVE" intersect -q -t "$T" -o "$A/i.ksf" "$A/mix.ksf" "$A/norm.ksf"
    measure kmc_intersect kmc_tools -t"$T" simple "$A/mix" "$A/norm" intersect "$A/kmc_i"
    measure ks_subtract "$KSIEVE" subtract -q -t "$T" -o "$A/s.ksf" "$A/mix.ksf" "$A/norm.ksf"
    measure kmc_subtract kmc_tools -t"$T" simple "$A/mix" "$A/norm" kmers_subtract "$A/kmc_s"
    measure ks_union16 "$KSIEVE" merge -q -t "$T" -o "$A/u16.ksf" "${parts[@]}"
    measure kmc_union16 bash "$A/parts/union16.sh" "$T"
done

distinct() { "$KSIEVE" info --json "$1" | sed -n 's/.*"distinct_kmers": *\([0-9]*\).*/\1/p'; }
ROWS=$WORK/algebra.rows.tsv
{
    echo "$ROWS_HEADER"
    row_tsv "$A" ks_union setops ksieve "ksieve merge (union of 2)"
    row_tsv "$A" kmc_union setops kmc_tools "kmc_tools simple union"
    row_tsv "$A" ks_intersect setops ksieve "ksieve intersect"
    row_tsv "$A" kmc_intersect setops kmc_tools "kmc_tools simple intersect"
    row_tsv "$A" ks_subtract setops ksieve "ksieve subtract"
    row_tsv "$A" kmc_subtract setops kmc_tools "kmc_tools simple kmers_subtract"
    row_tsv "$A" ks_union16 setops ksieve "ksieve merge (union of 16)"
    row_tsv "$A" kmc_union16 setops kmc_tools "kmc_tools union of 16 (tree of 15 simple unions)"
} > "$ROWS.tmp"
mv "$ROWS.tmp" "$ROWS"
{
    echo "Every k-mer (k = 31) of the Klebsiella sets $(basename "$MIX") and $(basename "$NORM") ($MIX_READS and"
    echo "$NORM_READS reads; see the Klebsiella sample's section) in ksieve filters ($(mb "$(stat -c %s "$A/mix.ksf")") and"
    echo "$(mb "$(stat -c %s "$A/norm.ksf")") MB) and KMC databases (kmc -ci1; $(mb "$(kmc_bytes "$A/mix")") and"
    echo "$(mb "$(kmc_bytes "$A/norm")") MB), combined; and the union of 16 per-sample filters (the mix reads split"
    echo "16 ways). $T threads."
    echo
    rows_md "$ROWS"
    echo
    echo "| operation | ksieve result | kmc_tools result |"
    echo "|---|---|---|"
    for op in union intersect subtract union16; do
        out=u; kout=kmc_u
        case $op in intersect) out=i; kout=kmc_i ;; subtract) out=s; kout=kmc_s ;; union16) out=u16; kout=parts/kmc_u16 ;; esac
        printf '| %s | %s MB, %s k-mers | %s MB |\n' "$op" "$(mb "$(stat -c %s "$A/$out.ksf")")" \
            "$(distinct "$A/$out.ksf")" "$(mb "$(kmc_bytes "$A/$kout")")"
    done
    echo
    echo "kmc_tools: the 16-input union is a tree of 15 \`simple union\` runs (\`complex\` fails with a regex error in"
    echo "Debian's build)."
    echo
    commands_md "$ROWS"
} > "$REPORT.tmp"
mv "$REPORT.tmp" "$REPORT"
cat "$REPORT"
