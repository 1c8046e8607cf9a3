#!/usr/bin/env bash
# Combining samples: union, intersection and subtraction of two per-sample filters (the 2 M-read "mix" and
# "norm" sets of bench_common.sh, every k-mer, k = 31), and a union of 16 per-sample filters (the mix reads
# split 16 ways), against kmc_tools on KMC databases of the same reads (kmc -ci1).
# Measures at KSIEVE_BENCH_THREADS threads (default 2), alternating runs (KSIEVE_BENCH_REPEATS, default 3):
# wall, CPU, peak RSS and result size; medians. Prints a Markdown report, also written to $WORK/algebra.md.
# Usage: bench/scripts/bench_algebra.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

T=${KSIEVE_BENCH_THREADS:-2}
REPEATS=${KSIEVE_BENCH_REPEATS:-3}
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
for r in $(seq 1 "$REPEATS"); do
    log "round $r of $REPEATS"
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
{
    echo "## Combining samples ($(date -u +%Y-%m-%d), commit $(git -C "$REPO" rev-parse --short HEAD))"
    echo
    echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $T threads;"
    echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg); medians of $REPEATS alternated runs."
    echo "Inputs: every k-mer (k = 31) of $(basename "$MIX") and $(basename "$NORM") ($MIX_READS and $NORM_READS reads):"
    echo "filters $(mb "$(stat -c %s "$A/mix.ksf")") and $(mb "$(stat -c %s "$A/norm.ksf")") MB, KMC databases"
    echo "$(mb "$(kmc_bytes "$A/mix")") and $(mb "$(kmc_bytes "$A/norm")") MB."
    echo "Reproduce: \`bench/scripts/bench_algebra.sh\`."
    echo
    echo "| operation | ksieve wall s | ksieve CPU s | ksieve RSS MB | kmc_tools wall s | kmc_tools CPU s | kmc_tools RSS MB | speed-up | ksieve result | kmc result |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for op in union intersect subtract union16; do
        out=u; kout=kmc_u
        case $op in intersect) out=i; kout=kmc_i ;; subtract) out=s; kout=kmc_s ;; union16) out=u16; kout=parts/kmc_u16 ;; esac
        ks=$(median "ks_$op" 1); kc=$(median "kmc_$op" 1)
        printf '| %s | %s | %s | %s | %s | %s | %s | %sx | %s MB, %s k-mers | %s MB |\n' "$op" \
            "$ks" "$(median "ks_$op" 2)" "$(($(median "ks_$op" 3) / 1024))" \
            "$kc" "$(median "kmc_$op" 2)" "$(($(median "kmc_$op" 3) / 1024))" \
            "$(fdiv "$kc" "$ks")" "$(mb "$(stat -c %s "$A/$out.ksf")")" "$(distinct "$A/$out.ksf")" \
            "$(mb "$(kmc_bytes "$A/$kout")")"
    done
    echo
    echo "kmc_tools: the 16-input union is a tree of 15 \`simple union\` runs (\`complex\` fails with a regex error in"
    echo "Debian's build)."
    echo "16-input union: peak RSS $(($(median ks_union16 3) / 1024)) MB for an output file of $(mb "$(stat -c %s "$A/u16.ksf")") MB."
} | tee "$REPORT"
