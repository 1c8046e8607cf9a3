"""ksieve: k-mer filters of reads, from Python.

Open a filter file as ``ksieve classify -f`` does and classify sequences with the code behind
``ksieve classify --report``; build a filter from sequences in memory as ``ksieve build`` does; read
sequence files with the command line's readers and ``--stats`` files. Every error of ksieve is raised as :class:`ksieve.Error` (a RuntimeError) with
ksieve's message.

>>> import ksieve
>>> f = ksieve.Filter.open("host.ksf")
>>> r = f.classify_batch(["ACGT...", "TTGA..."])
>>> r.classes, r.hits
"""
import bz2
import gzip
import json
import lzma

from ._ksieve import (DEFAULT_FPR, DEFAULT_MIN_HIT_FRACTION, DEFAULT_MIN_HITS, DEFAULT_SAMPLING,
                      BatchReader, Classification, Classifications, Error, Filter, __version__,
                      build_filter, open_filter, read_batches)

__all__ = ["Error", "Filter", "Classification", "Classifications", "BatchReader", "open_filter",
           "build_filter", "read_batches", "read_stats", "DEFAULT_MIN_HIT_FRACTION", "DEFAULT_MIN_HITS", "DEFAULT_SAMPLING",
           "DEFAULT_FPR", "__version__"]

for _type in (BatchReader, Classification, Classifications, Error, Filter):
    _type.__module__ = __name__  # ksieve.Error, not ksieve._ksieve.Error, in tracebacks

_INT = "integer"
_NUMBER = "number"
_STR = "string"
_BOOL = "boolean"
_STRS = "array of strings"
# The fields of a --stats file (docs/cli.md, "Statistics"): every run, and dedup's own.
_STATS_FIELDS = {
    "command": _STR, "sample": _STR, "inputs": _STRS, "filters": _STRS, "command_line": _STR,
    "reads": _INT, "known": _INT, "novel": _INT, "units": _INT, "known_units": _INT,
    "novel_units": _INT, "paired": _BOOL, "known_fraction": _NUMBER, "kmers": _INT,
    "hits": (_INT, None), "bases": _INT, "min_hit_fraction": _NUMBER, "min_hits": _INT,
    "min_count": _INT, "seconds": _NUMBER, "reads_per_second": _NUMBER, "threads": _INT,
    "ksieve_version": _STR,
}
_DEDUP_FIELDS = {"memory_budget": _INT, "forgotten_kmers": _INT,
                 "forgetting_from_read": (_INT, None), "kmer_sample": _NUMBER}


def _is(value, kind):
    if kind is None:
        return value is None
    if isinstance(kind, tuple):
        return any(_is(value, k) for k in kind)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if kind == _NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == _STR:
        return isinstance(value, str)
    if kind == _BOOL:
        return isinstance(value, bool)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _kind_name(kind):
    if isinstance(kind, tuple):
        return " or ".join("null" if k is None else k for k in kind)
    return kind


def _decompressed(path, data):
    """The bytes of a --stats file, decompressed as its name made ksieve compress it."""
    try:
        if data[:2] == b"\x1f\x8b":
            return gzip.decompress(data)
        if data[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(data)
        if data[:3] == b"BZh":
            return bz2.decompress(data)
    except (OSError, EOFError, lzma.LZMAError, ValueError) as e:
        raise Error(f"'{path}': cannot decompress: {e}") from None
    if data[:4] == b"\x28\xb5\x2f\xfd":
        try:
            import zstandard  # optional: not in the standard library
        except ImportError:
            raise Error(f"'{path}' is zstd-compressed: decompress it first (zstd -d), or install "
                        "the Python package zstandard") from None
        try:
            return zstandard.ZstdDecompressor().decompressobj().decompress(data)
        except zstandard.ZstdError as e:
            raise Error(f"'{path}': cannot decompress: {e}") from None
    return data


def _check_stats(path, stats):
    if not isinstance(stats, dict):
        raise Error(f"'{path}': not a ksieve --stats file (a JSON object was expected)")
    fields = dict(_STATS_FIELDS)
    if stats.get("command") == "dedup":
        fields.update(_DEDUP_FIELDS)
    for name, kind in fields.items():
        if name not in stats:
            raise Error(f"'{path}': not a ksieve --stats file (no field '{name}')")
        if not _is(stats[name], kind):
            raise Error(f"'{path}': field '{name}' is {json.dumps(stats[name])[:40]}, "
                        f"expected {_kind_name(kind)}")
    if stats["command"] not in ("classify", "dedup"):
        raise Error(f"'{path}': field 'command' is '{stats['command']}', expected classify or dedup")
    labels = stats.get("labels")
    if labels is not None and not (isinstance(labels, dict) and all(_is(v, _INT) for v in labels.values())):
        raise Error(f"'{path}': field 'labels' is not an object of read counts")


def read_stats(path):
    """The --stats JSON file of a classify or dedup run (plain, or compressed by its name: .gz,
    .xz, .bz2; .zst with the package zstandard) as a dict, its fields checked against the format
    of docs/cli.md. Raises ksieve.Error naming the file where it cannot be read or is not such a
    file."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise Error(f"cannot read '{path}': {e.strerror or e}") from None
    try:
        stats = json.loads(_decompressed(path, data).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise Error(f"'{path}': not a ksieve --stats file ({e})") from None
    _check_stats(path, stats)
    return stats
