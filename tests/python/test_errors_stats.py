"""ksieve.read_stats against the --stats files of the command line (plain and compressed) and files
that are not such files; bad filter files and options raise ksieve.Error with the command line's
message, never a crash; the example script runs."""
import bz2
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

import ksieve
from conftest import LAMBDA, READS, REPO, run, run_error


def test_read_stats_gives_the_json_classify_wrote(data, tmp_path):
    f = data["dir"] / "labeled.ksf"
    run("classify", "-q", "-f", f, "--report", tmp_path / "r.tsv", "--stats", tmp_path / "s.json", READS)
    with open(tmp_path / "s.json") as j:
        expect = json.load(j)
    stats = ksieve.read_stats(str(tmp_path / "s.json"))
    assert stats == expect
    assert stats["labels"]["s1"] > 0 and stats["known"] + stats["novel"] == stats["reads"]
    with open(tmp_path / "s.json", "rb") as raw:
        text = raw.read()
    with gzip.open(tmp_path / "s.json.gz", "wb") as z:
        z.write(text)
    with bz2.open(tmp_path / "s.json.bz2", "wb") as z:
        z.write(text)
    assert ksieve.read_stats(str(tmp_path / "s.json.gz")) == expect
    assert ksieve.read_stats(str(tmp_path / "s.json.bz2")) == expect
    # compressed by ksieve itself, by the name
    run("dedup", "-q", "--stats", tmp_path / "d.json.xz", READS)
    dedup = ksieve.read_stats(str(tmp_path / "d.json.xz"))
    assert dedup["command"] == "dedup" and dedup["reads"] == len(data["seqs"])
    assert "kmer_sample" in dedup


def test_read_stats_refuses_what_is_not_a_stats_file(tmp_path):
    good = {"command": "classify", "sample": "s", "inputs": ["a"], "filters": ["f"], "command_line": "c",
            "reads": 2, "known": 1, "novel": 1, "units": 2, "known_units": 1, "novel_units": 1,
            "paired": False, "known_fraction": 0.5, "kmers": 10, "hits": None, "bases": 20,
            "min_hit_fraction": 0.004, "min_hits": 2, "min_count": 1, "seconds": 0.1,
            "reads_per_second": 20.0, "threads": 1, "ksieve_version": "0.2.0"}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(good))
    assert ksieve.read_stats(str(path)) == good
    for change, message in [({"reads": None}, "field 'reads'"), ({"paired": 1}, "field 'paired'"),
                            ({"command": "build"}, "field 'command'"), ({"inputs": "a"}, "field 'inputs'"),
                            ({"command": "dedup"}, "no field 'memory_budget'")]:
        path.write_text(json.dumps(dict(good, **change)))
        with pytest.raises(ksieve.Error, match=message):
            ksieve.read_stats(str(path))
    bad = dict(good)
    del bad["kmers"]
    path.write_text(json.dumps(bad))
    with pytest.raises(ksieve.Error, match="no field 'kmers'"):
        ksieve.read_stats(str(path))
    for text in ("{not json", "[1, 2]"):
        path.write_text(text)
        with pytest.raises(ksieve.Error, match="not a ksieve --stats file"):
            ksieve.read_stats(str(path))
    with pytest.raises(ksieve.Error, match="cannot read"):
        ksieve.read_stats(str(tmp_path / "missing.json"))
    (tmp_path / "cut.gz").write_bytes(gzip.compress(b'{"a": 1}')[:12])
    with pytest.raises(ksieve.Error, match="cannot decompress"):
        ksieve.read_stats(str(tmp_path / "cut.gz"))


def test_bad_filter_files_raise_the_message_of_the_command_line(data, tmp_path):
    good = data["dir"] / "lambda.ksf"
    size = os.path.getsize(good)
    cases = {"truncated.ksf": open(good, "rb").read()[:size // 2],
             "header_only.ksf": open(good, "rb").read()[:40],
             "empty.ksf": b""}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
    shutil.copy(LAMBDA, tmp_path / "genome.ksf")  # not a filter
    for name in list(cases) + ["genome.ksf", "missing.ksf"]:
        path = str(tmp_path / name)
        message = run_error("classify", "-q", "-f", path, READS)
        with pytest.raises(ksieve.Error) as e:
            ksieve.Filter.open(path)
        assert isinstance(e.value, RuntimeError)
        assert str(e.value) == message
        assert path in message


def test_bad_rules_raise_the_message_of_the_command_line(data):
    f = ksieve.Filter.open(str(data["dir"] / "lambda.ksf"))
    for rule, cli in [({"min_hit_fraction": 0}, ["--min-hit-fraction", "0"]),
                      ({"min_hit_fraction": 1.5}, ["--min-hit-fraction", "1.5"]),
                      ({"min_count": 0}, ["--min-count", "0"])]:
        message = run_error("classify", "-q", "-f", data["dir"] / "lambda.ksf", *cli, READS)
        with pytest.raises(ksieve.Error) as e:
            f.classify_batch(data["seqs"], **rule)
        assert str(e.value) == message
    bloom = data["dir"] / "bloom.ksf"
    run("build", "-q", "--type", "bloom", "-o", bloom, LAMBDA)
    with pytest.raises(ksieve.Error, match="needs a quotient filter"):
        ksieve.Filter.open(str(bloom)).classify("ACGT" * 10, min_count=2)
    with pytest.raises(ksieve.Error, match="its counts are label sets"):
        ksieve.Filter.open(str(data["dir"] / "labeled.ksf")).classify("ACGT" * 10, min_count=2)
    with pytest.raises(ksieve.Error, match="mates: 1 sequences for 2 reads"):
        f.classify_batch(["ACGT", "ACGT"], mates=["ACGT"])
    with pytest.raises(TypeError):
        f.classify_batch([None])
    with pytest.raises(TypeError):
        f.classify(["ACGT", "ACGT"])


def test_a_part_of_a_split_is_refused_as_classify_refuses_it(data, tmp_path):
    part = tmp_path / "part.ksf"
    run("build", "-q", "--part", "0/2", "-o", part, LAMBDA)
    message = run_error("classify", "-q", "-f", part, READS)
    f = ksieve.Filter.open(str(part))
    assert f.key_parts == "part 0 of 2"
    with pytest.raises(ksieve.Error) as e:
        f.classify("ACGT" * 10)
    assert str(e.value) == message


def test_the_example_script_screens_the_bundled_reads(tmp_path):
    script = os.path.join(REPO, "examples", "python", "screen_reads.py")
    out = subprocess.run([sys.executable, script, "--out", str(tmp_path)], capture_output=True, text=True,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert os.path.exists(tmp_path / "lambda.ksf") and os.path.exists(tmp_path / "stats.json")
    # its last line: the command line's known reads, then the module's
    last = re.fullmatch(r"ksieve classify: (\d+) known, \d+ novel \(the module: (\d+) known\)",
                        out.stdout.splitlines()[-1])
    assert last and last.group(1) == last.group(2) and int(last.group(1)) > 0
