#!/usr/bin/env bash
# Host depletion on a human-like host: chooses classify's rule (--min-hits A, --min-hit-fraction F) and
# build's sampling / FPR / masking on realistic data. bench/tools/synth_human makes a host genome with
# isochores and repeats (Alu, L1, microsatellites, alpha satellite, segmental duplications), individuals
# with SNPs and indels (reads never come from the reference itself), and the read sets below, per set of
# seeds ("tune", and "heldout": another individual and other reads):
#   host_short (150 bp, 0.3% substitutions), host_pairs (FR, fragment N(350, 50)), host_long_e1/e4/e8/e12
#   (log-normal, mean 8 kb, 40/30/30 sub/ins/del), chimeras (a host part of 5-50% joined to a foreign
#   read), foreign_short / foreign_long (four Klebsiella genomes, four bee viruses, lambda),
#   foreign_sra (the real reads of gasic-examples, as they are), microbe_short / microbe_long (a
#   Klebsiella genome with 3% microsatellites inserted).
# Every candidate filter classifies every read set once with --report (per-read k-mers and hits), so that
# bench/scripts/rule_table.py evaluates any rule offline. Also measured: build wall time, peak RSS and
# filter bytes; classify of short vs long reads and `pigz -dc` of the short reads (alternated, medians).
#
# Environment (defaults in brackets):
#   KSIEVE_HOST_BASES [1000000000]   host size
#   KSIEVE_HUMAN_SHORT [1000000] KSIEVE_HUMAN_PAIRS [200000] KSIEVE_HUMAN_LONG [2000 per error rate]
#   KSIEVE_HUMAN_CHIMERAS [1000] KSIEVE_HUMAN_FOREIGN_SHORT [1000000] KSIEVE_HUMAN_FOREIGN_LONG [2000]
#   KSIEVE_HUMAN_MICROBE_SHORT [1000000] KSIEVE_HUMAN_MICROBE_LONG [2000]
#   KSIEVE_HUMAN_CONFIGS  candidate filters, space-separated, each KEY=VALUE,... with W (minimizer
#       window), FPR, MASK (build --mask; skipped when this ksieve has no --mask), PAN=1 (also the
#       haplotypes of two more individuals in the filter, built with --no-counts). Default: W 8 (build's
#       default; the first config is the one timed), 7, 9, 10 and 11 at FPR 1e-4, W 11 at 1e-6 (for a
#       one-hit rule), and W 8 at 1e-4 with MASK dust (T 1.5) and PAN.
#   KSIEVE_HUMAN_SETS [tune heldout]  KSIEVE_HUMAN_STEPS [data stats build classify timing table]
#   KSIEVE_BENCH_THREADS [2]  KSIEVE_BENCH_REPEATS [3]  KSIEVE (the executable; see bench_common.sh)
# Writes under WORK/human-BASES/ (WORK: the first argument, or KSIEVE_BENCH_DIR): host.fa, SET/*.fq,
# filters/, reports/SET/CONFIG/READSET.tsv, report.md (also printed), and the section of the benchmark pages
# as WORK/NAME.md (KSIEVE_HUMAN_REPORT=NAME, default human). Everything is deterministic and generated once
# (delete a file to make it again). bench_all.sh runs this script as its steps "human" (1 Gbp, every
# candidate filter: docs/benchmarks_human.md and a section of docs/benchmarks.md) and "human3g" (3.1 Gbp, the
# default filter: docs/benchmarks_human_3g.md) and writes those pages.
# Usage: bench/scripts/bench_human_host.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

HOST_BASES=${KSIEVE_HOST_BASES:-1000000000}
N_SHORT=${KSIEVE_HUMAN_SHORT:-1000000}
N_PAIRS=${KSIEVE_HUMAN_PAIRS:-200000}
N_LONG=${KSIEVE_HUMAN_LONG:-2000}
N_CHIM=${KSIEVE_HUMAN_CHIMERAS:-1000}
N_FSHORT=${KSIEVE_HUMAN_FOREIGN_SHORT:-1000000}
N_FLONG=${KSIEVE_HUMAN_FOREIGN_LONG:-2000}
N_MSHORT=${KSIEVE_HUMAN_MICROBE_SHORT:-1000000}
N_MLONG=${KSIEVE_HUMAN_MICROBE_LONG:-2000}
CONFIGS=${KSIEVE_HUMAN_CONFIGS:-"W=8,FPR=1e-4 W=7,FPR=1e-4 W=9,FPR=1e-4 W=10,FPR=1e-4 W=11,FPR=1e-4 \
W=11,FPR=1e-6 W=8,FPR=1e-4,MASK=dust W=8,FPR=1e-4,PAN=1"}
SETS=${KSIEVE_HUMAN_SETS:-tune heldout}
STEPS=${KSIEVE_HUMAN_STEPS:-data stats build classify timing table}
T=${KSIEVE_BENCH_THREADS:-2}
REPEATS=${KSIEVE_BENCH_REPEATS:-3}
D=$WORK/human-$HOST_BASES
FOREIGN=$WORK/foreign-genomes
SRA_GZ=/usr/share/doc/gasic/examples/reads/SRR059298_subset.fastq.gz
GASIC_DIR=/usr/share/doc/gasic/examples/genomes
LONG_ERRORS="1 4 8 12"
READ_SETS="host_short host_pairs host_long_e1 host_long_e4 host_long_e8 host_long_e12 chimeras foreign_short
foreign_long foreign_sra microbe_short microbe_long"
RES=$D/timing
REPORT_NAME=${KSIEVE_HUMAN_REPORT:-human}
[[ $REPORT_NAME =~ ^[a-z0-9_]+$ ]] || die "KSIEVE_HUMAN_REPORT must be a plain name, not '$REPORT_NAME'"
SYNTH=

has_step() { [[ " $STEPS " == *" $1 "* ]]; }

# Seeds of a set: the individual's, and the base of the reads' ("tune" 101/1000, "heldout" 202/2000,
# others from a checksum of the name).
set_seed()
{
    case $1 in
        tune) echo "101 1000" ;;
        heldout) echo "202 2000" ;;
        *) local c; c=$(cksum <<< "$1" | cut -d' ' -f1); echo "$((c % 100000 + 300)) $((c % 100000 * 10 + 3000))" ;;
    esac
}

# synth_human: the built one, or compiled here (one file, standard library only).
find_synth()
{
    local c
    for c in "$(dirname "$KSIEVE")/../bench/synth_human" "$REPO/build/bench/synth_human"; do
        if [[ -x $c ]]; then SYNTH=$c; return; fi
    done
    SYNTH=$WORK/bin/synth_human
    local src=$REPO/bench/tools/synth_human.cpp
    if [[ ! -x $SYNTH || $src -nt $SYNTH || $REPO/bench/tools/synth_common.hpp -nt $SYNTH ]]; then
        mkdir -p "$WORK/bin"
        log "compiling $SYNTH"
        "${CXX:-g++}" -std=c++20 -O2 -o "$SYNTH.tmp" "$src" && mv "$SYNTH.tmp" "$SYNTH"
    fi
}

# produce FILE CMD... : runs CMD (which writes FILE.tmp) unless FILE exists, then renames FILE.tmp to FILE.
produce()
{
    local f=$1
    shift
    [[ -s $f ]] && return 0
    log "making $f"
    nice -n 10 "$@" || die "failed to make $f: $*"
    mv "$f.tmp" "$f"
}

make_foreign()
{
    mkdir -p "$FOREIGN"
    local f g
    for f in "$KLEB_DIR"/*.fna.xz; do
        g=$FOREIGN/$(basename "$f" .fna.xz).fa
        [[ -s $g ]] || { xz -dc "$f" > "$g.tmp" && mv "$g.tmp" "$g"; }
    done
    for f in "$GASIC_DIR"/*.fasta.gz; do
        g=$FOREIGN/$(basename "$f" .fasta.gz).fa
        [[ -s $g ]] || { gzip -dc "$f" > "$g.tmp" && mv "$g.tmp" "$g"; }
    done
    [[ -s $FOREIGN/lambda.fa ]] || { gzip -dc "$LAMBDA_GZ" > "$FOREIGN/lambda.fa.tmp" && mv "$FOREIGN/lambda.fa.tmp" "$FOREIGN/lambda.fa"; }
    FOREIGN_FILES=$(find "$FOREIGN" -name '*.fa' | LC_ALL=C sort | tr '\n' ' ')
    FOREIGN_LIST=$(tr ' ' ',' <<< "${FOREIGN_FILES% }")
}

# make_set SET: the individual and every read set of SET under $D/SET.
make_set()
{
    local s=$1 dir=$D/$1 ind rs e
    read -r ind rs <<< "$(set_seed "$s")"
    mkdir -p "$dir"
    produce "$dir/individual.fa" "$SYNTH" individual "$D/host.fa" --seed "$ind" --haplotypes 2 "$dir/individual.fa.tmp"
    local R=("$SYNTH" reads)
    produce "$dir/host_short.fq" "${R[@]}" --kind short --n "$N_SHORT" --seed $((rs + 1)) --prefix host_short \
        "$dir/host_short.fq.tmp" "$dir/individual.fa"
    if [[ ! -s $dir/host_pairs_R2.fq ]]; then
        nice -n 10 "${R[@]}" --kind pairs --n "$N_PAIRS" --seed $((rs + 2)) --prefix host_pair \
            "$dir/host_pairs_R1.fq.tmp" "$dir/host_pairs_R2.fq.tmp" "$dir/individual.fa" || die "pairs of $s"
        mv "$dir/host_pairs_R1.fq.tmp" "$dir/host_pairs_R1.fq" && mv "$dir/host_pairs_R2.fq.tmp" "$dir/host_pairs_R2.fq"
    fi
    for e in $LONG_ERRORS; do
        produce "$dir/host_long_e$e.fq" "${R[@]}" --kind long --n "$N_LONG" --error "0.$(printf %02d "$e")" \
            --seed $((rs + 10 + e)) --prefix "host_long_e$e" "$dir/host_long_e$e.fq.tmp" "$dir/individual.fa"
    done
    produce "$dir/chimeras.fq" "${R[@]}" --kind chimera --n "$N_CHIM" --seed $((rs + 3)) --prefix chim \
        --foreign "$FOREIGN_LIST" "$dir/chimeras.fq.tmp" "$dir/individual.fa"
    # shellcheck disable=SC2086 # (the genome list)
    produce "$dir/foreign_short.fq" "${R[@]}" --kind short --n "$N_FSHORT" --seed $((rs + 4)) \
        --prefix foreign_short "$dir/foreign_short.fq.tmp" $FOREIGN_FILES
    # shellcheck disable=SC2086
    produce "$dir/foreign_long.fq" "${R[@]}" --kind long --n "$N_FLONG" --error 0.04 --seed $((rs + 5)) \
        --prefix foreign_long "$dir/foreign_long.fq.tmp" $FOREIGN_FILES
    produce "$dir/foreign_sra.fq" sh -c "gzip -dc '$SRA_GZ' > '$dir/foreign_sra.fq.tmp'"
    produce "$dir/microbe.fa" "$SYNTH" microbe "$FOREIGN/MGH78578.fa" --seed "$ind" "$dir/microbe.fa.tmp"
    produce "$dir/microbe_short.fq" "${R[@]}" --kind short --n "$N_MSHORT" --seed $((rs + 6)) \
        --prefix microbe_short "$dir/microbe_short.fq.tmp" "$dir/microbe.fa"
    produce "$dir/microbe_long.fq" "${R[@]}" --kind long --n "$N_MLONG" --error 0.04 --seed $((rs + 7)) \
        --prefix microbe_long "$dir/microbe_long.fq.tmp" "$dir/microbe.fa"
}

make_data()
{
    mkdir -p "$D" "$RES"
    make_foreign
    if [[ ! -s $D/host.fa ]]; then
        log "host: $HOST_BASES bp"
        nice -n 10 /usr/bin/time -v -o "$RES/synth_host.time" "$SYNTH" host --bases "$HOST_BASES" --seed 1 \
            "$D/host.fa.tmp" 2> "$D/host.composition.tsv" || die "synth_human host failed"
        sed -i '/^[[:space:]]*Command being timed/,$d' "$D/host.composition.tsv"
        mv "$D/host.fa.tmp" "$D/host.fa"
    fi
    local s
    for s in $SETS; do make_set "$s"; done
    if [[ " $CONFIGS " == *PAN=1* ]]; then
        produce "$D/pan2.fa" "$SYNTH" individual "$D/host.fa" --seed 302 --haplotypes 2 "$D/pan2.fa.tmp"
        produce "$D/pan3.fa" "$SYNTH" individual "$D/host.fa" --seed 303 --haplotypes 2 "$D/pan3.fa.tmp"
    fi
}

make_stats()
{
    local f
    for f in "$D/host.fa" "$D/tune/microbe.fa" "$FOREIGN/MGH78578.fa"; do
        [[ -s $f ]] || continue
        [[ -s $f.stats ]] || { nice -n 10 "$SYNTH" stats "$f" > "$f.stats.tmp" && mv "$f.stats.tmp" "$f.stats"; }
    done
}

# ---------------------------------------------------------------------------------------------------------
# Filters: one per configuration
# ---------------------------------------------------------------------------------------------------------
has_mask() { "$KSIEVE" build --help 2>&1 | grep -q -- '--mask'; }

# config_get CONFIG KEY: the value of KEY in CONFIG ("W=11,FPR=1e-4,MASK=dust"), or empty.
config_get() { tr ',' '\n' <<< "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }

# config_name CONFIG: a file name (m11_fpr1e-4, m11_fpr1e-4_dust, m11_fpr1e-4_pan).
config_name()
{
    local n mask
    n="m$(config_get "$1" W)_fpr$(config_get "$1" FPR)"
    mask=$(config_get "$1" MASK)
    [[ -z $mask ]] || n+="_${mask//:/}"
    [[ $(config_get "$1" PAN) != 1 ]] || n+="_pan"
    echo "$n"
}

# usable_configs: the configurations this ksieve can build (MASK needs build --mask).
usable_configs()
{
    local c mask_ok=0
    has_mask && mask_ok=1
    for c in $CONFIGS; do
        if [[ -n $(config_get "$c" MASK) && $mask_ok == 0 ]]; then
            log "skipping $c: this ksieve has no build --mask"
            continue
        fi
        echo "$c"
    done
}

build_filter()
{
    local c=$1 name f args
    name=$(config_name "$c")
    f=$D/filters/$name.ksf
    [[ -s $f ]] && return 0
    args=(--sampling "minimizer:$(config_get "$c" W)" --fpr "$(config_get "$c" FPR)")
    [[ -z $(config_get "$c" MASK) ]] || args+=(--mask "$(config_get "$c" MASK)")
    local inputs=("$D/host.fa")
    # a pangenome: presence only, so that the filter grows by the other assemblies' distinct k-mers
    [[ $(config_get "$c" PAN) != 1 ]] || { inputs+=("$D/pan2.fa" "$D/pan3.fa"); args+=(--no-counts); }
    mkdir -p "$D/filters"
    sync
    uptime > "$RES/build_$name.load"
    log "build $name: ${args[*]}"
    /usr/bin/time -v -o "$RES/build_$name.time" "$KSIEVE" build -q -t "$T" "${args[@]}" -o "$f.tmp" \
        "${inputs[@]}" 2> "$RES/build_$name.err" || die "build $name failed: $(tail -3 "$RES/build_$name.err")"
    mv "$f.tmp" "$f"
    "$KSIEVE" info "$f" > "$f.info"
}

# ---------------------------------------------------------------------------------------------------------
# Classification: one report per (filter, set, read set)
# ---------------------------------------------------------------------------------------------------------
classify_set()
{
    local name=$1 s=$2 r out inputs
    local f=$D/filters/$name.ksf dir=$D/$s
    mkdir -p "$D/reports/$s/$name"
    for r in $READ_SETS; do
        out=$D/reports/$s/$name/$r.tsv
        [[ -s $out && $out -nt $f ]] && continue
        if [[ $r == host_pairs ]]; then
            inputs=(--paired "$dir/host_pairs_R1.fq" "$dir/host_pairs_R2.fq")
        else
            inputs=("$dir/$r.fq")
        fi
        "$KSIEVE" classify -q -t "$T" -f "$f" --report "$out.tmp" "${inputs[@]}" 2> "$out.err" ||
            die "classify $name $s $r failed: $(tail -3 "$out.err")"
        rm -f "$out.err"
        mv "$out.tmp" "$out"
    done
}

# ---------------------------------------------------------------------------------------------------------
# Speed: classify of short vs long reads (gzip'd, default rule, plain --novel), and pigz -dc, alternated;
# the host short reads (long reads) of every set in one file each: 2 M short reads for tune and heldout
# ---------------------------------------------------------------------------------------------------------
fq_bases() { awk 'NR % 4 == 2 { b += length($0) } END { printf "%.0f\n", b }' "$1"; }

bench_timing()
{
    local name=$1 i s shorts=() longs=()
    local f=$D/filters/$name.ksf short=$RES/short.fq.gz long=$RES/long.fq.gz
    for s in $SETS; do
        shorts+=("$D/$s/host_short.fq")
        longs+=("$D/$s"/host_long_e*.fq)
    done
    [[ -s $short ]] || cat "${shorts[@]}" | pigz -p "$T" -6 -n -c > "$short"
    [[ -s $long ]] || cat "${longs[@]}" | pigz -p "$T" -6 -n -c > "$long"
    [[ -s $short.bases ]] || pigz -dc "$short" | fq_bases /dev/stdin > "$short.bases"
    [[ -s $long.bases ]] || pigz -dc "$long" | fq_bases /dev/stdin > "$long.bases"
    rm -f "$RES"/time_*.times
    "$KSIEVE" classify -q -t "$T" -f "$f" --novel /dev/null "$short" # maps the filter in
    uptime > "$RES/timing.load"
    for ((i = 0; i < REPEATS; ++i)); do
        measure_in "$RES" time_short "$KSIEVE" classify -q -t "$T" -f "$f" --novel "$RES/x.fq" "$short"
        measure_in "$RES" time_long "$KSIEVE" classify -q -t "$T" -f "$f" --novel "$RES/x.fq" "$long"
        measure_in "$RES" time_pigz pigz -dc -p "$T" "$short"
    done
    uptime >> "$RES/timing.load"
    rm -f "$RES/x.fq"
    echo "$name" > "$RES/timing.filter"
}

# ---------------------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------------------
time_field() { awk -F': ' -v k="$2" 'index($0, k) { print $2 }' "$RES/$1.time"; }

info_field() { awk -v k="$2" '$1 == k { print $2 }' "$D/filters/$1.ksf.info"; }

build_table()
{
    echo "| filter | build wall | peak RSS MB | file bytes | distinct k-mers | bits/k-mer | est. FPR | load at start |"
    echo "|---|---|---|---|---|---|---|---|"
    local f n
    for f in "$D"/filters/*.ksf; do
        n=$(basename "$f" .ksf)
        [[ -s $RES/build_$n.time && -s $f.info ]] || continue
        printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$(time_field "build_$n" 'Elapsed (wall clock)')" \
            "$(($(time_field "build_$n" 'Maximum resident set size') / 1024))" "$(info_field "$n" file_bytes)" \
            "$(info_field "$n" distinct_kmers)" "$(info_field "$n" bits_per_kmer)" \
            "$(info_field "$n" estimated_fpr)" "$(sed 's/.*load average: //' "$RES/build_$n.load")"
    done
}

timing_table()
{
    [[ -s $RES/time_pigz.times ]] || return 0
    local sb lb
    sb=$(< "$RES/short.fq.gz.bases")
    lb=$(< "$RES/long.fq.gz.bases")
    echo "Speed ($T threads, filter $(< "$RES/timing.filter"), medians of $REPEATS alternated runs; load:" \
        "$(sed 's/.*load average: //' "$RES/timing.load" | paste -sd'/' -)):"
    echo
    echo "| run | bases | wall s | CPU s | peak RSS MB | Mbases/s |"
    echo "|---|---|---|---|---|---|"
    local n b
    for n in time_short time_long time_pigz; do
        b=$sb
        [[ $n != time_long ]] || b=$lb
        printf '| %s | %s | %s | %s | %s | %s |\n' "$n" "$b" "$(median_in "$RES" "$n" 1)" "$(median_in "$RES" "$n" 2)" \
            "$(($(median_in "$RES" "$n" 3) / 1024))" "$(awk -v b="$b" -v s="$(median_in "$RES" "$n" 1)" 'BEGIN { printf "%.1f", b / s / 1e6 }')"
    done
}

report()
{
    local cpu s f
    cpu=$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')
    {
        echo "# Human-like host depletion: $(date -u +%Y-%m-%d), commit $(git -C "$REPO" rev-parse --short HEAD), $cpu, $(nproc) cores"
        echo
        echo "Host $HOST_BASES bp; per set: $N_SHORT short, $N_PAIRS pairs, $N_LONG long reads per error rate" \
            "($LONG_ERRORS %), $N_CHIM chimeras, $N_FSHORT foreign short, $N_FLONG foreign long," \
            "$(awk 'END { print NR / 4 }' "$D/${SETS%% *}/foreign_sra.fq") SRA reads, $N_MSHORT / $N_MLONG microbe short / long."
        echo
        echo '```'
        cat "$D/host.composition.tsv"
        for f in "$D"/host.fa.stats "$D/${SETS%% *}"/microbe.fa.stats "$FOREIGN"/MGH78578.fa.stats; do
            [[ ! -s $f ]] || cat "$f"
        done | awk 'NR == 1 || !/^file/'
        echo '```'
        echo
        build_table
        echo
        timing_table
        for s in $SETS; do
            echo
            echo "## Set $s"
            python3 "$BENCH_SCRIPTS/rule_table.py" "$D/reports/$s"
        done
    } | tee "$D/report.md"
    page_section > "$WORK/$REPORT_NAME.md.tmp"
    mv "$WORK/$REPORT_NAME.md.tmp" "$WORK/$REPORT_NAME.md"
}

# The section of the benchmark pages (bench_all.sh): the data, the filters, the speed, and for each set
# the rules that matter next to the default (the full grid is in report.md of the work directory).
page_section()
{
    echo "Sizes and filters of this run: \`KSIEVE_HOST_BASES=$HOST_BASES KSIEVE_HUMAN_SETS='$SETS'"
    echo "KSIEVE_HUMAN_CONFIGS='$CONFIGS'\` ($T threads)."
    echo
    echo "Host depletion on a synthetic host built like a human genome ($HOST_BASES bp: isochores, Alu- and"
    echo "L1-like repeats, microsatellites, alpha satellite, segmental duplications), with reads drawn from"
    echo "other individuals (SNPs and small indels against the reference): $N_SHORT short reads, $N_PAIRS"
    echo "pairs, $N_LONG long reads at each of $LONG_ERRORS % errors, $N_CHIM chimeras (a host segment of"
    echo "5-50% joined to a foreign read), foreign reads from real genomes and real SRA reads, and a"
    echo "Klebsiella genome with microsatellites inserted (\"microsat. microbe\"). Built by"
    echo "\`bench/scripts/bench_human_host.sh\` (generator: \`bench/tools/synth_human.cpp\`); rules are"
    echo "evaluated from one \`classify --report\` per filter and read set; \`_dust\` filters use"
    echo "\`build --mask\`."
    ! compgen -G "$D/filters/*_pan.ksf" > /dev/null ||
        echo "The \`_pan\` filter adds the haplotypes of two more individuals (\`build --no-counts\`)."
    echo
    echo '```'
    cat "$D/host.composition.tsv"
    echo '```'
    echo
    build_table
    echo
    timing_table
    local s
    for s in $SETS; do
        echo
        echo "#### Rules on the $s set"
        echo
        python3 "$BENCH_SCRIPTS/rule_table.py" "$D/reports/$s" --compact "2:0.004,1:0.004,1:0.003,3:0.004,2:0.002,2:0.01"
    done
}

need_tools pigz xz gzip python3 /usr/bin/time lscpu
find_ksieve
find_synth
mkdir -p "$RES"
log "load: $(uptime)"
has_step data && make_data
make_foreign
has_step stats && make_stats
if has_step build || has_step classify; then
    for c in $(usable_configs); do
        has_step build && build_filter "$c"
        if has_step classify; then
            for s in $SETS; do classify_set "$(config_name "$c")" "$s"; done
        fi
    done
fi
has_step timing && bench_timing "$(config_name "$(usable_configs | head -1)")"
has_step table && report
log "done: $(uptime)"
