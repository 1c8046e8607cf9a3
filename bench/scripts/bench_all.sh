#!/usr/bin/env bash
# Every end-to-end benchmark, its plots and docs/benchmarks.md, in one command. The steps:
#   host      bench_host_depletion.sh  synthetic host (1 Gbp) and 2 M reads: build, classify and accuracy per
#                                      sampling, compressed and paired outputs; kmc, bbduk, pigz, igzip
#   scaling   bench_scaling.sh         classify throughput against threads, input size and filter size
#                                      (reuses the host step's data and filters)
#   pipeline  bench_pipeline.sh        Klebsiella sample: build and classify against kmc and bbduk
#   normalize bench_normalize.sh       dedup of the Klebsiella reads and of a synthetic metagenome against
#                                      khmer and bbnorm; coverage kept per genome
#   algebra   bench_algebra.sh         merge, intersect, subtract and a 16-input merge against kmc_tools
#   fpr       bench_fpr.sh             measured false-positive rate and bits per k-mer against --fpr, per type
#   filters   bench_filters.sh         the filters alone (Google Benchmark, tables of 2^26 keys)
#   human     bench_human_host.sh      a human-sized host (when that script exists)
#   labels    bench_labels.sh          labeled filters: screening against bbduk refstats, per-sample labeled
#                                      merges, exact "which samples" answers
# Each step leaves its report in WORK_DIR (STEP.md and the tables the plots read; STEP.rows.tsv in
# bench_common.sh's row format puts its rows with a panel into the peers plots) and this script writes
# STEP.meta next to it (commit, settings, duration). Then plot_benchmarks.py draws docs/plots/*.png and the
# page docs/benchmarks.md is assembled WHOLE from the step reports in WORK_DIR: steps may run in separate
# invocations at one commit (KSIEVE_BENCH_STEPS_ALL=normalize re-runs one and re-assembles the page), but a
# report of another commit, or one not written through this script, is refused. The page's hand-written
# part is bench/scripts/benchmarks_notes.md, included as it is.
#
# Usage: bench/scripts/bench_all.sh [WORK_DIR]       (WORK_DIR default /tmp/ksieve-bench; ~30 GB of disk)
# Environment:
#   KSIEVE_BENCH_STEPS_ALL  the steps to run (default: all of the above; "" assembles the page only)
#   KSIEVE_BENCH_DOC_DIR    where benchmarks.md and plots/ go (default <repo>/docs)
#   KSIEVE_BENCH_SCALE      default: about 45 minutes on a quiet 2-core machine, estimated per step from
#                           the timings of its commands: host 12, scaling 3, pipeline 3 (plus about 4 to
#                           simulate the Klebsiella reads, once per WORK_DIR), normalize 17, algebra 3,
#                           fpr 1, filters 2 (human: its own); large: 5 runs of each command, 3 of the slow
#                           peers and the 10 M-read metagenome against every peer (about 2.5 hours)
#   and those of bench_common.sh (KSIEVE, threads, repetitions, sizes; tiny sizes for a quick check).
# Needs 12 GB of memory (kmc on the 1 Gbp host).
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

ALL_STEPS="host scaling pipeline normalize algebra labels fpr filters"
[[ -f $BENCH_SCRIPTS/bench_human_host.sh ]] && ALL_STEPS+=" human"
# the sections' order on the page
PAGE_STEPS="host human scaling pipeline normalize algebra labels fpr filters"
STEPS=${KSIEVE_BENCH_STEPS_ALL-$ALL_STEPS}
DOC_DIR=${KSIEVE_BENCH_DOC_DIR:-$REPO/docs}
DOC=$DOC_DIR/benchmarks.md
PLOTS=$DOC_DIR/plots
NOTES=$BENCH_SCRIPTS/benchmarks_notes.md
find_ksieve
export KSIEVE
pick_python
# (a step runs whole: the parts selection of the host step is for working on it alone)
unset KSIEVE_BENCH_STEPS

script_of()
{
    case $1 in
        host) echo bench_host_depletion.sh ;;
        scaling) echo bench_scaling.sh ;;
        pipeline) echo bench_pipeline.sh ;;
        normalize) echo bench_normalize.sh ;;
        algebra) echo bench_algebra.sh ;;
        fpr) echo bench_fpr.sh ;;
        filters) echo bench_filters.sh ;;
        human) echo bench_human_host.sh ;;
        labels) echo bench_labels.sh ;;
        *) return 1 ;;
    esac
}

head_commit() { git -C "$REPO" rev-parse HEAD; }
# local changes to tracked files other than the page and its plots
dirty()
{
    [[ -n $(git -C "$REPO" status --porcelain --untracked-files=no -- . ':(exclude)docs/benchmarks.md' \
        ':(exclude)docs/plots') ]] && echo 1 || echo 0
}

run_step()
{
    local step=$1 script start
    script=$(script_of "$step") || die "unknown step '$step' (steps: $ALL_STEPS)"
    [[ -f $BENCH_SCRIPTS/$script ]] || die "step '$step' needs bench/scripts/$script"
    mkdir -p "$WORK"
    rm -f "$WORK/$step.meta"
    start=$(date +%s)
    log "step $step: bench/scripts/$script $WORK"
    bash "$BENCH_SCRIPTS/$script" "$WORK" > "$WORK/$step.log" 2>&1 || {
        tail -n 20 "$WORK/$step.log" >&2
        die "step $step failed (log: $WORK/$step.log)"
    }
    [[ -s $WORK/$step.md ]] || die "step $step wrote no $WORK/$step.md"
    {
        echo "commit=$(head_commit)"
        echo "dirty=$(dirty)"
        echo "started=$start"
        echo "finished=$(date +%s)"
        echo "scale=$SCALE"
        echo "threads=$T"
        echo "repeats=$REPEATS"
        echo "repeats_slow=$REPEATS_SLOW"
        echo "reads=$NREADS"
        echo "host_bases=$HOST_BASES"
        echo "meta_reads=$META_READS"
        echo "meta_large_reads=$META_LARGE_READS"
        echo "meta_large_peers=$META_LARGE_PEERS"
        echo "filter_log2n=$FILTER_LOG2N"
        echo "fpr_kmers=$FPR_KMERS"
        echo "fpr_queries=$FPR_QUERIES"
        echo "labels_host_bases=${KSIEVE_LABELS_HOST_BASES:-100000000}"
        echo "labels_reads=${KSIEVE_LABELS_READS:-1000000}"
        echo "labels_samples=${KSIEVE_LABELS_SAMPLES:-100}"
    } > "$WORK/$step.meta.tmp"
    mv "$WORK/$step.meta.tmp" "$WORK/$step.meta"
    log "step $step done in $(($(date +%s) - start)) s"
}

for step in $STEPS; do run_step "$step"; done

# ---------------------------------------------------------------------------------------------------------
# The page, from the step reports of this commit
# ---------------------------------------------------------------------------------------------------------
meta_of() { sed -n "s/^$2=//p" "$WORK/$1.meta"; }

# the steps with a report; refuses reports of another commit and reports not written through this script
HEAD_COMMIT=$(head_commit)
STEPS_DONE=()
for step in $PAGE_STEPS; do
    [[ -e $WORK/$step.md ]] || continue
    [[ -s $WORK/$step.meta ]] ||
        die "$WORK/$step.md has no $step.meta (not written by bench_all.sh): run KSIEVE_BENCH_STEPS_ALL=$step bench/scripts/bench_all.sh $WORK, or remove $WORK/$step.md"
    c=$(meta_of "$step" commit)
    [[ $c == "$HEAD_COMMIT" ]] ||
        die "the $step report in $WORK is of commit ${c:0:12}, not of HEAD ${HEAD_COMMIT:0:12}: run KSIEVE_BENCH_STEPS_ALL=$step bench/scripts/bench_all.sh $WORK, or remove $WORK/$step.md"
    for f in "$WORK/$step".*; do
        [[ $f == "$WORK/$step.meta" || $f == "$WORK/$step.log" || ! -f $f ]] && continue
        [[ $f -nt $WORK/$step.meta ]] &&
            die "$f is newer than $step.meta (written outside bench_all.sh): run KSIEVE_BENCH_STEPS_ALL=$step bench/scripts/bench_all.sh $WORK"
    done
    STEPS_DONE+=("$step")
done
((${#STEPS_DONE[@]})) || die "no step reports in $WORK"
missing=()
for step in $ALL_STEPS; do [[ " ${STEPS_DONE[*]} " == *" $step "* ]] || missing+=("$step"); done
((${#missing[@]} == 0)) || log "warning: no report of step(s) ${missing[*]} in $WORK: the page leaves them out"

SHORT=$(git -C "$REPO" rev-parse --short=10 HEAD)
cpu=$(lscpu | awk -F: '/Model name/ { gsub(/^ +/, "", $2); print $2; exit }')
mem=$(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo)
first=$(for s in "${STEPS_DONE[@]}"; do meta_of "$s" started; done | sort -n | head -n1)
last=$(for s in "${STEPS_DONE[@]}"; do meta_of "$s" finished; done | sort -n | tail -n1)
date_range="$(date -u -d "@$first" '+%Y-%m-%d %H:%M') to $(date -u -d "@$last" '+%Y-%m-%d %H:%M') UTC"
[[ ${date_range:0:10} == "$(date -u -d "@$last" +%Y-%m-%d)" ]] &&
    date_range="$(date -u -d "@$first" '+%Y-%m-%d %H:%M') to $(date -u -d "@$last" '+%H:%M') UTC"

disk()
{
    local src fstype dev model rota size
    read -r src fstype < <(df -PT "$WORK" | awk 'NR == 2 { print $1, $2 }')
    dev=$(lsblk -no PKNAME "$src" 2> /dev/null | head -n1)
    [[ -n $dev ]] && dev=/dev/$dev || dev=$src
    read -r rota size < <(lsblk -dno ROTA,SIZE "$dev" 2> /dev/null || true)
    model=$(lsblk -dno MODEL "$dev" 2> /dev/null | sed 's/ *$//' || true)
    printf '%s on %s' "$fstype" "$dev"
    [[ -n ${size:-} ]] && printf ', %s' "$size"
    [[ -n $model ]] && printf ', %s' "$model"
    if [[ ${rota:-} == 0 ]]; then printf ', not rotational'; elif [[ ${rota:-} == 1 ]]; then printf ', rotational'; fi
    echo
}

# version PACKAGE COMMAND...: the Debian package's version, else the first line the command prints
version()
{
    local p=$1 v
    shift
    v=$(dpkg-query -W -f='${Version}' "$p" 2> /dev/null || true)
    if [[ -n $v ]]; then echo "$v"; else "$@" 2>&1 | head -n1; fi
}

peers()
{
    echo "- bbmap (bbduk.sh, bbnorm.sh): $(version bbmap bbduk.sh --version)"
    echo "- khmer (normalize-by-median.py): $(version khmer "$KHMER_NORMALIZE" --version)"
    echo "- kmc (kmc, kmc_tools): $(version kmc kmc)"
    echo "- pigz: $(version pigz pigz --version)"
    echo "- isal (igzip): $(version isal igzip --version)"
    echo "- Java for bbmap: $(java -version 2>&1 | head -n1)"
    echo "- art_illumina (read simulation): $(version art-nextgen-simulation-tools art_illumina)"
}

# 1000000000 -> "1 G", 2000000 -> "2 M", 40000 -> "40 k"
size_text() { awk -v n="$1" 'BEGIN { if (n >= 1e9) printf "%g G", n / 1e9; else if (n >= 1e6) printf "%g M", n / 1e6;
    else if (n >= 1e3) printf "%g k", n / 1e3; else printf "%d ", n }'; }

title_of()
{
    case $1 in
        host) echo "Host depletion: a $(size_text "$(meta_of host host_bases)")bp host, $(size_text "$(meta_of host reads)") reads" ;;
        scaling) echo "classify against threads, input size and filter size" ;;
        pipeline) echo "Klebsiella sample: host removal and build against bbduk and kmc" ;;
        normalize) echo "Deduplication and normalization" ;;
        algebra) echo "Combining samples: set operations against kmc_tools" ;;
        fpr) echo "False-positive rate and bits per k-mer" ;;
        filters) echo "The filters alone" ;;
        human) echo "Human-sized host" ;;
        labels) echo "Labeled filters: screening and which samples" ;;
    esac
}

steps_table()
{
    echo "| section | script | threads | runs | sizes | duration |"
    echo "|---|---|---:|---|---|---:|"
    local s sizes d runs r rs
    for s in "${STEPS_DONE[@]}"; do
        r=$(meta_of "$s" repeats); rs=$(meta_of "$s" repeats_slow)
        case $s in
            host) runs="$r; kmc $rs" ;;
            normalize) runs="$r; khmer and bbnorm $rs; on the large metagenome every tool $rs" ;;
            fpr) runs="1 per filter (counts, not times)" ;;
            filters) runs="$r repetitions in random order" ;;
            human) runs="-" ;;
            labels) runs="$r; bbduk $rs" ;;
            *) runs=$r ;;
        esac
        case $s in
            host | scaling) sizes="host $(meta_of "$s" host_bases) bp, $(meta_of "$s" reads) reads" ;;
            pipeline | algebra) sizes="$(meta_of "$s" reads) reads per set" ;;
            normalize) sizes="$(meta_of "$s" reads), $(meta_of "$s" meta_reads) and $(meta_of "$s" meta_large_reads) reads" ;;
            fpr) sizes="$(meta_of "$s" fpr_kmers) k-mers stored, $(meta_of "$s" fpr_queries) looked up" ;;
            filters) sizes="2^$(meta_of "$s" filter_log2n) keys" ;;
            labels) sizes="host $(meta_of "$s" labels_host_bases) bp, $(meta_of "$s" labels_reads) reads, $(meta_of "$s" labels_samples) samples" ;;
            *) sizes="-" ;;
        esac
        d=$(($(meta_of "$s" finished) - $(meta_of "$s" started)))
        printf '| %s | `%s` | %s | %s | %s | %d min %02d s |\n' "$(title_of "$s")" "bench/scripts/$(script_of "$s")" \
            "$([[ $s == filters ]] && echo 1 || meta_of "$s" threads)" "$runs" "$sizes" $((d / 60)) $((d % 60))
    done
}

methods()
{
    local scales dirty_any=0 s
    scales=$(for s in "${STEPS_DONE[@]}"; do meta_of "$s" scale; done | sort -u | paste -sd/)
    for s in "${STEPS_DONE[@]}"; do [[ $(meta_of "$s" dirty) == 1 ]] && dirty_any=1; done
    local build_type
    build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$(dirname "$KSIEVE")/../CMakeCache.txt" 2> /dev/null || true)
    echo "- Commit: \`$SHORT\`$( ((dirty_any)) && echo ", with local changes to tracked files");" \
        "$("$KSIEVE" --version 2>&1 | head -n1)${build_type:+, $build_type build}."
    echo "- Date: $date_range."
    echo "- Machine: $cpu, $(nproc) cores, $mem of memory, $(uname -sr); disk: $(disk)."
    echo "- Scale: $scales (\`KSIEVE_BENCH_SCALE=large\` runs more repetitions and the large metagenome against every peer)."
    echo "- Runs: commands run in alternated rounds (A B A B ...); the tables give the wall seconds of the fastest,"
    echo "  the median and the slowest run, and the medians of CPU seconds (user + system) and peak resident"
    echo "  memory, from GNU time (\`/usr/bin/time -f '%e %U %S %M'\`). Each run starts after \`sync\` (not timed)."
    echo "  The runs column below gives the runs of each command; slow peers (kmc on the synthetic host, khmer,"
    echo "  bbnorm) may run fewer times than the rest, and a row of one run has no range."
    echo "- Threads: the count below for every tool that takes one; khmer and \`igzip -d\` use one thread."
    echo "- The exact command of each row is in its section's Commands block (\`\$WORK\`: the work directory,"
    echo "  \`ksieve\`: the executable measured). Data are generated once per work directory, untimed."
    echo "- Peers:"
    peers | sed 's/^/  /'
    echo "- Reproduce: \`bench/scripts/bench_all.sh [WORK_DIR]\` (one section: \`KSIEVE_BENCH_STEPS_ALL=STEP\`)."
    echo
    steps_table
}

mkdir -p "$PLOTS"
rm -f "$PLOTS"/*.png
caption="commit $SHORT, $(date -u -d "@$last" +%Y-%m-%d), $cpu, $(nproc) cores; bench/scripts/bench_all.sh"
plots=$("$PY" "$BENCH_SCRIPTS/plot_benchmarks.py" "$WORK" "$PLOTS" "$caption" "${STEPS_DONE[@]}") ||
    die "plot_benchmarks.py failed"
mapfile -t PLOTTED <<< "$plots"
plotted() { [[ " ${PLOTTED[*]} " == *" $1 "* ]]; }

# section STEP: a step report under a heading of its own (its headings one level down)
section()
{
    echo "## $(title_of "$1")"
    echo
    awk '/^```/ { code = !code } !code { sub(/^#+ /, "### ") } { print }' "$WORK/$1.md"
    echo
}

glance()
{
    plotted peers_speed.png && echo "![ksieve and its peers: time per task](plots/peers_speed.png)" && echo
    plotted peers_memory.png && echo "![ksieve and its peers: peak memory per task](plots/peers_memory.png)" && echo
    plotted accuracy_speed.png && echo "![host depletion: accuracy next to speed per sampling](plots/accuracy_speed.png)" && echo
    plotted fpr_bits.png && echo "![measured false-positive rate and bits per k-mer against --fpr](plots/fpr_bits.png)" && echo
    plotted dedup_coverage.png && echo "![dedup: coverage kept against genome coverage](plots/dedup_coverage.png)" && echo
    return 0
}

{
    echo "# Benchmarks"
    echo
    echo "<!-- Generated by bench/scripts/bench_all.sh from the step reports of one run; edit the scripts or"
    echo "bench/scripts/benchmarks_notes.md, not this page. -->"
    echo
    echo "ksieve's speed, memory and accuracy next to the tools it replaces, at commit \`$SHORT\` ($date_range)."
    echo "Every number, table and figure below is written by \`bench/scripts/bench_all.sh\`; the notes are its"
    echo "hand-written part. Methods, machine and versions: [Methods](#methods)."
    echo
    echo "## At a glance"
    echo
    glance
    cat "$NOTES"
    echo
    echo "## Methods"
    echo
    methods
    echo
    for s in "${STEPS_DONE[@]}"; do section "$s"; done
} | sed "s|$WORK|\$WORK|g" | cat -s > "$DOC.tmp"

# the page names one commit and keeps no history
grep -niE 'by hand|was noisy|earlier run|older commit|not kept' "$DOC.tmp" >&2 &&
    log "warning: the page above holds words of history"
grep -oiwE '[0-9a-f]{7,40}' "$DOC.tmp" | grep '[0-9]' | grep -i '[a-f]' | grep -v "^${SHORT}$" | sort -u |
    sed 's/^/hex-like word: /' >&2 && log "warning: the page holds hex identifiers other than the commit"
grep -q '[0-9]' "$NOTES" && log "warning: $NOTES holds digits: it must quote no number the tables do not hold"
mv "$DOC.tmp" "$DOC"
log "wrote $DOC and $PLOTS (${PLOTTED[*]}) from the reports of ${STEPS_DONE[*]}"
