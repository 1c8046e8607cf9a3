#!/usr/bin/env bash
# Labeled filters. (1) Screening: reads from several references (a human-like host, Klebsiella
# pneumoniae HS11286, the lambda phage and two related honey bee viruses, DWV and VDV1) and reads of a
# genome absent from all of them; ksieve build --label and classify (a label per read) against bbduk
# refstats= on the same references and reads: speed, peak memory, reads per reference, and ksieve's
# per-label recall and precision from the reads' origins. Next to it, classify of the unlabeled filter of
# the same k-mers with --exact-hits (the cost of naming the label). (2) Samples: S per-sample filters
# (each sample three genomes of a pool, with its own variants), merged unlabeled and with --label-inputs:
# time, bytes, and classify against both. (3) The "which samples" answers of an exact labeled merge (every
# k-mer, --fpr 0) of a few samples checked against an exact oracle: each label's k-mers and the k-mers of
# every pair of labels, from the samples' sequences.
# Alternated runs (KSIEVE_BENCH_REPEATS, default 3; bbduk KSIEVE_BENCH_REPEATS_SLOW, default 1) at
# KSIEVE_BENCH_THREADS threads (default 2): min / median / max. Writes $WORK/labels.md (and the tables).
# Usage: bench/scripts/bench_labels.sh [WORK_DIR]
#   bench_all.sh runs this script as its step "labels" and writes its report into docs/benchmarks.md and,
#   as a page of its own, docs/benchmarks_labels.md (KSIEVE_BENCH_STEPS_ALL=labels bench/scripts/bench_all.sh).
# Environment (besides bench_common.sh's): KSIEVE_LABELS_HOST_BASES (host size, default 100000000),
#   KSIEVE_LABELS_READS (screening reads, default 1000000), KSIEVE_LABELS_SAMPLES (default 100).
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

HOST_LABEL_BASES=${KSIEVE_LABELS_HOST_BASES:-100000000}
SCREEN_READS=${KSIEVE_LABELS_READS:-1000000}
NSAMPLES=${KSIEVE_LABELS_SAMPLES:-100}
L=$WORK/labels
RES=$L/runs
REPORT=$WORK/labels.md
GASIC=/usr/share/doc/gasic/examples/genomes

find_ksieve
need_tools bbduk.sh art_illumina pigz xz python3 /usr/bin/time
mkdir -p "$L/refs" "$L/samples" "$RES" "$WORK/tmp"
measure() { measure_in "$RES" "$@"; }
mmm() # NAME COL: min / median / max
{
    stats_in "$RES" "$1" "$2" | awk '{ printf "%s / %s / %s", $1, $2, $3 }'
}
med() { median_in "$RES" "$1" "$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "nan"; else printf "%.2f\n", a / b }'; }
info_field() { "$KSIEVE" info --json "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"; }

# random_genome BASES SEED OUT: a uniform random genome (FASTA, lines of 80); the same arguments give the
# same bytes.
random_genome()
{
    [[ -s $3 ]] && return
    python3 - "$1" "$2" "$3" <<'PY'
import random, sys
n, seed, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = random.Random(seed).randbytes(n).translate(bytes(b"ACGT"[i & 3] for i in range(256)))
with open(out, "wb") as f:
    f.write(b">random_%d\n" % seed + b"\n".join(s[i:i + 80] for i in range(0, n, 80)) + b"\n")
PY
}

# ---------------------------------------------------------------------------------------------------------
# (1) Screening
# ---------------------------------------------------------------------------------------------------------
screen_data()
{
    local R=$L/refs
    if [[ ! -s $R/host.fa ]]; then
        local synth=$REPO/build/bench/synth_human
        if [[ ! -x $synth ]]; then
            synth=$WORK/bin/synth_human
            mkdir -p "$WORK/bin"
            "${CXX:-g++}" -std=c++20 -O2 -o "$synth" "$REPO/bench/tools/synth_human.cpp"
        fi
        log "human-like host of $HOST_LABEL_BASES bases"
        "$synth" host --bases "$HOST_LABEL_BASES" --seed 1 "$R/host.fa.tmp" 2> /dev/null
        mv "$R/host.fa.tmp" "$R/host.fa"
    fi
    [[ -s $R/klebsiella.fa ]] || xz -dc "$KLEB_DIR/Klebs_HS11286.fna.xz" > "$R/klebsiella.fa"
    [[ -s $R/lambda.fa ]] || pigz -dc "$LAMBDA_GZ" > "$R/lambda.fa"
    [[ -s $R/dwv.fa ]] || pigz -dc "$GASIC/dwv.fasta.gz" > "$R/dwv.fa"
    [[ -s $R/vdv1.fa ]] || pigz -dc "$GASIC/vdv1.fasta.gz" > "$R/vdv1.fa"
    random_genome 3000000 77 "$L/novel.fa"
    READS=$L/screen-$SCREEN_READS.fq.gz
    if [[ ! -s $READS ]]; then
        local n=$SCREEN_READS t=$WORK/tmp
        simulate "$R/host.fa" $((n * 40 / 100)) 61 host "$t/s_host.fq"
        simulate "$R/klebsiella.fa" $((n * 20 / 100)) 62 klebsiella "$t/s_kleb.fq"
        simulate "$R/lambda.fa" $((n * 5 / 100)) 63 lambda "$t/s_lambda.fq"
        simulate "$R/dwv.fa" $((n * 5 / 100)) 64 dwv "$t/s_dwv.fq"
        simulate "$R/vdv1.fa" $((n * 5 / 100)) 65 vdv1 "$t/s_vdv1.fq"
        simulate "$L/novel.fa" $((n * 25 / 100)) 66 novel "$t/s_novel.fq"
        shuffle_fq_gz "$READS" "$t"/s_*.fq
        rm -f "$t"/s_*.fq
    fi
}

screen_runs()
{
    local R=$L/refs labels=() refs=() r
    for r in host klebsiella lambda dwv vdv1; do
        labels+=(--label "$r=$R/$r.fa")
        refs+=("$R/$r.fa")
    done
    local bbref
    bbref=$(IFS=,; echo "${refs[*]}")
    # (heap for the k-mers of the references: about 20 bytes each, at least 2 GB)
    local heap=$(( (HOST_LABEL_BASES * 24 / 1000000000 + 2) ))g
    for ((round = 0; round < ROUNDS; ++round)); do
        if fast "$round"; then
            measure build_labeled "$KSIEVE" build -q -t "$T" -o "$L/screen.ksf" "${labels[@]}"
            measure build_unlabeled "$KSIEVE" build -q -t "$T" -o "$L/union.ksf" "${refs[@]}"
            measure classify_labeled "$KSIEVE" classify -q -t "$T" -f "$L/screen.ksf" --stats "$L/screen.json" "$READS"
            measure classify_unlabeled_exact "$KSIEVE" classify -q -t "$T" -f "$L/union.ksf" --exact-hits \
                --stats "$L/union.json" "$READS"
        fi
        if slow "$round"; then
            measure bbduk bbduk.sh -Xmx"$heap" in="$READS" ref="$bbref" k=31 t="$T" refstats="$L/refstats.txt" \
                out=null outm=null
            # (its documented speed setting for a large reference: a preallocated table)
            measure bbduk_prealloc bbduk.sh -Xmx"$heap" in="$READS" ref="$bbref" k=31 t="$T" prealloc=t \
                refstats="$L/refstats_prealloc.txt" out=null outm=null
        fi
    done
}

# the per-read labels for the accuracy table (not timed: the timed runs write no report, like the
# unlabeled --exact-hits run they are compared with)
screen_report()
{
    "$KSIEVE" classify -q -t "$T" -f "$L/screen.ksf" --report "$L/screen.tsv" "$READS"
}

# ksieve's per-label reads, recall and precision (origin = the read name's prefix before '|'), and bbduk's
# reads per reference: one Markdown table.
screen_accuracy()
{
    python3 - "$L/screen.tsv" "$L/refstats.txt" <<'PY'
import collections, gzip, sys
report, refstats = sys.argv[1], sys.argv[2]
origin = collections.Counter(); called = collections.Counter(); right = collections.Counter()
for line in open(report):
    if line.startswith("read_id\t"):
        continue
    rid, kmers, hits, cls, label = line.rstrip("\n").split("\t")
    o = rid.split("|")[0]
    origin[o] += 1
    called[label] += 1
    right[label] += label == o
bb = {}
for line in open(refstats):
    if line.startswith("#"):
        continue
    f = line.split("\t")
    bb[f[0]] = int(f[5])
print("| label | reads from it | ksieve: reads | recall | precision | bbduk refstats: reads |")
print("|---|---:|---:|---:|---:|---:|")
for l in ["host", "klebsiella", "lambda", "dwv", "vdv1"]:
    rec = 100 * right[l] / origin[l] if origin[l] else 0
    pre = 100 * right[l] / called[l] if called[l] else 0
    print(f"| {l} | {origin[l]:,} | {called[l]:,} | {rec:.2f}% | {pre:.2f}% | {bb.get(l, 0):,} |")
total = sum(origin.values())
print(f"| ambiguous | | {called['ambiguous']:,} | | | |")
print(f"| novel (no reference) | {origin['novel']:,} | {called['-']:,} (novel) | | | "
      f"{total - sum(bb.values()):,} (unmatched) |")
PY
}

# ---------------------------------------------------------------------------------------------------------
# (2) Per-sample filters: unlabeled and labeled merge
# ---------------------------------------------------------------------------------------------------------
# samples_data N GENOME_BASES SNP_RATE DIR: N samples, each three genomes of a pool of 30 random genomes with
# its own substitutions (SNP_RATE per base); DIR/sI.fa.
samples_data()
{
    local n=$1 bases=$2 snp=$3 dir=$4
    [[ -s $dir/s$((n - 1)).fa ]] && return
    mkdir -p "$dir"
    python3 - "$n" "$bases" "$snp" "$dir" <<'PY'
import random, sys
n, bases, snp, d = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
table = bytes(b"ACGT"[i & 3] for i in range(256))
pool = [random.Random(1000 + g).randbytes(bases).translate(table) for g in range(30)]
for s in range(n):
    rng = random.Random(s)
    with open(f"{d}/s{s}.fa", "wb") as f:
        for g in rng.sample(range(30), 3):
            seq = bytearray(pool[g])
            for _ in range(int(bases * snp)):
                p = rng.randrange(bases)
                seq[p] = b"ACGT"[(b"ACGT".index(seq[p]) + rng.randrange(1, 4)) % 4]
            f.write(b">g%d\n" % g + bytes(seq) + b"\n")
PY
}

samples_runs()
{
    local S=$L/samples i
    samples_data "$NSAMPLES" 300000 0.002 "$S"
    local inputs=()
    for ((i = 0; i < NSAMPLES; ++i)); do inputs+=("$S/s$i.ksf"); done
    if [[ ! -s $S/s$((NSAMPLES - 1)).ksf ]]; then
        log "building $NSAMPLES sample filters"
        # one --expected for all: the union's minimizers, so that the samples merge at the target rate
        "$KSIEVE" build -q -t "$T" -o "$S/all.ksf" "$S"/s*.fa
        local e
        e=$(info_field "$S/all.ksf" distinct_kmers)
        for ((i = 0; i < NSAMPLES; ++i)); do
            "$KSIEVE" build -q -t "$T" --expected "$e" -o "$S/s$i.ksf" "$S/s$i.fa"
        done
    fi
    for ((round = 0; round < REPEATS; ++round)); do
        measure merge_unlabeled "$KSIEVE" merge -q -t "$T" -o "$S/union.ksf" "${inputs[@]}"
        measure merge_labeled "$KSIEVE" merge -q -t "$T" --label-inputs -o "$S/labeled.ksf" "${inputs[@]}"
    done
    # reads of the samples: classify against both
    SREADS=$L/sample-reads-1000000.fq.gz
    if [[ ! -s $SREADS ]]; then
        cat "$S/s0.fa" "$S/s1.fa" "$S/s2.fa" > "$WORK/tmp/s012.fa"
        simulate "$WORK/tmp/s012.fa" 1000000 71 s "$WORK/tmp/sreads.fq"
        shuffle_fq_gz "$SREADS" "$WORK/tmp/sreads.fq"
        rm -f "$WORK/tmp/sreads.fq" "$WORK/tmp/s012.fa"
    fi
    for ((round = 0; round < REPEATS; ++round)); do
        measure classify_samples_labeled "$KSIEVE" classify -q -t "$T" -f "$S/labeled.ksf" \
            --stats "$L/samples_labeled.json" "$SREADS"
        measure classify_samples_unlabeled_exact "$KSIEVE" classify -q -t "$T" -f "$S/union.ksf" --exact-hits \
            --stats "$L/samples_unlabeled.json" "$SREADS"
    done
}

# ---------------------------------------------------------------------------------------------------------
# (3) Exact "which samples" answers against an oracle
# ---------------------------------------------------------------------------------------------------------
oracle_check()
{
    local O=$L/oracle i
    samples_data 8 40000 0.002 "$O"
    local inputs=()
    for ((i = 0; i < 8; ++i)); do
        [[ -s $O/s$i.ksf ]] || "$KSIEVE" build -q -t "$T" --fpr 0 --sampling all -o "$O/s$i.ksf" "$O/s$i.fa"
        inputs+=("$O/s$i.ksf")
    done
    "$KSIEVE" merge -q -t "$T" --label-inputs -o "$O/labeled.ksf" "${inputs[@]}"
    "$KSIEVE" merge -q -t 1 --label-inputs -o "$O/labeled1.ksf" "${inputs[@]}"
    cmp -s "$O/labeled.ksf" "$O/labeled1.ksf" || die "labeled merge differs between 1 and $T threads"
    "$KSIEVE" info --json "$O/labeled.ksf" > "$O/info.json"
    python3 - "$O" <<'PY'
import json, sys
d = sys.argv[1]
comp = bytes.maketrans(b"ACGT", b"TGCA")
sets = []
for i in range(8):
    ks = set()
    for line in open(f"{d}/s{i}.fa", "rb"):
        if line.startswith(b">"):
            continue
        s = line.strip()
        r = s.translate(comp)[::-1]
        n = len(s)
        for p in range(n - 30):
            a = s[p:p + 31]; b = r[n - 31 - p:n - p]
            ks.add(min(a, b))
    sets.append(ks)
info = json.load(open(f"{d}/info.json"))
names = [l["name"] for l in info["labels"]]
assert names == [f"s{i}" for i in range(8)], names
bad = 0
for a in range(8):
    if info["labels"][a]["kmers"] != len(sets[a]):
        bad += 1
    for b in range(8):
        if info["shared_kmers"][a][b] != len(sets[a] & sets[b]):
            bad += 1
union = set().union(*sets)
print(f"{len(union)} {bad}")
PY
}

# ---------------------------------------------------------------------------------------------------------
make_report()
{
    local acc=$1 oracle=$2
    local kb_l kb_u bytes_l bytes_u d_l classes
    bytes_l=$(info_field "$L/samples/labeled.ksf" payload_bytes)
    bytes_u=$(info_field "$L/samples/union.ksf" payload_bytes)
    d_l=$(info_field "$L/samples/labeled.ksf" distinct_kmers)
    classes=$(info_field "$L/samples/labeled.ksf" label_classes)
    {
        echo "Screening: $SCREEN_READS simulated 150 bp reads (art_illumina HiSeq 2500) from a human-like host of"
        echo "$HOST_LABEL_BASES bases (40%), Klebsiella pneumoniae HS11286 (20%), the lambda phage, the honey bee"
        echo "viruses DWV and VDV1 (related species; 5% each) and a random genome found in"
        echo "no reference (25%). ksieve: one labeled filter (\`build --label\`, defaults) and \`classify\` (timed"
        echo "with \`--stats\`; the per-read labels below from one more run with \`--report\`);"
        echo "bbduk: \`ref=\` the five references, \`k=31 refstats=\`, with its defaults otherwise (bbduk) and with"
        echo "\`prealloc=t\`, the speed setting its documentation gives for a large reference (bbduk_prealloc); Java"
        echo "heap \`-Xmx\` sized for the references (about 20 bytes a k-mer). $T threads; min / median / max of"
        echo "alternated runs."
        echo
        echo "| run | wall s | CPU s | peak RSS MB | load at start of each run |"
        echo "|---|---|---|---|---|"
        local n
        for n in build_labeled build_unlabeled classify_labeled classify_unlabeled_exact bbduk bbduk_prealloc; do
            echo "| $n | $(mmm "$n" 1) | $(mmm "$n" 2) | $(med "$n" 3 | awk '{ printf "%.0f", $1 / 1024 }') | $(loads_in "$RES" "$n") |"
        done
        echo
        echo "bbduk builds its table and classifies in one run: against ksieve build + classify it takes"
        echo "$(ratio "$(med bbduk 1)" "$(awk -v a="$(med build_labeled 1)" -v b="$(med classify_labeled 1)" 'BEGIN { print a + b }')")x the wall time (median), and $(ratio "$(med bbduk 1)" "$(med classify_labeled 1)")x the time of classify alone (the"
        echo "filter built once, used for every run). A label costs $(ratio "$(med classify_labeled 1)" "$(med classify_unlabeled_exact 1)")x"
        echo "the time of an unlabeled classify of the same k-mers that counts every hit (\`--exact-hits\`)."
        echo
        echo "$acc"
        echo
        echo "A read's ksieve label is the label with the most hits (\`ambiguous\` on a tie); bbduk counts a read"
        echo "for the reference with the most k-mer matches and calls a read matched from one k-mer on (ksieve:"
        echo "two hits and 0.4% of its minimizers). The two viruses share few 31-mers: reads that lie in their"
        echo "shared parts would be \`ambiguous\` in ksieve, while bbduk gives each such read one of them."
        echo
        echo "Samples: $NSAMPLES per-sample filters (each sample three genomes of 300 kbp from a pool of 30, with"
        echo "0.2% substitutions of its own; one \`--expected\` for all), merged: $d_l distinct minimizers, $classes"
        echo "label sets."
        echo
        echo "| run | wall s | CPU s | peak RSS MB | load at start of each run |"
        echo "|---|---|---|---|---|"
        for n in merge_unlabeled merge_labeled classify_samples_unlabeled_exact classify_samples_labeled; do
            echo "| $n | $(mmm "$n" 1) | $(mmm "$n" 2) | $(med "$n" 3 | awk '{ printf "%.0f", $1 / 1024 }') | $(loads_in "$RES" "$n") |"
        done
        echo
        echo "The labeled merge takes $(ratio "$(med merge_labeled 1)" "$(med merge_unlabeled 1)")x the time of the unlabeled one (the same"
        echo "k-mers); the labeled filter is $bytes_l bytes, $(ratio "$bytes_l" "$bytes_u")x the unlabeled union ($bytes_u bytes, which"
        echo "holds counts). Classify of 1,000,000 reads of three samples: labeled"
        echo "$(ratio "$(med classify_samples_labeled 1)" "$(med classify_samples_unlabeled_exact 1)")x the unlabeled \`--exact-hits\` time."
        echo
        read -r union bad <<< "$oracle"
        echo "Exact answers: 8 samples (three genomes of 40 kbp each), every k-mer (\`--sampling all --fpr 0\`),"
        echo "merged with \`--label-inputs\` on 1 and $T threads (the same bytes): $union distinct k-mers; each"
        echo "label's k-mers and the k-mers shared by each of the 64 pairs of labels (\`info --json\`) against the"
        echo "k-mer sets of the samples' sequences: $bad differences."
        echo
        echo "Commands (\$WORK = the work directory):"
        echo
        echo '```'
        for n in build_labeled classify_labeled classify_unlabeled_exact bbduk bbduk_prealloc merge_unlabeled merge_labeled \
            classify_samples_labeled classify_samples_unlabeled_exact; do
            sed -E 's#( \$WORK/labels/samples/s[0-9]+\.ksf)+# $WORK/labels/samples/s{0..'$((NSAMPLES - 1))'}.ksf#' "$RES/$n.cmd"
        done
        echo '```'
    } > "$REPORT"
}

rm -f "$RES"/*.times
log "screening data"
screen_data
screen_runs
screen_report
acc=$(screen_accuracy)
log "samples"
samples_runs
oracle=$(oracle_check)
make_report "$acc" "$oracle"
cat "$REPORT"
