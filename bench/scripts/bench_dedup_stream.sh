#!/usr/bin/env bash
# Dedup at the scale of a co-assembly, streamed: a synthetic metagenome of KSIEVE_BENCH_STREAM_READS reads
# (default 100 M; synth_metagenome, the generator of the normalization step, so its first 10 M reads are
# that step's 10 M-read set) generated on the fly and piped into `ksieve dedup` through stdin (no file of
# 15 GB), normalized to depth 20 with no limit and with --max-memory KSIEVE_BENCH_STREAM_LIMIT (default
# 2G): wall time, CPU, peak RSS, kept reads and the reads per second in each tenth of the stream (timed by
# the generator: its writes wait for ksieve to read). khmer (-M 2e9) and bbnorm (its fastest documented
# settings, -Xmx2g) and ksieve on the first KSIEVE_BENCH_STREAM_PREFIX reads (default 10 M). Exact
# duplicates: a read set with 20% duplicates (KSIEVE_BENCH_EXACT_READS, default 2 M) against
# `seqkit rmdup -s` and `clumpify.sh dedupe`.
# Writes $WORK/stream.md (section) and $WORK/stream.rows.tsv (bench_common.sh's rows).
# Usage: bench/scripts/bench_dedup_stream.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

S=$WORK/stream
RES=$S
STREAM_READS=${KSIEVE_BENCH_STREAM_READS:-100000000}
PREFIX_READS=${KSIEVE_BENCH_STREAM_PREFIX:-10000000}
LIMIT=${KSIEVE_BENCH_STREAM_LIMIT:-2G}
EXACT_READS=${KSIEVE_BENCH_EXACT_READS:-2000000}
C=20
ROWS=$WORK/stream.rows.tsv

find_ksieve
# (Debian's bbmap leaves clumpify.sh out of PATH)
CLUMPIFY=${CLUMPIFY:-$(command -v clumpify.sh || echo /usr/share/bbmap/clumpify.sh)}
need_tools pigz seqkit "$CLUMPIFY" bbnorm.sh "$KHMER_NORMALIZE" /usr/bin/time
SYNTH=$(dirname "$KSIEVE")/../bench/synth_metagenome
[[ -x $SYNTH ]] || SYNTH=$REPO/build/bench/synth_metagenome
[[ -x $SYNTH ]] || die "build the synth_metagenome target first (cmake --build build --target synth_metagenome)"
mkdir -p "$S"
json_num() { sed -n "s/.*\"$2\": *\([-0-9.eE+]*\).*/\1/p" "$1" | head -n1; }

# stream NAME EXTRA...: the whole stream through ksieve dedup --min-count 20 (kept reads to /dev/null)
stream()
{
    local name=$1
    shift
    cmd_text "synth_metagenome $STREAM_READS genomes.tsv | $KSIEVE dedup -q -t $T -k $K --min-count $C --min-hit-fraction 0.5" \
        "$* --stats $name.json --novel /dev/null -" > "$S/$name.cmd"
    log "run $name ($STREAM_READS reads streamed)"
    sync
    cut -d' ' -f1 /proc/loadavg > "$S/$name.loads" # (the load column of the rows)
    SYNTH_TICK_EVERY=$((STREAM_READS / 10)) SYNTH_TICK_FILE=$S/$name.ticks \
        "$SYNTH" "$STREAM_READS" "$S/genomes.tsv" |
        /usr/bin/time -f "%e %U %S %M" -o "$S/$name.one" "$KSIEVE" dedup -q -t "$T" -k "$K" --min-count "$C" \
            --min-hit-fraction 0.5 "$@" --stats "$S/$name.json" --novel /dev/null - 2> "$S/$name.err" ||
        die "$name failed: $(tail -3 "$S/$name.err")"
    awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$S/$name.one" > "$S/$name.times"
}

# tenths NAME: reads per second in each tenth of the stream, from the generator's ticks, then the
# last tenth's rate over the first's
tenths()
{
    awk -F'\t' 'BEGIN { r0 = 0; t0 = 0 }
        { v = ($1 - r0) / ($2 - t0); if (NR == 1) first = v; printf "%s%.0f", (NR > 1 ? " / " : ""), v
          r0 = $1; t0 = $2 }
        END { printf " | %.2f", v / first }' "$S/$1.ticks"
}

# the first PREFIX_READS reads of the same stream, as a file for the peers
prefix=$S/prefix.fq
[[ -s $prefix ]] || "$SYNTH" "$PREFIX_READS" "$S/prefix_genomes.tsv" > "$prefix"

# exact duplicates: EXACT_READS reads of which 20% repeat an earlier read (a copy of one of the
# others, drawn with a fixed seed), in random order
exact=$S/dup20.fq
if [[ ! -s $exact ]]; then
    "$SYNTH" $((EXACT_READS * 4 / 5)) "$S/exact_genomes.tsv" |
        python3 -c '
import random, sys
lines = sys.stdin.read().split("\n")
recs = ["\n".join(lines[i:i + 4]) for i in range(0, len(lines) - 3, 4)]
rng = random.Random(5)
dups = [recs[rng.randrange(len(recs))] for _ in range(len(recs) // 4)]
allr = recs + [d.replace("@", "@dup_", 1) for d in dups]
rng.shuffle(allr)
sys.stdout.write("\n".join(allr) + "\n")' > "$exact"
fi

log "load: $(uptime)"
rm -f "$S"/*.times
stream ksieve_stream
stream ksieve_stream_limit --max-memory "$LIMIT"
measure_in "$S" ksieve_prefix "$KSIEVE" dedup -q -t "$T" -k "$K" --min-count "$C" --min-hit-fraction 0.5 \
    --stats "$S/ksieve_prefix.json" --novel "$S/ksieve_prefix.fq" "$prefix"
measure_in "$S" khmer_prefix "$KHMER_NORMALIZE" -q -k "$K" -C "$C" -M 2e9 --force_single \
    -o "$S/khmer_prefix.fq" "$prefix"
measure_in "$S" bbnorm_prefix bbnorm.sh -Xmx2g in="$prefix" out="$S/bbnorm_prefix.fq" target="$C" min=0 \
    passes=1 k="$K" threads="$T"
measure_in "$S" ksieve_exact "$KSIEVE" dedup -q -t "$T" --exact --stats "$S/ksieve_exact.json" \
    --novel "$S/ksieve_exact.fq" "$exact"
measure_in "$S" seqkit_exact seqkit rmdup -s -j "$T" -o "$S/seqkit_exact.fq" "$exact"
measure_in "$S" clumpify_exact "$CLUMPIFY" -Xmx4g in="$exact" out="$S/clumpify_exact.fq" dedupe=t \
    subs=0 threads="$T" ow=t

kept()
{
    case $1 in
        ksieve_stream*) json_num "$S/$1.json" novel ;;
        *) echo $(($(wc -l < "$S/$1.fq") / 4)) ;;
    esac
}
label_of()
{
    case $1 in
        ksieve_stream) echo "ksieve dedup, $STREAM_READS reads from stdin, no limit" ;;
        ksieve_stream_limit) echo "ksieve dedup, $STREAM_READS reads from stdin, --max-memory $LIMIT" ;;
        ksieve_prefix) echo "ksieve dedup, first $PREFIX_READS reads" ;;
        khmer_prefix) echo "khmer normalize-by-median -M 2e9, first $PREFIX_READS reads" ;;
        bbnorm_prefix) echo "bbnorm passes=1 min=0 -Xmx2g, first $PREFIX_READS reads" ;;
        ksieve_exact) echo "ksieve dedup --exact, 20% duplicates" ;;
        seqkit_exact) echo "seqkit rmdup -s (both strands, as ksieve --exact), 20% duplicates" ;;
        clumpify_exact) echo "clumpify.sh dedupe subs=0, 20% duplicates" ;;
    esac
}
NAMES="ksieve_stream ksieve_stream_limit ksieve_prefix khmer_prefix bbnorm_prefix ksieve_exact seqkit_exact clumpify_exact"
{
    echo "$ROWS_HEADER"
    for name in $NAMES; do
        row_tsv "$S" "$name" - "${name%%_*}" "$(label_of "$name")"
    done
} > "$ROWS.tmp" && mv "$ROWS.tmp" "$ROWS"
{
    echo "A synthetic metagenome (the normalization section's generator: 20 genomes, 0.5% substitutions) of"
    echo "$STREAM_READS reads generated on the fly and piped into ksieve, normalized to depth $C at $T threads;"
    echo "the peers on its first $PREFIX_READS reads; exact duplicates on $EXACT_READS reads of which 20% repeat"
    echo "an earlier one."
    echo
    rows_md "$ROWS"
    echo
    echo "| run | kept reads | reads per second in each tenth of the stream | last tenth / first |"
    echo "|---|---:|---|---:|"
    for name in $NAMES; do
        case $name in ksieve_stream*) t=$(tenths "$name") ;; *) t="- | -" ;; esac
        echo "| $(label_of "$name") | $(kept "$name") | $t |"
    done
    echo
    commands_md "$ROWS"
} > "$WORK/stream.md.tmp"
mv "$WORK/stream.md.tmp" "$WORK/stream.md"
rm -f "$S"/*_prefix.fq "$S"/*_exact.fq
cat "$WORK/stream.md"
