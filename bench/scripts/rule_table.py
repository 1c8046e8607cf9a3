#!/usr/bin/env python3
"""Tables of classify rules from per-read reports (bench/scripts/bench_human_host.sh).

Reads REPORT_DIR/CONFIG/READSET.tsv (ksieve classify --report: read_id, kmers, hits, class) and prints,
per configuration (filter), a markdown table with one row per rule (A = --min-hits, F =
--min-hit-fraction): the percentage of each read set called known, and whether the rule meets the
targets. A read is known iff kmers > 0, hits >= A and hits / kmers >= F (as classify decides).
Usage: rule_table.py REPORT_DIR [--min-hits 1,2,3,5] [--fractions 0.002,0.005,0.01,...]
Standard library only.
"""

import argparse
import collections
import gzip
import os
import re
import sys

CHIMERA_SHARE = re.compile(r"_host([0-9]+\.[0-9]+)")

# column key (a read set's file stem; chimeras split by host share), header, kind ("host": % known
# wanted high; "foreign": % known, and the count, wanted low)
COLUMNS = [
    ("host_short", "host short", "host"),
    ("host_pairs", "host pairs", "host"),
    ("host_long_e1", "long 1%", "host"),
    ("host_long_e4", "long 4%", "host"),
    ("host_long_e8", "long 8%", "host"),
    ("host_long_e12", "long 12%", "host"),
    ("chim_ge10", "chim. host >= 10%", "host"),
    ("chim_5to10", "chim. host 5-10%", "host"),
    ("foreign_short", "foreign short (synth.)", "foreign"),
    ("foreign_sra", "foreign short (SRA)", "foreign"),
    ("foreign_long", "foreign long", "foreign"),
    ("microbe_short", "microsat. microbe short", "foreign"),
    ("microbe_long", "microsat. microbe long", "foreign"),
]

# target: (label, keys pooled, "min" or "max", percent)
TARGETS = [
    ("short", ["host_short"], "min", 99.99),
    ("pairs", ["host_pairs"], "min", 99.99),
    ("long1", ["host_long_e1"], "min", 99.9),
    ("long4", ["host_long_e4"], "min", 99.9),
    ("long8", ["host_long_e8"], "min", 99.9),
    ("long12", ["host_long_e12"], "min", 99.0),
    ("chim", ["chim_ge10"], "min", 99.0),
    ("fshort", ["foreign_short", "foreign_sra"], "max", 0.005),
    ("flong", ["foreign_long"], "max", 0.05),
]


DEFAULT_FRACTION = 0.004  # classify's default --min-hit-fraction (with --min-hits 2)


def open_text(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path, encoding="utf-8")


def read_report(path, stem, histograms, default_rule_mismatch):
    """Adds the (kmers, hits) histogram of one report to histograms[key]."""
    with open_text(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        if header[:3] != ["read_id", "kmers", "hits"]:
            sys.exit(f"rule_table: {path}: not a classify report")
        for line in f:
            name, kmers, hits, cls = line.rstrip("\n").split("\t")[:4]
            kmers, hits = int(kmers), int(hits)
            key = stem
            if stem == "chimeras":
                m = CHIMERA_SHARE.search(name)
                share = float(m.group(1)) if m else 0.0
                key = "chim_ge10" if share >= 0.10 else "chim_5to10" if share >= 0.05 else "chim_lt5"
            histograms[key][(kmers, hits)] += 1
            default_rule_mismatch[0] += (cls == "known") != known(kmers, hits, 2, DEFAULT_FRACTION)


def known(kmers, hits, min_hits, fraction):
    return kmers > 0 and hits >= min_hits and hits / kmers >= fraction


def evaluate(histogram, min_hits, fraction):
    """(known, total) of a histogram under the rule."""
    total = sum(histogram.values())
    k = sum(n for (km, h), n in histogram.items() if known(km, h, min_hits, fraction))
    return k, total


def cell(kind, k, n):
    if n == 0:
        return "-"
    p = 100.0 * k / n
    return f"{p:.3f}" if kind == "host" else f"{p:.4f} ({k})"


def failed_targets(results):
    """Labels of the targets a rule misses (results: key -> (known, total))."""
    failed = []
    for label, keys, sense, limit in TARGETS:
        k = sum(results[key][0] for key in keys if key in results)
        n = sum(results[key][1] for key in keys if key in results)
        if n == 0:
            failed.append(label + "?")
            continue
        p = 100.0 * k / n
        if (sense == "min" and p < limit) or (sense == "max" and p > limit):
            failed.append(label)
    return failed


def config_table(config, histograms, min_hits_list, fractions):
    present = [c for c in COLUMNS if c[0] in histograms]
    print(f"\n### {config}\n")
    counts = ", ".join(f"{c[0]} {sum(histograms[c[0]].values())}" for c in present)
    print(f"Reads per set: {counts}.\n")
    empty = ", ".join(f"{c[0]} {histograms[c[0]][(0, 0)]}" for c in present if histograms[c[0]][(0, 0)])
    if empty:
        print(f"Reads without a looked-up k-mer (kmers 0: too short, or masked): {empty}.\n")
    print("| A | F | " + " | ".join(c[1] for c in present) + " | meets all |")
    print("|---|---|" + "---|" * len(present) + "---|")
    passing, near = [], []
    for a in min_hits_list:
        for f in fractions:
            results = {c[0]: evaluate(histograms[c[0]], a, f) for c in present}
            failed = failed_targets(results)
            verdict = "**yes**" if not failed else "no: " + " ".join(failed)
            if not failed:
                passing.append((a, f))
            elif len(failed) == 1:
                near.append((a, f, failed[0]))
            cells = [cell(c[2], *results[c[0]]) for c in present]
            print(f"| {a} | {f:g} | " + " | ".join(cells) + f" | {verdict} |")
    return passing, near


def load_config(report_dir, config):
    histograms = collections.defaultdict(collections.Counter)
    mismatch = [0]
    d = os.path.join(report_dir, config)
    for name in sorted(os.listdir(d)):
        stem = re.sub(r"\.tsv(\.gz)?$", "", name)
        if stem != name:
            read_report(os.path.join(d, name), stem, histograms, mismatch)
    return histograms, mismatch


def compact_table(report_dir, configs, rules):
    """One table: a row per (filter, rule) for the rules given as A:F."""
    loaded = {c: load_config(report_dir, c)[0] for c in configs}
    present = [c for c in COLUMNS if any(c[0] in h for h in loaded.values())]
    print("| filter | A | F | " + " | ".join(c[1] for c in present) + " | targets missed |")
    print("|---|---|---|" + "---|" * len(present) + "---|")
    for config in configs:
        h = loaded[config]
        for a, f in rules:
            results = {c[0]: evaluate(h[c[0]], a, f) for c in present}
            failed = failed_targets(results)
            cells = [cell(c[2], *results[c[0]]) for c in present]
            print(f"| {config} | {a} | {f:g} | " + " | ".join(cells) + " | " +
                  (" ".join(failed) or "none") + " |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("report_dir")
    p.add_argument("--min-hits", default="1,2,3,5")
    p.add_argument("--fractions", default="0.002,0.003,0.004,0.005,0.01,0.02,0.05,0.1")
    p.add_argument("--compact", help="one table of these rules, A:F,A:F,... for every filter")
    args = p.parse_args()
    min_hits_list = [int(x) for x in args.min_hits.split(",")]
    fractions = [float(x) for x in args.fractions.split(",")]
    configs = sorted(d for d in os.listdir(args.report_dir)
                     if os.path.isdir(os.path.join(args.report_dir, d)))
    if args.compact:
        rules = [(int(r.split(":")[0]), float(r.split(":")[1])) for r in args.compact.split(",")]
        compact_table(args.report_dir, configs, rules)
        return
    summary = []
    for config in configs:
        histograms, mismatch = load_config(args.report_dir, config)
        passing, near = config_table(config, histograms, min_hits_list, fractions)
        if mismatch[0]:
            print(f"\nWarning: {mismatch[0]} reads whose class differs from the default rule "
                  f"(A 2, F {DEFAULT_FRACTION:g}): the reports were not made with the defaults.")
        summary.append((config, passing, near))
    print("\n### Rules meeting every target (and those missing one)\n")
    for config, passing, near in summary:
        rules = ", ".join(f"A {a} F {f:g}" for a, f in passing) or "none"
        missing = ", ".join(f"A {a} F {f:g} ({t})" for a, f, t in near) or "none"
        print(f"- {config}: {rules}; missing one target: {missing}")


if __name__ == "__main__":
    main()
