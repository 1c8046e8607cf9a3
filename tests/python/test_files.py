"""ksieve.classify_files and ksieve.dedup_files against `ksieve classify` and `ksieve dedup` with the same
arguments: the same bytes in every output (reads, mate 2, report, --multiqc and its General Statistics
file), the returned dict the --stats file that the call wrote, and the same fields as the command line's
(those that describe the run aside); errors as the command line words them. read_batches' qualities and
pairs against the FASTQ records."""
import gzip
import json

import pytest

import ksieve
from conftest import READS, run, run_error

# the --stats fields that describe the run, not the reads (docs/cli.md); the memory limit and its plan
# are compared: the module plans the memory as the command line does
RUN_FIELDS = {"seconds", "reads_per_second", "command_line", "peak_resident_bytes"}


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def fastq_records(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = f.read().splitlines()
    return [tuple(lines[i:i + 4]) for i in range(0, len(lines), 4)]


@pytest.fixture(scope="module")
def mates(tmp_path_factory):
    """A mate 2 file of the bundled reads: each read's reverse complement, under its name."""
    d = tmp_path_factory.mktemp("mates")
    flip = str.maketrans("ACGTNacgtn", "TGCANtgcan")
    with open(d / "r2.fq", "w") as f:
        for name, seq, plus, qual in fastq_records(READS):
            f.write(f"{name}\n{seq.translate(flip)[::-1]}\n{plus}\n{qual[::-1]}\n")
    return d / "r2.fq"


def compare_outputs(cli_dir, py_dir, names):
    for name in names:
        assert read_bytes(py_dir / name) == read_bytes(cli_dir / name), name


def compare_stats(cli_dir, py_dir, returned):
    written = json.loads(read_bytes(py_dir / "s.json"))
    assert returned == written
    cli = json.loads(read_bytes(cli_dir / "s.json"))
    assert {k: v for k, v in returned.items() if k not in RUN_FIELDS} == \
        {k: v for k, v in cli.items() if k not in RUN_FIELDS}
    assert returned["bases_known"] + returned["bases_novel"] == returned["bases"]


def cli_and_module(tmp_path, cli_args, call):
    """`ksieve ARGS` run in tmp/cli and call(out_dir) in tmp/py, each writing its outputs there."""
    cli_dir, py_dir = tmp_path / "cli", tmp_path / "py"
    cli_dir.mkdir()
    py_dir.mkdir()
    run(*[str(a).replace("OUT", str(cli_dir)) for a in cli_args])
    return cli_dir, py_dir, call(py_dir)


@pytest.mark.parametrize("options, kwargs", [
    ([], {}),
    (["--min-hits", "5", "--min-hit-fraction", "0.2", "--exact-hits"],
     {"min_hits": 5, "min_hit_fraction": 0.2, "exact_hits": True}),
])
def test_classify_files_writes_the_bytes_of_classify(data, tmp_path, options, kwargs):
    f = data["dir"] / "lambda.ksf"
    outputs = ["novel.fq.gz", "known.fq", "report.tsv", "S_mqc.json", "S_general_mqc.json"]
    cli_dir, py_dir, stats = cli_and_module(
        tmp_path,
        ["classify", "-q", "-t", 2, "-f", f, "--novel", "OUT/novel.fq.gz", "--known", "OUT/known.fq",
         "--report", "OUT/report.tsv", "--stats", "OUT/s.json", "--multiqc", "OUT/S_mqc.json",
         "--sample", "S", *options, READS],
        lambda d: ksieve.classify_files(str(f), READS, novel=d / "novel.fq.gz", known=d / "known.fq",
                                        report=d / "report.tsv", stats=d / "s.json",
                                        multiqc=d / "S_mqc.json", sample="S", threads=2, **kwargs))
    compare_outputs(cli_dir, py_dir, outputs)
    compare_stats(cli_dir, py_dir, stats)
    assert 0 < stats["known"] < stats["reads"] == 1286
    assert stats["bases_known"] == sum(len(r[1]) for r in fastq_records(py_dir / "known.fq"))
    assert stats["bases_novel"] == sum(len(r[1]) for r in fastq_records(py_dir / "novel.fq.gz"))
    assert stats["command_line"].startswith("ksieve classify --filter ")


def test_classify_files_of_pairs_writes_the_bytes_of_classify_paired(data, tmp_path, mates):
    f = data["dir"] / "lambda.ksf"
    cli_dir, py_dir, stats = cli_and_module(
        tmp_path,
        ["classify", "-q", "-t", 1, "-f", f, "--paired", READS, mates, "--novel", "OUT/n1.fq", "--novel2",
         "OUT/n2.fq", "--known", "OUT/k1.fq", "--known2", "OUT/k2.fq", "--stats", "OUT/s.json"],
        lambda d: ksieve.classify_files([f], [READS, mates], paired=True, novel=d / "n1.fq",
                                        novel2=d / "n2.fq", known=d / "k1.fq", known2=d / "k2.fq",
                                        stats=str(d / "s.json")))
    compare_outputs(cli_dir, py_dir, ["n1.fq", "n2.fq", "k1.fq", "k2.fq"])
    compare_stats(cli_dir, py_dir, stats)
    # the bases per class are those of the reads written to each class's files (both mates)
    for cls, files in (("known", ["k1.fq", "k2.fq"]), ("novel", ["n1.fq", "n2.fq"])):
        assert stats[f"bases_{cls}"] == sum(len(r[1]) for f in files for r in fastq_records(py_dir / f)) > 0
    assert stats["paired"] and stats["units"] == 1286 and stats["reads"] == 2 * 1286


def test_classify_files_without_a_stats_file_returns_the_stats(data, tmp_path):
    with ksieve.Filter.open(str(data["dir"] / "lambda.ksf")) as f:  # an opened Filter stands for its file
        stats = ksieve.classify_files(f, READS, novel=tmp_path / "n.fq")
    run("classify", "-q", "-f", data["dir"] / "lambda.ksf", "--stats", tmp_path / "cli.json", READS)
    cli = json.loads(read_bytes(tmp_path / "cli.json"))
    assert (stats["known"], stats["novel"], stats["bases_known"]) == (cli["known"], cli["novel"], cli["bases_known"])
    assert not (tmp_path / "s.json").exists()


@pytest.mark.parametrize("options, kwargs", [
    ([], {}),
    (["--min-count", "2", "-k", "25"], {"min_count": 2, "k": 25}),
    (["--exact"], {"exact": True}),
])
def test_dedup_files_writes_the_bytes_of_dedup(tmp_path, options, kwargs):
    cli_dir, py_dir, stats = cli_and_module(
        tmp_path,
        ["dedup", "-q", "-t", 1, "--novel", "OUT/novel.fq", "--known", "OUT/known.fq.gz", "--report", "OUT/report.tsv",
         "--stats", "OUT/s.json", "--multiqc", "OUT/D_mqc.json", *options, READS],
        lambda d: ksieve.dedup_files([READS], novel=d / "novel.fq", known=d / "known.fq.gz",
                                     report=d / "report.tsv", stats=d / "s.json", multiqc=d / "D_mqc.json",
                                     **kwargs))
    compare_outputs(cli_dir, py_dir, ["novel.fq", "known.fq.gz", "report.tsv", "D_mqc.json", "D_general_mqc.json"])
    compare_stats(cli_dir, py_dir, stats)
    assert stats["command"] == "dedup" and stats["novel"] > 0


@pytest.mark.parametrize("command", ["classify", "dedup"])
def test_max_memory_is_planned_as_the_command_line_plans_it(data, tmp_path, command):
    f = data["dir"] / "lambda.ksf"
    filters = ["-f", f] if command == "classify" else []
    cli_dir, py_dir, stats = cli_and_module(
        tmp_path,
        [command, "-q", "-t", 2, "--max-memory", "300M", *filters, "--novel", "OUT/n.fq", "--stats", "OUT/s.json", READS],
        lambda d: (ksieve.classify_files(f, READS, novel=d / "n.fq", stats=d / "s.json", threads=2, max_memory="300M")
                   if command == "classify" else
                   ksieve.dedup_files(READS, novel=d / "n.fq", stats=d / "s.json", threads=2, max_memory=300 << 20)))
    compare_outputs(cli_dir, py_dir, ["n.fq"])
    compare_stats(cli_dir, py_dir, stats)
    assert stats["memory_limit"] == 300 << 20
    message = run_error(command, "-q", "-t", 1, "--max-memory", "1M", *filters, READS)
    with pytest.raises(ksieve.Error) as e:
        if command == "classify":
            ksieve.classify_files(f, READS, max_memory="1M")
        else:
            ksieve.dedup_files(READS, max_memory="1M")
    assert str(e.value) == message


def test_errors_are_the_command_lines(data, tmp_path):
    message = run_error("classify", "-q", "-f", tmp_path / "none.ksf", READS)
    with pytest.raises(ksieve.Error) as e:
        ksieve.classify_files(tmp_path / "none.ksf", READS)
    assert str(e.value) == message
    message = run_error("dedup", "-q", "--novel", tmp_path / "n.fq", "--novel2", tmp_path / "n2.fq", READS)
    with pytest.raises(ksieve.Error) as e:
        ksieve.dedup_files(READS, novel=tmp_path / "n.fq", novel2=tmp_path / "n2.fq")
    assert str(e.value) == message
    with pytest.raises(TypeError):
        ksieve.classify_files(data["dir"] / "lambda.ksf", 3)


def test_read_batches_yields_qualities_and_pairs(mates):
    records = fastq_records(READS)
    names = [r[0][1:].split()[0] for r in records]
    got = [b for b in ksieve.read_batches(READS, records=500, qualities=True)]
    assert [len(b) for b in got] == [3] * 3 and [len(b[0]) for b in got] == [500, 500, 286]
    assert sum((b[0] for b in got), []) == names
    assert sum((b[1] for b in got), []) == [r[1] for r in records]
    assert sum((b[2] for b in got), []) == [r[3] for r in records]
    flip = str.maketrans("ACGTN", "TGCAN")
    pairs = list(ksieve.read_batches(READS, str(mates), qualities=True))
    assert [len(b) for b in pairs] == [5]
    n, s1, q1, s2, q2 = pairs[0]
    assert n == names and s1 == [r[1] for r in records] and q1 == [r[3] for r in records]
    assert s2 == [r[1].translate(flip)[::-1] for r in records] and q2 == [r[3][::-1] for r in records]
    assert [len(b) for b in ksieve.read_batches(READS, str(mates))] == [3]
    assert [len(b) for b in ksieve.read_batches(READS)] == [2]
