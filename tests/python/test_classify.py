"""ksieve.Filter against the command line: its header against `ksieve info --json`, and its classes
against the rows of `ksieve classify --report` on the bundled data (default and other rules, pairs, a
labeled filter); the per-k-mer answers against a naive set of k-mers and a naive vote."""
import collections
import json
import random
import threading

import pytest

import ksieve
from conftest import READS, module_rows, read_report, run, run_error, write_fastq


def cli_report(data, filter_name, *options, inputs=(READS,)):
    report = data["dir"] / "report.tsv"
    run("classify", "-q", "-f", data["dir"] / filter_name, "--report", report, *options, *inputs)
    return read_report(report)


def test_header_properties_are_what_info_says(data):
    for name in ("lambda.ksf", "reads.ksf", "labeled.ksf"):
        path = str(data["dir"] / name)
        info = json.loads(run("info", "--json", path))
        with ksieve.Filter.open(path) as f:
            assert f.info() == info
            for field in ("type", "k", "canonical", "hash_seed", "sampling", "mask", "shards",
                          "key_parts", "target_fpr", "exact", "expected", "format_version",
                          "file_bytes", "payload_bytes", "distinct_kmers", "total_count",
                          "estimated_fpr"):
                assert getattr(f, field) == info[field], field
            assert f.labeled == ("labels" in info)
            assert f.labels == [label["name"] for label in info.get("labels", [])]
    assert ksieve.open_filter(str(data["dir"] / "labeled.ksf")).labels == ["s1", "s2"]


def test_default_rule_gives_the_rows_of_classify_report(data):
    rows = cli_report(data, "lambda.ksf")
    f = ksieve.Filter.open(str(data["dir"] / "lambda.ksf"))
    result = f.classify_batch(data["seqs"], qualities=data["quals"])
    assert module_rows(data["names"], result) == rows
    classes = collections.Counter(r[3] for r in rows)
    assert classes["known"] > 0 and classes["novel"] > 0  # the data tells the rule's sides apart
    # one read at a time, str or bytes, gives the same
    for i in (0, 1, len(rows) // 2, len(rows) - 1):
        one = f.classify(data["seqs"][i].encode() if i % 2 else data["seqs"][i],
                         qualities=data["quals"][i])
        assert (one.kmers, one.hits, one.cls, one.label) == (rows[i][1], rows[i][2], rows[i][3], None)
        assert result[i].known == (rows[i][3] == "known")
    assert result[-1].kmers == rows[-1][1] and len(result) == len(rows)
    assert (ksieve.DEFAULT_MIN_HIT_FRACTION, ksieve.DEFAULT_MIN_HITS) == (0.004, 2)


def test_qualities_are_those_of_the_fastq_records(data, tmp_path):
    # the same reads as FASTA: the command line's classes without qualities
    fasta = tmp_path / "reads.fa"
    with open(fasta, "w") as out:
        out.writelines(f">{n}\n{s}\n" for n, s in zip(data["names"], data["seqs"]))
    rows = cli_report(data, "lambda.ksf", inputs=(fasta,))
    f = ksieve.Filter.open(str(data["dir"] / "lambda.ksf"))
    assert module_rows(data["names"], f.classify_batch(data["seqs"])) == rows
    # reads whose low-quality bases are wrong: the qualities decide, as they do for the command line
    rng = random.Random(3)
    genome = data["genome"][0][1]
    reads = []
    for i in range(400):
        at = rng.randrange(0, len(genome) - 75)
        seq, qual = list(genome[at:at + 75]), ["I"] * 75
        for p in rng.sample(range(75), 3):
            seq[p] = rng.choice([b for b in "ACGT" if b != seq[p]])
            qual[p] = "#"
        reads.append((f"r{i}", "".join(seq), "".join(qual)))
    fq = tmp_path / "errors.fq"
    with open(fq, "w") as out:
        out.writelines(f"@{n}\n{s}\n+\n{q}\n" for n, s, q in reads)
    rows = cli_report(data, "lambda.ksf", inputs=(fq,))
    result = f.classify_batch([s for _, s, _ in reads], qualities=[q for _, _, q in reads])
    assert module_rows([n for n, _, _ in reads], result) == rows
    without = f.classify_batch([s for _, s, _ in reads])
    assert sum(result.known) > sum(without.known)  # the substitutions find reads the k-mers miss
    with pytest.raises(ksieve.Error, match="qualities: read 1 has 3 qualities for 75 bases"):
        f.classify_batch([reads[0][1]], qualities=["III"])
    with pytest.raises(ksieve.Error, match="1 quality strings for 2 sequences"):
        f.classify_batch([reads[0][1], reads[1][1]], qualities=[reads[0][2]])


@pytest.mark.parametrize("options, rule", [
    (["--min-hit-fraction", "0.5", "--min-hits", "0"], {"min_hit_fraction": 0.5, "min_hits": 0}),
    (["--min-hits", "25"], {"min_hits": 25}),
    (["--min-hit-fraction", "0.9"], {"min_hit_fraction": 0.9}),
])
def test_other_rules_give_the_rows_of_classify_report(data, options, rule):
    rows = cli_report(data, "lambda.ksf", *options)
    f = ksieve.Filter.open(str(data["dir"] / "lambda.ksf"))
    result = f.classify_batch(data["seqs"], qualities=data["quals"], **rule)
    assert module_rows(data["names"], result) == rows
    default = cli_report(data, "lambda.ksf")
    assert [r[3] for r in rows] != [r[3] for r in default]  # a rule that changes classes
    assert len({r[3] for r in rows}) == 2


def test_min_count_on_a_counting_filter_gives_the_rows_of_classify_report(data):
    rows = cli_report(data, "reads.ksf", "--min-count", "3", "--min-hit-fraction", "0.5")
    f = ksieve.Filter.open(str(data["dir"] / "reads.ksf"))
    result = f.classify_batch(data["seqs"], qualities=data["quals"], min_count=3, min_hit_fraction=0.5, threads=2)
    assert module_rows(data["names"], result) == rows
    assert len({r[3] for r in rows}) == 2


def test_pairs_give_the_rows_of_classify_report(data):
    d = data["dir"]
    seqs = data["seqs"]
    half = len(seqs) // 2
    names = [f"pair{i}" for i in range(half)]
    write_fastq(d / "r1.fq", [(f"{n}/1", s) for n, s in zip(names, seqs[:half])])
    write_fastq(d / "r2.fq", [(f"{n}/2", s) for n, s in zip(names, seqs[half:2 * half])])
    rows = cli_report(data, "lambda.ksf", "--paired", inputs=(d / "r1.fq", d / "r2.fq"))
    f = ksieve.Filter.open(str(d / "lambda.ksf"))
    result = f.classify_batch(seqs[:half], mates=seqs[half:2 * half])
    assert module_rows([f"{n}/1" for n in names], result) == rows
    one = f.classify(seqs[0], seqs[half])
    assert (one.kmers, one.hits, one.cls) == rows[0][1:4]


def test_labeled_filter_gives_the_rows_and_labels_of_classify_report(data):
    rows = cli_report(data, "labeled.ksf")
    f = ksieve.Filter.open(str(data["dir"] / "labeled.ksf"))
    result = f.classify_batch(data["seqs"], qualities=data["quals"])
    assert module_rows(data["names"], result) == rows
    labels = collections.Counter(r[4] for r in rows)
    assert labels["s1"] > 0 and labels["s2"] > 0 and labels["ambiguous"] > 0 and labels["-"] > 0
    assert f.classify(data["seqs"][0]).label == rows[0][4]


def test_kmer_labels_name_the_label_a_naive_vote_finds(data):
    f = ksieve.Filter.open(str(data["dir"] / "labeled.ksf"))
    result = f.classify_batch(data["seqs"])
    for i, seq in enumerate(data["seqs"]):
        per_kmer = f.kmer_labels(seq)
        assert len(per_kmer) == result.kmers[i]
        assert sum(1 for labels in per_kmer if labels) == result.hits[i]
        if not result.known[i]:
            assert result.labels[i] == "-"
            continue
        tally = collections.Counter(label for labels in per_kmer for label in labels)
        top = max(tally.values())
        best = [label for label, n in tally.items() if n == top]
        assert result.labels[i] == (best[0] if len(best) == 1 else "ambiguous")
    with pytest.raises(ksieve.Error, match="not a labeled filter"):
        ksieve.Filter.open(str(data["dir"] / "lambda.ksf")).kmer_labels(data["seqs"][0])


def canonical(kmer):
    rc = kmer[::-1].translate(str.maketrans("ACGT", "TGCA"))
    return min(kmer, rc)


def test_lookup_answers_for_every_kmer_as_an_exact_set_does(data, tmp_path):
    genome = data["genome"][0][1]
    k = 21
    f = ksieve.build_filter(genome, str(tmp_path / "exact.ksf"), k=k, fpr=0, sampling="all")
    assert f.exact
    kmers = {canonical(genome[i:i + k]) for i in range(len(genome) - k + 1)}
    found = 0
    for seq in data["seqs"][:300]:
        counts = f.lookup(seq)
        assert len(counts) == len(seq) - k + 1
        expect = [canonical(seq[i:i + k]) in kmers for i in range(len(seq) - k + 1)]
        assert [c > 0 for c in counts] == expect
        found += sum(expect)
    assert found > 0
    # lookup and classify count the same k-mers (sampled ones too)
    g = ksieve.Filter.open(str(data["dir"] / "lambda.ksf"))
    result = g.classify_batch(data["seqs"][:50])
    for i, seq in enumerate(data["seqs"][:50]):
        counts = g.lookup(seq)
        assert (len(counts), sum(c > 0 for c in counts)) == (result.kmers[i], result.hits[i])


def test_threads_and_concurrent_calls_give_the_same_classes(data):
    f = ksieve.Filter.open(str(data["dir"] / "lambda.ksf"), threads=2)
    expect = module_rows(data["names"], f.classify_batch(data["seqs"]))
    assert module_rows(data["names"], f.classify_batch(data["seqs"], threads=2)) == expect
    got = [None] * 4

    def work(i):
        got[i] = module_rows(data["names"], f.classify_batch(data["seqs"]))
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [expect] * 4


def test_a_closed_filter_says_so(data):
    f = ksieve.Filter.open(str(data["dir"] / "lambda.ksf"))
    f.close()
    assert f.closed
    with pytest.raises(ksieve.Error, match="is closed"):
        f.classify("ACGT")


def test_read_batches_reads_the_records_classify_reads(data, tmp_path):
    names, seqs, sizes = [], [], []
    for batch_names, batch_seqs in ksieve.read_batches(READS, records=500):
        sizes.append(len(batch_names))
        names += batch_names
        seqs += batch_seqs
    assert (names, seqs) == (data["names"], data["seqs"])
    assert sizes[0] == 500 and len(sizes) == 3
    with open(READS, "rb") as f:
        (tmp_path / "cut.fq.gz").write_bytes(f.read()[:5000])
    message = run_error("classify", "-q", "-f", data["dir"] / "lambda.ksf", tmp_path / "cut.fq.gz")
    with pytest.raises(ksieve.Error) as e:
        for _ in ksieve.read_batches(str(tmp_path / "cut.fq.gz")):
            pass
    assert str(e.value) == message
