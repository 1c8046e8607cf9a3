#!/usr/bin/env bash
# Outputs onto a full file system, for every command and output kind: each run must fail with exit 1 and
# one `ksieve: error:` line first on stderr naming the output, leave no temporary behind, and leave every
# output that existed before (on the full file system and on the healthy one beside it) byte for byte as
# it was. Mounts small tmpfs file systems, so it needs root; without root it exits 77 (skipped).
# Usage: check_full_disk.sh KSIEVE EXAMPLE_DATA_DIR   (examples/data: reads.fq.gz, lambda.fa.gz)
set -euo pipefail
ksieve=$(realpath "$1")
data=$(realpath "$2")
if [[ $(id -u) -ne 0 ]]; then
    echo "check_full_disk: not root: skipped (needs to mount tmpfs)"
    exit 77
fi
work=$(mktemp -d)
full=$work/full
ok=$work/ok
mkdir -p "$full" "$ok"
cleanup() { umount "$full" 2> /dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
if ! mount -t tmpfs -o size=256k tmpfs "$full" 2> /dev/null; then
    echo "check_full_disk: cannot mount tmpfs here: skipped"
    exit 77
fi

reads=$work/reads.fq
ref=$work/ref.fa
zcat "$data/reads.fq.gz" > "$reads"
if [[ ! -s $reads ]]; then
    echo "check_full_disk: example reads not found" >&2
    exit 1
fi
zcat "$data/lambda.fa.gz" > "$ref"
"$ksieve" build -q -o "$work/f.ksf" "$ref"
"$ksieve" build -q --sampling all -o "$work/g.ksf" "$ref"
"$ksieve" build -q --sampling all --expected 2000000 -o "$work/wide.ksf" "$ref"
# Enough reads that every output passes 256 KiB.
for _ in 1 2 3 4 5 6 7 8; do cat "$reads"; done > "$work/many.fq"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_full_failure NAME OUTPUT_NAME_IN_MESSAGE CMD...: CMD must fail as described above.
expect_full_failure()
{
    local name=$1 must_name=$2
    shift 2
    # fill what is left of the file system with one file, then free a few KiB for the run to start
    rm -f "$full/filler"
    dd if=/dev/zero of="$full/filler" bs=4k 2> /dev/null || true
    truncate -s -16k "$full/filler" 2> /dev/null || true
    local before_full before_ok
    before_full=$(cd "$full" && find . -type f ! -name filler -exec sha256sum {} + | sort)
    before_ok=$(cd "$ok" && find . -type f -exec sha256sum {} + | sort)
    local rc=0
    "$@" > "$work/stdout" 2> "$work/stderr" || rc=$?
    if [[ $rc -ne 1 ]]; then fail "$name: exit $rc, expected 1 ($(head -c 300 "$work/stderr"))"; return; fi
    local first
    first=$(head -n 1 "$work/stderr")
    [[ $first == "ksieve: error:"* ]] || fail "$name: first stderr line is not an error line: $first"
    [[ $first == *"$must_name"* ]] || fail "$name: the error does not name $must_name: $first"
    if find "$full" "$ok" -name '*ksieve-tmp*' | grep -q .; then fail "$name: temporaries left"; fi
    [[ $before_full == "$(cd "$full" && find . -type f ! -name filler -exec sha256sum {} + | sort)" ]] ||
        fail "$name: files on the full file system changed"
    [[ $before_ok == "$(cd "$ok" && find . -type f -exec sha256sum {} + | sort)" ]] ||
        fail "$name: files on the healthy file system changed"
    echo "ok: $name"
}

# Existing outputs that a failed run must not replace.
echo old-novel > "$ok/novel.fq"
echo old-known > "$full/known.fq"
echo old-report > "$ok/report.tsv"

for ext in fq fq.gz fq.zst fq.bz2 sam bam; do
    expect_full_failure "classify --novel .$ext" "novel.$ext" \
        "$ksieve" classify -q -f "$work/f.ksf" --novel "$full/novel.$ext" "$work/many.fq"
done
expect_full_failure "classify --known full, --novel healthy" "known.fq" \
    "$ksieve" classify -q -f "$work/g.ksf" --novel "$ok/novel.fq" --known "$full/known.fq" "$work/many.fq"
expect_full_failure "classify --report full" "report.tsv" \
    "$ksieve" classify -q -f "$work/g.ksf" --novel "$ok/novel.fq" --report "$full/report.tsv" "$work/many.fq"
expect_full_failure "dedup --novel full" "unique.fq" \
    "$ksieve" dedup -q --novel "$full/unique.fq" --report "$ok/report.tsv" "$work/many.fq"
expect_full_failure "dedup --save-filter full" "seen.ksf" \
    "$ksieve" dedup -q --novel "$ok/novel.fq" --save-filter "$full/seen.ksf" --sampling all "$work/many.fq"
expect_full_failure "build -o full" "big.ksf" \
    "$ksieve" build -q --sampling all --fpr 0 --expected 2000000 -o "$full/big.ksf" "$ref"
expect_full_failure "merge -o full" "merged.ksf" \
    "$ksieve" merge -q -o "$full/merged.ksf" "$work/wide.ksf" "$work/wide.ksf"

echo "check_full_disk: $failures failures"
[[ $failures -eq 0 ]]
