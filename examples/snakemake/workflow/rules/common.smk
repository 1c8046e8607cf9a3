# The configuration and the sample sheet of the ksieve workflows, each checked against its schema; the
# samples' read files, the jobs' memory, and the reads of the demo (demo: true).
import csv
import gzip
import os
import re

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

# examples/snakemake (config/ holds the demo's sheet) and the bundled data of the ksieve repository
WORKFLOW_ROOT = os.path.normpath(os.path.join(workflow.basedir, ".."))
BUNDLED = os.path.normpath(os.path.join(WORKFLOW_ROOT, "..", "data"))


def schema_error(error, what):
    """The WorkflowError of validate() restated: the field of `what` that failed its schema, and why."""
    text = str(error)
    why = re.search(r"^ValidationError: (.*)$", text, re.M)
    where = re.search(r"^On instance((?:\[[^\]]*\])*):$", text, re.M)
    if not why:
        return WorkflowError(f"{what}: {text}")
    field = ".".join(re.findall(r"\['?([^'\]]*)'?\]", where.group(1))) if where else ""
    return WorkflowError(f"{what}, field {field or '(the whole record)'}: {why.group(1)}\n\n{text}")


def find_config_path(path):
    """A relative path from the working directory, else from the workflow's directory."""
    if os.path.isabs(path) or os.path.exists(path):
        return path
    return os.path.join(WORKFLOW_ROOT, path)


def read_sample_sheet(path):
    """{sample: {"fastq_1": ..., "fastq_2": ...}} of a tab-separated sheet; empty cells are absent."""
    samples = {}
    with open(path, newline="") as f:
        for line, row in enumerate(csv.DictReader(f, delimiter="\t"), start=2):
            if None in row:
                raise WorkflowError(f"sample sheet {path}, line {line}: more cells than columns")
            row = {k: v.strip() for k, v in row.items() if v is not None and v.strip()}
            try:
                validate(row, schema="../schemas/samples.schema.yaml", set_default=False)
            except WorkflowError as e:
                raise schema_error(e, f"sample sheet {path}, line {line}") from None
            if row["sample"] in samples:
                raise WorkflowError(f"sample sheet {path}, line {line}, field sample: {row['sample']} twice")
            samples[row["sample"]] = row
    if not samples:
        raise WorkflowError(f"sample sheet {path}: no samples")
    return samples


# --config demo=true on the command line gives the string "true"
if str(config.get("demo")).lower() in ("true", "false"):
    config["demo"] = str(config["demo"]).lower() == "true"
try:
    validate(config, schema="../schemas/config.schema.yaml", set_default=False)
except WorkflowError as e:
    raise schema_error(e, "config") from None

DEMO = config["demo"]
HOST = config["host"] or os.path.join(BUNDLED, "lambda.fa.gz")
SAMPLES = read_sample_sheet(find_config_path(config["sample_sheet"]))
PAIRED = [s for s, row in SAMPLES.items() if "fastq_2" in row]
SINGLE = [s for s, row in SAMPLES.items() if "fastq_2" not in row]
THREADS = config["threads"]
MEM_BASE = config["mem_mb_base"]


def one_of(names):
    """A wildcard constraint matching exactly these names (nothing where there are none)."""
    return "|".join(names) if names else "(?!)"


def read_files(sample):
    """The read files of a sample: [fastq_1] or [fastq_1, fastq_2]."""
    row = SAMPLES[sample]
    return [row["fastq_1"]] + ([row["fastq_2"]] if "fastq_2" in row else [])


def size_mb(paths):
    """MiB of the files that exist (0 before they are made: Snakemake asks again when the job is ready)."""
    paths = [paths] if isinstance(paths, str) else paths
    return sum(os.path.getsize(p) for p in paths if os.path.exists(p)) / 2**20


def mem_filters(wildcards, input):
    """classify and merge hold their filters (and merge its output, at most their sum) in memory."""
    return sum((MEM_BASE, int(2 * size_mb(input.filters))))


def mem_build(wildcards, input):
    """build: a filter of a few bytes per distinct k-mer; compressed input holds about 4 bases per byte."""
    return sum((MEM_BASE, int(8 * size_mb(input.seqs))))


def max_memory(wildcards, resources):
    """ksieve's --max-memory of a job: its mem_mb less a tenth, since the scheduler also counts the shell
    around ksieve and the page cache of the files it writes (the Nextflow modules keep the same margin)."""
    return f"{int(resources.mem_mb * 0.9)}M"


def clean_reads(wildcards):
    """The clean read files of a sample (one or two)."""
    s = wildcards.sample
    return [f"results/clean/{s}_R1.fq.gz", f"results/clean/{s}_R2.fq.gz"] if s in PAIRED else [f"results/clean/{s}.fq.gz"]


# demo: true - each read file of the sheet: (sample, mate). The samples take turns at two bundled reads each.
DEMO_FILES = {path: (s, m) for s in SAMPLES for m, path in enumerate(read_files(s), start=1)}


COMPLEMENT = str.maketrans("ACGTNacgtn", "TGCANtgcan")


def demo_reads(input, output, log, params):
    """demo: true - writes a sample's share of the bundled reads (params.of: sample and mate; mate 2
    reverse complemented, under the same name)."""
    bundled, out, log = input[0], output[0], log[0]
    sample, mate = params.of
    index, count = list(SAMPLES).index(sample), len(SAMPLES)
    with gzip.open(bundled, "rt") as f:
        lines = f.read().splitlines()
    written = 0
    with gzip.open(out, "wt") as o:
        for r in range(len(lines) // 4):
            if (r // 2) % count != index:
                continue
            name, seq, plus, qual = lines[4 * r : 4 * r + 4]
            if mate == 2:
                seq, qual = seq.translate(COMPLEMENT)[::-1], qual[::-1]
            o.write(f"{name}\n{seq}\n{plus}\n{qual}\n")
            written += 1
    with open(log, "w") as f:
        print(f"{out}: {written} reads of {bundled} (sample {sample}, mate {mate})", file=f)
