#!/usr/bin/env bash
# Merging filters of different layouts. (1) The union of two default-sized quotient filters (built without
# --expected, so each is sized for its own k-mers: ~8.3 M and ~0.33 M minimizers of two random genomes of
# 50 and 2 Mbp) against the union of the same inputs built with one --expected (equal layouts). (2) A
# 16-way union of per-sample filters built without --expected (every k-mer, 10^5 to 10^7 per sample, the
# samples overlapping pieces of one random genome) against kmc_tools on KMC databases of the same samples
# (kmc -k31 -ci1; a tree of `kmc_tools simple union`).
# Alternated runs (KSIEVE_BENCH_REPEATS, default 3) at KSIEVE_BENCH_THREADS threads (default 2): min, median
# and max of wall and CPU seconds. Prints a Markdown report, also written to $WORK/merge.md.
# Usage: bench/scripts/bench_merge.sh [WORK_DIR]      (apt-get install -y kmc for part 2)
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

T=${KSIEVE_BENCH_THREADS:-2}
REPEATS=${KSIEVE_BENCH_REPEATS:-3}
M=$WORK/merge
REPORT=$WORK/merge.md

find_ksieve
need_tools kmc kmc_tools python3 /usr/bin/time
mkdir -p "$M/kmc_tmp" "$M/samples"

# genome BASES SEED OFFSET OUT: bases [OFFSET, OFFSET + BASES) of the uniform random genome of SEED (FASTA,
# records of 10 Mbp, lines of 80). The same arguments always give the same bytes.
genome()
{
    [[ -s $4 ]] && return
    python3 - "$1" "$2" "$3" "$4" <<'PY'
import random, sys
n, seed, off, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
table = bytes(b"ACGT"[i & 3] for i in range(256))
s = random.Random(seed).randbytes(off + n)[off:].translate(table)
with open(out, "wb") as f:
    rec = 10_000_000
    for c in range(0, n, rec):
        f.write(b">chr%d\n" % (c // rec + 1))
        part = s[c:c + rec]
        f.write(b"\n".join(part[i:i + 80] for i in range(0, len(part), 80)) + b"\n")
PY
}

# stats NAME COL: min / median / max of column COL (1 wall, 2 CPU seconds) of NAME's runs
stats()
{
    sort -n -k "$2" "$M/$1.times" |
        awk -v c="$2" '{ v[NR] = $c } END { printf "%s / %s / %s", v[1], v[int((NR + 1) / 2)], v[NR] }'
}
median() { median_in "$M" "$1" "$2"; }
measure() { measure_in "$M" "$@"; }
distinct() { "$KSIEVE" info --json "$1" | sed -n 's/.*"distinct_kmers": *\([0-9]*\).*/\1/p'; }
shards() { "$KSIEVE" info --json "$1" | sed -n 's/.*"shards": *\([0-9]*\).*/\1/p'; }

log "part 1: two genomes (50 and 2 Mbp), filters of their own sizes and of one --expected"
genome 50000000 11 0 "$M/big.fa"
genome 2000000 12 0 "$M/small.fa"
for g in big small; do
    [[ -s $M/$g.ksf ]] || "$KSIEVE" build -q -t "$T" -o "$M/$g.ksf" "$M/$g.fa"
done
E=$(distinct "$M/big.ksf")
E=$((E + $(distinct "$M/small.ksf")))
for g in big small; do
    [[ -s $M/$g.eq.ksf ]] || "$KSIEVE" build -q -t "$T" --expected "$E" -o "$M/$g.eq.ksf" "$M/$g.fa"
done

log "part 2: 16 samples of 10^5 to 10^7 k-mers, their filters and KMC databases"
sizes=()
for i in $(seq 0 15); do sizes+=("$(awk -v i="$i" 'BEGIN { printf "%d", 100000 * 10 ^ (2 * i / 15) }')"); done
parts=()
for i in $(seq 0 15); do
    s=$M/samples/s$i
    parts+=("$s.ksf")
    [[ -s $s.ksf && -s $s.kmc_suf ]] && continue
    genome "${sizes[i]}" 13 $((i * 250000)) "$s.fa"
    "$KSIEVE" build -q -t "$T" --sampling all -o "$s.ksf" "$s.fa"
    kmc -k31 -ci1 -hp -t"$T" -fm "$s.fa" "$s" "$M/kmc_tmp" > /dev/null
    rm -f "$s.fa"
done
cat > "$M/samples/union16.sh" <<'TREE'
set -e
cd "$(dirname "$0")"
t=$1
level=(s0 s1 s2 s3 s4 s5 s6 s7 s8 s9 s10 s11 s12 s13 s14 s15)
round=0
while [ ${#level[@]} -gt 1 ]; do
    next=()
    for ((i = 0; i < ${#level[@]}; i += 2)); do
        out=u${round}_$i
        [ ${#level[@]} -eq 2 ] && out=kmc_u16
        kmc_tools -t"$t" -hp simple "${level[i]}" "${level[i+1]}" union "$out" > /dev/null
        next+=("$out")
    done
    level=("${next[@]}")
    round=$((round + 1))
done
rm -f u[0-9]*_*.kmc_pre u[0-9]*_*.kmc_suf
TREE

rm -f "$M"/*.times
load_before=$(uptime)
for r in $(seq 1 "$REPEATS"); do
    log "round $r of $REPEATS"
    measure unequal "$KSIEVE" merge -q -t "$T" -o "$M/u.ksf" "$M/big.ksf" "$M/small.ksf"
    measure equal "$KSIEVE" merge -q -t "$T" -o "$M/u.eq.ksf" "$M/big.eq.ksf" "$M/small.eq.ksf"
    measure ks_union16 "$KSIEVE" merge -q -t "$T" -o "$M/u16.ksf" "${parts[@]}"
    measure kmc_union16 bash "$M/samples/union16.sh" "$T"
done

{
    echo "## Merging filters of different layouts ($(date -u +%Y-%m-%d), commit $(git -C "$REPO" rev-parse --short HEAD))"
    echo
    echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $T threads;"
    echo "uptime before: $load_before; after: $(uptime). Min / median / max of $REPEATS alternated runs."
    echo "Reproduce: \`bench/scripts/bench_merge.sh\`."
    echo
    echo "| run | inputs | wall s | CPU s | result |"
    echo "|---|---|---|---|---|"
    printf '| merge, own sizes | %s + %s k-mers, %s + %s shards | %s | %s | %s k-mers |\n' \
        "$(distinct "$M/big.ksf")" "$(distinct "$M/small.ksf")" "$(shards "$M/big.ksf")" \
        "$(shards "$M/small.ksf")" "$(stats unequal 1)" "$(stats unequal 2)" "$(distinct "$M/u.ksf")"
    printf '| merge, one --expected %s | %s + %s shards | %s | %s | %s k-mers |\n' "$E" \
        "$(shards "$M/big.eq.ksf")" "$(shards "$M/small.eq.ksf")" "$(stats equal 1)" "$(stats equal 2)" \
        "$(distinct "$M/u.eq.ksf")"
    printf '| ksieve merge, 16 samples | %s to %s k-mers | %s | %s | %s k-mers |\n' "${sizes[0]}" \
        "${sizes[15]}" "$(stats ks_union16 1)" "$(stats ks_union16 2)" "$(distinct "$M/u16.ksf")"
    printf '| kmc_tools union tree, 16 samples | same | %s | %s | |\n' "$(stats kmc_union16 1)" \
        "$(stats kmc_union16 2)"
    echo
    echo "Own sizes / one --expected (median wall): $(fdiv "$(median unequal 1)" "$(median equal 1)")x;" \
        "ksieve / kmc_tools, 16 samples (median wall): $(fdiv "$(median ks_union16 1)" "$(median kmc_union16 1)")x."
} | tee "$REPORT"
