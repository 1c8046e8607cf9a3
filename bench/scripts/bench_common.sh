# shellcheck shell=bash
# Shared helpers for ksieve's end-to-end benchmark scripts (bench_all.sh and its steps, bench_data.sh).
# Source it; do not run it.
#
# Environment:
#   KSIEVE_BENCH_DIR    work directory for data and results (default /tmp/ksieve-bench; the first script
#                       argument overrides it). Nothing in it belongs in git.
#   KSIEVE              path of the ksieve executable (default: the first of
#                       <repo>/build-bench-e2e/bin/ksieve, <repo>/build/bin/ksieve, `ksieve` in PATH).
#   KSIEVE_BENCH_SCALE  default (about an hour on 2 cores) or large (more repetitions, the 10 M-read
#                       metagenome against every peer); sets the defaults of the variables below.
#   KSIEVE_BENCH_THREADS  threads of every tool that takes a thread count (default 2).
#   KSIEVE_BENCH_REPEATS  alternated runs of each ksieve command and fast peer (default 3; large: 5).
#   KSIEVE_BENCH_REPEATS_SLOW  runs of the slow peers: kmc on the large host, khmer, bbnorm (default 1;
#                       large: 3).
#   Sizes (defaults: the scale users run):
#   KSIEVE_BENCH_READS  simulated 150 bp reads per data set: the Klebsiella sets and the host depletion
#                       reads (default 2000000).
#   KSIEVE_HOST_BASES   synthetic host genome of the host depletion benchmark (default 1000000000).
#   KSIEVE_BENCH_META_READS, KSIEVE_BENCH_META_LARGE_READS  the two synthetic metagenome sets of the
#                       normalization benchmark (default 2000000 and 10000000).
#   KSIEVE_BENCH_FILTER_LOG2N  table size of the filters-alone benchmark, 20 to 26 (default 26).
#   KSIEVE_BENCH_FPR_KMERS, KSIEVE_BENCH_FPR_QUERIES  k-mers stored and absent k-mers looked up by the
#                       false-positive measurement (default 1000000 and 10000000).
#   PYTHON              a python3 with matplotlib for the plots (default python3, else /usr/bin/python3).
#
# Peers (Debian): apt-get install -y bbmap khmer kmc pigz isal time art-nextgen-simulation-tools \
#                 kleborate-examples bowtie2-examples python3-matplotlib   (conda: bench/environment.yml)

set -euo pipefail

BENCH_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_SCRIPTS/../.." && pwd)
WORK=${1:-${KSIEVE_BENCH_DIR:-/tmp/ksieve-bench}}
NREADS=${KSIEVE_BENCH_READS:-2000000}
READ_LEN=150
K=31
DATA=$WORK/data
GENOMES=$WORK/genomes
KLEB_DIR=/usr/share/doc/kleborate/examples/data
LAMBDA_GZ=/usr/share/doc/bowtie2/examples/reference/lambda_virus.fa.gz
KHMER_NORMALIZE=${KHMER_NORMALIZE:-/usr/lib/khmer/bin/normalize-by-median.py}

die() { echo "bench: error: $*" >&2; exit 1; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

case ${KSIEVE_BENCH_SCALE:-default} in
    default) _repeats=3 _repeats_slow=1 _meta_large_peers=0 ;;
    large) _repeats=5 _repeats_slow=3 _meta_large_peers=1 ;;
    *) die "KSIEVE_BENCH_SCALE must be default or large, not '${KSIEVE_BENCH_SCALE}'" ;;
esac
SCALE=${KSIEVE_BENCH_SCALE:-default}
T=${KSIEVE_BENCH_THREADS:-2}
REPEATS=${KSIEVE_BENCH_REPEATS:-$_repeats}
REPEATS_SLOW=${KSIEVE_BENCH_REPEATS_SLOW:-$_repeats_slow}
# alternated rounds: every fast command runs in the first REPEATS rounds, every slow one in the first
# REPEATS_SLOW rounds
ROUNDS=$((REPEATS > REPEATS_SLOW ? REPEATS : REPEATS_SLOW))
META_LARGE_PEERS=${KSIEVE_BENCH_META_LARGE_PEERS:-$_meta_large_peers}
HOST_BASES=${KSIEVE_HOST_BASES:-1000000000}
META_READS=${KSIEVE_BENCH_META_READS:-2000000}
META_LARGE_READS=${KSIEVE_BENCH_META_LARGE_READS:-10000000}
FILTER_LOG2N=${KSIEVE_BENCH_FILTER_LOG2N:-26}
FPR_KMERS=${KSIEVE_BENCH_FPR_KMERS:-1000000}
FPR_QUERIES=${KSIEVE_BENCH_FPR_QUERIES:-10000000}
[[ $T =~ ^[1-9][0-9]*$ ]] || die "KSIEVE_BENCH_THREADS must be one thread count, not '$T'"
[[ $REPEATS =~ ^[1-9][0-9]*$ && $REPEATS_SLOW =~ ^[1-9][0-9]*$ ]] ||
    die "KSIEVE_BENCH_REPEATS and KSIEVE_BENCH_REPEATS_SLOW must be positive whole numbers"

# fast ROUND / slow ROUND: whether a fast (slow) command runs in alternated round ROUND (0-based)
fast() { (($1 < REPEATS)); }
slow() { (($1 < REPEATS_SLOW)); }

# A python3 that has matplotlib: $PYTHON (default python3), else /usr/bin/python3. Sets PY.
pick_python()
{
    local c
    for c in "${PYTHON:-python3}" /usr/bin/python3; do
        if command -v "$c" > /dev/null 2>&1 && "$c" -c 'import matplotlib' 2> /dev/null; then
            PY=$c
            return
        fi
    done
    die "no python3 with matplotlib found (set PYTHON; bench/environment.yml has it)"
}

# Short count for names and labels: 2000000 -> 2M, 40000 -> 40k.
count_name()
{
    awk -v n="$1" 'BEGIN {
        if (n >= 1e6 && n % 1e6 == 0) printf "%dM\n", n / 1e6
        else if (n >= 1e6) printf "%gM\n", n / 1e6
        else if (n >= 1e3 && n % 1e3 == 0) printf "%dk\n", n / 1e3
        else print n }'
}

need_tools()
{
    local t
    for t in "$@"; do
        command -v "$t" > /dev/null 2>&1 || [[ -x $t ]] || die "missing tool '$t' (see the apt-get line in bench_common.sh)"
    done
}

find_ksieve()
{
    if [[ -n ${KSIEVE:-} ]]; then
        [[ -x $KSIEVE ]] || die "KSIEVE=$KSIEVE is not executable"
        return
    fi
    local c
    for c in "$REPO/build-bench-e2e/bin/ksieve" "$REPO/build/bin/ksieve" "$(command -v ksieve || true)"; do
        if [[ -n $c && -x $c ]]; then KSIEVE=$c; return; fi
    done
    die "no ksieve executable found; build it or set KSIEVE"
}

# ---------------------------------------------------------------------------------------------------------
# Timing: run_timed NAME STDOUT_FILE CMD...  runs CMD under /usr/bin/time -v; stdout goes to STDOUT_FILE,
# stderr to $RES/NAME.err, the time report to $RES/NAME.time. Fails loudly when CMD fails.
# ---------------------------------------------------------------------------------------------------------
run_timed()
{
    local name=$1 out=$2
    shift 2
    echo "$*" > "$RES/$name.cmd"
    cut -d' ' -f1 /proc/loadavg > "$RES/$name.load"
    log "run $name: $*"
    if ! /usr/bin/time -v -o "$RES/$name.time" "$@" > "$out" 2> "$RES/$name.err"; then
        tail -n 5 "$RES/$name.err" >&2
        die "$name failed (command: $*; stderr in $RES/$name.err)"
    fi
}

# Wall seconds of a finished run_timed NAME (from "Elapsed (wall clock) time (h:mm:ss or m:ss): M:SS.ss").
wall_s()
{
    awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, p, ":"); s = 0
        for (i = 1; i <= n; ++i) s = s * 60 + p[i]
        printf "%.2f\n", s }' "$RES/$1.time"
}

# Peak RSS in MB (Maximum resident set size, kbytes / 1024).
rss_mb()
{
    awk -F': ' '/Maximum resident set size/ { printf "%.0f\n", $2 / 1024 }' "$RES/$1.time"
}

# CPU seconds (user + system) of a finished run_timed NAME.
cpu_s()
{
    awk -F': ' '/User time \(seconds\)/ { u = $2 } /System time \(seconds\)/ { s = $2 } END { printf "%.2f\n", u + s }' \
        "$RES/$1.time"
}

# 1-minute load average when run_timed NAME started ("?" if not recorded).
load_at() { if [[ -s $RES/$1.load ]]; then cat "$RES/$1.load"; else echo '?'; fi; }

# CPU utilisation as reported by time ("Percent of CPU this job got").
cpu_pct()
{
    awk -F': ' '/Percent of CPU this job got/ { print $2 }' "$RES/$1.time"
}

# cmd_text CMD...: the command as the reports show it ($WORK for the work directory, ksieve for the
# executable measured).
cmd_text()
{
    local s="$*"
    if [[ -n ${KSIEVE:-} ]]; then s=${s//"$KSIEVE"/ksieve}; fi
    echo "${s//"$WORK"/\$WORK}"
}

# measure_in DIR NAME CMD... : one run of CMD under /usr/bin/time; appends "wall cpu_s rss_kb" to DIR/NAME.times
# and the 1-minute load average at its start to DIR/NAME.loads, and writes the command to DIR/NAME.cmd (stdout
# dropped, stderr in DIR/NAME.err). For alternated repeated runs: call it once per round for every command of
# the round (the first run of NAME, with no NAME.times yet, starts its loads afresh).
measure_in()
{
    local dir=$1 name=$2
    shift 2
    cmd_text "$@" > "$dir/$name.cmd"
    [[ -e $dir/$name.times ]] || : > "$dir/$name.loads"
    log "run $name"
    # (the disk writes of the runs before are finished first: a tool that leaves its output to the kernel's
    # background writeback would otherwise slow down the run after it, often the other tool's)
    sync
    cut -d' ' -f1 /proc/loadavg >> "$dir/$name.loads"
    /usr/bin/time -f "%e %U %S %M" -o "$dir/$name.one" "$@" > /dev/null 2> "$dir/$name.err" ||
        die "$name failed: $(tail -3 "$dir/$name.err")"
    awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$dir/$name.one" >> "$dir/$name.times"
}

# stats_in DIR NAME C : "min median max" of column C (1 wall, 2 CPU seconds, 3 RSS KB) of NAME's runs
stats_in()
{
    [[ -s $1/$2.times ]] || die "no runs of $2 in $1"
    sort -g -k "$3,$3" "$1/$2.times" | awk -v c="$3" '{ v[NR] = $c }
        END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print v[1], m, v[NR] }'
}

# median_in DIR NAME C : the median of column C of NAME's runs
median_in() { stats_in "$1" "$2" "$3" | cut -d' ' -f2; }

# loads_in DIR NAME : the 1-minute load averages at the start of NAME's runs, in run order ("0.12/1.05/0.98";
# "?" where not recorded)
loads_in() { if [[ -s $1/$2.loads ]]; then paste -sd/ "$1/$2.loads"; else echo '?'; fi; }

# The rows of a step: one line per measured command, tab-separated, with a header (ROWS_HEADER). panel
# names the task of the peers plots (host, dedup, setops, build) or is "-"; label says what ran (for a peer:
# the settings it ran with); load_start the 1-minute load average at the start of each run.
ROWS_HEADER=$'id\tpanel\ttool\tlabel\truns\twall_min\twall_med\twall_max\tcpu_min\tcpu_med\tcpu_max'
ROWS_HEADER+=$'\trss_min_mb\trss_med_mb\trss_max_mb\tcommand\tload_start'

# row_tsv DIR NAME PANEL TOOL LABEL: NAME's runs in DIR as one row
row_tsv()
{
    local dir=$1 name=$2 w c r
    w=$(stats_in "$dir" "$name" 1); c=$(stats_in "$dir" "$name" 2); r=$(stats_in "$dir" "$name" 3)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$3" "$4" "$5" "$(wc -l < "$dir/$name.times")" \
        "$(echo "$w $c" | tr ' ' '\t')" "$(awk '{ printf "%.0f\t%.0f\t%.0f", $1 / 1024, $2 / 1024, $3 / 1024 }' <<< "$r")" \
        "$(< "$dir/$name.cmd")" "$(loads_in "$dir" "$name")"
}

# rows_md TSV [ID...]: a Markdown table of the rows of TSV (all, or those named, in that order)
rows_md()
{
    local tsv=$1
    shift
    echo "| run | runs | wall s: min / median / max | CPU s (median) | peak RSS MB (median) | load at start of each run |"
    echo "|---|---:|---:|---:|---:|---|"
    awk -F'\t' -v ids="$*" '
        BEGIN { n = split(ids, want, " "); for (i = 1; i <= n; ++i) order[want[i]] = i }
        NR == 1 { next }
        n == 0 || ($1 in order) {
            line = sprintf("| %s | %s | %.2f / %.2f / %.2f | %.2f | %s | %s |", $4, $5, $6, $7, $8, $10, $13,
                           $16 == "" ? "?" : $16)
            if (n == 0) print line; else keep[order[$1]] = line
        }
        END { for (i = 1; i <= n; ++i) if (i in keep) print keep[i] }' "$tsv"
}

# commands_md TSV: the exact command of every row, in a folded block
commands_md()
{
    echo "<details><summary>Commands</summary>"
    echo
    echo '```'
    awk -F'\t' 'NR > 1 { printf "# %s\n%s\n", $4, $15 }' "$1"
    echo '```'
    echo
    echo "</details>"
}

# Floating-point helpers.
fdiv() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "nan"; else printf "%.4g\n", a / b }'; }
fmt_rate() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "nan"; else printf "%.0f\n", a / b }'; }
fge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
fle() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "nan"; else printf "%.2f\n", 100 * a / b }'; }

# Number of FASTQ records in a plain or gzip'd file.
fq_count()
{
    case $1 in
        *.gz) pigz -dc "$1" | awk 'END { print NR / 4 }' ;;
        *) awk 'END { print NR / 4 }' "$1" ;;
    esac
}

# Records of a FASTQ file by origin tag (the first character of the name: h host, o other Klebsiella,
# l lambda). Prints "h o l".
fq_origin_counts()
{
    awk 'NR % 4 == 1 { c[substr($0, 2, 1)]++ } END { printf "%d %d %d\n", c["h"], c["o"], c["l"] }' "$1"
}

# Number of valid k-mer positions (windows of K bases of A/C/G/T, any case) in a FASTA or FASTQ file
# (plain or gzip): the numerator of the k-mers/s rates, independent of any tool.
count_kmers()
{
    local f=$1
    { case $f in *.gz) pigz -dc "$f" ;; *) cat "$f" ;; esac; } | awk -v k="$K" '
        function add(seq,   n, i, parts, L) {
            n = split(toupper(seq), parts, /[^ACGT]+/)
            for (i = 1; i <= n; ++i) { L = length(parts[i]); if (L >= k) total += L - k + 1 }
        }
        NR == 1 { fastq = /^@/ }
        fastq { if (NR % 4 == 2) add($0); next }
        /^>/ { carry = ""; next }
        {
            # multi-line FASTA: prepend the last k-1 bases of the previous line (fewer than k, so no
            # window lies inside the carry alone and none is counted twice)
            s = carry $0; add(s); carry = length(s) > k - 1 ? substr(s, length(s) - k + 2) : s
        }
        END { printf "%.0f\n", total }'
}

# ---------------------------------------------------------------------------------------------------------
# Data: genomes and simulated reads (art_illumina HiSeq 2500 profile, 150 bp single-end, fixed seeds).
# ---------------------------------------------------------------------------------------------------------
genome_len() { grep -v '^>' "$1" | tr -d '\n\r' | wc -c; }

# simulate FASTA NREADS SEED TAG OUT.fq: about NREADS reads from FASTA, names prefixed with "TAG|".
simulate()
{
    local fa=$1 n=$2 seed=$3 tag=$4 out=$5 len cov
    len=$(genome_len "$fa")
    cov=$(awk -v n="$n" -v l="$READ_LEN" -v g="$len" 'BEGIN { printf "%.6f\n", n * l / g }')
    log "art_illumina: $(basename "$fa") ($len bp) coverage ${cov}x -> ~$n reads"
    art_illumina -q -ss HS25 -i "$fa" -l "$READ_LEN" -f "$cov" -rs "$seed" -na -o "$out.art" > "$out.art.log" 2>&1 \
        || { cat "$out.art.log" >&2; die "art_illumina failed on $fa"; }
    rm -f "$out.art.log"
    awk -v tag="$tag" 'NR % 4 == 1 { sub(/^@/, "@" tag "|") } { print }' "$out.art.fq" > "$out"
    rm -f "$out.art.fq"
}

# Deterministic shuffle of FASTQ records (awk srand(42) keys, sort), gzip'd with pigz.
shuffle_fq_gz()
{
    local out=$1
    shift
    cat "$@" | paste - - - - | awk 'BEGIN { srand(42) } { printf "%.12f\t%s\n", rand(), $0 }' \
        | LC_ALL=C sort -S 1G -T "$WORK/tmp" -k1,1 | cut -f2- | tr '\t' '\n' | pigz -p 2 -6 -n > "$out.tmp"
    mv "$out.tmp" "$out"
}

# make_data: fills $GENOMES and $DATA (idempotent; file names carry NREADS).
#   $GENOMES/host.fa           Klebsiella pneumoniae HS11286 (chromosome + 6 plasmids, 5.68 Mb): the host.
#   $DATA/mix-N.fq.gz          N reads: 50% host, 45% the three other Klebsiella genomes (15% each),
#                              5% lambda phage; shuffled. Names start with h| o| l| (origin).
#   $DATA/norm-N.fq.gz         N reads from the host only (~53x for 2 M reads); shuffled.
#   $DATA/*.kmers              valid k-mer positions of the inputs above.
make_data()
{
    need_tools art_illumina pigz xz awk sort paste
    [[ -d $KLEB_DIR ]] || die "$KLEB_DIR missing (apt-get install kleborate-examples)"
    [[ -f $LAMBDA_GZ ]] || die "$LAMBDA_GZ missing (apt-get install bowtie2-examples)"
    mkdir -p "$GENOMES" "$DATA" "$WORK/tmp"
    local g
    for g in Klebs_HS11286 Klebs_Kp1084 MGH78578 NTUH-K2044; do
        [[ -s $GENOMES/$g.fa ]] || xz -dc "$KLEB_DIR/$g.fna.xz" > "$GENOMES/$g.fa"
    done
    [[ -s $GENOMES/lambda.fa ]] || pigz -dc "$LAMBDA_GZ" > "$GENOMES/lambda.fa"
    [[ -s $GENOMES/host.fa ]] || cp "$GENOMES/Klebs_HS11286.fa" "$GENOMES/host.fa"
    [[ -s $GENOMES/host.fa.kmers ]] || count_kmers "$GENOMES/host.fa" > "$GENOMES/host.fa.kmers"

    MIX=$DATA/mix-$NREADS.fq.gz
    NORM=$DATA/norm-$NREADS.fq.gz
    local t=$WORK/tmp
    if [[ ! -s $MIX ]]; then
        local nh no nl
        nh=$((NREADS / 2)); no=$((NREADS * 15 / 100)); nl=$((NREADS - nh - 3 * no))
        simulate "$GENOMES/Klebs_HS11286.fa" "$nh" 42 h "$t/mix_h.fq"
        simulate "$GENOMES/Klebs_Kp1084.fa" "$no" 43 o "$t/mix_o1.fq"
        simulate "$GENOMES/MGH78578.fa" "$no" 44 o "$t/mix_o2.fq"
        simulate "$GENOMES/NTUH-K2044.fa" "$no" 45 o "$t/mix_o3.fq"
        simulate "$GENOMES/lambda.fa" "$nl" 46 l "$t/mix_l.fq"
        log "shuffling -> $MIX"
        shuffle_fq_gz "$MIX" "$t"/mix_h.fq "$t"/mix_o1.fq "$t"/mix_o2.fq "$t"/mix_o3.fq "$t"/mix_l.fq
        rm -f "$t"/mix_*.fq
    fi
    if [[ ! -s $NORM ]]; then
        simulate "$GENOMES/Klebs_HS11286.fa" "$NREADS" 47 h "$t/norm.fq"
        log "shuffling -> $NORM"
        shuffle_fq_gz "$NORM" "$t/norm.fq"
        rm -f "$t/norm.fq"
    fi
    local f
    for f in "$MIX" "$NORM"; do
        [[ -s $f.reads ]] || fq_count "$f" > "$f.reads"
        [[ -s $f.kmers ]] || count_kmers "$f" > "$f.kmers"
    done
    MIX_READS=$(< "$MIX.reads"); NORM_READS=$(< "$NORM.reads")
    MIX_KMERS=$(< "$MIX.kmers"); NORM_KMERS=$(< "$NORM.kmers")
    HOST_KMERS=$(< "$GENOMES/host.fa.kmers")
    [[ -s $MIX.origins ]] || pigz -dc "$MIX" | awk 'NR % 4 == 1 { c[substr($0, 2, 1)]++ }
        END { printf "%d %d %d\n", c["h"], c["o"], c["l"] }' > "$MIX.origins"
    read -r MIX_H MIX_O MIX_L < "$MIX.origins"
    log "data: $MIX ($MIX_READS reads, $MIX_KMERS k-mers; host $MIX_H, other Klebsiella $MIX_O, lambda $MIX_L)"
    log "data: $NORM ($NORM_READS reads, $NORM_KMERS k-mers); host.fa $HOST_KMERS k-mers"
}

# ---------------------------------------------------------------------------------------------------------
# What ran: the build of the executable measured and the CPU code path it takes (bench_all.sh's Methods)
# ---------------------------------------------------------------------------------------------------------
# build_info: key=value lines of the build of $KSIEVE, read from the CMakeCache.txt of its build directory:
# compiler (path and first line of --version), build_type, cxx_flags (CMAKE_CXX_FLAGS and those of the build
# type) and ksieve_options (the KSIEVE_* settings of the cache); "unknown" without a cache.
build_info()
{
    local cache cxx type flags
    cache=$(dirname "$KSIEVE")/../CMakeCache.txt
    if [[ ! -f $cache ]]; then
        printf 'compiler=unknown (no CMakeCache.txt beside %s)\nbuild_type=unknown\ncxx_flags=unknown\nksieve_options=unknown\n' \
            "$(cmd_text "$KSIEVE")"
        return
    fi
    cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n1; }
    cxx=$(cache_value CMAKE_CXX_COMPILER)
    type=$(cache_value CMAKE_BUILD_TYPE)
    flags="$(cache_value CMAKE_CXX_FLAGS) $(cache_value "CMAKE_CXX_FLAGS_${type^^}")"
    echo "compiler=$cxx ($("$cxx" --version 2> /dev/null | head -n1 || echo 'version unknown'))"
    echo "build_type=${type:-none}"
    echo "cxx_flags=$(xargs <<< "$flags")"
    echo "ksieve_options=$(grep -E '^KSIEVE_[A-Z0-9_]*:(BOOL|STRING)=.' "$cache" | sed 's/:[A-Z]*=/=/' | paste -sd' ')"
}

# cpu_path: the CPU level of ksieve's kernels on this machine and environment, by the rules of
# filters/include/ksieve/filters/support/cpu_dispatch.hpp (ksieve does not print its choice): x86-64-v4 with AVX-512
# F/BW/CD/DQ/VL, x86-64-v3 with AVX2, BMI1/2, LZCNT, POPCNT, FMA, F16C and MOVBE, aarch64 NEON, else generic;
# KSIEVE_SIMD=generic or x86-64-v3 lowers it; AMD family 0x17 and Hygon 0x18 keep the quotient filter's
# portable select (slow pdep).
cpu_path()
{
    local arch flags vendor family level=generic
    arch=$(uname -m)
    if [[ $arch == aarch64 || $arch == arm64 ]]; then
        level="aarch64 NEON"
    elif [[ -r /proc/cpuinfo ]]; then
        flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
        has() { local f; for f in "$@"; do [[ $flags == *" $f "* ]] || return 1; done; }
        if has avx2 bmi1 bmi2 abm popcnt fma f16c movbe; then
            level=x86-64-v3
            has avx512f avx512bw avx512cd avx512dq avx512vl && level=x86-64-v4
        fi
        case ${KSIEVE_SIMD:-} in
            generic) level="generic (KSIEVE_SIMD=generic)" ;;
            x86-64-v3) [[ $level == x86-64-v4 ]] && level="x86-64-v3 (KSIEVE_SIMD=x86-64-v3)" ;;
        esac
        vendor=$(sed -n 's/^vendor_id[[:space:]]*: //p' /proc/cpuinfo | head -n1)
        family=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -n1)
        if [[ $level == x86-64-v* && ( ($vendor == AuthenticAMD && $family == 23) || ($vendor == HygonGenuine && $family == 24) ) ]]; then
            level+=", the quotient filter's portable select (slow pdep)"
        fi
    fi
    echo "$level"
}
