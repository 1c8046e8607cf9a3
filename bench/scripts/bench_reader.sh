#!/usr/bin/env bash
# Reader-alone benchmark: ksieve::io::reader on a simulated gzip'd FASTQ against `pigz -dc > /dev/null`,
# `gzip -dc` and `igzip -d -c` (ISA-L, the fastest single-stream gzip decompressor), plus the plain and BGZF variants of the same reads. gzip input is read twice: with the
# default decompressor (ISA-L igzip when the library was built with it) and with KSIEVE_ZLIB=1 (zlib).
#
# Usage: bench/scripts/bench_reader.sh [WORK_DIR]
# Environment (besides those of bench_common.sh):
#   KSIEVE_READER_BENCH  the ksieve_reader_bench executable (bench/pipeline/bench_reader.cpp). Default: the first
#                        build-*/bench/ksieve_reader_bench found, else it is compiled here with g++ against
#                        the libksieve_pipeline.a of KSIEVE_BUILD_DIR (default: the first of build-io,
#                        build-bench-e2e, build that has one).
#   KSIEVE_BENCH_ROUNDS  timed rounds per command (default 5); the tables give the fastest round (wall
#                        clock) and the median CPU seconds (user + sys), since other work on the machine
#                        only ever slows a round down. 0: print the table of the previous run again.
#   KSIEVE_BENCH_RT      1: run every timed command under `chrt -f 1` (SCHED_FIFO; needs root or
#                        CAP_SYS_NICE) so that other work on a shared machine cannot take its cores away;
#                        all commands are treated alike. Default 0 (normal scheduling).
#   KSIEVE_BENCH_GZ      an existing gzip'd FASTQ to time instead of the simulated one (e.g.
#                        /tmp/ksieve-bench/data/mix-2000000.fq.gz); implies KSIEVE_BENCH_GZIP_ONLY=1.
#   KSIEVE_BENCH_GZIP_ONLY  1: time only the gzip commands (pigz -dc, gzip -dc, igzip -d -c, ksieve reader with ISA-L
#                        and with zlib), not the BGZF and plain variants.
# Output: a Markdown table on stdout; raw timings (name, wall, user, sys, 1-minute load average before the
# command) in $WORK/reader/timings.tsv.
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

ROUNDS=${KSIEVE_BENCH_ROUNDS:-5}
RDIR=$WORK/reader
mkdir -p "$RDIR"
GZ_ONLY=${KSIEVE_BENCH_GZIP_ONLY:-0}
[[ -n ${KSIEVE_BENCH_GZ:-} ]] && GZ_ONLY=1
if [[ -n ${KSIEVE_BENCH_GZ:-} ]]; then
    need_tools pigz gzip igzip awk /usr/bin/time
else
    need_tools art_illumina pigz gzip igzip xz awk /usr/bin/time
fi

# ---------------------------------------------------------------------------------------------------------
# the driver
# ---------------------------------------------------------------------------------------------------------
find_driver()
{
    if [[ -n ${KSIEVE_READER_BENCH:-} ]]; then
        [[ -x $KSIEVE_READER_BENCH ]] || die "KSIEVE_READER_BENCH=$KSIEVE_READER_BENCH is not executable"
        DRIVER=$KSIEVE_READER_BENCH
        return
    fi
    local c
    for c in "$REPO"/build*/bench/ksieve_reader_bench; do
        if [[ -x $c ]]; then DRIVER=$c; return; fi
    done
    die "no ksieve_reader_bench found: build it first (cmake --build build --target ksieve_reader_bench)"
}

# ---------------------------------------------------------------------------------------------------------
# data: NREADS simulated 150 bp reads (art_illumina HiSeq 2500, seed 42) from K. pneumoniae HS11286
# ---------------------------------------------------------------------------------------------------------
make_reader_data()
{
    if [[ -n ${KSIEVE_BENCH_GZ:-} ]]; then
        [[ -s $KSIEVE_BENCH_GZ ]] || die "KSIEVE_BENCH_GZ=$KSIEVE_BENCH_GZ is missing or empty"
        GZ=$KSIEVE_BENCH_GZ
        return
    fi
    FQ=$RDIR/reads-$NREADS.fq
    GZ=$FQ.gz
    BGZ=$RDIR/reads-$NREADS.bgzf.fq.gz
    if [[ ! -s $FQ ]]; then
        [[ -d $KLEB_DIR ]] || die "$KLEB_DIR missing (apt-get install kleborate-examples)"
        xz -dc "$KLEB_DIR/Klebs_HS11286.fna.xz" > "$RDIR/host.fa"
        simulate "$RDIR/host.fa" "$NREADS" 42 h "$FQ"
    fi
    [[ -s $GZ ]] || { log "gzip -6 -> $GZ"; pigz -p 2 -6 -n -c "$FQ" > "$GZ.tmp" && mv "$GZ.tmp" "$GZ"; }
    [[ -s $BGZ ]] || { log "BGZF -> $BGZ"; "$DRIVER" -t 2 --copy "$BGZ" "$FQ" > /dev/null; }
}

# ---------------------------------------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------------------------------------
TIMINGS=$RDIR/timings.tsv
# timed NAME CMD...: one round; appends "NAME wall user sys load1" to $TIMINGS (stdout of CMD discarded)
timed()
{
    local name=$1
    shift
    local rt=()
    [[ ${KSIEVE_BENCH_RT:-0} == 1 ]] && rt=(chrt -f 1)
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    "${rt[@]}" /usr/bin/time -f "%e %U %S" -o "$RDIR/last.time" "$@" > /dev/null || die "$name failed: $*"
    echo -e "$name\t$(tr ' ' '\t' < "$RDIR/last.time")\t$load" >> "$TIMINGS"
}

# median of the numbers on stdin
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else print a[int((NR + 1) / 2)] }'; }
median_wall() { awk -F'\t' -v n="$1" '$1 == n { print $2 }' "$TIMINGS" | median; }
median_load() { awk -F'\t' -v n="$1" '$1 == n && $5 != "" { print $5 }' "$TIMINGS" | median; }

best_wall() { awk -F'\t' -v n="$1" '$1 == n { if (m == "" || $2 < m) m = $2 } END { print m }' "$TIMINGS"; }
median_cpu() { awk -F'\t' -v n="$1" '$1 == n { print $3 + $4 }' "$TIMINGS" | median; }

find_driver
make_reader_data
if [[ -n ${FQ:-} ]]; then
    BYTES=$(stat -c %s "$FQ")
else
    BYTES=$(pigz -dc "$GZ" | wc -c)
fi
((ROUNDS > 0)) && : > "$TIMINGS" # ROUNDS=0: only print the table of the last run
for ((r = 1; r <= ROUNDS; ++r)); do
    log "round $r/$ROUNDS"
    # interleave the commands so that load from other processes spreads over all of them
    timed "pigz -dc (gzip)" pigz -dc "$GZ"
    timed "ksieve reader (gzip)" "$DRIVER" "$GZ"
    timed "ksieve reader, KSIEVE_ZLIB=1 (gzip)" env KSIEVE_ZLIB=1 "$DRIVER" "$GZ"
    timed "gzip -dc (gzip)" gzip -dc "$GZ"
    timed "igzip -d -c (gzip)" igzip -d -c "$GZ"
    [[ $GZ_ONLY == 1 ]] && continue
    timed "ksieve reader -t 1 (BGZF)" "$DRIVER" -t 1 "$BGZ"
    timed "ksieve reader -t 2 (BGZF)" "$DRIVER" -t 2 "$BGZ"
    timed "pigz -dc (BGZF)" pigz -dc "$BGZ"
    timed "ksieve reader (plain)" "$DRIVER" "$FQ"
    timed "cat (plain)" cat "$FQ"
done

DONE=$(awk -F'\t' 'NR == 1 { n = $1 } $1 == n { ++c } END { print c + 0 }' "$TIMINGS")
if [[ -n ${KSIEVE_BENCH_GZ:-} ]]; then
    echo "Reader alone: $GZ ($(stat -c %s "$GZ") bytes gzip, $BYTES bytes of FASTQ); $DONE rounds."
else
    echo "Reader alone: $NREADS simulated 150 bp reads, $BYTES bytes of FASTQ; $DONE rounds."
fi
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(date -u +%Y-%m-%d)," \
    "scheduling: $([[ ${KSIEVE_BENCH_RT:-0} == 1 ]] && echo 'SCHED_FIFO (chrt -f 1)' || echo normal)," \
    "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command | best wall s | median wall s | MB/s (FASTQ bytes, best) | median CPU s | speed vs pigz -dc (best wall, same input) | median load avg |"
echo "|---|---:|---:|---:|---:|---:|---:|"
PIGZ_GZ=$(best_wall "pigz -dc (gzip)")
PIGZ_BGZ=$(best_wall "pigz -dc (BGZF)")
while IFS= read -r name; do
    w=$(best_wall "$name")
    ref=""
    case $name in
        *"(gzip)") ref=$PIGZ_GZ ;;
        *"(BGZF)") ref=$PIGZ_BGZ ;;
    esac
    ratio=""
    [[ -n $ref ]] && ratio="$(pct "$ref" "$w")%"
    echo "| $name | $w | $(median_wall "$name") | $(fmt_rate "$((BYTES / 1000000))" "$w") | $(median_cpu "$name") | $ratio |" \
        "$(median_load "$name") |"
done < <(cut -f1 "$TIMINGS" | awk '!seen[$0]++')
