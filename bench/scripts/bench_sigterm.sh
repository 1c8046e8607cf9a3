#!/usr/bin/env bash
# How fast each command acts on SIGTERM: builds a large input (a random genome of KSIEVE_BENCH_MBP Mbp,
# default 60, reads of 150 bp cut from it and from another genome of that size), times each command's
# uninterrupted run (build, merge, intersect, subtract of filters of different layouts, dedup, classify),
# then runs it again and sends SIGTERM at fractions of that time (KSIEVE_BENCH_AT, default "0.3 0.6 0.9"),
# and prints the latency from the signal to the exit, the exit status and whether temporaries or a partial
# output remain. A measurement, not a test: a command still running GRACE seconds (default 30) after the
# signal gets SIGKILL (reported as such).
# Usage: bench/scripts/bench_sigterm.sh [WORK_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/bench_common.sh"

T=${KSIEVE_BENCH_THREADS:-2}
MBP=${KSIEVE_BENCH_MBP:-60}
AT=${KSIEVE_BENCH_AT:-0.3 0.6 0.9}
GRACE=${KSIEVE_BENCH_GRACE:-30}
CAP=${KSIEVE_BENCH_CAP:-120} # the longest uninterrupted run timed (a longer one is signalled within it)
S=$WORK/sigterm
REPORT=$WORK/sigterm.md

find_ksieve
need_tools python3
mkdir -p "$S/out"

now() { date +%s.%N; }

log "data: a genome of $MBP Mbp, one of $((MBP / 25 + 1)) Mbp, reads"
[[ -s $S/host.fa && -s $S/reads.fq && -s $S/small.fa ]] || python3 - "$MBP" "$S" <<'PY'
import random, sys
mbp, d = int(sys.argv[1]), sys.argv[2]
table = bytes(b"ACGT"[i & 3] for i in range(256))
def genome(n, seed):
    return random.Random(seed).randbytes(n).translate(table)
def fasta(path, g):
    with open(path, "wb") as f:
        for c in range(0, len(g), 10_000_000):
            part = g[c:c + 10_000_000]
            f.write(b">chr%d\n" % (c // 10_000_000 + 1))
            f.write(b"\n".join(part[i:i + 80] for i in range(0, len(part), 80)) + b"\n")
host = genome(mbp * 1_000_000, 21)
other = genome(mbp * 1_000_000, 22)
fasta(d + "/host.fa", host)
fasta(d + "/small.fa", genome((mbp // 25 + 1) * 1_000_000, 23))
rng = random.Random(24)
q = b"I" * 150
with open(d + "/reads.fq", "wb") as f:
    for i in range(mbp * 20_000):
        src = host if i % 2 == 0 else other
        p = rng.randrange(len(src) - 150)
        f.write(b"@r%d\n%s\n+\n%s\n" % (i, src[p:p + 150], q))
PY
log "filters: the host and the small genome at their own sizes"
[[ -s $S/host.ksf ]] || "$KSIEVE" build -q -t "$T" -o "$S/host.ksf" "$S/host.fa"
[[ -s $S/small.ksf ]] || "$KSIEVE" build -q -t "$T" -o "$S/small.ksf" "$S/small.fa"

declare -A CMD
CMD[build]="build -q -t $T -o $S/out/result.ksf $S/host.fa"
CMD[merge]="merge -q -t $T -o $S/out/result.ksf $S/host.ksf $S/small.ksf"
CMD[intersect]="intersect -q -t $T -o $S/out/result.ksf $S/host.ksf $S/small.ksf"
CMD[subtract]="subtract -q -t $T -o $S/out/result.ksf $S/host.ksf $S/small.ksf"
CMD[dedup]="dedup -q -t $T --novel $S/out/result.fq $S/reads.fq"
CMD[classify]="classify -q -t $T -f $S/host.ksf --novel $S/out/result.fq --known $S/out/known.fq $S/reads.fq"

# one_run NAME DELAY: runs NAME, sends SIGTERM after DELAY seconds (none if DELAY is empty); prints
# "seconds_run latency status leftovers"
one_run()
{
    local name=$1 delay=$2 pid t0 t1 rc left lat
    rm -rf "$S/out" && mkdir -p "$S/out"
    t0=$(now)
    # (a background job of a non-interactive shell ignores SIGINT, not SIGTERM)
    # shellcheck disable=SC2086
    "$KSIEVE" ${CMD[$name]} 2> "$S/$name.err" &
    pid=$!
    if [[ -z $delay ]]; then
        ( sleep "$CAP" && kill -TERM "$pid" 2> /dev/null && sleep "$GRACE" && kill -KILL "$pid" 2> /dev/null ) &
        local cap=$!
        rc=0; wait "$pid" || rc=$?
        kill "$cap" 2> /dev/null || true
        wait "$cap" 2> /dev/null || true
        t1=$(now)
        echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') - $rc -"
        return
    fi
    sleep "$delay"
    if ! kill -0 "$pid" 2> /dev/null; then
        wait "$pid" || true
        echo "$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }') finished-before-signal - -"
        return
    fi
    t1=$(now)
    kill -TERM "$pid" 2> /dev/null || true
    ( sleep "$GRACE" && kill -KILL "$pid" 2> /dev/null ) &
    local guard=$!
    rc=0; wait "$pid" || rc=$?
    lat=$(awk -v a="$t1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
    kill "$guard" 2> /dev/null || true
    wait "$guard" 2> /dev/null || true
    [[ $rc == 137 ]] && lat=">$GRACE (SIGKILL)"
    left=$(cd "$S/out" && ls -A | { grep -E 'ksieve-tmp|^result' || true; } | tr '\n' ' ')
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') $lat $rc ${left:-none}"
}

{
    echo "## SIGTERM latency ($(date -u +%Y-%m-%d), commit $(git -C "$REPO" rev-parse --short HEAD))"
    echo
    echo "Machine: $(nproc) cores, $T threads; uptime: $(uptime). Input: $MBP Mbp genome, $((MBP * 20000)) reads."
    echo "Reproduce: \`bench/scripts/bench_sigterm.sh\`."
    echo
    echo "| command | uninterrupted s | signal at s | latency s | exit status | left behind |"
    echo "|---|---|---|---|---|---|"
    for name in build merge intersect subtract dedup classify; do
        read -r full _ rc _ < <(one_run "$name" "")
        [[ $rc == 0 ]] || full="$full (capped, status $rc)"
        d=${full%% *}
        for f in $AT; do
            delay=$(awk -v d="$d" -v f="$f" 'BEGIN { printf "%.2f", d * f }')
            read -r at lat st left < <(one_run "$name" "$delay")
            echo "| $name | $full | $at | $lat | $st | $left |"
        done
    done
} | tee "$REPORT"
