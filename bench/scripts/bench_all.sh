#!/usr/bin/env bash
# Every end-to-end benchmark, its plots and docs/benchmarks.md, in one command. The steps:
#   host      bench_host_depletion.sh  synthetic host (1 Gbp) and 2 M reads: build, classify and accuracy per
#                                      sampling, compressed and paired outputs; kmc, bbduk, pigz, igzip
#   scaling   bench_scaling.sh         classify throughput against threads, input size and filter size
#                                      (reuses the host step's data and filters)
#   pipeline  bench_pipeline.sh        Klebsiella sample: build and classify against kmc and bbduk
#   normalize bench_normalize.sh       dedup of the Klebsiella reads and of a synthetic metagenome against
#                                      khmer and bbnorm; coverage kept per genome
#   stream    bench_dedup_stream.sh    100 M metagenome reads streamed through stdin into dedup, with no
#                                      limit and under --max-memory 2G (reads per second per tenth); khmer
#                                      and bbnorm on its first 10 M; exact duplicates against seqkit and
#                                      clumpify
#   algebra   bench_algebra.sh         merge, intersect, subtract and a 16-input merge against kmc_tools
#   fpr       bench_fpr.sh             measured false-positive rate and bits per k-mer against --fpr, per type
#   filters   bench_filters.sh         the filters alone (Google Benchmark, tables of 2^26 keys)
#   human     bench_human_host.sh      a human-like host of 1 Gbp: the candidate filters and rules
#   human3g   bench_human_host.sh      the same at human size (KSIEVE_BENCH_HUMAN3G_BASES, default 3.1 Gbp),
#                                      the default filter on the held-out reads; only with
#                                      KSIEVE_BENCH_HUMAN3G=1 (over an hour on two cores, most of it making
#                                      the data and its k-mer statistics)
#   labels    bench_labels.sh          labeled filters: screening against bbduk refstats, per-sample labeled
#                                      merges, exact "which samples" answers
#   profiles  bench_error_profiles.sh  host reads with ART's error profiles (single-end and paired, 50-250
#                                      bp) and long reads cut short on the human step's host, foreign reads,
#                                      bbduk and bowtie2 on a slice; with KSIEVE_PROFILE_BEFORE (an older
#                                      ksieve) its column and a speed table
# (human, and human3g where asked for, run when bench_human_host.sh exists; profiles when
# bench_error_profiles.sh does.) Each step leaves its report in WORK_DIR (STEP.md
# and the tables the plots read; STEP.rows.tsv in bench_common.sh's row format puts its rows with a panel
# into the peers plots) and this script writes STEP.meta next to it (commit, executable, build, CPU code
# path, settings, load and duration). Then plot_benchmarks.py draws docs/plots/*.png and every benchmark
# page is assembled WHOLE from the step reports in WORK_DIR, stamped with their one commit:
# docs/benchmarks.md (every step but human3g, and the Methods of all pages), and the pages of their own
# docs/benchmarks_labels.md (labels), docs/benchmarks_human.md (human), docs/benchmarks_human_3g.md
# (human3g) and docs/benchmarks_profiles.md (profiles). Steps may run in separate invocations at one commit (KSIEVE_BENCH_STEPS_ALL=normalize re-runs
# one and re-assembles the pages), but the assembly refuses (exit status 1) step reports of different
# commits or executables, reports of a commit other than HEAD, reports not written through this script, and
# a page of its own left from another commit by a step without a report (KSIEVE_BENCH_PARTIAL=1 leaves such
# pages as they are); the pages are then checked with tests/docs/check_report_commits.py. The page's
# hand-written part is bench/scripts/benchmarks_notes.md, included as it is.
#
# Usage: bench/scripts/bench_all.sh [WORK_DIR]       (WORK_DIR default /tmp/ksieve-bench; ~30 GB of disk)
# Environment:
#   KSIEVE_BENCH_STEPS_ALL  the steps to run (default: all of the above; "" assembles the pages only)
#   KSIEVE_BENCH_DOC_DIR    where the pages and plots/ go (default <repo>/docs)
#   KSIEVE_BENCH_PARTIAL    1: write the pages of the steps with a report even where another page of its
#                           own names another commit (for a trial into a KSIEVE_BENCH_DOC_DIR of its own)
#   KSIEVE_BENCH_HUMAN3G    1: also the step human3g (and its page, docs/benchmarks_human_3g.md)
#   KSIEVE_BENCH_SCALE      default: about three hours on a quiet 2-core machine with a new WORK_DIR,
#                           an hour less when its data exist (made once per WORK_DIR). Minutes per step:
#                           host 18 (9 making data), scaling 4, pipeline 8 (4 simulating reads), normalize 36,
#                           stream about 55 (ksieve 25, khmer and bbnorm on 10 M reads the rest; less with
#                           KSIEVE_BENCH_STREAM_READS and KSIEVE_BENCH_STREAM_PREFIX), algebra 5, labels 5,
#                           fpr 1, filters 2, human about 45 (30 making its data and k-mer statistics),
#                           profiles about 100 (ART's reads, a filter per candidate, bowtie2's index);
#                           human3g over an hour. large: 5 runs of each command, 3 of the slow peers and the
#                           10 M-read metagenome against every peer (about 2 hours more)
#   and those of bench_common.sh (KSIEVE, threads, repetitions, sizes; tiny sizes for a quick check).
# Needs 12 GB of memory (kmc on the 1 Gbp host).
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

ALL_STEPS="host scaling pipeline normalize stream algebra labels fpr filters"
[[ -f $BENCH_SCRIPTS/bench_human_host.sh ]] && ALL_STEPS+=" human"
[[ -f $BENCH_SCRIPTS/bench_human_host.sh && ${KSIEVE_BENCH_HUMAN3G:-0} == 1 ]] && ALL_STEPS+=" human3g"
[[ -f $BENCH_SCRIPTS/bench_error_profiles.sh ]] && ALL_STEPS+=" profiles"
# the sections' order on benchmarks.md, and the steps with a page of their own
PAGE_STEPS="host human profiles scaling pipeline normalize stream algebra labels fpr filters"
OWN_STEPS="labels human human3g profiles"
STEPS=${KSIEVE_BENCH_STEPS_ALL-$ALL_STEPS}
DOC_DIR=${KSIEVE_BENCH_DOC_DIR:-$REPO/docs}
DOC=$DOC_DIR/benchmarks.md
PLOTS=$DOC_DIR/plots
NOTES=$BENCH_SCRIPTS/benchmarks_notes.md
CHECK_COMMITS=$REPO/tests/docs/check_report_commits.py
HUMAN3G_BASES=${KSIEVE_BENCH_HUMAN3G_BASES:-3100000000}
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
        stream) echo bench_dedup_stream.sh ;;
        algebra) echo bench_algebra.sh ;;
        fpr) echo bench_fpr.sh ;;
        filters) echo bench_filters.sh ;;
        human | human3g) echo bench_human_host.sh ;;
        profiles) echo bench_error_profiles.sh ;;
        labels) echo bench_labels.sh ;;
        *) return 1 ;;
    esac
}

# step_env STEP: the environment a step runs with besides this script's
step_env()
{
    case $1 in
        human) echo "KSIEVE_HUMAN_REPORT=human" ;;
        human3g) echo "KSIEVE_HOST_BASES=$HUMAN3G_BASES KSIEVE_HUMAN_SETS=heldout KSIEVE_HUMAN_CONFIGS=W=8,FPR=1e-4 KSIEVE_HUMAN_REPORT=human3g" ;;
    esac
}

# own_page STEP: the page of its own of a step ("" for none)
own_page()
{
    case $1 in
        labels) echo benchmarks_labels.md ;;
        human) echo benchmarks_human.md ;;
        human3g) echo benchmarks_human_3g.md ;;
        profiles) echo benchmarks_profiles.md ;;
    esac
}

head_commit() { git -C "$REPO" rev-parse HEAD; }
# local changes to tracked files other than the pages and their plots
dirty()
{
    [[ -n $(git -C "$REPO" status --porcelain --untracked-files=no -- . ':(exclude)docs/benchmarks*.md' \
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
    local load_start
    load_start=$(cut -d' ' -f1-3 /proc/loadavg)
    log "step $step: $(step_env "$step") bench/scripts/$script $WORK"
    # shellcheck disable=SC2046 # (step_env's words are the variables)
    env $(step_env "$step") bash "$BENCH_SCRIPTS/$script" "$WORK" > "$WORK/$step.log" 2>&1 || {
        tail -n 20 "$WORK/$step.log" >&2
        die "step $step failed (log: $WORK/$step.log)"
    }
    [[ -s $WORK/$step.md ]] || die "step $step wrote no $WORK/$step.md"
    {
        echo "commit=$(head_commit)"
        echo "dirty=$(dirty)"
        echo "started=$start"
        echo "finished=$(date +%s)"
        echo "load_start=$load_start"
        echo "step_env=$(step_env "$step")"
        echo "ksieve=$(sha256sum "$KSIEVE" | cut -c1-16)"
        echo "ksieve_version=$("$KSIEVE" --version 2>&1 | head -n1)"
        build_info
        echo "cpu_path=$(cpu_path)"
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
        echo "stream_reads=${KSIEVE_BENCH_STREAM_READS:-100000000}"
        echo "stream_prefix=${KSIEVE_BENCH_STREAM_PREFIX:-10000000}"
        echo "exact_reads=${KSIEVE_BENCH_EXACT_READS:-2000000}"
        echo "human_host_bases=$([[ $step == human3g ]] && echo "$HUMAN3G_BASES" || echo "$HOST_BASES")"
    } > "$WORK/$step.meta.tmp"
    mv "$WORK/$step.meta.tmp" "$WORK/$step.meta"
    log "step $step done in $(($(date +%s) - start)) s"
}

for step in $STEPS; do run_step "$step"; done

# ---------------------------------------------------------------------------------------------------------
# The pages, from the step reports of one commit
# ---------------------------------------------------------------------------------------------------------
meta_of() { sed -n "s/^$2=//p" "$WORK/$1.meta"; }

# the steps with a report; refuses reports not written through this script
HEAD_COMMIT=$(head_commit)
STEPS_DONE=()
for step in $PAGE_STEPS human3g; do
    [[ -e $WORK/$step.md ]] || continue
    [[ -s $WORK/$step.meta ]] ||
        die "$WORK/$step.md has no $step.meta (not written by bench_all.sh): run KSIEVE_BENCH_STEPS_ALL=$step bench/scripts/bench_all.sh $WORK, or remove $WORK/$step.md"
    for f in "$WORK/$step".*; do
        [[ $f == "$WORK/$step.meta" || $f == "$WORK/$step.log" || ! -f $f ]] && continue
        [[ $f -nt $WORK/$step.meta ]] &&
            die "$f is newer than $step.meta (written outside bench_all.sh): run KSIEVE_BENCH_STEPS_ALL=$step bench/scripts/bench_all.sh $WORK"
    done
    STEPS_DONE+=("$step")
done
((${#STEPS_DONE[@]})) || die "no step reports in $WORK"
done_step() { [[ " ${STEPS_DONE[*]} " == *" $1 "* ]]; }

# same_in_reports KEY WHAT: every report's meta has one value of KEY, else the run is refused
same_in_reports()
{
    local s values
    values=$(for s in "${STEPS_DONE[@]}"; do meta_of "$s" "$1"; done | sort -u)
    (($(wc -l <<< "$values") == 1)) && return
    die "the step reports in $WORK come from different $2: $(for s in "${STEPS_DONE[@]}"; do
        printf '%s %s; ' "$s" "$(meta_of "$s" "$1" | cut -c1-12)"; done)every page must come from one run: run the steps again (KSIEVE_BENCH_STEPS_ALL=...), or remove the reports of the others"
}
same_in_reports commit commits
same_in_reports ksieve "ksieve executables (sha256 prefixes)"
c=$(meta_of "${STEPS_DONE[0]}" commit)
[[ $c == "$HEAD_COMMIT" ]] ||
    die "the step reports in $WORK are of commit ${c:0:12}, not of HEAD ${HEAD_COMMIT:0:12}: run the steps again at HEAD, or check out ${c:0:12} to assemble them"
missing=()
for step in $ALL_STEPS; do done_step "$step" || missing+=("$step"); done
((${#missing[@]} == 0)) || log "warning: no report of step(s) ${missing[*]} in $WORK: the pages leave them out"
# a page of its own that this run does not write must not name another commit
for step in $OWN_STEPS; do
    page=$DOC_DIR/$(own_page "$step")
    done_step "$step" || [[ ! -e $page ]] || [[ ${KSIEVE_BENCH_PARTIAL:-0} == 1 ]] || {
        pc=$("$PY" "$CHECK_COMMITS" --commit-of "$page" 2> /dev/null || echo unknown)
        [[ $HEAD_COMMIT == "$pc"* ]] ||
            die "$page names commit $pc and this run has no $step report to write it: run KSIEVE_BENCH_STEPS_ALL=$step bench/scripts/bench_all.sh $WORK (every page from one run), or KSIEVE_BENCH_PARTIAL=1 for a trial"
    }
done

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
    echo "- bbmap (bbduk.sh, bbnorm.sh, clumpify.sh): $(version bbmap bbduk.sh --version)"
    echo "- seqkit (rmdup): $(version seqkit seqkit version)"
    echo "- khmer (normalize-by-median.py): $(version khmer "$KHMER_NORMALIZE" --version)"
    echo "- kmc (kmc, kmc_tools): $(version kmc kmc)"
    echo "- pigz: $(version pigz pigz --version)"
    echo "- isal (igzip): $(version isal igzip --version)"
    echo "- Java for bbmap: $(java -version 2>&1 | head -n1)"
    echo "- art_illumina (read simulation): $(version art-nextgen-simulation-tools art_illumina)"
}


# the stamp every page carries: one commit (tests/docs/check_report_commits.py reads it)
stamp()
{
    echo "<!-- Generated by bench/scripts/bench_all.sh from the step reports of one run at commit $HEAD_COMMIT;"
    echo "edit the scripts or bench/scripts/benchmarks_notes.md, not this page. -->"
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
        stream) echo "Deduplication at scale: a stream of $(size_text "$(meta_of stream stream_reads)") reads, exact duplicates" ;;
        algebra) echo "Combining samples: set operations against kmc_tools" ;;
        fpr) echo "False-positive rate and bits per k-mer" ;;
        filters) echo "The filters alone" ;;
        human) echo "Human-sized host" ;;
        human3g) echo "Human-sized host at $(size_text "$(meta_of human3g human_host_bases)")bp" ;;
        profiles) echo "Host reads with sequencing errors (ART profiles)" ;;
        labels) echo "Labeled filters: screening and which samples" ;;
    esac
}

# the title of a step's page of its own
page_title_of()
{
    case $1 in
        labels) echo "labeled filters" ;;
        human | human3g) echo "a human-like host of $(meta_of "$1" human_host_bases) bp" ;;
        profiles) echo "host reads with sequencing errors" ;;
    esac
}

steps_table()
{
    echo "| section | script | threads | runs | sizes | load at start | duration |"
    echo "|---|---|---:|---|---|---|---:|"
    local s sizes d runs r rs
    for s in "${STEPS_DONE[@]}"; do
        r=$(meta_of "$s" repeats); rs=$(meta_of "$s" repeats_slow)
        case $s in
            host) runs="$r; kmc $rs" ;;
            normalize) runs="$r; khmer and bbnorm $rs; on the large metagenome every tool $rs" ;;
            stream) runs="1 of each" ;;
            fpr) runs="1 per filter (counts, not times)" ;;
            filters) runs="$r repetitions in random order" ;;
            human | human3g) runs="$r (speed); 1 per filter and read set (rules)" ;;
            profiles) runs="1 per filter and read set; speed: 3 builds and 5 classify runs, alternated" ;;
            labels) runs="$r; bbduk $rs" ;;
            *) runs=$r ;;
        esac
        case $s in
            host | scaling) sizes="host $(meta_of "$s" host_bases) bp, $(meta_of "$s" reads) reads" ;;
            pipeline | algebra) sizes="$(meta_of "$s" reads) reads per set" ;;
            normalize) sizes="$(meta_of "$s" reads), $(meta_of "$s" meta_reads) and $(meta_of "$s" meta_large_reads) reads" ;;
            fpr) sizes="$(meta_of "$s" fpr_kmers) k-mers stored, $(meta_of "$s" fpr_queries) looked up" ;;
            stream) sizes="$(meta_of "$s" stream_reads) reads streamed, peers on $(meta_of "$s" stream_prefix), $(meta_of "$s" exact_reads) for exact duplicates" ;;
            filters) sizes="2^$(meta_of "$s" filter_log2n) keys" ;;
            labels) sizes="host $(meta_of "$s" labels_host_bases) bp, $(meta_of "$s" labels_reads) reads, $(meta_of "$s" labels_samples) samples" ;;
            human | human3g | profiles) sizes="host $(meta_of "$s" human_host_bases) bp" ;;
            *) sizes="-" ;;
        esac
        d=$(($(meta_of "$s" finished) - $(meta_of "$s" started)))
        printf '| %s | `%s` | %s | %s | %s | %s | %d min %02d s |\n' "$(title_of "$s")" "bench/scripts/$(script_of "$s")" \
            "$([[ $s == filters ]] && echo 1 || meta_of "$s" threads)" "$runs" "$sizes" "$(meta_of "$s" load_start)" \
            $((d / 60)) $((d % 60))
    done
}

# the settings of the peers, as the step scripts run them
peer_settings()
{
    echo "- Peer settings: each peer runs with the settings its documentation gives for speed, and with its"
    echo "  defaults where they differ; every row names what it ran with. bbduk: \`t=\` the threads and \`-Xmx\` sized"
    echo "  for its reference (its guide: about 20 bytes a reference k-mer), defaults otherwise; its \`.fq.gz\`"
    echo "  outputs also at \`zl=1\` (its fastest gzip level; default \`zl=2\`), and on the large reference of the"
    echo "  labeled screening also with \`prealloc=t\`. bbnorm: \`threads=\` the threads, \`-Xmx4g\`, at its default"
    echo "  \`passes=2\` and at \`passes=1\` (its fastest mode). kmc: \`-t\` the threads and \`-ci1\`, at its defaults"
    echo "  (\`-m12\`, bins on disk), and on the Klebsiella data also \`-r\` (RAM-only, its fastest mode)."
    echo "  kmc_tools: \`-t\` the threads. khmer: one thread (it has no"
    echo "  thread option for normalize-by-median), \`-M\` at ksieve's peak memory and at 4e9 bytes. pigz: \`-p\`"
    echo "  the threads; igzip: its one decompression thread."
}

methods()
{
    local scales dirty_any=0 s one=${STEPS_DONE[0]}
    scales=$(for s in "${STEPS_DONE[@]}"; do meta_of "$s" scale; done | sort -u | paste -sd/)
    for s in "${STEPS_DONE[@]}"; do [[ $(meta_of "$s" dirty) == 1 ]] && dirty_any=1; done
    echo "- Commit: \`$SHORT\`$( ((dirty_any)) && echo ", with local changes to tracked files"); every page of this"
    echo "  run names it: $(for s in "${STEPS_DONE[@]}"; do [[ -n $(own_page "$s") ]] && printf '[%s](%s), ' "$(own_page "$s")" "$(own_page "$s")"; done)and this one."
    echo "- Executable: $(meta_of "$one" ksieve_version) (sha256 \`$(meta_of "$one" ksieve | cut -c1-8)...\`), the same in every step."
    echo "- Build (from the CMakeCache.txt of its build directory): compiler $(meta_of "$one" compiler); build type"
    echo "  $(meta_of "$one" build_type); flags \`$(meta_of "$one" cxx_flags)\`; options \`$(meta_of "$one" ksieve_options)\`."
    echo "- CPU code path: $(for s in "${STEPS_DONE[@]}"; do meta_of "$s" cpu_path; done | sort -u | paste -sd';'): the level"
    echo "  of ksieve's kernels on this CPU and environment, by the rules of"
    echo "  \`filters/include/ksieve/filters/support/cpu_dispatch.hpp\` (ksieve does not print its choice)."
    echo "- Date: $date_range."
    echo "- Machine: $cpu, $(nproc) cores, $mem of memory, $(uname -sr); disk: $(disk)."
    echo "- Scale: $scales (\`KSIEVE_BENCH_SCALE=large\` runs more repetitions and the large metagenome against every peer)."
    echo "- Runs: commands run in alternated rounds (A B A B ...); the tables give the wall seconds of the fastest,"
    echo "  the median and the slowest run, and the medians of CPU seconds (user + system) and peak resident"
    echo "  memory, from GNU time (\`/usr/bin/time -f '%e %U %S %M'\`). Each run starts after \`sync\` (not timed)."
    echo "  The runs column below gives the runs of each command; slow peers (kmc on the synthetic host, khmer,"
    echo "  bbnorm) may run fewer times than the rest, and a row of one run has no range."
    echo "- Load: each timed row gives the 1-minute load average at the start of each of its runs (\`/proc/loadavg\`),"
    echo "  the steps table below that at the start of each step."
    echo "- Threads: the count below for every tool that takes one; khmer and \`igzip -d\` use one thread."
    peer_settings
    echo "- The exact command of each row is in its section's Commands block (\`\$WORK\`: the work directory,"
    echo "  \`ksieve\`: the executable measured). Data are generated once per work directory, untimed."
    echo "- Peers:"
    peers | sed 's/^/  /'
    echo "- Reproduce: \`bench/scripts/bench_all.sh [WORK_DIR]\` (one step: \`KSIEVE_BENCH_STEPS_ALL=STEP\`; the pages"
    echo "  need every step's report of one commit)."
    echo
    steps_table
}

mkdir -p "$PLOTS"
rm -f "$PLOTS"/*.png
caption="commit $SHORT, $(date -u -d "@$last" +%Y-%m-%d), $cpu, $(nproc) cores; bench/scripts/bench_all.sh"
page_plots=()
for s in "${STEPS_DONE[@]}"; do [[ $s == human3g ]] || page_plots+=("$s"); done
plots=$("$PY" "$BENCH_SCRIPTS/plot_benchmarks.py" "$WORK" "$PLOTS" "$caption" "${page_plots[@]}") ||
    die "plot_benchmarks.py failed"
mapfile -t PLOTTED <<< "$plots"
plotted() { [[ " ${PLOTTED[*]} " == *" $1 "* ]]; }

# section STEP: a step report under a heading of its own (its headings one level down)
section()
{
    echo "## $(title_of "$1")"
    echo
    case $1 in
        labels) done_step labels && echo "Also a page of its own: [benchmarks_labels.md](benchmarks_labels.md)." && echo ;;
        profiles) echo "Also a page of its own: [benchmarks_profiles.md](benchmarks_profiles.md)." && echo ;;
        human)
            echo "Also a page of its own: [benchmarks_human.md](benchmarks_human.md)$(done_step human3g &&
                echo "; the default filter at human size: [benchmarks_human_3g.md](benchmarks_human_3g.md)")."
            echo
            ;;
    esac
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

# write_page PATH: the page from stdin, checked for words of history, moved into place
write_page()
{
    sed "s|$WORK|\$WORK|g" | cat -s > "$1.tmp"
    grep -niE 'by hand|was noisy|earlier run|older commit|not kept' "$1.tmp" >&2 &&
        log "warning: $1 holds words of history"
    grep -oiwE '[0-9a-f]{7,40}' "$1.tmp" | grep '[0-9]' | grep -i '[a-f]' |
        grep -v -e "^${SHORT}$" -e "^${HEAD_COMMIT}$" -e "^$(meta_of "${STEPS_DONE[0]}" ksieve)$" |
        sort -u | sed 's/^/hex-like word: /' >&2 && log "warning: $1 holds hex identifiers other than the commit"
    mv "$1.tmp" "$1"
}

{
    echo "# Benchmarks"
    echo
    stamp
    echo
    echo "ksieve's speed, memory and accuracy next to the tools it replaces, at commit \`$SHORT\` ($date_range)."
    echo "Every number, table and figure below is written by \`bench/scripts/bench_all.sh\`; the notes are its"
    echo "hand-written part. Methods, machine, build and versions: [Methods](#methods)."
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
    for s in "${STEPS_DONE[@]}"; do [[ $s == human3g ]] || section "$s"; done
} | write_page "$DOC"

# own_page_text STEP: a step's page of its own: the stamp, the run it belongs to, the report
own_page_text()
{
    local s=$1 d
    d=$(($(meta_of "$s" finished) - $(meta_of "$s" started)))
    echo "# Benchmarks: $(page_title_of "$s")"
    echo
    stamp
    echo
    echo "Commit \`$SHORT\` ($date_range), the step \`$s\` (\`bench/scripts/$(script_of "$s")\`, $((d / 60)) min) of"
    echo "the run of [benchmarks.md](benchmarks.md); machine, build, compiler, CPU code path, peers and methods:"
    echo "[its Methods](benchmarks.md#methods). Reproduce: \`KSIEVE_BENCH_STEPS_ALL=$s bench/scripts/bench_all.sh WORK_DIR\`."
    if [[ $s == human* ]] && done_step human && done_step human3g; then
        echo "Pages of this benchmark: [benchmarks_human.md](benchmarks_human.md) (candidate filters and rules) and"
        echo "[benchmarks_human_3g.md](benchmarks_human_3g.md) (human size, the default filter)."
    fi
    echo
    cat "$WORK/$s.md"
}

written=("$DOC")
for s in $OWN_STEPS; do
    done_step "$s" || continue
    own_page_text "$s" | write_page "$DOC_DIR/$(own_page "$s")"
    written+=("$DOC_DIR/$(own_page "$s")")
done
grep -q '[0-9]' "$NOTES" && log "warning: $NOTES holds digits: it must quote no number the tables do not hold"
if ! "$PY" "$CHECK_COMMITS" "$DOC_DIR" >&2; then
    [[ ${KSIEVE_BENCH_PARTIAL:-0} == 1 ]] ||
        die "the benchmark pages in $DOC_DIR name different commits (see above): every page must come from one run"
    log "warning: the benchmark pages in $DOC_DIR name different commits (KSIEVE_BENCH_PARTIAL=1)"
fi
log "wrote ${written[*]} and $PLOTS (${PLOTTED[*]}) from the reports of ${STEPS_DONE[*]}"
