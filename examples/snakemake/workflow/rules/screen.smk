# Screening: a filter of each sample's reads, the labeled merge of them (a label per sample), and each
# sample's reads (paired-end or single-end) classified against it with a label per read.


rule screen_filter:
    input:
        seqs=lambda wildcards: read_files(wildcards.sample),
    output:
        "results/screen/filters/{sample}.ksf",
    params:
        max_memory=max_memory,
        extra=config["screen_build_args"],
    threads: THREADS
    resources:
        mem_mb=mem_build,
    log:
        "logs/screen/filter/{sample}.log",
    benchmark:
        "benchmarks/screen/filter/{sample}.tsv"
    conda:
        "../envs/ksieve.yaml"
    shell:
        "ksieve build -q -t {threads} --max-memory {params.max_memory} {params.extra} -o {output} {input.seqs} 2> {log}"


rule label_samples:
    input:
        filters=expand("results/screen/filters/{sample}.ksf", sample=SAMPLES),
    output:
        "results/screen/samples.ksf",
    params:
        max_memory=max_memory,
    threads: THREADS
    resources:
        mem_mb=mem_filters,
    log:
        "logs/screen/label_samples.log",
    benchmark:
        "benchmarks/screen/label_samples.tsv"
    conda:
        "../envs/ksieve.yaml"
    shell:
        "ksieve merge -q -t {threads} --max-memory {params.max_memory} --label-inputs -o {output} {input.filters} 2> {log}"


rule screen_paired:
    input:
        filters="results/screen/samples.ksf",
        r1=lambda wildcards: SAMPLES[wildcards.sample]["fastq_1"],
        r2=lambda wildcards: SAMPLES[wildcards.sample]["fastq_2"],
    output:
        report="results/screen/{sample}.report.tsv.gz",
        stats="results/screen/{sample}.stats.json",
        mqc="results/screen/qc/{sample}_mqc.json",
        mqc_general="results/screen/qc/{sample}_general_mqc.json",
    wildcard_constraints:
        sample=one_of(PAIRED),
    params:
        max_memory=max_memory,
        extra=config["screen_args"],
    threads: THREADS
    resources:
        mem_mb=mem_filters,
    log:
        "logs/screen/classify/{sample}.log",
    benchmark:
        "benchmarks/screen/classify/{sample}.tsv"
    conda:
        "../envs/ksieve.yaml"
    shell:
        "ksieve classify -q -t {threads} --max-memory {params.max_memory} {params.extra} -f {input.filters} --paired {input.r1} {input.r2} "
        "--report {output.report} --stats {output.stats} --multiqc {output.mqc} "
        "--sample {wildcards.sample} 2> {log}"


rule screen_single:
    input:
        filters="results/screen/samples.ksf",
        reads=lambda wildcards: SAMPLES[wildcards.sample]["fastq_1"],
    output:
        report="results/screen/{sample}.report.tsv.gz",
        stats="results/screen/{sample}.stats.json",
        mqc="results/screen/qc/{sample}_mqc.json",
        mqc_general="results/screen/qc/{sample}_general_mqc.json",
    wildcard_constraints:
        sample=one_of(SINGLE),
    params:
        max_memory=max_memory,
        extra=config["screen_args"],
    threads: THREADS
    resources:
        mem_mb=mem_filters,
    log:
        "logs/screen/classify/{sample}.log",
    benchmark:
        "benchmarks/screen/classify/{sample}.tsv"
    conda:
        "../envs/ksieve.yaml"
    shell:
        "ksieve classify -q -t {threads} --max-memory {params.max_memory} {params.extra} -f {input.filters} {input.reads} "
        "--report {output.report} --stats {output.stats} --multiqc {output.mqc} "
        "--sample {wildcards.sample} 2> {log}"
