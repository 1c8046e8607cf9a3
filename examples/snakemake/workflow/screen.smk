# Which samples share each read's k-mers (cross-sample contamination, index hopping, shared strains), with
# ksieve's labeled filters; the same configuration and sample sheet as the Snakefile:
#   snakemake --cores 2 --directory work --snakefile examples/snakemake/workflow/screen.smk \
#             --config sample_sheet=samples.tsv
#   snakemake --cores 2 --directory work --snakefile examples/snakemake/workflow/screen.smk --config demo=true
# Each sample's reads become a filter; the sample filters are merged into one labeled filter (each sample
# is a label, named by its filter's file name: merge --label-inputs); every sample is screened against it
# (a read's label is the sample whose k-mers it shares most, or ambiguous), and MultiQC draws one bar per
# sample, stacked by label. Outputs under results/screen/.
import os

from snakemake.utils import min_version

min_version("7.0")


# config/config.yaml of the working directory, as the workflow template has it (snakedeploy copies config/
# there; .test/ holds the one CI runs); where there is none, the one beside this workflow
if os.path.exists("config/config.yaml"):

    configfile: "config/config.yaml"

else:

    configfile: os.path.join(workflow.basedir, "..", "config", "config.yaml")


report: "report/workflow.rst"


include: "rules/common.smk"


REPORT_FILES = ["results/screen/qc/{sample}_mqc.json", "results/screen/qc/{sample}_general_mqc.json"]
REPORT_DIR = "results/screen/multiqc"
REPORT_NAME = "screen/multiqc"


wildcard_constraints:
    sample=one_of(list(SAMPLES)),


rule all:
    default_target: True
    input:
        expand("results/screen/{sample}.report.tsv.gz", sample=SAMPLES),
        f"{REPORT_DIR}/multiqc_report.html",


if DEMO:

    include: "rules/demo.smk"


include: "rules/screen.smk"
include: "rules/report.smk"
