#!/usr/bin/env python3
"""Writes the small generated data of the cross-architecture comparison (compare_binaries.sh): a genome
with repeats, a run of Ns and soft-masked (lower-case) stretches, and reads from it and from elsewhere
(substitutions, reverse strands, Ns, short and long records), single and paired. Deterministic (fixed
seed), so that every run compares the same inputs.

Usage: make_data.py OUTDIR
Writes genome.fa, reads.fq, reads_R1.fq, reads_R2.fq and long.fa in OUTDIR.
"""
import os
import random
import sys

COMPLEMENT = str.maketrans("ACGTNacgtn", "TGCANtgcan")


def reverse_complement(s):
    return s.translate(COMPLEMENT)[::-1]


def random_dna(rng, n):
    return "".join(rng.choice("ACGT") for _ in range(n))


def mutate(rng, s, rate):
    out = list(s)
    for i in range(len(out)):
        if rng.random() < rate:
            out[i] = rng.choice("ACGTN" if rng.random() < 0.1 else "ACGT")
    return "".join(out)


def genome(rng):
    """Two chromosomes: repeats, a run of Ns, soft-masked stretches."""
    unit = random_dna(rng, 700)
    chr1 = random_dna(rng, 20000) + unit + random_dna(rng, 3000) + unit + "N" * 150 + random_dna(rng, 8000)
    chr1 = chr1[:5000] + chr1[5000:6000].lower() + chr1[6000:]
    chr2 = random_dna(rng, 12000) + "AC" * 200 + random_dna(rng, 6000)
    return {"chr1 first chromosome": chr1, "chr2": chr2}


def write_fasta(path, records, width=70):
    with open(path, "w") as f:
        for name, seq in records.items():
            f.write(f">{name}\n")
            for i in range(0, len(seq), width):
                f.write(seq[i:i + width] + "\n")


def quality(rng, n):
    return "".join(chr(33 + rng.randint(2, 40)) for _ in range(n))


def read_from(rng, seqs, length, rate):
    seq = rng.choice(seqs)
    start = rng.randrange(0, len(seq) - length)
    r = mutate(rng, seq[start:start + length], rate)
    return reverse_complement(r) if rng.random() < 0.5 else r


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20240611)
    g = genome(rng)
    write_fasta(os.path.join(out, "genome.fa"), g)
    seqs = [s.upper() for s in g.values()]

    with open(os.path.join(out, "reads.fq"), "w") as f:
        for i in range(3000):
            kind = i % 5
            length = rng.choice((20, 35, 100, 150, 151, 250)) if kind != 4 else rng.randint(1, 40)
            if kind in (0, 1, 2):
                seq = read_from(rng, seqs, length, 0.01 * kind)
            else:
                seq = mutate(rng, random_dna(rng, length), 0.0)
            f.write(f"@read{i} kind={kind}\n{seq}\n+\n{quality(rng, len(seq))}\n")
        for i in range(40):  # exact duplicates, for dedup
            seq = read_from(rng, seqs, 150, 0.0)
            for copy in range(3):
                f.write(f"@dup{i}.{copy}\n{seq}\n+\n{quality(rng, 150)}\n")

    with open(os.path.join(out, "reads_R1.fq"), "w") as r1, open(os.path.join(out, "reads_R2.fq"), "w") as r2:
        for i in range(1500):
            source = seqs if i % 3 else [random_dna(rng, 2000)]
            seq = rng.choice(source)
            start = rng.randrange(0, len(seq) - 500)
            insert = rng.randint(250, 500)
            frag = mutate(rng, seq[start:start + insert], 0.005)
            m1, m2 = frag[:150], reverse_complement(frag)[:150]
            r1.write(f"@pair{i}/1\n{m1}\n+\n{quality(rng, len(m1))}\n")
            r2.write(f"@pair{i}/2\n{m2}\n+\n{quality(rng, len(m2))}\n")

    long_records = {}
    for i in range(6):
        parts = [read_from(rng, seqs, 5000, 0.05), random_dna(rng, 3000), read_from(rng, seqs, 8000, 0.02)]
        long_records[f"long{i}"] = "".join(parts[j] for j in rng.sample(range(3), 3))
    write_fasta(os.path.join(out, "long.fa"), long_records, width=1000)


if __name__ == "__main__":
    main()
