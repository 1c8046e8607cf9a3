# Host removal of each sample (paired-end or single-end reads, as the sample sheet gives them), a filter of
# each sample's clean reads, and the merge (or intersection) of the sample filters.


rule remove_host_paired:
    input:
        filters="results/host/host.ksf",
        r1=lambda wildcards: SAMPLES[wildcards.sample]["fastq_1"],
        r2=lambda wildcards: SAMPLES[wildcards.sample]["fastq_2"],
    output:
        r1="results/clean/{sample}_R1.fq.gz",
        r2="results/clean/{sample}_R2.fq.gz",
        stats=report(
            "results/stats/{sample}.stats.json",
            caption="../report/stats.rst",
            category="Host removal",
            subcategory="statistics",
            labels={"sample": "{sample}"},
        ),
        mqc="results/qc/{sample}_mqc.json",
        mqc_general="results/qc/{sample}_general_mqc.json",
    wildcard_constraints:
        sample=one_of(PAIRED),
    params:
        max_memory=max_memory,
        extra=config["classify_args"],
    threads: THREADS
    resources:
        mem_mb=mem_filters,
    log:
        "logs/remove_host/{sample}.log",
    benchmark:
        "benchmarks/remove_host/{sample}.tsv"
    conda:
        "../envs/ksieve.yaml"
    shell:
        "ksieve classify -q -t {threads} --max-memory {params.max_memory} {params.extra} -f {input.filters} --paired {input.r1} {input.r2} "
        "--novel {output.r1} --novel2 {output.r2} --stats {output.stats} --multiqc {output.mqc} "
        "--sample {wildcards.sample} 2> {log}"


rule remove_host_single:
    input:
        filters="results/host/host.ksf",
        reads=lambda wildcards: SAMPLES[wildcards.sample]["fastq_1"],
    output:
        reads="results/clean/{sample}.fq.gz",
        stats=report(
            "results/stats/{sample}.stats.json",
            caption="../report/stats.rst",
            category="Host removal",
            subcategory="statistics",
            labels={"sample": "{sample}"},
        ),
        mqc="results/qc/{sample}_mqc.json",
        mqc_general="results/qc/{sample}_general_mqc.json",
    wildcard_constraints:
        sample=one_of(SINGLE),
    params:
        max_memory=max_memory,
        extra=config["classify_args"],
    threads: THREADS
    resources:
        mem_mb=mem_filters,
    log:
        "logs/remove_host/{sample}.log",
    benchmark:
        "benchmarks/remove_host/{sample}.tsv"
    conda:
        "../envs/ksieve.yaml"
    shell:
        "ksieve classify -q -t {threads} --max-memory {params.max_memory} {params.extra} -f {input.filters} {input.reads} "
        "--novel {output.reads} --stats {output.stats} --multiqc {output.mqc} "
        "--sample {wildcards.sample} 2> {log}"


rule sample_filter:
    input:
        seqs=clean_reads,
    output:
        "results/filters/{sample}.ksf",
    params:
        max_memory=max_memory,
        extra=config["sample_build_args"],
    threads: THREADS
    resources:
        mem_mb=mem_build,
    log:
        "logs/sample_filter/{sample}.log",
    benchmark:
        "benchmarks/sample_filter/{sample}.tsv"
    conda:
        "../envs/ksieve.yaml"
    shell:
        "ksieve build -q -t {threads} --max-memory {params.max_memory} {params.extra} -o {output} {input.seqs} 2> {log}"


rule combine_samples:
    input:
        filters=expand("results/filters/{sample}.ksf", sample=SAMPLES),
    output:
        "results/all_samples.ksf",
    params:
        max_memory=max_memory,
        op=config["samples_filter"],
    threads: THREADS
    resources:
        mem_mb=mem_filters,
    log:
        "logs/combine_samples.log",
    benchmark:
        "benchmarks/combine_samples.tsv"
    conda:
        "../envs/ksieve.yaml"
    shell:
        "ksieve {params.op} -q -t {threads} --max-memory {params.max_memory} -o {output} {input.filters} 2> {log}"
