#!/usr/bin/env python3
"""Compares the outputs that two ksieve binaries wrote into two directories (compare_binaries.sh): the same
file names, and each pair of files the same bytes. Compressed outputs (.gz, .bam, .zst, .xz, .bz2) are
compared by their decompressed bytes, since a compressor may choose other (equally valid) bytes on
another CPU; whether their compressed bytes are the same too is counted and printed. --stats files (JSON)
are compared without the fields that describe the run rather than the data: the time, the rates, the
thread count, the command line and memory peaks.

Usage: compare_dirs.py DIR_A DIR_B [--only-in-a-ok]
Exit status 0 when every file matches; each difference on its own line otherwise.
--only-in-a-ok: files of DIR_A missing from DIR_B are not differences (DIR_B holds a subset).
"""
import bz2
import gzip
import json
import lzma
import os
import subprocess
import sys

RUN_FIELDS = ("command_line", "threads")
RUN_FIELD_PARTS = ("seconds", "per_second", "resident", "peak")


def decompressed(path):
    if path.endswith((".gz", ".bgz", ".bam")):
        with gzip.open(path, "rb") as f:
            return f.read()
    if path.endswith(".bz2"):
        with bz2.open(path, "rb") as f:
            return f.read()
    if path.endswith(".xz"):
        with lzma.open(path, "rb") as f:
            return f.read()
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-q", "-d", "-c", path], check=True, capture_output=True).stdout
    return None


def without_run_fields(value):
    if isinstance(value, dict):
        return {k: without_run_fields(v) for k, v in value.items()
                if k not in RUN_FIELDS and not any(p in k for p in RUN_FIELD_PARTS)}
    if isinstance(value, list):
        return [without_run_fields(v) for v in value]
    return value


def files_under(root):
    found = set()
    for dirpath, _, names in os.walk(root):
        for name in names:
            found.add(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def compare_file(a, b, counts):
    """None when a and b match, else a line saying how they differ."""
    with open(a, "rb") as f:
        bytes_a = f.read()
    with open(b, "rb") as f:
        bytes_b = f.read()
    plain_a = decompressed(a)
    if plain_a is not None:
        counts["compressed"] += 1
        if bytes_a == bytes_b:
            counts["compressed_identical"] += 1
        else:
            counts["recompressed"].append(os.path.basename(a))
        return None if plain_a == decompressed(b) else "decompressed contents differ"
    if a.endswith(".json"):
        try:
            ja, jb = json.loads(bytes_a), json.loads(bytes_b)
        except ValueError:
            pass
        else:
            counts["json"] += 1
            return None if without_run_fields(ja) == without_run_fields(jb) else "JSON fields differ"
    if bytes_a == bytes_b:
        counts["identical"] += 1
        return None
    return f"bytes differ ({len(bytes_a)} and {len(bytes_b)} bytes)"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    subset = "--only-in-a-ok" in sys.argv[1:]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    dir_a, dir_b = args
    files_a, files_b = files_under(dir_a), files_under(dir_b)
    problems = [f"only in {dir_b}: {name}" for name in sorted(files_b - files_a)]
    if not subset:
        problems += [f"only in {dir_a}: {name}" for name in sorted(files_a - files_b)]
    counts = {"identical": 0, "compressed": 0, "compressed_identical": 0, "json": 0, "recompressed": []}
    for name in sorted(files_a & files_b):
        why = compare_file(os.path.join(dir_a, name), os.path.join(dir_b, name), counts)
        if why:
            problems.append(f"{dir_a}/{name} and {dir_b}/{name}: {why}")
    for p in problems:
        print(p)
    print(f"compare_dirs: {dir_a} and {dir_b}: {len(files_a & files_b)} files; {counts['identical']} "
          f"byte-identical, {counts['json']} JSON equal but for the run's fields, {counts['compressed']} "
          f"compressed ({counts['compressed_identical']} of them byte-identical); {len(problems)} differences")
    if counts["recompressed"]:
        print(f"compare_dirs: the same contents compressed to other bytes: {', '.join(counts['recompressed'])}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
