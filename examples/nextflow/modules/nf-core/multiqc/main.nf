// MultiQC, in the shape of nf-core's multiqc module: one report of the files it is given (here the ksieve
// MultiQC files of every sample and the software versions), with an optional config, logo and sample names.
process MULTIQC {
    tag "${meta.id}"
    label 'process_single'

    conda "${moduleDir}/environment.yml"
    container "${ workflow.containerEngine in ['singularity', 'apptainer'] && !task.ext.singularity_pull_docker_container ?
        'https://community-cr-prod.seqera.io/docker/registry/v2/blobs/sha256/c8/c8e346f4f6080eadf1253505e6ff09ef004454fc18e8d672006fd7b222cc412e/data' :
        'community.wave.seqera.io/library/multiqc:1.35--c17fb751507e9dfc' }"

    input:
    tuple val(meta), path(multiqc_files, stageAs: "?/*"), path(multiqc_config, stageAs: "?/*"), path(multiqc_logo), path(replace_names), path(sample_names)

    output:
    tuple val(meta), path("*.html") , emit: report
    tuple val(meta), path("*_data") , emit: data
    tuple val(meta), path("*_plots"), emit: plots, optional: true
    // not on the versions topic: the pipeline feeds that topic into this process, which would then wait on itself
    tuple val("${task.process}"), val('multiqc'), eval('multiqc --version | sed "s/.* //"'), emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ? "--filename ${task.ext.prefix}.html" : ''
    def config = multiqc_config ? (multiqc_config instanceof List ? multiqc_config.collect { "--config ${it}" }.join(' ') : "--config ${multiqc_config}") : ''
    def logo = multiqc_logo ? "--cl-config 'custom_logo: \"${multiqc_logo}\"'" : ''
    def replace = replace_names ? "--replace-names ${replace_names}" : ''
    def samples = sample_names ? "--sample-names ${sample_names}" : ''
    """
    multiqc \\
        --force \\
        ${args} \\
        ${config} \\
        ${prefix} \\
        ${logo} \\
        ${replace} \\
        ${samples} \\
        .
    """

    stub:
    """
    mkdir multiqc_data
    touch multiqc_data/.stub
    mkdir multiqc_plots
    touch multiqc_plots/.stub
    touch multiqc_report.html
    """
}
