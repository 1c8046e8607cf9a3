# Type stubs of the package ksieve: the compiled part (ksieve._ksieve: Filter, classification results,
# build_filter, read_batches, Error and the defaults) and the Python part (read_stats, classify_files,
# dedup_files).
import os
from types import TracebackType
from typing import Any, Iterable, Iterator, Optional, Sequence, Tuple, Union

_Path = Union[str, "os.PathLike[str]"]
_Paths = Union[_Path, Sequence[_Path]]
_Seq = Union[str, bytes]
_Seqs = Union[_Seq, Iterable[_Seq]]

__version__: str
DEFAULT_MIN_HIT_FRACTION: float
DEFAULT_MIN_HITS: int
DEFAULT_SAMPLING: str
DEFAULT_FPR: float

class Error(RuntimeError): ...

class Classification:
    @property
    def kmers(self) -> int: ...
    @property
    def hits(self) -> int: ...
    @property
    def known(self) -> bool: ...
    @property
    def cls(self) -> str: ...
    @property
    def label(self) -> Optional[str]: ...

class Classifications:
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Classification: ...
    @property
    def kmers(self) -> list[int]: ...
    @property
    def hits(self) -> list[int]: ...
    @property
    def known(self) -> list[bool]: ...
    @property
    def classes(self) -> list[str]: ...
    @property
    def labels(self) -> Optional[list[str]]: ...

class Filter:
    @staticmethod
    def open(path: str, *, threads: int = 1) -> Filter: ...
    @property
    def path(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> Filter: ...
    def __exit__(self, exc_type: Optional[type], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None: ...
    type: str
    k: int
    canonical: bool
    hash_seed: int
    sampling: str
    mask: str
    shards: int
    key_parts: Any
    target_fpr: float
    exact: bool
    expected: int
    format_version: int
    file_bytes: int
    payload_bytes: int
    distinct_kmers: int
    total_count: int
    estimated_fpr: float
    labeled: bool
    labels: list[str]
    def info(self) -> dict[str, Any]: ...
    def classify(self, seq: _Seq, mate: Optional[_Seq] = None, *,
                 min_hit_fraction: Optional[float] = None, min_hits: Optional[int] = None,
                 min_count: int = 1, qualities: Optional[_Seq] = None,
                 qualities2: Optional[_Seq] = None) -> Classification: ...
    def classify_batch(self, seqs: _Seqs, mates: Optional[_Seqs] = None, *,
                       min_hit_fraction: Optional[float] = None, min_hits: Optional[int] = None,
                       min_count: int = 1, threads: int = 1, qualities: Optional[_Seqs] = None,
                       qualities2: Optional[_Seqs] = None) -> Classifications: ...
    def lookup(self, seq: _Seq) -> list[int]: ...
    def kmer_labels(self, seq: _Seq) -> list[list[str]]: ...

def open_filter(path: str, *, threads: int = 1) -> Filter: ...

def build_filter(seqs: _Seqs, path: str, *, k: int = 31, fpr: Optional[float] = None,
                 sampling: str = ..., mask: str = "none", spaced: str = "auto",
                 type: str = "qf", canonical: bool = True,
                 seed: int = ..., shards: int = 0, expected: Union[None, int, str] = None,
                 max_load: float = 0.9, no_counts: bool = False, threads: int = 1) -> Filter: ...

class BatchReader(Iterator[Tuple[list[str], ...]]):
    def __iter__(self) -> BatchReader: ...
    def __next__(self) -> Tuple[list[str], ...]: ...

def read_batches(path: str, path2: Optional[str] = None, *, records: int = 16384,
                 qualities: bool = False) -> BatchReader: ...

def read_stats(path: _Path) -> dict[str, Any]: ...

def classify_files(filter: Union[_Paths, Filter, Sequence[Filter]], inputs: _Paths, *, paired: bool = False, interleaved: bool = False,
                   novel: Optional[_Path] = None, known: Optional[_Path] = None,
                   novel2: Optional[_Path] = None, known2: Optional[_Path] = None,
                   report: Optional[_Path] = None, stats: Optional[_Path] = None,
                   multiqc: Optional[_Path] = None, sample: Optional[str] = None,
                   min_hit_fraction: float = ..., min_hits: int = ..., min_count: int = 1,
                   exact_hits: bool = False, strict: bool = False, compression_level: int = -1,
                   threads: int = 1, max_memory: Union[None, int, str] = None) -> dict[str, Any]: ...

def dedup_files(inputs: _Paths, *, paired: bool = False, interleaved: bool = False,
                novel: Optional[_Path] = None, known: Optional[_Path] = None,
                novel2: Optional[_Path] = None, known2: Optional[_Path] = None,
                report: Optional[_Path] = None, stats: Optional[_Path] = None,
                multiqc: Optional[_Path] = None, sample: Optional[str] = None, k: int = 31,
                canonical: bool = True, type: str = "qf", fpr: Optional[float] = None,
                expected: Union[None, int, str] = None, sampling: str = "all", shards: int = 0,
                seed: Optional[int] = None, max_load: float = 0.9, min_hit_fraction: float = 0.5,
                min_count: int = 1, exact: bool = False, prefilter: bool = False,
                save_filter: Optional[_Path] = None, compression_level: int = -1,
                threads: int = 1, max_memory: Union[None, int, str] = None) -> dict[str, Any]: ...
