#!/usr/bin/env python3
"""End-to-end test of the workflow examples.

1. `snakemake --lint` finds nothing to say about examples/snakemake/Snakefile.
2. The Snakemake example runs end to end with the ksieve under test; its outputs equal those of the same
   commands run by hand (oracle: a host filter built in one job, classify run directly), the merged
   sample filter equals a merge of the sample filters, and MultiQC's data table lists each sample's
   known and novel reads as its --stats says.
3. The Nextflow modules run the same ksieve command lines as the Snakemake rules (options and their
   values; file names aside), rendered with the resources and ext.args of examples/nextflow/nextflow.config.

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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMK = os.path.join(ROOT, "examples", "snakemake")
NF = os.path.join(ROOT, "examples", "nextflow")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def run(cmd, cwd, env):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-4000:], r.stderr[-4000:], file=sys.stderr)
    return r


def gz_bytes(path):
    with gzip.open(path, "rb") as f:
        return f.read()


# Options whose values are compared literally; every other value and positional argument is a path.
LITERAL = {"-t", "--expected", "--part", "--sampling", "-k", "--fpr", "--type", "--min-hits",
           "--min-hit-fraction", "--min-count"}


def shape(command):
    """A ksieve command line with its paths replaced by P (consecutive paths as one)."""
    tokens = command.split()
    out = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.startswith("-"):
            out.append(t)
            if t in LITERAL and i + 1 < len(tokens):
                v = tokens[i + 1]
                out.append(re.sub(r"^\d+/\d+$", "I/S", v))
                i += 1
        elif not out or out[-1] != "P" or len(out) < 3:
            out.append("P" if len(out) >= 2 else t)
        i += 1
    return " ".join(out)


def snakemake_shapes(ksieve_dir, env):
    work = tempfile.mkdtemp(prefix="ksieve-smk-dry-")
    r = run(["snakemake", "-n", "-p", "--cores", "2", "--snakefile", os.path.join(SMK, "Snakefile"),
             "--directory", work], work, env)
    shutil.rmtree(work, ignore_errors=True)
    check(r.returncode == 0, "snakemake dry run")
    lines = [l.strip() for l in r.stdout.splitlines() if l.strip().startswith("ksieve ")]
    return {shape(l.split(" 2>")[0]) for l in lines}


def nextflow_shapes():
    config = open(os.path.join(NF, "nextflow.config")).read()
    ext_args = dict(re.findall(r"withName: '(\w+)' \{\s*ext\.args\s*=\s*'([^']*)'", config))
    cpus = dict(re.findall(r"withLabel: (\w+) \{ cpus = (\d+) \}", config))
    main = open(os.path.join(NF, "main.nf")).read()
    aliases = re.findall(r"include \{ (\w+) as (\w+)\s*\} from '\./modules/ksieve/(\w+)/main'", main)
    aliases += [(m, m, m.split("_")[1].lower()) for m in re.findall(r"include \{ (\w+)\s+\} from", main)]
    shapes = set()
    for _, alias, module in aliases:
        text = open(os.path.join(NF, "modules", "ksieve", module, "main.nf")).read()
        label = re.search(r"label '(\w+)'", text).group(1)
        script = text.split("script:")[1].split("stub:")[0]
        line = next(l.strip() for l in script.splitlines() if l.strip().startswith("ksieve "))
        line = line.replace("${task.cpus}", cpus[label]).replace("${args}", ext_args.get(alias, ""))
        line = line.replace("${part}", "--part 0/4" if alias.endswith("_HOST") and module == "build" else "")
        line = re.sub(r"\$\{[^}]*\}[^\s]*", "PATH", line)
        shapes.add(shape(line))
    return shapes


def main():
    ksieve = os.path.abspath(sys.argv[1])
    env = dict(os.environ)
    bindir = tempfile.mkdtemp(prefix="ksieve-bin-")
    os.symlink(ksieve, os.path.join(bindir, "ksieve"))
    env["PATH"] = bindir + os.pathsep + env["PATH"]

    lint = run(["snakemake", "--lint", "--snakefile", os.path.join(SMK, "Snakefile")], bindir, env)
    check(lint.returncode == 0 and "good condition" in lint.stdout + lint.stderr, "snakemake --lint is clean")

    work = tempfile.mkdtemp(prefix="ksieve-smk-")
    r = run(["snakemake", "--cores", "2", "--snakefile", os.path.join(SMK, "Snakefile"), "--directory", work],
            work, env)
    check(r.returncode == 0, "snakemake run")
    if r.returncode == 0:
        oracle = os.path.join(work, "oracle")
        os.makedirs(oracle)
        host = os.path.join(ROOT, "examples", "data", "lambda.fa.gz")
        subprocess.run([ksieve, "build", "-q", "--expected", "auto", "-o", os.path.join(oracle, "host.ksf"), host],
                       check=True)
        mqc_table = None
        for sample in ["A", "B"]:
            r1, r2 = (os.path.join(work, "reads", f"{sample}_R{m}.fq.gz") for m in (1, 2))
            o1, o2, st = (os.path.join(oracle, n) for n in (f"{sample}_1.fq", f"{sample}_2.fq", f"{sample}.json"))
            subprocess.run([ksieve, "classify", "-q", "-f", os.path.join(oracle, "host.ksf"), "--paired", r1, r2,
                            "--novel", o1, "--novel2", o2, "--known", os.path.join(oracle, "k.fq"),
                            "--stats", st], check=True)
            for m, o in ((1, o1), (2, o2)):
                check(gz_bytes(os.path.join(work, "clean", f"{sample}_R{m}.fq.gz")) == open(o, "rb").read(),
                      f"clean/{sample}_R{m} equals classify against a one-job host filter")
            mine = json.load(open(os.path.join(work, "stats", f"{sample}.json")))
            ref = json.load(open(st))
            check(mine["sample"] == sample and mine["known"] == ref["known"] and mine["novel"] == ref["novel"],
                  f"stats of {sample}")
            check(0 < ref["novel"] < ref["reads"], f"sample {sample} holds known and novel reads")
            # every read pair of the input is in exactly one output of the oracle run: nothing lost
            total = sum(1 for _ in gzip.open(r1, "rt")) // 4
            check(mine["units"] == total, f"{sample}: every pair classified")
        data = os.path.join(work, "multiqc", "multiqc_data")
        tables = [f for f in os.listdir(data) if f.startswith("multiqc_ksieve")] if os.path.isdir(data) else []
        check(len(tables) == 1, "MultiQC made a ksieve table")
        if tables:
            rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(data, tables[0]))]
            header = rows[0]
            for row in rows[1:]:
                mine = json.load(open(os.path.join(work, "stats", f"{row[0]}.json")))
                got = dict(zip(header[1:], (float(x) for x in row[1:])))
                check(got == {"novel": mine["novel"], "known": mine["known"]}, f"MultiQC row of {row[0]}")
            check(sorted(r[0] for r in rows[1:]) == ["A", "B"], "MultiQC rows are the samples")
        # the gathered sample filter is the merge of the sample filters
        subprocess.run([ksieve, "merge", "-q", "-o", os.path.join(oracle, "all.ksf"),
                        os.path.join(work, "filters", "A.ksf"), os.path.join(work, "filters", "B.ksf")], check=True)
        check(open(os.path.join(oracle, "all.ksf"), "rb").read() ==
              open(os.path.join(work, "filters", "all_samples.ksf"), "rb").read(), "all_samples.ksf is the merge")
        logs = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(work, "logs")) for f in fs]
        check(len(logs) >= 9, "every job wrote its log")

    smk, nf = snakemake_shapes(bindir, env), nextflow_shapes()
    check(smk == nf, "Nextflow and Snakemake run the same ksieve commands:\n  snakemake: " +
          "\n             ".join(sorted(smk)) + "\n  nextflow:  " + "\n             ".join(sorted(nf)))
    check(len(nf) == 4, "four command shapes (host part, merge, classify, sample build)")

    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(bindir, ignore_errors=True)
    if failures:
        sys.exit(1)
    print("workflows: all checks passed")


if __name__ == "__main__":
    main()
