#!/usr/bin/env python3
"""Tests of the workflow examples (examples/snakemake, examples/nextflow).

1. `snakemake --lint` finds nothing to say about either entry of examples/snakemake/workflow (the Snakefile,
   host removal, and screen.smk, screening).
2. The host removal runs end to end on the bundled data (demo: true) with the ksieve under test, on the
   sample sheet config/samples.tsv: sample A paired-end, sample B single-end. The demo reads split the
   bundled reads between the samples (mate 2 the reverse complement of mate 1); the outputs equal those of
   the same commands run by hand (oracle: a host filter built in one job, classify run directly, each sample
   filter built from the clean reads, their merge); MultiQC's data table lists each sample's known and novel
   reads as its stats say; every job wrote its log and its benchmark, and the host parts were temporary.
3. A sample sheet of one's own (in the working directory, reads given by path, not demo) runs as well; a
   sample whose reads are missing is an error (nothing is made up); the schemas refuse a bad sample sheet or
   configuration with an error naming the field (a sample name with a space, a column the sheet may not
   have, a sample without reads, a sample twice, no host without demo, parts 0).
4. Screening (screen.smk) runs end to end on the same sheet (demo: true): the labeled filter equals a merge
   --label-inputs of the sample filters, no read of a sample is given another sample's label (a sample's own
   filter holds all its k-mers: at most a tie, `ambiguous`), and MultiQC's data table lists each sample's
   reads per label as its stats say.
5. The Nextflow modules, subworkflow and pipeline have what nf-core's linter asks (nextflow_layout.py), and
   the ksieve command lines of the modules equal those of the Snakemake rules (options and their values; file
   names aside), rendered with the ext.args of examples/nextflow/conf/modules.config, for single-end and
   paired-end samples.

Usage: test_workflows.py KSIEVE_BINARY
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import nextflow_layout
from checks import check, failures

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMK = os.path.join(ROOT, "examples", "snakemake", "workflow")
SNAKEFILE = os.path.join(SMK, "Snakefile")
SCREEN = os.path.join(SMK, "screen.smk")
DATA = os.path.join(ROOT, "examples", "data")
LAMBDA = os.path.join(DATA, "lambda.fa.gz")



def run(cmd, cwd, env, quiet=False):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0 and not quiet:
        print(r.stdout[-4000:], r.stderr[-4000:], file=sys.stderr)
    return r


def snakemake(snakefile, args, cwd, env, quiet=False):
    return run(["snakemake", "--snakefile", snakefile, "--directory", cwd] + args, cwd, env, quiet)


def gz_bytes(path):
    with gzip.open(path, "rb") as f:
        return f.read()


def same_file(a, b):
    return open(a, "rb").read() == open(b, "rb").read()


def fastq_records(path):
    with gzip.open(path, "rt") as f:
        lines = f.read().splitlines()
    return [tuple(lines[i:i + 4]) for i in range(0, len(lines), 4)]


def multiqc_rows(data, prefix):
    """{sample: {column: value}} of the MultiQC data table whose name starts with prefix."""
    tables = [f for f in os.listdir(data) if f.startswith(prefix)] if os.path.isdir(data) else []
    if not check(len(tables) == 1, f"MultiQC made the table {prefix}* in {data}"):
        return {}
    rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(data, tables[0]))]
    return {row[0]: dict(zip(rows[0][1:], (float(x) for x in row[1:]))) for row in rows[1:]}


# ---------------------------------------------------------------------------------------------- Snakemake


def check_demo_reads(work):
    """The demo reads: A's and B's records are the bundled ones, each once; A's mate 2 reverse complements."""
    bundled = fastq_records(os.path.join(DATA, "reads.fq.gz"))
    a1, a2, b = (fastq_records(os.path.join(work, "reads", f)) for f in ("A_R1.fq.gz", "A_R2.fq.gz", "B.fq.gz"))
    check(sorted(a1 + b) == sorted(bundled) and a1 and b, "the demo samples share out the bundled reads")
    flip = str.maketrans("ACGTNacgtn", "TGCANtgcan")
    check(a2 == [(n, s.translate(flip)[::-1], p, q[::-1]) for n, s, p, q in a1], "mate 2 reverse complements mate 1")


def check_host_removal(ksieve, work, samples, host=LAMBDA):
    """The outputs of a host removal run against the commands run by hand; samples: {name: [read files]}."""
    oracle = os.path.join(work, "oracle")
    os.makedirs(oracle)
    host_ksf = os.path.join(oracle, "host.ksf")
    subprocess.run([ksieve, "build", "-q", "--expected", "auto", "-o", host_ksf, host], check=True)
    check(same_file(host_ksf, os.path.join(work, "results", "host", "host.ksf")), "the merged host parts equal one build")
    for sample, reads in samples.items():
        reads = [os.path.join(work, r) for r in reads]
        paired = len(reads) == 2
        outs = [os.path.join(oracle, f"{sample}_{m}.fq") for m in (1, 2)][: len(reads)]
        stats = os.path.join(oracle, f"{sample}.json")
        cmd = [ksieve, "classify", "-q", "-f", host_ksf] + (["--paired"] if paired else []) + reads + \
            ["--novel", outs[0]] + (["--novel2", outs[1]] if paired else []) + ["--stats", stats]
        subprocess.run(cmd, check=True)
        clean = [os.path.join(work, "results", "clean", f"{sample}_R{m}.fq.gz") for m in (1, 2)] if paired else \
            [os.path.join(work, "results", "clean", f"{sample}.fq.gz")]
        for mine, ref in zip(clean, outs):
            check(gz_bytes(mine) == open(ref, "rb").read(), f"{os.path.basename(mine)} equals classify against a one-job host filter")
        mine = json.load(open(os.path.join(work, "results", "stats", f"{sample}.stats.json")))
        ref = json.load(open(stats))
        check(mine["sample"] == sample and mine["known"] == ref["known"] and mine["novel"] == ref["novel"],
              f"stats of {sample}")
        check(mine["paired"] == paired and 0 < ref["novel"] < ref["reads"], f"sample {sample} holds known and novel reads")
        # the job reserved mem_mb 512 (mem_mb_base; the host filter adds less than 1 MiB): ksieve kept within 9/10
        check(mine["memory_limit"] == (512 * 9 // 10) << 20,
              f"{sample}: memory_limit {mine['memory_limit']} is the job's mem_mb 512 less a tenth")
        check(mine["units"] == sum(1 for _ in gzip.open(reads[0], "rt")) // 4, f"{sample}: every read or pair classified")
        sample_ksf = os.path.join(oracle, f"{sample}.ksf")
        subprocess.run([ksieve, "build", "-q", "--expected", "1e6", "-o", sample_ksf] + clean, check=True)
        check(same_file(sample_ksf, os.path.join(work, "results", "filters", f"{sample}.ksf")),
              f"the filter of {sample} is a build of its clean reads")
    for sample, row in multiqc_rows(os.path.join(work, "results", "multiqc", "multiqc_data"), "multiqc_ksieve").items():
        mine = json.load(open(os.path.join(work, "results", "stats", f"{sample}.stats.json")))
        check(row == {"novel": mine["novel"], "known": mine["known"]}, f"MultiQC row of {sample}")
    merged = os.path.join(oracle, "all.ksf")
    subprocess.run([ksieve, "merge", "-q", "-o", merged] +
                   [os.path.join(work, "results", "filters", f"{s}.ksf") for s in samples], check=True)
    check(same_file(merged, os.path.join(work, "results", "all_samples.ksf")), "all_samples.ksf is the merge")
    check(not [f for f in os.listdir(os.path.join(work, "results", "host")) if re.fullmatch(r"host\.\d+\.ksf", f)],
          "the host parts are temporary")


def jobs_wrote(work, jobs):
    for kind in ("logs", "benchmarks"):
        found = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(work, kind)) for f in fs]
        check(len(found) == jobs, f"every job wrote its {kind[:-1]} ({len(found)} of {jobs} jobs)")


def check_snakemake_demo(ksieve, env):
    work = tempfile.mkdtemp(prefix="ksieve-smk-")
    r = snakemake(SNAKEFILE, ["--cores", "2", "--config", "demo=true"], work, env)
    if check(r.returncode == 0, "snakemake run (demo: true)"):
        check_demo_reads(work)
        check_host_removal(ksieve, work, {"A": ["reads/A_R1.fq.gz", "reads/A_R2.fq.gz"], "B": ["reads/B.fq.gz"]})
        # 3 demo read files, 4 host parts, their merge, 2 classify, 2 sample filters, their merge, MultiQC
        jobs_wrote(work, 3 + 4 + 1 + 2 + 2 + 1 + 1)
        check_screen(ksieve, work, env)
    shutil.rmtree(work, ignore_errors=True)


def check_own_sheet(ksieve, env):
    """A sheet in the working directory naming read files of one's own, without demo."""
    work = tempfile.mkdtemp(prefix="ksieve-smk-own-")
    os.makedirs(os.path.join(work, "in"))
    shutil.copy(os.path.join(DATA, "reads.fq.gz"), os.path.join(work, "in", "s.fq.gz"))
    with open(os.path.join(work, "sheet.tsv"), "w") as f:
        f.write("sample\tfastq_1\tfastq_2\nsolo\tin/s.fq.gz\t\n")
    r = snakemake(SNAKEFILE, ["--cores", "2", "--config", f"host={LAMBDA}", "sample_sheet=sheet.tsv", "parts=2"],
                  work, env)
    if check(r.returncode == 0, "snakemake run on a sheet of one's own"):
        check_host_removal(ksieve, work, {"solo": ["in/s.fq.gz"]})
    shutil.rmtree(work, ignore_errors=True)


def refused(work, env, config, sheet, words, what):
    """A dry run with this configuration (and sample sheet) fails, its message naming every word."""
    args = ["-n", "--cores", "1", "--config"] + config
    if sheet is not None:
        with open(os.path.join(work, "sheet.tsv"), "w") as f:
            f.write(sheet)
        args.append("sample_sheet=sheet.tsv")
    r = snakemake(SNAKEFILE, args, work, env, quiet=True)
    out = r.stdout + r.stderr
    check(r.returncode != 0 and all(w in out for w in words), f"{what} is refused, naming {words}" +
          ("" if r.returncode != 0 else " (it ran)") + ("" if r.returncode == 0 else f": {out[-600:]}"))


def check_snakemake_refusals(env):
    work = tempfile.mkdtemp(prefix="ksieve-smk-refused-")
    header = "sample\tfastq_1\tfastq_2\n"
    refused(work, env, [f"host={LAMBDA}"], None, ["MissingInputException", "reads/A_R1.fq.gz"],
            "a sample whose reads are missing (without demo)")
    refused(work, env, ["parts=4"], None, ["field host"], "no host and no demo")
    refused(work, env, ["demo=true", "parts=0"], None, ["field parts"], "parts 0")
    refused(work, env, ["demo=true"], header + "A B\tr.fq.gz\t\n", ["sheet.tsv, line 2", "field sample"],
            "a sample name with a space")
    refused(work, env, ["demo=true"], "sample\tfastq_1\tfastq_3\nA\tr.fq.gz\tx\n", ["sheet.tsv, line 2", "fastq_3"],
            "a column the sheet may not have")
    refused(work, env, ["demo=true"], header + "A\t\t\n", ["sheet.tsv, line 2", "fastq_1"], "a sample without reads")
    refused(work, env, ["demo=true"], header + "A\ta.fq.gz\t\nA\tb.fq.gz\t\n", ["sheet.tsv, line 3", "field sample"],
            "a sample twice")
    shutil.rmtree(work, ignore_errors=True)


def check_screen(ksieve, work, env):
    """Screening on the demo's working directory (its reads are there already)."""
    r = snakemake(SCREEN, ["--cores", "2", "--config", "demo=true"], work, env)
    if not check(r.returncode == 0, "screen.smk run (demo: true)"):
        return
    screen = os.path.join(work, "results", "screen")
    oracle = os.path.join(work, "oracle", "samples.ksf")
    subprocess.run([ksieve, "merge", "-q", "--label-inputs", "-o", oracle] +
                   [os.path.join(screen, "filters", f"{s}.ksf") for s in ("A", "B")], check=True)
    check(same_file(oracle, os.path.join(screen, "samples.ksf")), "screen: the labeled filter is the labeled merge")
    for sample, other in (("A", "B"), ("B", "A")):
        rows = [l.rstrip("\n").split("\t") for l in gzip.open(os.path.join(screen, f"{sample}.report.tsv.gz"), "rt")]
        check(rows[0] == ["read_id", "kmers", "hits", "class", "label"], "screen: the report has a label column")
        labels = [row[4] for row in rows[1:]]
        check(other not in labels and labels.count(sample) > len(labels) // 2,
              f"screen: {sample}'s reads carry {sample} or ambiguous, never {other}")
    bars = multiqc_rows(os.path.join(screen, "multiqc", "multiqc_data"), "multiqc_ksieve_classify_labels")
    check(sorted(bars) == ["A", "B"], "screen: MultiQC has a bar for each sample")
    for sample, got in bars.items():
        stats = json.load(open(os.path.join(screen, f"{sample}.stats.json")))
        want = dict(stats["labels"], novel=stats["novel"])
        check(got == {k: float(v) for k, v in want.items()}, f"screen: MultiQC bars of {sample} ({got} != {want})")


# ---------------------------------------------------------------------------------------- command lines


def shape(command):
    """A ksieve command line with its paths replaced by P (consecutive paths as one), the thread count by N
    and the memory by M; the values of the other options are kept."""
    literal = {"--expected", "--part", "--sampling", "-k", "--fpr", "--type", "--min-hits", "--min-hit-fraction",
               "--min-count"}
    tokens = command.split()
    out = tokens[:2]
    i = 2
    while i < len(tokens):
        t = tokens[i]
        if t.startswith("-"):
            out.append(t)
            if t in literal | {"-t", "--max-memory"} and i + 1 < len(tokens):
                value = {"-t": "N", "--max-memory": "M"}.get(t, re.sub(r"^\d+/\d+$", "I/S", tokens[i + 1]))
                out.append(value)
                i += 1
        elif out[-1] != "P":
            out.append("P")
        i += 1
    return " ".join(out)


def snakemake_shapes(env, samples_filter="merge"):
    """The shapes of the ksieve commands of a dry run of the Snakefile (demo: true)."""
    work = tempfile.mkdtemp(prefix="ksieve-smk-dry-")
    r = snakemake(SNAKEFILE, ["-n", "-p", "--cores", "2", "--config", "demo=true", f"samples_filter={samples_filter}"],
                  work, env)
    shutil.rmtree(work, ignore_errors=True)
    check(r.returncode == 0, "snakemake dry run")
    lines = [l.strip() for l in r.stdout.splitlines() if l.strip().startswith("ksieve ")]
    memory = {m for l in lines for m in re.findall(r"--max-memory (\S+)", l)}
    # every job of the dry run asks for mem_mb_base (512, its inputs not made yet): ksieve gets 9/10 of it
    check(len(lines) > 0 and memory == {f"{512 * 9 // 10}M"} and all("--max-memory" in l for l in lines),
          f"every Snakemake job passes --max-memory, its mem_mb less a tenth ({sorted(memory)})")
    check(all(re.search(r" -t \d+ ", l) for l in lines), "every Snakemake job passes -t {threads}")
    return {shape(l.split(" 2>")[0]) for l in lines}


def check_module_resources():
    """Every module passes -t task.cpus and (but info) --max-memory: task.memory in MiB less a tenth."""
    for cpus, memory_mb in ((6, 36864), (2, 512)):
        for module, command in nextflow_layout.module_commands(cpus, memory_mb).items():
            check(f" -t {cpus} " in command, f"module {module} passes -t task.cpus: {command}")
            want = [] if module == "info" else [f"{memory_mb * 9 // 10}M"]
            check(re.findall(r"--max-memory (\S+)", command) == want,
                  f"module {module} passes --max-memory {want} for {memory_mb} MiB: {command}")


def main():
    ksieve = os.path.abspath(sys.argv[1])
    env = dict(os.environ)
    bindir = tempfile.mkdtemp(prefix="ksieve-bin-")
    os.symlink(ksieve, os.path.join(bindir, "ksieve"))
    env["PATH"] = bindir + os.pathsep + env["PATH"]

    for snakefile in (SNAKEFILE, SCREEN):
        lint = snakemake(snakefile, ["--lint", "--config", "demo=true"], bindir, env)
        check(lint.returncode == 0 and "good condition" in lint.stdout + lint.stderr,
              f"snakemake --lint is clean: {os.path.basename(snakefile)}")
    check_snakemake_refusals(env)
    check_snakemake_demo(ksieve, env)
    check_own_sheet(ksieve, env)

    version = re.search(r"project\(ksieve VERSION ([\d.]+)", open(os.path.join(ROOT, "CMakeLists.txt")).read()).group(1)
    prepared, _ = nextflow_layout.check_nextflow(check, version)
    for samples_filter in ("merge", "intersect"):
        smk = snakemake_shapes(env, samples_filter)
        nf = {shape(c) for c in nextflow_layout.nextflow_commands(prepared, samples_filter)}
        check(smk == nf, f"Nextflow and Snakemake run the same ksieve commands ({samples_filter}):\n  snakemake: " +
              "\n             ".join(sorted(smk)) + "\n  nextflow:  " + "\n             ".join(sorted(nf)))
        check(len(nf) == 5 + (samples_filter == "intersect"),
              "five command shapes (host part, merge, classify paired and single-end, sample build; and intersect)")
        check(any(c.startswith(f"ksieve {samples_filter} ") for c in smk), f"the sample filters: ksieve {samples_filter}")
    check_module_resources()

    shutil.rmtree(bindir, ignore_errors=True)
    if failures:
        print(f"workflows: {len(failures)} checks failed", file=sys.stderr)
        sys.exit(1)
    print("workflows: all checks passed")


if __name__ == "__main__":
    main()
