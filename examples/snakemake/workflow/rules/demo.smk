# demo: true - the read files of the sample sheet made from the bundled reads. The samples take turns at
# two records each; mate 2 of a paired sample is the reverse complement of mate 1, under the same name.
rule demo_reads:
    input:
        os.path.join(BUNDLED, "reads.fq.gz"),
    output:
        "{fastq}",
    wildcard_constraints:
        fastq=one_of([re.escape(p) for p in DEMO_FILES]),
    params:
        of=lambda wildcards: DEMO_FILES[wildcards.fastq],
    log:
        "logs/demo_reads/{fastq}.log",
    benchmark:
        "benchmarks/demo_reads/{fastq}.tsv"
    run:
        demo_reads(input, output, log, params)
