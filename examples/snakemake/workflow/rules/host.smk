# The host filter: built in `parts` scatter jobs (ksieve build --part I/S) and gathered with merge.


rule host_part:
    input:
        seqs=HOST,
    output:
        temp("results/host/host.{i}.ksf"),
    params:
        max_memory=max_memory,
        extra=config["host_build_args"],
        parts=config["parts"],
    threads: THREADS
    resources:
        mem_mb=mem_build,
    log:
        "logs/host_part/{i}.log",
    benchmark:
        "benchmarks/host_part/{i}.tsv"
    conda:
        "../envs/ksieve.yaml"
    shell:
        "ksieve build -q -t {threads} --max-memory {params.max_memory} {params.extra} --part {wildcards.i}/{params.parts} -o {output} "
        "{input.seqs} 2> {log}"


rule host_filter:
    input:
        filters=expand("results/host/host.{i}.ksf", i=range(config["parts"])),
    output:
        "results/host/host.ksf",
    params:
        max_memory=max_memory,
    threads: THREADS
    resources:
        mem_mb=mem_filters,
    log:
        "logs/host_filter.log",
    benchmark:
        "benchmarks/host_filter.tsv"
    conda:
        "../envs/ksieve.yaml"
    shell:
        "ksieve merge -q -t {threads} --max-memory {params.max_memory} -o {output} {input.filters} 2> {log}"
