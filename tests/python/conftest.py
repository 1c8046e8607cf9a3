"""What the tests of the Python module share: the ksieve executable they compare the module with
(KSIEVE_BINARY), the bundled data (examples/data), and filters built from it by the command line once
per test session.

Run by ctest (the test python_module, which sets PYTHONPATH to the build's package and KSIEVE_BINARY),
or by hand: PYTHONPATH=build/python KSIEVE_BINARY=build/bin/ksieve python3 -m pytest tests/python
"""
import gzip
import os
import random
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(REPO, "examples", "data")
LAMBDA = os.path.join(DATA, "lambda.fa.gz")
READS = os.path.join(DATA, "reads.fq.gz")


def ksieve_binary():
    path = os.environ.get("KSIEVE_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("KSIEVE_BINARY must name the ksieve executable (the command line the module "
                    "is compared with)")
    return path


def run(*args):
    """ksieve ARGS (quiet); its standard output. Fails the test on a non-zero exit."""
    out = subprocess.run([ksieve_binary(), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, f"ksieve {' '.join(map(str, args))}: {out.stderr}"
    return out.stdout


def run_error(*args):
    """ksieve ARGS that must fail; the message after 'ksieve: error: '."""
    out = subprocess.run([ksieve_binary(), *map(str, args)], capture_output=True, text=True)
    assert out.returncode != 0
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("ksieve: error: "), out.stderr
    return line[len("ksieve: error: "):]


def read_fasta(path):
    """(name, sequence) of each record of a FASTA file, gzip or not."""
    opener = gzip.open if path.endswith(".gz") else open
    records, name, parts = [], None, []
    with opener(path, "rt") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith(">"):
                if name is not None:
                    records.append((name, "".join(parts)))
                name, parts = line[1:].split()[0], []
            elif line:
                parts.append(line)
    if name is not None:
        records.append((name, "".join(parts)))
    return records


def read_fastq(path, qualities=False):
    """(name, sequence) of each record of a FASTQ file, gzip or not; (name, sequence, qualities)
    with `qualities`."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = f.read().splitlines()
    if qualities:
        return [(lines[i][1:].split()[0], lines[i + 1], lines[i + 3]) for i in range(0, len(lines), 4)]
    return [(lines[i][1:].split()[0], lines[i + 1]) for i in range(0, len(lines), 4)]


def write_fasta(path, records):
    with open(path, "w") as f:
        for name, seq in records:
            f.write(f">{name}\n{seq}\n")


def write_fastq(path, records):
    with open(path, "w") as f:
        for name, seq in records:
            f.write(f"@{name}\n{seq}\n+\n{'I' * len(seq)}\n")


def read_report(path):
    """The rows of a classify --report: (read_id, kmers, hits, class[, label])."""
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        assert header[:4] == ["read_id", "kmers", "hits", "class"]
        rows = []
        for line in f:
            cols = line.rstrip("\n").split("\t")
            rows.append((cols[0], int(cols[1]), int(cols[2]), *cols[3:]))
    return rows


def module_rows(names, result):
    """classify_batch's result as report rows."""
    labels = result.labels
    rows = []
    for i, name in enumerate(names):
        row = (name, result.kmers[i], result.hits[i], result.classes[i])
        rows.append(row if labels is None else row + (labels[i],))
    return rows


def random_dna(rng, n):
    return "".join(rng.choice("ACGT") for _ in range(n))


@pytest.fixture(scope="session")
def data(tmp_path_factory):
    """The bundled genome and reads, and filters the command line built from them."""
    d = tmp_path_factory.mktemp("ksieve")
    genome = read_fasta(LAMBDA)
    reads = read_fastq(READS)
    quals = [q for _, _, q in read_fastq(READS, qualities=True)]
    run("build", "-q", "-t", 2, "-o", d / "lambda.ksf", LAMBDA)
    # a counting filter of the reads themselves: k-mers seen several times
    run("build", "-q", "-t", 2, "--sampling", "all", "-k", 25, "-o", d / "reads.ksf", READS)
    # two samples that share part of the genome, merged into a labeled filter
    seq = genome[0][1]
    write_fasta(d / "s1.fa", [("s1", seq[:30000])])
    write_fasta(d / "s2.fa", [("s2", seq[25000:])])
    for s in ("s1", "s2"):
        run("build", "-q", "-t", 2, "-o", d / f"{s}.ksf", d / f"{s}.fa")
    run("merge", "-q", "--label-inputs", "-o", d / "labeled.ksf", d / "s1.ksf", d / "s2.ksf")
    return {"dir": d, "genome": genome, "reads": reads, "names": [n for n, _ in reads],
            "seqs": [s for _, s in reads], "quals": quals}


@pytest.fixture(scope="session")
def synthetic_reads():
    """Reads enough for several batches of the readers (over 2 MiB of bases): a seeded random
    genome of 60 kb and 22000 reads of 150 bases from it and from elsewhere."""
    rng = random.Random(7)
    genome = random_dna(rng, 60000)
    reads = []
    for i in range(22000):
        if i % 3 == 0:
            reads.append(random_dna(rng, 150))
        else:
            p = rng.randrange(0, len(genome) - 150)
            reads.append(genome[p:p + 150])
    return genome, reads
