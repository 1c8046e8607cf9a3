# Which samples share each read's k-mers (cross-sample contamination, index hopping, shared strains),
# with ksieve's labeled filters:
#   snakemake --cores 2 --snakefile examples/snakemake/screen.smk --directory work \
#             --configfile examples/snakemake/screen.yaml --config samples='[A, B, C]'
#   snakemake ... --config demo=true         (the bundled example: reads of the lambda phage)
# Each sample's reads become a filter; the sample filters are merged into one labeled filter (each sample
# is a label, named by its filter's file name: merge --label-inputs); every sample is screened against it
# (a read's label is the sample whose k-mers it shares most, or ambiguous), and MultiQC draws one bar per
# sample, stacked by label.
import os
import re


configfile: os.path.join(workflow.basedir, "screen.yaml")


BUNDLED = os.path.join(workflow.basedir, "..", "data")
DEMO = bool(config.get("demo", False))
SAMPLES = [str(s) for s in config["samples"]]
# Sample names; "samples" names the labeled filter under filters/.
SAMPLE_NAME = r"(?!samples(?![A-Za-z0-9_-]))[A-Za-z0-9_-]+"
for s in SAMPLES:
    if not re.fullmatch(SAMPLE_NAME, s):
        raise ValueError(f"config: sample name {s!r}: use letters, digits, '_' and '-', not samples")
THREADS = int(config["threads"])
MEM_BASE = int(config["mem_mb_base"])


wildcard_constraints:
    sample=SAMPLE_NAME,


include: "rules/common.smk"


rule all:
    input:
        expand("screen/{sample}.report.tsv.gz", sample=SAMPLES),
        "multiqc/multiqc_report.html",


if DEMO:

    # Demo reads from the bundled reads: the samples take turns at two records each.
    rule demo_reads:
        input:
            os.path.join(BUNDLED, "reads.fq.gz"),
        output:
            "reads/{sample}.fq.gz",
        params:
            index=lambda wildcards: SAMPLES.index(wildcards.sample),
            samples=len(SAMPLES),
        log:
            "logs/demo_reads/{sample}.log",
        conda:
            "envs/ksieve.yaml"
        shell:
            "(gzip -dc {input} | awk -v n={params.samples} -v i={params.index} "
            "'int((NR - 1) / 8) % n == i' | gzip -c > {output}) 2> {log}"


rule sample_filter:
    input:
        seqs="reads/{sample}.fq.gz",
    output:
        "filters/{sample}.ksf",
    params:
        extra=config["sample_build_args"],
    threads: THREADS
    resources:
        mem_mb=mem_build,
    log:
        "logs/sample_filter/{sample}.log",
    conda:
        "envs/ksieve.yaml"
    shell:
        "ksieve build -q -t {threads} {params.extra} -o {output} {input.seqs} 2> {log}"


rule label_samples:
    input:
        filters=expand("filters/{sample}.ksf", sample=SAMPLES),
    output:
        "filters/samples.ksf",
    threads: THREADS
    resources:
        mem_mb=mem_filters,
    log:
        "logs/label_samples.log",
    conda:
        "envs/ksieve.yaml"
    shell:
        "ksieve merge -q -t {threads} --label-inputs -o {output} {input.filters} 2> {log}"


rule screen:
    input:
        filters="filters/samples.ksf",
        reads="reads/{sample}.fq.gz",
    output:
        report="screen/{sample}.report.tsv.gz",
        stats="screen/{sample}.stats.json",
        mqc="qc/{sample}_mqc.json",
    params:
        extra=config["screen_args"],
    threads: THREADS
    resources:
        mem_mb=mem_filters,
    log:
        "logs/screen/{sample}.log",
    conda:
        "envs/ksieve.yaml"
    shell:
        "ksieve classify -q -t {threads} {params.extra} -f {input.filters} {input.reads} "
        "--report {output.report} --stats {output.stats} --multiqc {output.mqc} "
        "--sample {wildcards.sample} 2> {log}"


rule multiqc:
    input:
        expand("qc/{sample}_mqc.json", sample=SAMPLES),
    output:
        html="multiqc/multiqc_report.html",
        data=directory("multiqc/multiqc_data"),
    log:
        "logs/multiqc.log",
    conda:
        "envs/ksieve.yaml"
    shell:
        "multiqc -q -f -o multiqc {input} 2> {log}"
