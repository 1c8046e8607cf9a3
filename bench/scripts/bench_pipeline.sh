#!/usr/bin/env bash
# ksieve end-to-end benchmark against peer tools, on simulated Klebsiella reads.
#
# Usage: bench/scripts/bench_pipeline.sh [WORK_DIR]
#   WORK_DIR (or $KSIEVE_BENCH_DIR; default /tmp/ksieve-bench) holds the generated data, the outputs and the
#   raw timing reports ($WORK_DIR/results). Never commit anything from it.
# Environment: KSIEVE (executable), KSIEVE_BENCH_READS (default 2000000), KSIEVE_BENCH_THREADS (default "1 2"),
#   KSIEVE_BENCH_DOC (markdown report; default $WORK_DIR/pipeline.md, "-" for none),
#   KSIEVE_BENCH_RESUME=1 (reuse the measurements an interrupted earlier run completed),
#   KSIEVE_BENCH_COMMIT (the commit the ksieve executable was built from, for the report).
#
# For every thread count T it measures, with /usr/bin/time -v (wall time, peak RSS):
#   floor     pigz -dc -p T of the gzip'd read file (the decompression floor)
#   build     ksieve build vs kmc (-ci1), on the host genome (--expected auto) and on the mixed reads (k-mers/s)
#   classify  ksieve classify -f host.ksf vs bbduk.sh ref=host.fa on the mixed reads (reads/s, sensitivity)
#   dedup     ksieve dedup --min-count 20 --min-hit-fraction 0.5 vs bbnorm.sh target=20 passes=1 and
#             khmer normalize-by-median.py -C 20 (single-threaded: run once, at T=1) on the host-only reads
# ksieve runs without --stats (counts come from the outputs): with --stats or --report, classify looks up
# every k-mer for exact hit counts; one extra row measures that.
# and prints a markdown table, which it also writes, with the machine, versions, commands and the ratios
# against the peers, into the markdown report.
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

THREADS=${KSIEVE_BENCH_THREADS:-"1 2"}
DOC=${KSIEVE_BENCH_DOC:-$WORK/pipeline.md}
need_tools pigz kmc bbduk.sh bbnorm.sh java "$KHMER_NORMALIZE" /usr/bin/time
find_ksieve
"$KSIEVE" --version > /dev/null || die "$KSIEVE --version failed"
make_data

RES=$WORK/results
OUT=$WORK/out
RESUME=${KSIEVE_BENCH_RESUME:-0}
if [[ $RESUME != 1 ]]; then rm -rf "$RES" "$OUT"; fi
mkdir -p "$RES" "$OUT"
HOST=$GENOMES/host.fa
T_MAX=0
for t in $THREADS; do if (( t > T_MAX )); then T_MAX=$t; fi; done

ROWS=()        # tool|task|input|threads|wall s|CPU s|CPU %|load|reads/s|k-mers/s|rss|result
declare -A V   # named results: V[name.seconds], V[name.rss], V[name.count], ...
REUSED=()      # measurements taken from an earlier, interrupted run (KSIEVE_BENCH_RESUME=1)

# fresh NAME: true when NAME must be measured. With KSIEVE_BENCH_RESUME=1 a measurement that an earlier run
# of this script completed ($RES/NAME.time and $RES/NAME.vals present) is reused instead.
fresh()
{
    if [[ $RESUME == 1 && -s $RES/$1.time && -s $RES/$1.vals ]]; then
        log "reuse $1 (measured $(date -u -r "$RES/$1.time" '+%H:%M UTC'))"
        REUSED+=("$1 ($(date -u -r "$RES/$1.time" '+%Y-%m-%d %H:%M UTC'))")
        return 1
    fi
    rm -f "$RES/$1.vals"
}

# add_row NAME TOOL TASK INPUT THREADS READS KMERS: one table row from $RES/NAME.time and $RES/NAME.vals
# (line 1: result text; line 2, optional: count [host other lambda]).
add_row()
{
    local name=$1 tool=$2 task=$3 input=$4 t=$5 reads=$6 kmers=$7 s rss cpu cs ld rps kps result c h o l
    s=$(wall_s "$name"); rss=$(rss_mb "$name"); cpu=$(cpu_pct "$name"); cs=$(cpu_s "$name"); ld=$(load_at "$name")
    rps=-; kps=-
    [[ $reads != - ]] && rps=$(fmt_rate "$reads" "$s")
    [[ $kmers != - ]] && kps=$(fmt_rate "$kmers" "$s")
    { read -r result; read -r c h o l || true; } < "$RES/$name.vals"
    V[$name.seconds]=$s; V[$name.rss]=$rss; V[$name.rps]=$rps; V[$name.kps]=$kps; V[$name.cpu]=$cs
    V[$name.count]=${c:-}; V[$name.h]=${h:-}; V[$name.o]=${o:-}; V[$name.l]=${l:-}
    ROWS+=("$tool|$task|$input|$t|$s|$cs|$cpu|$ld|$rps|$kps|$rss|$result")
}

size_mb() { du -cm "$@" | awk 'END { print $1 }'; }

# kept_vals NAME FASTQ: the .vals of a normalization run.
kept_vals()
{
    local c
    c=$(fq_count "$2")
    printf 'kept %s (%s%%)\n%s\n' "$c" "$(pct "$c" "$NORM_READS")" "$c" > "$RES/$1.vals"
    rm -f "$2"
}

# known_vals NAME FASTQ: the .vals of a classification run (known reads by origin).
known_vals()
{
    local h o l
    read -r h o l < <(fq_origin_counts "$2")
    printf 'known %s; host %s%%\n%s %s %s %s\n' "$((h + o + l))" "$(pct "$h" "$MIX_H")" "$((h + o + l))" "$h" "$o" "$l" \
        > "$RES/$1.vals"
    rm -f "$OUT/known.fq" "$OUT/novel.fq"
}

# classify_ksieve NAME T LABEL [OPTIONS...] / classify_bbduk NAME T LABEL [OPTIONS...]
classify_ksieve()
{
    local name=$1 t=$2 label=$3
    shift 3
    if fresh "$name"; then
        [[ -s $OUT/host-t$t.ksf ]] || "$KSIEVE" build -q -t "$t" -k "$K" --expected auto -o "$OUT/host-t$t.ksf" "$HOST"
        run_timed "$name" /dev/null "$KSIEVE" classify -q -t "$t" -f "$OUT/host-t$t.ksf" "$@" \
            --known "$OUT/known.fq" --novel "$OUT/novel.fq" "$MIX"
        known_vals "$name" "$OUT/known.fq"
    fi
    add_row "$name" ksieve "classify$label" mix "$t" "$MIX_READS" "$MIX_KMERS"
}
classify_bbduk()
{
    local name=$1 t=$2 label=$3
    shift 3
    if fresh "$name"; then
        run_timed "$name" /dev/null bbduk.sh ref="$HOST" in="$MIX" out="$OUT/novel.fq" outm="$OUT/known.fq" \
            k="$K" threads="$t" "$@"
        known_vals "$name" "$OUT/known.fq"
    fi
    add_row "$name" bbduk "classify$label" mix "$t" "$MIX_READS" "$MIX_KMERS"
}

for T in $THREADS; do
    # --- decompression floor -------------------------------------------------------------------------
    n=floor_mix_t$T
    if fresh "$n"; then run_timed "$n" /dev/null pigz -dc -p "$T" "$MIX" && echo - > "$RES/$n.vals"; fi
    add_row "$n" pigz "decompress (floor)" mix "$T" "$MIX_READS" "$MIX_KMERS"
    n=floor_norm_t$T
    if fresh "$n"; then run_timed "$n" /dev/null pigz -dc -p "$T" "$NORM" && echo - > "$RES/$n.vals"; fi
    add_row "$n" pigz "decompress (floor)" norm "$T" "$NORM_READS" "$NORM_KMERS"

    # --- build -------------------------------------------------------------------------------------------
    n=ksieve_build_host_t$T
    if fresh "$n"; then
        run_timed "$n" /dev/null "$KSIEVE" build -q -t "$T" -k "$K" --expected auto -o "$OUT/host-t$T.ksf" "$HOST"
        echo "filter $(size_mb "$OUT/host-t$T.ksf") MB" > "$RES/$n.vals"
    fi
    add_row "$n" ksieve build host.fa "$T" - "$HOST_KMERS"
    n=kmc_build_host_t$T
    mkdir -p "$OUT/kmctmp"
    if fresh "$n"; then
        run_timed "$n" "$RES/$n.out" kmc -k"$K" -t"$T" -ci1 -fm "$HOST" "$OUT/kmc_host_t$T" "$OUT/kmctmp"
        echo "db $(size_mb "$OUT/kmc_host_t$T".kmc_*) MB" > "$RES/$n.vals"
    fi
    add_row "$n" kmc "build (count)" host.fa "$T" - "$HOST_KMERS"
    n=ksieve_build_mix_t$T
    if fresh "$n"; then
        run_timed "$n" /dev/null "$KSIEVE" build -q -t "$T" -k "$K" -o "$OUT/mix-t$T.ksf" "$MIX"
        echo "filter $(size_mb "$OUT/mix-t$T.ksf") MB" > "$RES/$n.vals"
    fi
    add_row "$n" ksieve build mix "$T" "$MIX_READS" "$MIX_KMERS"
    n=kmc_build_mix_t$T
    if fresh "$n"; then
        run_timed "$n" "$RES/$n.out" kmc -k"$K" -t"$T" -ci1 -fq "$MIX" "$OUT/kmc_mix_t$T" "$OUT/kmctmp"
        echo "db $(size_mb "$OUT/kmc_mix_t$T".kmc_*) MB" > "$RES/$n.vals"
    fi
    add_row "$n" kmc "build (count)" mix "$T" "$MIX_READS" "$MIX_KMERS"
    rm -f "$OUT"/kmc_*_t"$T".kmc_* "$OUT/mix-t$T.ksf"

    # --- classify ------------------------------------------------------------------------------------------
    classify_ksieve "ksieve_classify_t$T" "$T" ""
    classify_bbduk "bbduk_classify_t$T" "$T" ""
    if (( T == T_MAX )); then
        # bbduk's default rule (>= 1 hit) in ksieve, and a hit fraction of 0.5 of exact k-mers in bbduk
        classify_ksieve "ksieve_classify_any_t$T" "$T" " (>=1 hit)" --min-hits 1 --min-hit-fraction 0.000001
        # --stats needs exact hit counts: every k-mer is looked up (no early decision)
        classify_ksieve "ksieve_classify_stats_t$T" "$T" " (--stats: all k-mers)" --stats "$RES/ksieve_classify_stats_t$T.json"
        classify_bbduk "bbduk_classify_mkf_t$T" "$T" " (mkf=0.5 mm=f)" mkf=0.5 mm=f
    fi

    # --- dedup / digital normalization ---------------------------------------------------------------------
    n=ksieve_dedup_t$T
    if fresh "$n"; then
        run_timed "$n" /dev/null "$KSIEVE" dedup -q -t "$T" -k "$K" --min-count 20 --min-hit-fraction 0.5 \
            --novel "$OUT/kept.fq" "$NORM"
        kept_vals "$n" "$OUT/kept.fq"
    fi
    add_row "$n" ksieve "dedup C=20" norm "$T" "$NORM_READS" "$NORM_KMERS"
    n=bbnorm_t$T
    if fresh "$n"; then
        run_timed "$n" /dev/null bbnorm.sh -Xmx2g in="$NORM" out="$OUT/kept.fq" target=20 passes=1 k="$K" threads="$T"
        kept_vals "$n" "$OUT/kept.fq"
    fi
    add_row "$n" bbnorm "normalize target=20 passes=1" norm "$T" "$NORM_READS" "$NORM_KMERS"
    if (( T == 1 )) || [[ -z ${V[khmer_t1.count]:-} && $T == "$T_MAX" ]]; then
        n=khmer_t1
        if fresh "$n"; then
            run_timed "$n" /dev/null "$KHMER_NORMALIZE" -k "$K" -C 20 -M 2e9 --force_single \
                -o "$OUT/kept.fq" "$NORM"
            kept_vals "$n" "$OUT/kept.fq"
        fi
        add_row "$n" khmer "normalize-by-median C=20" norm 1 "$NORM_READS" "$NORM_KMERS"
    fi
done
rm -rf "$OUT"

# ------------------------------------------------------------------------------------------------------------
# Report
# ------------------------------------------------------------------------------------------------------------
table()
{
    echo "| tool | task | input | threads | wall s | CPU s | CPU % | load | reads/s | k-mers/s | peak RSS MB | result |"
    echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    local r
    for r in "${ROWS[@]}"; do echo "| ${r//|/ | } |"; done
}

T=$T_MAX
# ratios: ksieve against the floor and the peers at the largest thread count measured
ratios()
{
    local t=$T kk kh
    echo "At $t threads (ratios of wall seconds; CPU seconds in the table above):"
    echo
    echo "| comparison | ksieve | peer | ratio |"
    echo "|---|---|---|---|"
    echo "| classify against the decompression floor (pigz -dc) | ${V[ksieve_classify_t$t.seconds]} s | ${V[floor_mix_t$t.seconds]} s | $(fdiv "${V[ksieve_classify_t$t.seconds]}" "${V[floor_mix_t$t.seconds]}")x the floor |"
    echo "| classify speed against bbduk | ${V[ksieve_classify_t$t.seconds]} s, ${V[ksieve_classify_t$t.rss]} MB | ${V[bbduk_classify_t$t.seconds]} s, ${V[bbduk_classify_t$t.rss]} MB | $(fdiv "${V[bbduk_classify_t$t.seconds]}" "${V[ksieve_classify_t$t.seconds]}")x faster |"
    echo "| dedup speed against khmer (single-threaded) | ${V[ksieve_dedup_t$t.seconds]} s, ${V[ksieve_dedup_t$t.rss]} MB | ${V[khmer_t1.seconds]} s, ${V[khmer_t1.rss]} MB | $(fdiv "${V[khmer_t1.seconds]}" "${V[ksieve_dedup_t$t.seconds]}")x faster |"
    kk=${V[ksieve_dedup_t$t.count]}; kh=${V[khmer_t1.count]}
    echo "| dedup reads kept (-C 20) | $kk | khmer $kh | $(awk -v a="$kk" -v b="$kh" 'BEGIN { printf "%+.4f%%", 100 * (a - b) / b }') |"
    echo "| build of the genome, k-mers/s | ${V[ksieve_build_host_t$t.kps]} | kmc ${V[kmc_build_host_t$t.kps]} | $(fdiv "${V[ksieve_build_host_t$t.kps]}" "${V[kmc_build_host_t$t.kps]}")x |"
    echo "| build of the reads, k-mers/s | ${V[ksieve_build_mix_t$t.kps]} | kmc ${V[kmc_build_mix_t$t.kps]} | $(fdiv "${V[ksieve_build_mix_t$t.kps]}" "${V[kmc_build_mix_t$t.kps]}")x |"
    local t1
    for t1 in $THREADS; do
        if [[ ${V[ksieve_dedup_t$t1.count]} != "$kk" ]]; then
            echo "| dedup output independent of threads | $t1 threads kept ${V[ksieve_dedup_t$t1.count]} | $t threads kept $kk | DIFFERENT |"
        fi
    done
}

sensitivity()
{
    echo "Fraction of reads called known (matched), by origin, in the mixed set ($MIX_H host, $MIX_O other Klebsiella, $MIX_L lambda reads):"
    echo
    echo "| tool | rule | threads | host (sensitivity) | other Klebsiella | lambda |"
    echo "|---|---|---:|---:|---:|---:|"
    local n label
    for n in ksieve_classify ksieve_classify_any bbduk_classify bbduk_classify_mkf; do
        for t in $THREADS; do
            [[ -n ${V[${n}_t$t.h]:-} ]] || continue
            case $n in
                ksieve_classify) label="ksieve defaults: minimizer:11 filter, >= 2 hits and >= 10% of the sampled k-mers" ;;
                ksieve_classify_any) label="ksieve, >= 1 hit (--min-hits 1 --min-hit-fraction 1e-6)" ;;
                bbduk_classify) label="bbduk, >= 1 hit, middle base masked (defaults mkh=1 mm=t)" ;;
                bbduk_classify_mkf) label="bbduk, exact k-mers, hits/kmers >= 0.5 (mkf=0.5 mm=f)" ;;
            esac
            echo "| ${n%%_*} | $label | $t | $(pct "${V[${n}_t$t.h]}" "$MIX_H")% | $(pct "${V[${n}_t$t.o]}" "$MIX_O")% | $(pct "${V[${n}_t$t.l]}" "$MIX_L")% |"
        done
    done
}

commands()
{
    local f
    for f in "$RES"/*.cmd; do
        printf '%-26s %s\n' "$(basename "$f" .cmd)" "$(sed "s|$WORK|\$WORK|g" "$f")"
    done
}

versions()
{
    if [[ -n ${KSIEVE_BENCH_COMMIT:-} ]]; then
        echo "- ksieve: $("$KSIEVE" --version 2>&1 | head -n1), built from commit $KSIEVE_BENCH_COMMIT (Release)"
    else
        echo "- ksieve: $("$KSIEVE" --version 2>&1 | head -n1), executable of $(date -u -r "$KSIEVE" '+%Y-%m-%d %H:%M UTC')" \
            "(repository HEAD $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?'); the working tree may differ)"
    fi
    local p
    for p in bbmap khmer kmc pigz art-nextgen-simulation-tools openjdk-17-jre-headless; do
        echo "- $p (Debian): $(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo 'not from dpkg')"
    done
    echo "- $(java -version 2>&1 | head -n1)"
}

report()
{
    echo "Generated by \`bench/scripts/bench_pipeline.sh\`."
    echo
    local first last
    first=$(ls -tr "$RES"/*.time | head -n1); last=$(ls -t "$RES"/*.time | head -n1)
    echo "- Date: measurements from $(date -u -r "$first" '+%Y-%m-%d %H:%M') to $(date -u -r "$last" '+%H:%M UTC')"
    echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores available;" \
        "RAM $(awk '/MemTotal/ { printf "%.1f GB", $2 / 1048576 }' /proc/meminfo)"
    echo "- The machine is shared with other work: the table gives the 1-minute load average when each command started" \
        "(one run per row); with a load above the $(nproc) cores, wall times and multi-thread scaling carry that noise."
    echo "- Wall time and peak RSS: \`/usr/bin/time -v\` (Maximum resident set size of the largest process)."
    echo
    echo "## Versions"
    echo
    versions
    echo
    echo "## Data"
    echo
    echo "Simulated with \`art_illumina -ss HS25 -l 150 -f COV -rs SEED -na\` (HiSeq 2500 profile, 150 bp single end)" \
        "from the Debian package kleborate-examples (Klebsiella pneumoniae genomes) and bowtie2-examples (lambda phage);" \
        "records shuffled with a fixed seed, gzip'd with pigz -6."
    echo
    echo "- host.fa: K. pneumoniae HS11286, chromosome + plasmids, $(genome_len "$HOST") bp, $HOST_KMERS k-mers (k=$K)."
    echo "- mix: $MIX_READS reads, $MIX_KMERS k-mers: $MIX_H from the host (~$(awk -v n="$MIX_H" -v g="$(genome_len "$HOST")" 'BEGIN { printf "%.0f", n * 150 / g }')x)," \
        "$MIX_O from K. pneumoniae Kp1084, MGH78578 and NTUH-K2044 (same species: they share much of their sequence with the host)," \
        "$MIX_L from lambda phage. Used for build and classify."
    local cov
    cov=$(awk -v n="$NORM_READS" -v g="$(genome_len "$HOST")" 'BEGIN { printf "%.0f", n * 150 / g }')
    echo "- norm: $NORM_READS reads, $NORM_KMERS k-mers, host only (~${cov}x coverage;" \
        "$(if (( cov >= 40 )); then echo "well above"; else echo "NOT well above"; fi) the normalization target 20)." \
        "Used for dedup / normalization."
    echo
    echo "## Results"
    echo
    echo "reads/s and k-mers/s are input reads (k-mer positions, k=$K) divided by wall seconds; the k-mer count is the" \
        "number of valid $K-base windows of the input, counted independently of any tool. CPU s is user + system time," \
        "CPU % its ratio to wall time (100% = one core busy), load the 1-minute load average when the command started" \
        "(above the $(nproc) cores, the command had to share them with other work: compare CPU s, not wall s, across rows)." \
        "khmer is single-threaded and runs once. Classify and dedup write their selected reads as uncompressed FASTQ in all tools."
    echo
    table
    echo
    echo "## Classification sensitivity"
    echo
    sensitivity
    echo
    echo "## Ratios"
    echo
    ratios
    echo
    echo "## Notes"
    echo
    echo "- bbduk loads and indexes host.fa in every run (included in its time); ksieve classify reads a prebuilt" \
        "filter (its build is the 'ksieve build host.fa' row, with --expected auto: the filter sized to the genome" \
        "from a first pass, which that row's time includes). bbduk runs with its defaults (maskmiddle=t, hdist=0," \
        "Java heap from its own autodetection); the Java start-up is included."
    echo "- bbnorm runs with passes=1 (one-pass normalization like khmer and ksieve dedup; its 2-pass default took" \
        "over 10 minutes per run here) and -Xmx2g (its default heap is 84% of free RAM, unsafe on a shared machine);" \
        "otherwise defaults (prefilter, min depth 5, so it also drops low-depth error reads): its kept count is not expected to equal khmer's."
    echo "- khmer normalize-by-median runs with -M 2e9 (a 2 GB count-min sketch, 4 tables): its peak RSS follows that setting."
    echo "- kmc runs with -ci1 (keep all k-mers) and its default memory limit; it writes a k-mer database, ksieve a filter file."
    echo
    echo "## Commands"
    echo
    echo "\$WORK is the benchmark's work directory; ksieve the executable measured. Every command ran under \`/usr/bin/time -v\`."
    echo
    if (( ${#REUSED[@]} )); then
        echo "Resumed run (KSIEVE_BENCH_RESUME=1): ${#REUSED[@]} measurements come from an earlier invocation of the script on the same data: ${REUSED[*]}."
        echo
    fi
    echo '```'
    commands
    echo '```'
}

echo
table
echo
sensitivity
echo
ratios
if [[ $DOC != - ]]; then
    report | sed "s|$KSIEVE|ksieve|g" > "$DOC.tmp"
    mv "$DOC.tmp" "$DOC"
    log "report written to $DOC"
fi
