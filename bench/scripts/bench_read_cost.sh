#!/usr/bin/env bash
# What a read costs classify, next to the floor of reading it: `igzip -d -c` (ISA-L, the fastest
# single-stream gzip decompressor) of the human-host benchmark's gzip'd reads (bench_host_depletion.sh's
# data: a KSIEVE_HOST_BASES synthetic host, KSIEVE_BENCH_READS reads of 150 bp), and classify of the same
# reads with --novel .fq.gz against the host's default filter (a DRAM-sized filter) and against a small
# one (Klebsiella pneumoniae HS11286, 5.7 Mbp: a filter in cache), at 1 and 2 threads, in alternated
# rounds (KSIEVE_BENCH_REPEATS). Per row: wall and CPU seconds (medians), CPU microseconds per read, Mbp
# per CPU second, and wall and CPU as multiples of igzip's.
# Writes WORK/read_cost.md, a page of its own (docs/read_cost.md), and WORK/read_cost.rows.tsv.
# Usage: bench/scripts/bench_read_cost.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

find_ksieve
need_tools igzip pigz xz /usr/bin/time lscpu
H=$WORK/host-$HOST_BASES
R=$WORK/read_cost
mkdir -p "$H" "$R"
if [[ ! -s $H/reads.fq.gz ]]; then
    synth=$(dirname "$KSIEVE")/../bench/synth_host
    [[ -x $synth ]] || synth=$REPO/build/bench/synth_host
    [[ -x $synth ]] || die "build the synth_host target first (cmake --build build --target synth_host)"
    log "generating a $HOST_BASES bp host and $NREADS reads in $H"
    "$synth" "$HOST_BASES" "$NREADS" 0.003 "$H"
    pigz -f -p "$T" "$H/reads.fq"
fi
[[ -s $H/default.ksf ]] || "$KSIEVE" build -q -o "$H/default.ksf" "$H/host.fa"
[[ -d $KLEB_DIR ]] || die "$KLEB_DIR missing (apt-get install kleborate-examples)"
[[ -s $R/kleb.fa ]] || xz -dc "$KLEB_DIR/Klebs_HS11286.fna.xz" > "$R/kleb.fa"
"$KSIEVE" build -q -o "$R/kleb.ksf" "$R/kleb.fa"
reads=$(pigz -dc "$H/reads.fq.gz" | awk 'NR % 4 == 2 { n++; b += length($0) } END { print n, b }')
nreads=${reads% *}
nbases=${reads#* }
rm -f "$R"/*.times "$R"/*.loads
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for ((i = 0; i < REPEATS; ++i)); do
    measure_in "$R" igzip igzip -d -c "$H/reads.fq.gz"
    for t in 1 2; do
        measure_in "$R" "host_t$t" "$KSIEVE" classify -q -t "$t" -f "$H/default.ksf" --novel "$R/novel.fq.gz" \
            "$H/reads.fq.gz"
        measure_in "$R" "kleb_t$t" "$KSIEVE" classify -q -t "$t" -f "$R/kleb.ksf" --novel "$R/novel.fq.gz" \
            "$H/reads.fq.gz"
    done
done
rm -f "$R/novel.fq.gz"
cpu=$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')
iw=$(median_in "$R" igzip 1)
ic=$(median_in "$R" igzip 2)
host_mb=$(awk -v b="$(stat -c %s "$H/default.ksf")" 'BEGIN { printf "%.0f", b / 1048576 }')
kleb_mb=$(awk -v b="$(stat -c %s "$R/kleb.ksf")" 'BEGIN { printf "%.1f", b / 1048576 }')
row()
{
    local name=$1 label=$2 w c
    w=$(median_in "$R" "$name" 1)
    c=$(median_in "$R" "$name" 2)
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$w" "$c" \
        "$(awk -v c="$c" -v n="$nreads" 'BEGIN { printf "%.2f", 1e6 * c / n }')" \
        "$(awk -v c="$c" -v b="$nbases" 'BEGIN { printf "%.0f", b / 1e6 / c }')" \
        "$(fdiv "$w" "$iw")" "$(fdiv "$c" "$ic")"
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$w" "$c" "$nreads" "$(cat "$R/$name.cmd")" >> "$WORK/read_cost.rows.tsv.tmp"
}
: > "$WORK/read_cost.rows.tsv.tmp"
{
    echo "# What a read costs"
    echo
    echo "<!-- Written by bench/scripts/bench_read_cost.sh; edit the script, not this page. -->"
    echo
    echo "Commit \`$(git -C "$REPO" rev-parse --short=10 HEAD)\`, $(date -u '+%Y-%m-%d %H:%M') UTC, $cpu, $(nproc) cores," \
        "Linux $(uname -r) (load at the start: $load_start, at the end: $(cut -d' ' -f1-3 /proc/loadavg))." \
        "Reproduce: \`bench/scripts/bench_read_cost.sh WORK_DIR\` (after building \`ksieve\` and \`synth_host\`)."
    echo
    echo "$nreads reads of 150 bp ($(awk -v b="$nbases" 'BEGIN { printf "%.0f", b / 1e6 }') Mbp, half from a" \
        "$(awk -v b="$HOST_BASES" 'BEGIN { printf "%.1f", b / 1e9 }') Gbp synthetic host with 0.3% substitutions)," \
        "gzip'd; classify writes the novel reads gzip'd (\`--novel novel.fq.gz\`). Filters: the host's default" \
        "filter ($host_mb MiB) and Klebsiella pneumoniae HS11286's ($kleb_mb MiB). Medians of $REPEATS alternated" \
        "rounds; CPU is user + system. The last two columns divide by \`igzip -d -c\` of the same file" \
        "($iw s wall, $ic s CPU)."
    echo
    echo "| run | wall s | CPU s | CPU µs / read | Mbp / CPU s | wall / igzip | CPU / igzip |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    row igzip "\`igzip -d -c\`"
    row host_t1 "classify, host filter, -t 1"
    row host_t2 "classify, host filter, -t 2"
    row kleb_t1 "classify, Klebsiella filter, -t 1"
    row kleb_t2 "classify, Klebsiella filter, -t 2"
} > "$WORK/read_cost.md.tmp"
mv "$WORK/read_cost.rows.tsv.tmp" "$WORK/read_cost.rows.tsv"
mv "$WORK/read_cost.md.tmp" "$WORK/read_cost.md"
cat "$WORK/read_cost.md"
