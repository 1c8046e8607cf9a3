// MultiQC: one report of the ksieve MultiQC files (*_mqc.json) of every sample and the software versions.
process MULTIQC {
    label 'process_single'

    conda "${moduleDir}/environment.yml"
    container "quay.io/biocontainers/multiqc:1.21--pyhdfd78af_0"

    input:
    path multiqc_files, stageAs: '?/*'

    output:
    path "*multiqc_report.html", emit: report
    path "*_data"              , emit: data
    path "versions.yml"        , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ? "--filename ${task.ext.prefix}.html" : ''
    """
    multiqc -f ${args} ${prefix} .

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        multiqc: \$(multiqc --version | sed 's/.*version //')
    END_VERSIONS
    """

    stub:
    """
    mkdir multiqc_data
    touch multiqc_report.html

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        multiqc: 1.21
    END_VERSIONS
    """
}
