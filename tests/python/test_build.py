"""ksieve.build_filter against `ksieve build`: from the same sequences (in memory, and in a FASTA
file), the same bytes and the same classify reports, for the default options and others, and over
several batches of the readers; options refused as build refuses them."""
import os
import subprocess
import sys

import pytest

import ksieve
from conftest import LAMBDA, READS, read_report, run, run_error, write_fasta


def report(filter_path, reads, out):
    run("classify", "-q", "-f", filter_path, "--report", out, reads)
    return read_report(out)


def same_file(a, b):
    with open(a, "rb") as x, open(b, "rb") as y:
        return x.read() == y.read()


@pytest.mark.parametrize("cli_options, options", [
    ([], {}),
    (["-k", "21", "--fpr", "0.01", "--sampling", "all"], {"k": 21, "fpr": 0.01, "sampling": "all"}),
    (["--type", "bloom", "--sampling", "minimizer:5"], {"type": "bloom", "sampling": "minimizer:5"}),
    (["--fpr", "0", "--no-counts", "--shards", "4"], {"fpr": 0, "no_counts": True, "shards": 4}),
    (["--sampling", "minimizer:10", "--mask", "dust", "--expected", "100000", "--seed", "7"],
     {"sampling": "minimizer:10", "mask": "dust", "expected": 100000, "seed": 7}),
])
def test_a_filter_of_the_genome_is_the_file_build_writes(data, tmp_path, cli_options, options):
    run("build", "-q", "-o", tmp_path / "cli.ksf", *cli_options, LAMBDA)
    seqs = [seq for _, seq in data["genome"]]
    f = ksieve.build_filter(seqs, str(tmp_path / "module.ksf"), **options)
    assert f.path == str(tmp_path / "module.ksf")
    assert same_file(tmp_path / "cli.ksf", tmp_path / "module.ksf")
    assert report(tmp_path / "module.ksf", READS, tmp_path / "a.tsv") == \
        report(tmp_path / "cli.ksf", READS, tmp_path / "b.tsv")
    # and from a FASTA file of the same sequences
    write_fasta(tmp_path / "genome.fa", data["genome"])
    run("build", "-q", "-o", tmp_path / "fasta.ksf", *cli_options, tmp_path / "genome.fa")
    assert same_file(tmp_path / "fasta.ksf", tmp_path / "module.ksf")


@pytest.mark.parametrize("cli_options, options", [
    ([], {}),
    (["--type", "cuckoo", "--sampling", "all", "-k", "19"], {"type": "cuckoo", "sampling": "all", "k": 19}),
])
def test_reads_in_several_batches_make_the_file_build_writes(synthetic_reads, tmp_path, cli_options,
                                                             options):
    genome, reads = synthetic_reads
    write_fasta(tmp_path / "reads.fa", [(f"r{i}", s) for i, s in enumerate(reads)])
    run("build", "-q", "-t", 2, "-o", tmp_path / "cli.ksf", *cli_options, tmp_path / "reads.fa")
    f = ksieve.build_filter([s.encode() for s in reads], str(tmp_path / "module.ksf"), threads=2,
                            **options)
    assert same_file(tmp_path / "cli.ksf", tmp_path / "module.ksf")
    assert f.distinct_kmers > 0
    write_fasta(tmp_path / "genome.fa", [("g", genome)])
    assert report(tmp_path / "module.ksf", tmp_path / "genome.fa", tmp_path / "a.tsv") == \
        report(tmp_path / "cli.ksf", tmp_path / "genome.fa", tmp_path / "b.tsv")


def test_options_are_refused_as_build_refuses_them(tmp_path):
    out = str(tmp_path / "x.ksf")
    for options, cli in [({"k": 40}, ["-k", "40"]),
                         ({"sampling": "minimizer:0"}, ["--sampling", "minimizer:0"]),
                         ({"mask": "dust", "sampling": "all"}, ["--mask", "dust", "--sampling", "all"]),
                         ({"fpr": 0, "type": "bloom"}, ["--fpr", "0", "--type", "bloom"]),
                         ({"expected": "lots"}, ["--expected", "lots"]),
                         ({"type": "tree"}, ["--type", "tree"]),
                         ({"shards": 3}, ["--shards", "3"])]:
        message = run_error("build", "-q", "-o", out, *cli, LAMBDA)
        with pytest.raises(ksieve.Error) as e:
            ksieve.build_filter(["ACGTACGTAC" * 10], out, **options)
        assert str(e.value) == message, options
    with pytest.raises(ksieve.Error, match="not compressed"):
        ksieve.build_filter(["ACGT" * 20], str(tmp_path / "x.ksf.gz"))
    with pytest.raises(TypeError):
        ksieve.build_filter([1, 2], out)
    assert not os.path.exists(out)


def test_the_installed_package_imports_from_its_directory(tmp_path):
    build = os.environ.get("KSIEVE_BUILD_DIR")
    cmake = os.environ.get("KSIEVE_CMAKE")
    pythondir = os.environ.get("KSIEVE_INSTALL_PYTHONDIR")
    if not (build and cmake and pythondir):
        pytest.skip("KSIEVE_BUILD_DIR, KSIEVE_CMAKE and KSIEVE_INSTALL_PYTHONDIR name the build")
    subprocess.run([cmake, "--install", build, "--component", "python", "--prefix", tmp_path],
                   check=True, capture_output=True)
    site = tmp_path / pythondir
    env = dict(os.environ, PYTHONPATH=str(site))
    out = subprocess.run([sys.executable, "-c", "import ksieve; print(ksieve.__file__, ksieve.__version__)"],
                         env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == str(site / "ksieve" / "__init__.py")
    assert out[1] == ksieve.__version__
