#!/usr/bin/env python3
"""Tests of the workflow examples (examples/snakemake, examples/nextflow).

1. `snakemake --lint` finds nothing to say about examples/snakemake/Snakefile.
2. The Snakemake example runs end to end (demo: true) with the ksieve under test; its outputs equal those
   of the same commands run by hand (oracle: a host filter built in one job, classify run directly), the
   merged sample filter equals a merge of the sample filters, MultiQC's data table lists each sample's known
   and novel reads as its stats say, every job wrote its log and the host parts were temporary.
3. Without demo: true a missing sample's reads are an error (nothing is made up); a sample may not take the
   name of another filter, and the other filters (host.ksf, host.I.ksf, all_samples.ksf) are each made by
   their own rule, never taken for a sample's filter.
4. The screening example (examples/snakemake/screen.smk) lints clean and runs end to end (demo: true): the
   labeled filter equals a merge --label-inputs of the sample filters, no read of a sample is given another
   sample's label (a sample's own filter holds all its k-mers: at most a tie, `ambiguous`), and MultiQC's
   data table lists each of the two samples' reads per label as its stats say.
5. The Nextflow modules have what nf-core requires (process, tag, label, input, output with versions,
   when, script, stub, ext.args and ext.prefix; a meta.yml naming the same inputs and outputs), the labels
   give cpus, memory and time, and the ksieve command lines of the modules equal those of the Snakemake
   rules (options and their values; file names aside), rendered with the resources and ext.args of
   examples/nextflow/nextflow.config.

Usage: test_workflows.py KSIEVE_BINARY
"""
import fnmatch
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMK = os.path.join(ROOT, "examples", "snakemake")
SNAKEFILE = os.path.join(SMK, "Snakefile")
NF = os.path.join(ROOT, "examples", "nextflow")
LAMBDA = os.path.join(ROOT, "examples", "data", "lambda.fa.gz")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


def run(cmd, cwd, env, quiet=False):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0 and not quiet:
        print(r.stdout[-4000:], r.stderr[-4000:], file=sys.stderr)
    return r


def snakemake(args, cwd, env, quiet=False):
    return run(["snakemake", "--snakefile", SNAKEFILE, "--directory", cwd] + args, cwd, env, quiet)


def gz_bytes(path):
    with gzip.open(path, "rb") as f:
        return f.read()


# ---------------------------------------------------------------------------------------------- Snakemake

SCREEN = os.path.join(SMK, "screen.smk")


def check_screen_run(ksieve, env):
    work = tempfile.mkdtemp(prefix="ksieve-screen-")
    lint = run(["snakemake", "--snakefile", SCREEN, "--directory", work, "--lint", "--config", "demo=true"],
               work, env)
    check(lint.returncode == 0 and "good condition" in lint.stdout + lint.stderr, "screen.smk --lint is clean")
    r = run(["snakemake", "--snakefile", SCREEN, "--directory", work, "--cores", "2", "--config", "demo=true"],
            work, env)
    if not check(r.returncode == 0, "screen.smk run (demo: true)"):
        return
    filters = [os.path.join(work, "filters", f"{s}.ksf") for s in ("A", "B")]
    oracle = os.path.join(work, "oracle.ksf")
    subprocess.run([ksieve, "merge", "-q", "--label-inputs", "-o", oracle] + filters, check=True)
    check(open(oracle, "rb").read() == open(os.path.join(work, "filters", "samples.ksf"), "rb").read(),
          "screen: the labeled filter is the labeled merge of the sample filters")
    for sample, other in (("A", "B"), ("B", "A")):
        rows = [l.rstrip("\n").split("\t") for l in gzip.open(os.path.join(work, "screen", f"{sample}.report.tsv.gz"), "rt")]
        check(rows[0] == ["read_id", "kmers", "hits", "class", "label"], "screen: the report has a label column")
        labels = [row[4] for row in rows[1:]]
        check(other not in labels and labels.count(sample) > len(labels) // 2,
              f"screen: {sample}'s reads carry {sample} or ambiguous, never {other}")
    data = os.path.join(work, "multiqc", "multiqc_data")
    tables = [f for f in os.listdir(data) if f.startswith("multiqc_ksieve_classify_labels")] \
        if os.path.isdir(data) else []
    if check(len(tables) == 1, "screen: MultiQC made the per-label table"):
        rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(data, tables[0]))]
        header = rows[0]
        check(sorted(r[0] for r in rows[1:]) == ["A", "B"], "screen: MultiQC has a bar for each sample")
        for row in rows[1:]:
            stats = json.load(open(os.path.join(work, "screen", f"{row[0]}.stats.json")))
            want = dict(stats["labels"], novel=stats["novel"])
            got = dict(zip(header[1:], (float(x) for x in row[1:])))
            check(got == {k: float(v) for k, v in want.items()}, f"screen: MultiQC bars of {row[0]} ({got} != {want})")
    shutil.rmtree(work, ignore_errors=True)


def check_snakemake_run(ksieve, env):
    work = tempfile.mkdtemp(prefix="ksieve-smk-")
    r = snakemake(["--cores", "2", "--config", "demo=true"], work, env)
    if not check(r.returncode == 0, "snakemake run (demo: true)"):
        return
    oracle = os.path.join(work, "oracle")
    os.makedirs(oracle)
    subprocess.run([ksieve, "build", "-q", "--expected", "auto", "-o", os.path.join(oracle, "host.ksf"), LAMBDA],
                   check=True)
    check(open(os.path.join(oracle, "host.ksf"), "rb").read() ==
          open(os.path.join(work, "filters", "host.ksf"), "rb").read(), "the merged host parts equal one build")
    for sample in ["A", "B"]:
        r1, r2 = (os.path.join(work, "reads", f"{sample}_R{m}.fq.gz") for m in (1, 2))
        o1, o2, st = (os.path.join(oracle, n) for n in (f"{sample}_1.fq", f"{sample}_2.fq", f"{sample}.json"))
        subprocess.run([ksieve, "classify", "-q", "-f", os.path.join(oracle, "host.ksf"), "--paired", r1, r2,
                        "--novel", o1, "--novel2", o2, "--known", os.path.join(oracle, "k.fq"),
                        "--stats", st], check=True)
        for m, o in ((1, o1), (2, o2)):
            check(gz_bytes(os.path.join(work, "clean", f"{sample}_R{m}.fq.gz")) == open(o, "rb").read(),
                  f"clean/{sample}_R{m} equals classify against a one-job host filter")
        mine = json.load(open(os.path.join(work, "stats", f"{sample}.stats.json")))
        ref = json.load(open(st))
        check(mine["sample"] == sample and mine["known"] == ref["known"] and mine["novel"] == ref["novel"],
              f"stats of {sample}")
        check(0 < ref["novel"] < ref["reads"], f"sample {sample} holds known and novel reads")
        total = sum(1 for _ in gzip.open(r1, "rt")) // 4
        check(mine["units"] == total, f"{sample}: every pair classified")
    data = os.path.join(work, "multiqc", "multiqc_data")
    tables = [f for f in os.listdir(data) if f.startswith("multiqc_ksieve")] if os.path.isdir(data) else []
    check(len(tables) == 1, "MultiQC made a ksieve table in multiqc/multiqc_data")
    if tables:
        rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(data, tables[0]))]
        header = rows[0]
        for row in rows[1:]:
            mine = json.load(open(os.path.join(work, "stats", f"{row[0]}.stats.json")))
            got = dict(zip(header[1:], (float(x) for x in row[1:])))
            check(got == {"novel": mine["novel"], "known": mine["known"]}, f"MultiQC row of {row[0]}")
        check(sorted(r[0] for r in rows[1:]) == ["A", "B"], "MultiQC rows are the samples")
    subprocess.run([ksieve, "merge", "-q", "-o", os.path.join(oracle, "all.ksf"),
                    os.path.join(work, "filters", "A.ksf"), os.path.join(work, "filters", "B.ksf")], check=True)
    check(open(os.path.join(oracle, "all.ksf"), "rb").read() ==
          open(os.path.join(work, "filters", "all_samples.ksf"), "rb").read(), "all_samples.ksf is the merge")
    logs = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(work, "logs")) for f in fs]
    check(len(logs) == 13, f"every job wrote its log ({len(logs)} logs of 13 jobs)")
    check(not [f for f in os.listdir(os.path.join(work, "filters")) if re.fullmatch(r"host\.\d+\.ksf", f)],
          "the host parts are temporary")
    shutil.rmtree(work, ignore_errors=True)


def check_snakemake_inputs(env):
    # without demo: true, a sample whose reads are missing is an error; nothing is made up
    work = tempfile.mkdtemp(prefix="ksieve-smk-missing-")
    r = snakemake(["-n", "--cores", "1", "--config", f"host={LAMBDA}"], work, env, quiet=True)
    check(r.returncode != 0 and "MissingInputException" in r.stdout + r.stderr and
          "reads/A_R1.fq.gz" in r.stdout + r.stderr, "a missing sample is an error")
    r = snakemake(["-n", "--cores", "1"], work, env, quiet=True)
    check(r.returncode != 0 and "host" in r.stdout + r.stderr, "no host and no demo: an error")
    # a sample may not take the name of another filter
    r = snakemake(["-n", "--cores", "1", "--config", "demo=true", "samples=[host]"], work, env, quiet=True)
    check(r.returncode != 0 and "sample name" in r.stdout + r.stderr, "a sample named host is refused")
    # the names of the other filters are no sample names: no rule makes a sample's outputs for them
    r = snakemake(["-n", "--cores", "1", "--config", "demo=true", "--", "stats/host.stats.json"], work, env,
                  quiet=True)
    check(r.returncode != 0 and "No rule to produce stats/host.stats.json" in r.stdout + r.stderr,
          "the sample wildcard does not match host")
    smk = open(SNAKEFILE).read()
    pattern = re.search(r'^SAMPLE_NAME = r"(.*)"$', smk, re.M)
    if check(pattern is not None and re.search(r"^    sample=SAMPLE_NAME,$", smk, re.M) is not None,
             "the sample wildcard is constrained to SAMPLE_NAME"):
        for name in ("host", "host.0", "host.12", "all_samples", "a/b", ""):
            check(re.fullmatch(pattern.group(1), name) is None, f"{name!r} is no sample name")
        for name in ("A", "sample_1", "hostA", "all-samples-2"):
            check(re.fullmatch(pattern.group(1), name) is not None, f"{name!r} is a sample name")
    shutil.rmtree(work, ignore_errors=True)


def snakemake_dry_run(env):
    """The ksieve command shapes of a dry run (demo: true); each filter is made by its own rule (the
    other filters' names are not taken for filters/{sample}.ksf, which would be ambiguous)."""
    work = tempfile.mkdtemp(prefix="ksieve-smk-dry-")
    r = snakemake(["-n", "-p", "--cores", "2", "--config", "demo=true"], work, env)
    shutil.rmtree(work, ignore_errors=True)
    check(r.returncode == 0, "snakemake dry run")
    made_by = re.findall(r"rule (\w+):\n(?:    .*\n)*?    output: ([^\n]*)", r.stdout)
    for target, rule in (("filters/host.ksf", "host_filter"), ("filters/host.2.ksf", "host_part"),
                         ("filters/all_samples.ksf", "combine_samples"), ("filters/A.ksf", "sample_filter")):
        check(any(rule == name and target in outputs.split(", ") for name, outputs in made_by),
              f"{target} is made by rule {rule}")
    lines = [l.strip() for l in r.stdout.splitlines() if l.strip().startswith("ksieve ")]
    return {shape(l.split(" 2>")[0]) for l in lines}


# ----------------------------------------------------------------------------------------------- Nextflow

# Options whose values are compared literally; every other value and positional argument is a path.
LITERAL = {"-t", "--expected", "--part", "--sampling", "-k", "--fpr", "--type", "--min-hits",
           "--min-hit-fraction", "--min-count"}


def shape(command):
    """A ksieve command line with its paths replaced by P (consecutive paths as one)."""
    tokens = command.split()
    out = tokens[:2]
    i = 2
    while i < len(tokens):
        t = tokens[i]
        if t.startswith("-"):
            out.append(t)
            if t in LITERAL and i + 1 < len(tokens):
                out.append(re.sub(r"^\d+/\d+$", "I/S", tokens[i + 1]))
                i += 1
        elif out[-1] != "P":
            out.append("P")
        i += 1
    return " ".join(out)


def split_operand(s):
    """The first operand of a Groovy expression (a string literal or a parenthesized one) and the rest."""
    s = s.lstrip()
    if s[0] in "\"'":
        end = s.index(s[0], 1)
        return s[: end + 1], s[end + 1:]
    if s[0] == "(":
        depth = 0
        for i, c in enumerate(s):
            depth += (c == "(") - (c == ")")
            if depth == 0:
                return s[: i + 1], s[i + 1:]
    raise ValueError("operand: " + s)


def groovy(expr, env):
    """The value of the expressions the module scripts use: literals, ternaries, `task.ext.X ?: default`."""
    expr = expr.strip()
    m = re.fullmatch(r"task\.ext\.(\w+) \?: (.*)", expr)
    if m:
        return env["ext." + m.group(1)] if env.get("ext." + m.group(1)) else groovy(m.group(2), env)
    m = re.match(r"(!?)([\w.]+) \? ", expr)
    if m:
        a, rest = split_operand(expr[m.end():])
        b, rest = split_operand(rest.lstrip()[1:])
        if rest.strip():
            raise ValueError("trailing: " + rest)
        cond = bool(env[m.group(2)]) != bool(m.group(1))
        return groovy(a if cond else b, env)
    if expr[0] == "(":
        return groovy(expr[1:-1], env)
    if expr[0] in "\"'":
        return re.sub(r"\$\{([^}]+)\}", lambda v: str(env.get(v.group(1), "PATH")), expr[1:-1])
    raise ValueError("expression: " + expr)


def render(script, env):
    """The ksieve command line of a module's script: block with the defs evaluated in env."""
    env = dict(env)
    for name, expr in re.findall(r"^\s*def (\w+) = (.*)$", script, re.M):
        env[name] = groovy(expr, env)
    line = next(l.strip() for l in script.splitlines() if l.strip().startswith("ksieve "))
    return groovy('"' + line + '"', env)


def config_blocks(config, kind):
    """{name: body} of the withLabel or withName blocks of nextflow.config."""
    return {m.group(1): m.group(2) for m in re.finditer(kind + r": '?([\w|]+)'? \{(.*?)\n    \}", config, re.S)}


def module_sections(text):
    """The directives and sections of a process, in order."""
    return re.findall(r"^    (tag|label|conda|container|input:|output:|when:|script:|stub:)", text, re.M)


def section(text, start, end):
    """The text of a process between two section headers ("" where the first is missing)."""
    if start not in text:
        return ""
    after = text.split(start, 1)[1]
    return after.split(end, 1)[0] if end else after


def check_module(path, is_ksieve, labels):
    text = open(path).read()
    name = os.path.relpath(path, NF)
    process = re.search(r"^process (\w+) \{", text, re.M)
    check(process is not None, f"{name}: a process")
    sections = module_sections(text)
    required = (["tag"] if is_ksieve else []) + ["label", "input:", "output:", "when:", "script:", "stub:"]
    check([s for s in sections if s in required] == required, f"{name}: sections {required} in order ({sections})")
    label = re.search(r"label '(\w+)'", text)
    check(label is not None and label.group(1) in labels, f"{name}: its label is defined in nextflow.config")
    inputs = section(text, "input:", "output:")
    outputs = section(text, "output:", "when:")
    script = section(text, "script:", "stub:")
    stub = section(text, "stub:", None)
    check('path "versions.yml"' in outputs and "emit: versions" in outputs, f"{name}: emits versions.yml")
    check("versions.yml" in script and "versions.yml" in stub, f"{name}: script and stub write versions.yml")
    check("task.ext.when" in section(text, "when:", "script:"), f"{name}: when: task.ext.when")
    check("task.ext.args" in script, f"{name}: honours ext.args")
    check("task.ext.prefix" in script, f"{name}: honours ext.prefix")
    if is_ksieve:
        check("task.ext.prefix" in stub, f"{name}: the stub honours ext.prefix")
        check(re.search(r"^\s*tuple val\(meta\), path\(", inputs, re.M) is not None,
              f"{name}: input tuple val(meta), path(...)")
    emits = {}
    for m in re.finditer(r"^\s*(.*?)\s*,\s*emit: (\w+)(.*)$", outputs, re.M):
        pattern = re.search(r'path\s*\(?\s*"([^"]+)"', m.group(1))
        emits[m.group(2)] = (pattern.group(1) if pattern else None, "optional: true" in m.group(3))
    for emit, (pattern, _) in emits.items():
        if pattern and emit != "multiqc" and emit != "versions":
            check(not fnmatch.fnmatch("S_mqc.json", pattern), f"{name}: {emit} ({pattern}) does not take *_mqc.json")
    if "stats" in emits:
        check(fnmatch.fnmatch("S.stats.json", emits["stats"][0]), f"{name}: stats pattern takes S.stats.json")
    meta_path = os.path.join(os.path.dirname(path), "meta.yml")
    if check(os.path.exists(meta_path), f"{name}: meta.yml beside it"):
        meta = yaml.safe_load(open(meta_path))
        for key in ("name", "description", "keywords", "tools", "input", "output", "authors"):
            check(key in meta and meta[key], f"{name}: meta.yml has {key}")
        check([list(o)[0] for o in meta.get("output") or []] == list(emits),
              f"{name}: meta.yml's outputs are the emits {list(emits)}")
        declared = [list(e)[0] for group in meta.get("input") or [] for e in group]
        used = re.findall(r"\b(?:val|path)\s*\(?(\w+)", inputs)
        check(declared == used, f"{name}: meta.yml's inputs {declared} are the module's {used}")
    return process.group(1) if process else None, emits


def nextflow_checks():
    config = open(os.path.join(NF, "nextflow.config")).read()
    labels = config_blocks(config, "withLabel")
    for label, body in labels.items():
        for key in ("cpus", "memory", "time"):
            check(re.search(rf"^\s*{key}\s*=", body, re.M) is not None, f"label {label} sets {key}")
    for d, _, files in os.walk(NF):
        for f in files:
            if f.endswith(".nf"):
                text = open(os.path.join(d, f)).read()
                check(re.search(r"dsl\s*=\s*2", text) is None, f"{f}: no obsolete dsl = 2")
    modules = {}
    for d in sorted(os.listdir(os.path.join(NF, "modules", "ksieve"))):
        modules[d] = check_module(os.path.join(NF, "modules", "ksieve", d, "main.nf"), True, labels)
    check_module(os.path.join(NF, "modules", "multiqc", "main.nf"), False, labels)
    check({"build", "classify", "merge"} <= set(modules), "build, classify and merge modules")
    classify = open(os.path.join(NF, "modules", "ksieve", "classify", "main.nf")).read()
    check("meta.single_end" in classify and "tuple val(meta2), path(filter)" in classify,
          "classify: single and paired reads, the filter as tuple val(meta2), path(filter)")
    check(modules.get("classify", (None, {}))[1].get("known", (None, False))[1], "classify: known reads optional")
    main = open(os.path.join(NF, "main.nf")).read()
    calls = re.findall(r"^\s*(KSIEVE_\w+|MULTIQC)\(", main, re.M)
    for call in calls:
        if call != "MULTIQC":
            check(f"{call}.out.versions" in main, f"main.nf collects the versions of {call}")
    check("MULTIQC(" in main and "ch_versions" in main.split("MULTIQC(")[1], "main.nf feeds MultiQC the versions")
    return config, main


def nextflow_shapes(config, main):
    names = config_blocks(config, "withName")
    labels = config_blocks(config, "withLabel")
    aliases = re.findall(r"include \{ (\w+) as (\w+)\s*\} from '\./modules/ksieve/(\w+)/main'", main)
    aliases += [(m, m, m.split("_")[1].lower()) for m in re.findall(r"include \{ (KSIEVE_\w+)\s+\} from", main)]
    shapes = set()
    for _, alias, module in aliases:
        text = open(os.path.join(NF, "modules", "ksieve", module, "main.nf")).read()
        label = re.search(r"label '(\w+)'", text).group(1)
        ext_args = next((re.search(r"ext\.args\s*=\s*'([^']*)'", body) for n, body in names.items()
                         if alias in n.split("|")), None)
        env = {"task.cpus": re.search(r"cpus\s*=\s*(\d+)", labels[label]).group(1),
               "ext.args": ext_args.group(1) if ext_args else "", "meta.id": "X", "meta.single_end": False,
               "meta.part": "0/4" if alias == "KSIEVE_BUILD_HOST" else None, "save_known": False}
        script = text.split("script:")[1].split("stub:")[0]
        shapes.add(shape(render(script, env)))
    return shapes


def main():
    ksieve = os.path.abspath(sys.argv[1])
    env = dict(os.environ)
    bindir = tempfile.mkdtemp(prefix="ksieve-bin-")
    os.symlink(ksieve, os.path.join(bindir, "ksieve"))
    env["PATH"] = bindir + os.pathsep + env["PATH"]

    lint = snakemake(["--lint", "--config", "demo=true"], bindir, env)
    check(lint.returncode == 0 and "good condition" in lint.stdout + lint.stderr, "snakemake --lint is clean")
    check_snakemake_inputs(env)
    check_snakemake_run(ksieve, env)
    check_screen_run(ksieve, env)

    config, main_nf = nextflow_checks()
    smk, nf = snakemake_dry_run(env), nextflow_shapes(config, main_nf)
    check(smk == nf, "Nextflow and Snakemake run the same ksieve commands:\n  snakemake: " +
          "\n             ".join(sorted(smk)) + "\n  nextflow:  " + "\n             ".join(sorted(nf)))
    check(len(nf) == 4, "four command shapes (host part, merge, classify, sample build)")

    shutil.rmtree(bindir, ignore_errors=True)
    if failures:
        print(f"workflows: {len(failures)} checks failed", file=sys.stderr)
        sys.exit(1)
    print("workflows: all checks passed")


if __name__ == "__main__":
    main()
