#!/usr/bin/env bash
# Host reads as sequencers write them: host depletion with the error profiles of ART's built-in
# Illumina models (art_illumina -ss, Debian's art-nextgen-simulation-tools) at their usual lengths,
# single-end and paired, on the human-like host of bench_human_host.sh (reads from another
# individual), next to bbduk and bowtie2.
#
# Read sets (fixed seeds), drawn from the "heldout" individual of bench_human_host.sh:
#   PROFILE_LEN_se / PROFILE_LEN_pe  ART -ss PROFILE -l LEN, single-end reads / pairs (fragments
#       N(LEN + 200, 50)), for HS10 100, HS20 100, HS25 150, HSXt 150, MinS 50, MSv3 250, NS50 75;
#   cut100 / cut75   100 bp and 75 bp pieces cut end to end from the 4% error long reads;
#   foreign: ART HS20 100 and NS50 75 reads of the four Klebsiella genomes, the synthetic foreign
#       short reads and the real SRA reads of bench_human_host.sh.
# Every ksieve candidate filter (KSIEVE_PROFILE_CONFIGS) of the whole host classifies every set
# (classify --stats: units called known, reads/s). On a slice of the host small enough for bowtie2's
# index (the first KSIEVE_PROFILE_SLICE bases of chr1, reads from the same region of the individual's
# two haplotypes) the default filter, bbduk (k=31: its defaults, with the masked middle base, and
# without it) and bowtie2 --very-sensitive (a read or pair is host when a mate aligns) classify the
# same slice reads, each timed (wall, start-up included, and peak RSS) next to the index sizes.
#
# Environment (defaults in brackets):
#   KSIEVE_HOST_BASES [1000000000]   host size (bench_human_host.sh makes the host and the individual)
#   KSIEVE_PROFILE_READS [100000]    host reads (single-end) and pairs per profile, whole host
#   KSIEVE_PROFILE_SLICE_READS [20000]  the same per profile on the slice
#   KSIEVE_PROFILE_FOREIGN [500000]  foreign ART reads per profile
#   KSIEVE_PROFILE_SLICE [20000000]  slice length
#   KSIEVE_PROFILE_CONFIGS  candidate filters, space-separated, each "defaults" or KEY=VALUE,... with
#       K (-k), W (--sampling minimizer:W), FPR (--fpr) and S (--spaced; "none" or a pattern); a key
#       left out takes build's default. The first is the one the slice table shows. Default:
#       "defaults S=none,FPR=1e-4 FPR=1e-4 S=1110111011101110111011101110111 K=21,S=none,FPR=1e-4"
#       (build's defaults; the plain k-mers at 1e-4, the filter of ksieve before spaced k-mers; the
#       default pattern at 1e-4; a pattern that ignores every fourth position; plain 21-mers).
#   KSIEVE_PROFILE_BEFORE  an older ksieve executable: its classify of the plain filter of the first
#       config with S=none is the column "before", and the step speed compares the two
#   KSIEVE_PROFILE_STEPS [data build classify peers speed table]  KSIEVE_BENCH_THREADS [2]  KSIEVE
#   The step speed (with KSIEVE_PROFILE_BEFORE): build and classify of the 2 M-read set of
#   bench_host_depletion.sh (WORK/host-BASES/host.fa and reads.fq.gz, made there), each executable
#   with its default filter: 3 alternated builds, then 5 alternated classify runs, each after a sync;
#   medians.
# Writes under WORK/human-BASES/profiles/ (WORK: the first argument, or KSIEVE_BENCH_DIR): the read
# sets, filters/, stats/, peers/, report.md (a page of its own), and the section of the benchmark pages as
# WORK/profiles.md (bench_all.sh's step profiles: docs/benchmarks_profiles.md and a section of
# docs/benchmarks.md).
# Usage: bench/scripts/bench_error_profiles.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

HOST_BASES=${KSIEVE_HOST_BASES:-1000000000}
N_HOST=${KSIEVE_PROFILE_READS:-100000}
N_SLICE=${KSIEVE_PROFILE_SLICE_READS:-20000}
N_FOREIGN=${KSIEVE_PROFILE_FOREIGN:-500000}
SLICE=${KSIEVE_PROFILE_SLICE:-20000000}
CONFIGS=${KSIEVE_PROFILE_CONFIGS:-"defaults S=none,FPR=1e-4 FPR=1e-4 S=1110111011101110111011101110111 \
K=21,S=none,FPR=1e-4"}
STEPS=${KSIEVE_PROFILE_STEPS:-data build classify peers speed table}
BEFORE=${KSIEVE_PROFILE_BEFORE:-}
T=${KSIEVE_BENCH_THREADS:-2}
PROFILES="HS10:100 HS20:100 HS25:150 HSXt:150 MinS:50:se MSv3:250 NS50:75" # (MinS: ART has single-end only)
D=$WORK/human-$HOST_BASES
P=$D/profiles
IND=$D/heldout/individual.fa
RES=$P/timing

has_step() { [[ " $STEPS " == *" $1 "* ]]; }
config_get() { tr ',' '\n' <<< "$1" | awk -F= -v k="$2" '$1 == k { print $2 }'; }
# config_name CONFIG: a file name (defaults, k21_spaced-none_fpr1e-4, spaced-1110..._...)
config_name()
{
    [[ $1 != defaults ]] || { echo defaults; return; }
    tr ',' '\n' <<< "$1" | awk -F= '{ k = tolower($1); if (k == "s") k = "spaced-"; printf "%s%s%s", sep, k, $2; sep = "_" }'
    echo
}
# config_args CONFIG: build's options of CONFIG
config_args()
{
    local v
    [[ $1 == defaults ]] && return 0
    v=$(config_get "$1" K) && [[ -z $v ]] || echo "-k $v"
    v=$(config_get "$1" W) && [[ -z $v ]] || echo "--sampling minimizer:$v"
    v=$(config_get "$1" FPR) && [[ -z $v ]] || echo "--fpr $v"
    v=$(config_get "$1" S) && [[ -z $v ]] || echo "--spaced $v"
}
fa_bases() { awk '!/^>/ { b += length($0) } END { printf "%.0f\n", b }' "$@"; }
fq_count() { awk 'END { print NR / 4 }' "$1"; }

# art PROFILE LEN READS SEED OUT_PREFIX GENOME [se|pe]: ART reads (OUT_PREFIX.fq, or OUT_PREFIX1.fq and
# OUT_PREFIX2.fq) at the coverage that gives about READS reads (pairs) over GENOME.
art()
{
    local prof=$1 len=$2 n=$3 seed=$4 out=$5 genome=$6 mode=$7 bases cov args=()
    if [[ $mode == se ]]; then [[ -s $out.fq ]] && return 0; else [[ -s ${out}2.fq ]] && return 0; fi
    bases=$(fa_bases "$genome")
    [[ $mode == se ]] || args=(-p -m $((len + 200)) -s 50)
    cov=$(awk -v n="$n" -v l="$len" -v b="$bases" -v p="$mode" 'BEGIN { printf "%.6f", n * l * (p == "pe" ? 2 : 1) / b }')
    log "art $prof $len $mode: $out"
    nice -n 10 art_illumina -q -ss "$prof" -i "$genome" -l "$len" -f "$cov" -rs "$seed" -na "${args[@]}" \
        -o "$out.tmp" > "$out.art.log" 2>&1 || die "art_illumina $prof $len failed: $(tail -3 "$out.art.log")"
    if [[ $mode == se ]]; then
        mv "$out.tmp.fq" "$out.fq"
    else
        mv "$out.tmp1.fq" "${out}1.fq" && mv "$out.tmp2.fq" "${out}2.fq"
    fi
}

# cut_reads LONG_FQ LEN OUT: LEN-base pieces cut end to end from each long read (qualities kept).
cut_reads()
{
    [[ -s $3 ]] && return 0
    awk -v L="$2" 'NR % 4 == 1 { id = substr($1, 2) } NR % 4 == 2 { s = $0 } NR % 4 == 0 {
        for (i = 1; i + L - 1 <= length(s); i += L)
            printf "@%s_%d\n%s\n+\n%s\n", id, i, substr(s, i, L), substr($0, i, L) }' "$1" > "$3.tmp"
    mv "$3.tmp" "$3"
}

# slice_of FASTA LEN NAME_RE OUT: the first LEN bases of every record whose name matches NAME_RE.
slice_of()
{
    [[ -s $4 ]] && return 0
    awk -v L="$2" -v re="$3" '/^>/ { keep = ($1 ~ re); n = 0; if (keep) print; next }
        keep && n < L { s = substr($0, 1, L - n); n += length(s); print s }' "$1" > "$4.tmp"
    mv "$4.tmp" "$4"
}

make_data()
{
    KSIEVE_HUMAN_SETS=heldout KSIEVE_HUMAN_STEPS=data KSIEVE_HUMAN_CONFIGS=W=8,FPR=1e-4 \
        "$BENCH_SCRIPTS/bench_human_host.sh" "$WORK"
    mkdir -p "$P/host" "$P/slice" "$P/foreign"
    local pl prof len i=0
    [[ -s $P/foreign/klebsiella.fa ]] ||
        cat "$WORK"/foreign-genomes/{Klebs_HS11286,Klebs_Kp1084,MGH78578,NTUH-K2044}.fa > "$P/foreign/klebsiella.fa"
    slice_of "$D/host.fa" "$SLICE" '^>chr1$' "$P/slice/host_slice.fa"
    slice_of "$IND" $((SLICE - 200000)) '^>chr1[_.-]' "$P/slice/individual_slice.fa"
    local only
    for pl in $PROFILES; do
        IFS=: read -r prof len only <<< "$pl"
        i=$((i + 1))
        art "$prof" "$len" "$N_HOST" $((7000 + i)) "$P/host/${prof}_${len}_se" "$IND" se
        art "$prof" "$len" "$N_SLICE" $((7200 + i)) "$P/slice/${prof}_${len}_se" "$P/slice/individual_slice.fa" se
        [[ $only != se ]] || continue
        art "$prof" "$len" "$N_HOST" $((7100 + i)) "$P/host/${prof}_${len}_pe" "$IND" pe
        art "$prof" "$len" "$N_SLICE" $((7300 + i)) "$P/slice/${prof}_${len}_pe" "$P/slice/individual_slice.fa" pe
    done
    local e
    for e in 1 4 8 12; do ln -sf "$D/heldout/host_long_e$e.fq" "$P/host/long_e${e}_se.fq"; done
    cut_reads "$D/heldout/host_long_e4.fq" 100 "$P/host/cut100_se.fq"
    cut_reads "$D/heldout/host_long_e4.fq" 75 "$P/host/cut75_se.fq"
    art HS20 100 "$N_FOREIGN" 7401 "$P/foreign/kleb_HS20_100_se" "$P/foreign/klebsiella.fa" se
    art NS50 75 "$N_FOREIGN" 7402 "$P/foreign/kleb_NS50_75_se" "$P/foreign/klebsiella.fa" se
    # the peers take the first N_SLICE * 5 reads of each Klebsiella set (bowtie2 is slow)
    local fs
    for fs in kleb_HS20_100_se kleb_NS50_75_se; do
        [[ -s $P/slice/foreign_$fs.fq ]] || head -n $((N_SLICE * 20)) "$P/foreign/$fs.fq" > "$P/slice/foreign_$fs.fq"
    done
    ln -sf "$D/heldout/foreign_short.fq" "$P/foreign/synthetic_150_se.fq"
    ln -sf "$D/heldout/foreign_sra.fq" "$P/foreign/sra_se.fq"
    ln -sf "$D/heldout/foreign_long.fq" "$P/foreign/long_se.fq"
    ln -sf "$D/heldout/chimeras.fq" "$P/foreign/chimeras_se.fq"
}

# read_sets DIR: the read sets of DIR (NAME_se or NAME_pe), sorted
read_sets()
{
    local f
    for f in "$1"/*_se.fq "$1"/*_pe2.fq; do
        [[ -s $f ]] || continue
        f=$(basename "$f" .fq)
        echo "${f%2}"
    done | LC_ALL=C sort
}

# inputs DIR SET: classify's inputs of SET
inputs_of() { if [[ $2 == *_pe ]]; then echo "--paired $1/${2}1.fq $1/${2}2.fq"; else echo "$1/$2.fq"; fi; }

build_filter()
{
    local c=$1 host=$2 out=$3 args=()
    [[ -s $out ]] && return 0
    # shellcheck disable=SC2207 # (options without blanks)
    args=($(config_args "$c"))
    mkdir -p "$(dirname "$out")" "$RES"
    log "build $(basename "$out"): ${args[*]}"
    /usr/bin/time -v -o "$RES/build_$(basename "$out" .ksf).time" "$KSIEVE" build -q -t "$T" "${args[@]}" \
        -o "$out.tmp" "$host" 2> "$out.err" || die "build $out failed: $(tail -3 "$out.err")"
    mv "$out.tmp" "$out"
    "$KSIEVE" info "$out" > "$out.info"
}

# classify_all FILTER DIR... : classify --stats of every read set of each DIR
classify_all()
{
    local f=$1 name dir s out exe=${CLASSIFY_EXE:-$KSIEVE}
    name=${CLASSIFY_NAME:-$(basename "$f" .ksf)}
    shift
    for dir in "$@"; do
        for s in $(read_sets "$dir"); do
            out=$P/stats/$name/$(basename "$dir")/$s.json
            [[ -s $out && $out -nt $f ]] && continue
            mkdir -p "$(dirname "$out")"
            # shellcheck disable=SC2046 # (the inputs)
            "$exe" classify -q -t "$T" -f "$f" --stats "$out.tmp" $(inputs_of "$dir" "$s") ||
                die "classify $name $s failed"
            mv "$out.tmp" "$out"
        done
    done
}

# Peers on the slice: bbduk (k=31, defaults: masked middle base; and mm=f) and bowtie2 --very-sensitive.
run_peers()
{
    local dir=$P/slice out=$P/peers s r1 r2
    local slice_filter=$P/filters/slice_$(config_name "${CONFIGS%% *}").ksf
    [[ -s $slice_filter ]] || die "peers: the slice's filter $slice_filter is not built (step build)"
    need_tools bbduk.sh bowtie2 bowtie2-build samtools
    mkdir -p "$out"
    if [[ ! -s $out/bt2.done ]]; then
        log "bowtie2-build of the slice"
        bowtie2-build --threads "$T" -q "$dir/host_slice.fa" "$out/bt2" > /dev/null || die "bowtie2-build failed"
        touch "$out/bt2.done"
    fi
    for s in $(read_sets "$dir"); do
        if [[ $s == *_pe ]]; then r1=$dir/${s}1.fq r2=$dir/${s}2.fq; else r1=$dir/$s.fq r2=; fi
        local m
        for m in t f; do
            [[ -s $out/bbduk_mm$m.$s.txt && -s $out/bbduk_mm$m.$s.time ]] && continue
            local in=(in="$r1")
            [[ -z $r2 ]] || in+=(in2="$r2")
            /usr/bin/time -f '%e %M' -o "$out/bbduk_mm$m.$s.time" \
                bbduk.sh -Xmx4g t="$T" "${in[@]}" ref="$dir/host_slice.fa" k=31 mm=$m > /dev/null 2> "$out/bbduk_mm$m.$s.err" ||
                die "bbduk $s failed: $(tail -3 "$out/bbduk_mm$m.$s.err")"
            # "Contaminants: N reads (x%)" counts reads; a pair is one unit: bbduk removes both mates
            awk -v p="${r2:+2}" '/^Input:/ { n = $2 } /^Contaminants:/ { c = $2 }
                END { d = (p == "2") ? 2 : 1; print n / d, c / d }' "$out/bbduk_mm$m.$s.err" > "$out/bbduk_mm$m.$s.txt"
        done
        # ksieve's default filter of the slice timed the same way (its counts only, as the peers')
        if [[ ! -s $out/ksieve.$s.time ]]; then
            # shellcheck disable=SC2046 # (the inputs)
            /usr/bin/time -f '%e %M' -o "$out/ksieve.$s.time" "$KSIEVE" classify -q -t "$T" -f "$slice_filter" \
                --stats "$out/ksieve.$s.json" $(inputs_of "$dir" "$s") || die "classify of the slice $s failed"
        fi
        [[ -s $out/bowtie2.$s.txt && -s $out/bowtie2.$s.time ]] && continue
        if [[ -z $r2 ]]; then
            /usr/bin/time -f '%e %M' -o "$out/bowtie2.$s.time" \
                bowtie2 --very-sensitive -p "$T" -x "$out/bt2" -U "$r1" 2> "$out/bowtie2.$s.err" |
                samtools view -F 256 - | awk '{ n++; if (int($2 / 4) % 2 == 0) k++ } END { print n, k + 0 }' > "$out/bowtie2.$s.txt"
        else
            /usr/bin/time -f '%e %M' -o "$out/bowtie2.$s.time" \
                bowtie2 --very-sensitive -p "$T" -x "$out/bt2" -1 "$r1" -2 "$r2" 2> "$out/bowtie2.$s.err" |
                samtools view -F 256 -f 64 - |
                awk '{ n++; if (int($2 / 4) % 4 != 3) k++ } END { print n, k + 0 }' > "$out/bowtie2.$s.txt"
        fi
    done
}

# The speed step: each executable's default build and classify of the host depletion benchmark's set.
bench_speed()
{
    local H=$WORK/host-$HOST_BASES i side exe
    [[ -n $BEFORE && -s $H/reads.fq.gz && -s $H/host.fa ]] ||
        { log "speed: needs KSIEVE_PROFILE_BEFORE and the data of bench_host_depletion.sh"; return 0; }
    mkdir -p "$RES"
    rm -f "$RES"/speed_*.times
    cut -d' ' -f1-3 /proc/loadavg > "$RES/speed.load"
    for ((i = 0; i < 3; ++i)); do
        for side in before now; do
            exe=$KSIEVE
            [[ $side == now ]] || exe=$BEFORE
            rm -f "$RES/$side.ksf"
            measure_in "$RES" "speed_build_$side" "$exe" build -q -t "$T" -o "$RES/$side.ksf" "$H/host.fa"
        done
    done
    # (after the builds, whose output files the kernel writes back meanwhile: 5 rounds)
    sleep 10
    for ((i = 0; i < 5; ++i)); do
        for side in before now; do
            exe=$KSIEVE
            [[ $side == now ]] || exe=$BEFORE
            rm -f "$RES/novel.fq" "$RES/known.fq"
            sleep 1
            measure_in "$RES" "speed_classify_$side" "$exe" classify -q -t "$T" -f "$RES/$side.ksf" \
                --novel "$RES/novel.fq" --known "$RES/known.fq" "$H/reads.fq.gz"
        done
    done
    rm -f "$RES/novel.fq" "$RES/known.fq"
    cut -d' ' -f1-3 /proc/loadavg >> "$RES/speed.load"
    stat -c %s "$RES/before.ksf" > "$RES/speed_before.bytes"
    stat -c %s "$RES/now.ksf" > "$RES/speed_now.bytes"
}

speed_table()
{
    [[ -s $RES/speed_classify_now.times ]] || return 0
    echo "Speed and size on the host depletion benchmark's data (a uniform 1 Gbp host, 2 M reads of 150 bp,"
    echo "half of them host, gzip'd; \`--novel\` and \`--known\` plain FASTQ), each executable with its own"
    echo "default filter; medians of 3 alternated builds, then of 5 alternated classify runs, each after a sync"
    echo "(load: $(paste -sd/ "$RES/speed.load")):"
    echo
    echo "| run | wall s | CPU s | peak RSS MB | filter bytes |"
    echo "|---|---:|---:|---:|---:|"
    local side what
    for what in build classify; do
        for side in before now; do
            printf '| %s %s | %s | %s | %s | %s |\n' "$what" "$([[ $side == now ]] && echo "(this commit)" || echo "(before)")" \
                "$(median_in "$RES" "speed_${what}_$side" 1)" "$(median_in "$RES" "speed_${what}_$side" 2)" \
                "$(($(median_in "$RES" "speed_${what}_$side" 3) / 1024))" "$(< "$RES/speed_$side.bytes")"
        done
    done
}

# ---------------------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------------------
json_field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# pct_of KNOWN UNITS KIND: "99.950" (host) or "0.0012 (12)" (foreign)
pct_of()
{
    awk -v k="$1" -v n="$2" -v kind="$3" 'BEGIN { if (n == 0) { print "-"; exit }
        if (kind == "host") printf "%.3f\n", 100 * k / n; else printf "%.4f (%d)\n", 100 * k / n, k }'
}

stats_cell()
{
    local j=$1 kind=$2
    [[ -s $j ]] || { echo "-"; return; }
    python3 - "$j" "$kind" << 'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
n, k = j["units"], j["known_units"]
if n == 0:
    print("-")
elif sys.argv[2] == "rate":
    print(f"{j['reads_per_second']:.0f}")
elif sys.argv[2] == "host":
    print(f"{100 * k / n:.3f}")
else:
    print(f"{100 * k / n:.4f} ({k})")
EOF
}

set_kind() { [[ $2 == rate ]] && { echo rate; return; }; case $1 in chimeras*) echo host ;; *) echo "$2" ;; esac; }

# table_for DIR KIND FILTERS...: a row per read set, a column per filter (% of units known; KIND rate:
# classify's reads per second)
table_for()
{
    local dir=$1 kind=$2 f s row
    shift 2
    row="| reads | units |"
    for f in "$@"; do row+=" $(basename "$f" .ksf) |"; done
    echo "$row"
    echo "|---|---|$(printf -- '---|%.0s' "$@")"
    for s in $(read_sets "$dir"); do
        local first=$P/stats/$(basename "$1" .ksf)/$(basename "$dir")/$s.json
        row="| $s | $(json_field "$P/stats/$(basename "$1" .ksf)/$(basename "$dir")/$s.json" units 2> /dev/null || echo -) |"
        for f in "$@"; do
            row+=" $(stats_cell "$P/stats/$(basename "$f" .ksf)/$(basename "$dir")/$s.json" "$(set_kind "$s" "$kind")") |"
        done
        echo "$row"
    done
}

filters_table()
{
    echo "| filter | build options | k | sampling | spaced | build wall (one run) | file bytes | distinct k-mers | est. FPR |"
    echo "|---|---|---|---|---|---|---|---|---|"
    local f n c
    for c in $CONFIGS; do
        n=$(config_name "$c")
        f=$P/filters/$n.ksf
        [[ -s $f.info ]] || continue
        printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$(config_args "$c" | paste -sd' ' - | sed 's/^$/(none)/')" \
            "$(awk '$1 == "k" { print $2 }' "$f.info")" "$(awk '$1 == "sampling" { print $2 }' "$f.info")" \
            "$(awk '$1 == "spaced" { s = $2 } END { print s == "" ? "none" : s }' "$f.info")" \
            "$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$RES/build_$n.time")" \
            "$(awk '$1 == "file_bytes" { print $2 }' "$f.info")" "$(awk '$1 == "distinct_kmers" { print $2 }' "$f.info")" \
            "$(awk '$1 == "estimated_fpr" { print $2 }' "$f.info")"
    done
}

peer_cell()
{
    local f=$1 kind=$2
    [[ -s $f ]] || { echo "-"; return; }
    read -r n k < "$f"
    pct_of "$k" "$n" "$kind"
}

peers_table()
{
    local slice_filter=$P/filters/slice_$(config_name "${CONFIGS%% *}").ksf s src kind
    echo "| reads | ksieve ($(config_name "${CONFIGS%% *}")) | bbduk k=31 (defaults) | bbduk k=31 mm=f | bowtie2 --very-sensitive |"
    echo "|---|---|---|---|---|"
    for s in $(read_sets "$P/slice"); do
        kind=host src=slice
        [[ $s != foreign_* ]] || kind=foreign
        printf '| %s | %s | %s | %s | %s |\n' "$s" \
            "$(stats_cell "$P/stats/$(basename "$slice_filter" .ksf)/$src/$s.json" "$kind")" \
            "$(peer_cell "$P/peers/bbduk_mmt.$s.txt" "$kind")" "$(peer_cell "$P/peers/bbduk_mmf.$s.txt" "$kind")" \
            "$(peer_cell "$P/peers/bowtie2.$s.txt" "$kind")"
    done
}

# peer_rate TIME_FILE COUNT_FILE: units per second of wall time (start-up included) and peak RSS in MB
peer_rate()
{
    [[ -s $1 && -s $2 ]] || { echo "-"; return; }
    local n
    read -r n _ < "$2"
    awk -v n="$n" '{ w = $1; rss = $2 } END { if (w <= 0) w = 0.01; printf "%.0f (%.0f MB)\n", n / w, rss / 1024 }' "$1"
}

# The slice's speed and memory: units per second of wall time, peak RSS; the index sizes.
peers_speed_table()
{
    local s src kind j q=$P/peers
    echo "| reads | ksieve (defaults) | bbduk k=31 (defaults) | bbduk k=31 mm=f | bowtie2 --very-sensitive |"
    echo "|---|---|---|---|---|"
    for s in $(read_sets "$P/slice"); do
        j=$q/ksieve.$s.json
        [[ -s $j ]] && python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(j["units"], j["known_units"])' \
            "$j" > "$q/ksieve.$s.txt"
        printf '| %s | %s | %s | %s | %s |\n' "$s" "$(peer_rate "$q/ksieve.$s.time" "$q/ksieve.$s.txt")" \
            "$(peer_rate "$q/bbduk_mmt.$s.time" "$q/bbduk_mmt.$s.txt")" "$(peer_rate "$q/bbduk_mmf.$s.time" "$q/bbduk_mmf.$s.txt")" \
            "$(peer_rate "$q/bowtie2.$s.time" "$q/bowtie2.$s.txt")"
    done
    echo
    echo "Index of the slice: ksieve's default filter $(stat -c %s "$P/filters/slice_$(config_name "${CONFIGS%% *}").ksf" 2> /dev/null || echo -) bytes;" \
        "bowtie2's $(cat "$q"/bt2.*.bt2 2> /dev/null | wc -c) bytes (bowtie2-build); bbduk builds its table from the" \
        "FASTA in memory at every run (in its peak RSS, with the Java heap of -Xmx4g)."
}

report()
{
    local filters=() c cpu
    [[ -z $BEFORE ]] || filters+=("$P/filters/before.ksf")
    for c in $CONFIGS; do filters+=("$P/filters/$(config_name "$c").ksf"); done
    cpu=$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')
    {
        echo "Commit \`$(git -C "$REPO" rev-parse --short=10 HEAD)\`, $(date -u '+%Y-%m-%d %H:%M') UTC, $cpu, $(nproc) cores" \
            "(load at the end: $(cut -d' ' -f1-3 /proc/loadavg)); executable \`sha256:$(sha256sum "$KSIEVE" | cut -c1-8)\`." \
            "Reproduce: \`KSIEVE_PROFILE_BEFORE=OLD_KSIEVE bench/scripts/bench_error_profiles.sh WORK_DIR\` (the host and the other individual are" \
            "those of \`bench/scripts/bench_human_host.sh\`, which it runs for its data)."
        echo
        echo "Host $HOST_BASES bp (bench_human_host.sh), reads from another individual: ART profiles" \
            "$PROFILES (profile:length), $N_HOST single-end reads and $N_HOST pairs each; 75 and 100 bp pieces" \
            "of the 4% error long reads; foreign: ART HS20 100 and NS50 75 reads of four Klebsiella" \
            "genomes ($N_FOREIGN each), the synthetic foreign short reads, the real SRA reads, foreign" \
            "long reads and chimeras (a host part of 5-50%)." \
            "${BEFORE:+Column before: the older executable \`sha256:$(sha256sum "$BEFORE" | cut -c1-8)\` with the plain filter of 31-mers.}" \
            "Cells: % of units (reads; pairs) called" \
            "known, default rule (--min-hits 2, --min-hit-fraction 0.004). $T threads; $cpu."
        echo
        filters_table
        echo
        echo "Host reads known (%), whole host:"
        echo
        table_for "$P/host" host "${filters[@]}"
        echo
        echo "Foreign reads known (% and reads), whole host; chimeras (host %):"
        echo
        table_for "$P/foreign" foreign "${filters[@]}"
        echo
        echo "Classify speed, whole host (reads per second of classify --stats, one run each, $T threads):"
        echo
        table_for "$P/host" rate "${filters[@]}"
        table_for "$P/foreign" rate "${filters[@]}" | tail -n +3
        echo
        speed_table
        echo
        echo "On the first $SLICE bases of chr1 (reads from the same region of the individual,"
        echo "$N_SLICE per set), next to bbduk and bowtie2 (a pair is known when either mate is):"
        echo
        peers_table
        echo
        echo "Speed on the slice: units (reads; pairs) per second of wall time, start-up and loading the index"
        echo "included (ksieve: its filter; bbduk: building its table from the slice; bowtie2: its index), with"
        echo "the peak resident set; one run each, $T threads, no read outputs written:"
        echo
        peers_speed_table
    } > "$P/report_body.md"
    # the section of bench_all.sh's pages (its step profiles: docs/benchmarks_profiles.md), and the
    # page of this script run alone
    cp "$P/report_body.md" "$WORK/profiles.md"
    {
        echo "# Host reads with sequencing errors (ART profiles)"
        echo
        echo "<!-- Written by bench/scripts/bench_error_profiles.sh; edit the script, not this page. -->"
        echo
        cat "$P/report_body.md"
    } > "$P/report.md.tmp"
    mv "$P/report.md.tmp" "$P/report.md"
    cat "$P/report.md"
}

need_tools art_illumina python3 /usr/bin/time lscpu
find_ksieve
log "load: $(uptime)"
has_step data && make_data
if has_step build || has_step classify; then
    for c in $CONFIGS; do
        f=$P/filters/$(config_name "$c").ksf
        has_step build && build_filter "$c" "$D/host.fa" "$f"
        has_step classify && classify_all "$f" "$P/host" "$P/foreign"
    done
    f=$P/filters/slice_$(config_name "${CONFIGS%% *}").ksf
    has_step build && build_filter "${CONFIGS%% *}" "$P/slice/host_slice.fa" "$f"
    has_step classify && classify_all "$f" "$P/slice"
fi
if [[ -n $BEFORE ]] && has_step classify; then
    c=$(tr ' ' '\n' <<< "$CONFIGS" | grep -m1 'S=none' || true)
    [[ -n $c ]] || die "KSIEVE_PROFILE_BEFORE needs a config with S=none (the plain filter)"
    ln -sf "$(config_name "$c").ksf" "$P/filters/before.ksf"
    cp "$P/filters/$(config_name "$c").ksf.info" "$P/filters/before.ksf.info"
    CLASSIFY_EXE=$BEFORE CLASSIFY_NAME=before classify_all "$P/filters/before.ksf" "$P/host" "$P/foreign"
fi
has_step peers && run_peers
has_step speed && bench_speed
has_step table && report
log "done: $(uptime)"
