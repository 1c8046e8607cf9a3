#!/usr/bin/env python3
"""Screen reads against a genome from Python with the ksieve module, cell by cell (the `# %%` cells
open as a notebook in Jupyter, VS Code or Spyder; as a script it runs them all).

It builds a filter of the phage lambda genome bundled in examples/data, classifies the bundled reads
against it as `ksieve classify --report` would, and, where the ksieve executable is at hand, reads the
--stats file of the same run by the command line.

Usage: PYTHONPATH=build/python python3 examples/python/screen_reads.py [--out DIR]
"""
# %% Setup: the bundled data and a folder for the filter
import argparse
import collections
import os
import shutil
import subprocess
import tempfile

import ksieve

try:
    here = os.path.dirname(os.path.abspath(__file__))
except NameError:  # a notebook, opened in examples/python
    here = os.getcwd()
data = os.path.join(here, "..", "data")
parser = argparse.ArgumentParser(description="Screen the bundled reads against the bundled genome.")
parser.add_argument("--out", help="folder for the filter and the stats (default: a temporary one)")
args, _ = parser.parse_known_args()  # (a notebook passes its own arguments)
out = args.out or tempfile.mkdtemp(prefix="ksieve-")
os.makedirs(out, exist_ok=True)

# %% Build a filter of the genome from sequences in memory (the options of `ksieve build`)
genome = [seq for _, seqs in ksieve.read_batches(os.path.join(data, "lambda.fa.gz")) for seq in seqs]
host = ksieve.build_filter(genome, os.path.join(out, "lambda.ksf"))
print(f"{host.path}: {host.type}, k={host.k}, sampling {host.sampling}, "
      f"{host.distinct_kmers} distinct k-mers, target FPR {host.target_fpr}")

# %% Classify the reads, batch by batch, with classify's default rule
counts = collections.Counter()
first_rows = []
for names, seqs in ksieve.read_batches(os.path.join(data, "reads.fq.gz")):
    result = host.classify_batch(seqs)
    counts.update(result.classes)
    first_rows += list(zip(names, result.kmers, result.hits, result.classes))[:5 - len(first_rows)]
total = sum(counts.values())
print(f"{total} reads: {counts['known']} known, {counts['novel']} novel")
print("read_id\tkmers\thits\tclass")
for row in first_rows:
    print("\t".join(map(str, row)))

# %% Another rule: half of a read's k-mers must be in the filter
strict = host.classify_batch(seqs, min_hit_fraction=0.5, min_hits=0)
print(f"last batch under min_hit_fraction 0.5: {strict.classes.count('known')} of {len(strict)} known")

# %% One read, and the count of each k-mer it looks up
read = seqs[0]
print(host.classify(read), "counts of its first k-mers:", host.lookup(read)[:10])

# %% The same run by the command line, and its --stats file
ksieve_binary = os.environ.get("KSIEVE_BINARY") or shutil.which("ksieve")
if ksieve_binary:
    stats_path = os.path.join(out, "stats.json")
    subprocess.run([ksieve_binary, "classify", "-q", "-f", host.path, "--stats", stats_path,
                    os.path.join(data, "reads.fq.gz")], check=True)
    stats = ksieve.read_stats(stats_path)
    print(f"ksieve classify: {stats['known']} known, {stats['novel']} novel "
          f"(the module: {counts['known']} known)")
host.close()
