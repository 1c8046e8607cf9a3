# MultiQC: one report of the ksieve MultiQC files (*_mqc.json) of every sample. The workflow that includes
# this file sets REPORT_FILES (patterns of {sample}), REPORT_DIR and REPORT_NAME (of its log and benchmark).


rule multiqc:
    input:
        expand(REPORT_FILES, sample=SAMPLES),
    output:
        html=report(
            f"{REPORT_DIR}/multiqc_report.html",
            caption="../report/multiqc.rst",
            category="Quality control",
            labels={"report": "MultiQC"},
        ),
        data=directory(f"{REPORT_DIR}/multiqc_data"),
    params:
        outdir=lambda wildcards, output: os.path.dirname(output.html),
    log:
        f"logs/{REPORT_NAME}.log",
    benchmark:
        f"benchmarks/{REPORT_NAME}.tsv"
    conda:
        "../envs/multiqc.yaml"
    shell:
        "multiqc -q -f -o {params.outdir} {input} 2> {log}"
