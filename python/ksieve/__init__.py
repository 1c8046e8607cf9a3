"""ksieve: k-mer filters of reads, from Python.

Open a filter file as ``ksieve classify -f`` does and classify sequences with the code behind
``ksieve classify --report``; build a filter from sequences in memory as ``ksieve build`` does; run
``ksieve classify`` and ``ksieve dedup`` on files (:func:`classify_files`, :func:`dedup_files`: the
same output bytes, the statistics returned); read sequence files with the command line's readers and
``--stats`` files. Every error of ksieve is raised as :class:`ksieve.Error` (a RuntimeError) with
ksieve's message.

>>> import ksieve
>>> f = ksieve.Filter.open("host.ksf")
>>> r = f.classify_batch(["ACGT...", "TTGA..."])
>>> r.classes, r.hits
>>> stats = ksieve.classify_files("host.ksf", "reads.fq.gz", novel="clean.fq.gz")
"""
import bz2
import gzip
import json
import lzma
import os
import shlex
import sys

try:
    from . import _ksieve
except ImportError:  # an extension built for another Python: say which
    import glob as _glob
    import re as _re
    _built = sorted(os.path.basename(p) for p in _glob.glob(os.path.join(os.path.dirname(__file__), "_ksieve.*")))
    _for = sorted({f"Python {m.group(1)}.{m.group(2)}" for m in
                   (_re.search(r"\.cpython-(\d)(\d+)", b) for b in _built) if m})
    raise ImportError(
        f"ksieve was built for {' and '.join(_for) or 'another Python'}, not for this Python "
        f"{sys.version_info[0]}.{sys.version_info[1]} ({sys.executable}): its compiled module "
        f"{', '.join(_built) or '_ksieve'} cannot be imported here. Build or install ksieve with this "
        f"interpreter (pip install . with it, or cmake -DPython3_EXECUTABLE={sys.executable}).") from None

from ._ksieve import (DEFAULT_FPR, DEFAULT_MIN_HIT_FRACTION, DEFAULT_MIN_HITS, DEFAULT_SAMPLING,
                      BatchReader, Classification, Classifications, Error, Filter, __version__,
                      build_filter, open_filter, read_batches)

__all__ = ["Error", "Filter", "Classification", "Classifications", "BatchReader", "open_filter",
           "build_filter", "read_batches", "read_stats", "classify_files", "dedup_files",
           "DEFAULT_MIN_HIT_FRACTION", "DEFAULT_MIN_HITS", "DEFAULT_SAMPLING", "DEFAULT_FPR",
           "__version__"]

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
# fields that later versions added: checked where present
_OPTIONAL_FIELDS = {"bases_known": _INT, "bases_novel": _INT}
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


def _check_kind(path, stats, name, kind):
    if not _is(stats[name], kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        raise Error(f"'{path}': field '{name}' is {json.dumps(stats[name])[:40]}, "
                    f"expected {' or '.join('null' if k is None else k for k in kinds)}")


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
        _check_kind(path, stats, name, kind)
    if stats["command"] not in ("classify", "dedup"):
        raise Error(f"'{path}': field 'command' is '{stats['command']}', expected classify or dedup")
    for name, kind in _OPTIONAL_FIELDS.items():
        if name in stats:
            _check_kind(path, stats, name, kind)
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


def _paths(value, what):
    """A path or a list of them (str, os.PathLike, or an opened Filter: its file) as a list of str."""
    if isinstance(value, Filter):
        return [value.path]
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsdecode(value)]
    try:
        return [v.path if isinstance(v, Filter) else os.fsdecode(v) for v in value]
    except TypeError:
        raise TypeError(f"{what}: expected a path or a list of paths, got {type(value).__name__}") from None


def _path(value):
    return "" if value is None else os.fsdecode(value)


def _size(value):
    """A --max-memory value: None (the default) as "", bytes as their decimal digits, "4G" as it is."""
    return "" if value is None else str(value)


_OUTPUTS = ("novel", "known", "novel2", "known2", "report", "stats", "multiqc", "sample")


def _command_line(command, options, inputs):
    """The ksieve command line that does what a call does (for the stats' command_line)."""
    words = ["ksieve", command]
    for name, value in options:
        if value is True:
            words.append("--" + name.replace("_", "-"))
        elif value not in (None, False, ""):
            words += ["--" + name.replace("_", "-"), str(value)]
    return shlex.join(words + inputs)


def classify_files(filter, inputs, *, paired=False, interleaved=False, novel=None, known=None,
                   novel2=None, known2=None, report=None, stats=None, multiqc=None, sample=None,
                   min_hit_fraction=DEFAULT_MIN_HIT_FRACTION, min_hits=DEFAULT_MIN_HITS, min_count=1,
                   exact_hits=False, strict=False, compression_level=-1, threads=1, max_memory=None):
    """``ksieve classify`` on files: the reads of `inputs` (a path or a list; with paired=True, mate 1
    and mate 2 files in turn) against `filter` (a filter file or an opened Filter, or a list), the known and novel
    reads written to `known`/`novel` (mate 2 to `known2`/`novel2`), and `report`, `stats` and `multiqc`
    where given (None: not written). The outputs are the bytes the command line writes with the same
    options; the run holds no interpreter lock. Returns the --stats of the run as a dict (written to
    `stats` too where given). max_memory: --max-memory, a size such as "4G" or bytes (None: the
    cgroup's or the machine's memory). Raises ksieve.Error with the command line's message."""
    filters = _paths(filter, "filter")
    files = _paths(inputs, "inputs")
    outs = [_path(v) for v in (novel, known, novel2, known2, report, stats, multiqc, sample)]
    options = [("filter", f) for f in filters] + [("paired", paired), ("interleaved", interleaved)] + \
        list(zip(_OUTPUTS, outs)) + \
        [("min_hit_fraction", min_hit_fraction), ("min_hits", min_hits), ("min_count", min_count),
         ("exact_hits", exact_hits), ("strict", strict), ("threads", threads), ("max_memory", _size(max_memory))]
    text = _ksieve._classify_files(filters, files, bool(paired), bool(interleaved),
                                   outs, float(min_hit_fraction),
                                   int(min_hits), int(min_count), bool(exact_hits), bool(strict),
                                   int(compression_level), int(threads), _size(max_memory),
                                   _command_line("classify", options, files))
    return json.loads(text)


def dedup_files(inputs, *, paired=False, interleaved=False, novel=None, known=None, novel2=None,
                known2=None, report=None, stats=None, multiqc=None, sample=None, k=31, canonical=True,
                type="qf", fpr=None, expected=None, sampling="all", shards=0, seed=None, max_load=0.9,
                min_hit_fraction=0.5, min_count=1, exact=False, prefilter=False, save_filter=None,
                compression_level=-1, threads=1, max_memory=None):
    """``ksieve dedup`` on files: streaming deduplication (or, with min_count C, digital normalization
    to depth C; exact=True: exact duplicates) of the reads of `inputs`, with the outputs of
    classify_files and dedup's k-mer options (fpr None: dedup's default, 0.001, or 0 with exact;
    expected None: not given; seed None: the default seed; max_memory as for classify_files). The
    outputs are the bytes the command line
    writes with the same options; the run holds no interpreter lock. Returns the --stats of the run as
    a dict. Raises ksieve.Error with the command line's message."""
    files = _paths(inputs, "inputs")
    outs = [_path(v) for v in (novel, known, novel2, known2, report, stats, multiqc, sample)]
    seed = _ksieve._DEFAULT_SEED if seed is None else int(seed)
    expected = "" if expected is None else str(expected)
    options = [("paired", paired), ("interleaved", interleaved)] + list(zip(_OUTPUTS, outs)) + \
        [("kmer", k), ("no_canonical", not canonical), ("type", type), ("fpr", fpr), ("expected", expected),
         ("sampling", sampling), ("min_hit_fraction", min_hit_fraction), ("min_count", min_count),
         ("exact", exact), ("prefilter", prefilter), ("save_filter", _path(save_filter)), ("threads", threads),
         ("max_memory", _size(max_memory))]
    text = _ksieve._dedup_files(files, bool(paired), bool(interleaved), outs,
                                int(k), bool(canonical), str(type), None if fpr is None else float(fpr),
                                expected, str(sampling), int(shards), seed, float(max_load),
                                float(min_hit_fraction), int(min_count), bool(exact), bool(prefilter),
                                _path(save_filter), int(compression_level), int(threads), _size(max_memory),
                                _command_line("dedup", options, files))
    return json.loads(text)
