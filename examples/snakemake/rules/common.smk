# Resources of the ksieve jobs of the Snakefile: memory from the size of their inputs.
import os


def size_mb(paths):
    """MiB of the files that exist (0 before they are made: Snakemake asks again when the job is ready)."""
    paths = [paths] if isinstance(paths, str) else paths
    return sum(os.path.getsize(p) for p in paths if os.path.exists(p)) / 2**20


def mem_filters(wildcards, input):
    """classify and merge hold their filters (and merge its output, at most their sum) in memory."""
    return sum((MEM_BASE, int(2 * size_mb(input.filters))))


def mem_build(wildcards, input):
    """build: a filter of a few bytes per distinct k-mer; compressed input holds about 4 bases per byte."""
    return sum((MEM_BASE, int(8 * size_mb(input.seqs))))
