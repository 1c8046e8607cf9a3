// ksieve info: the header of a filter (its kind, k-mer options, size, distinct k-mers, estimated
// false-positive rate and labels) as JSON.
process KSIEVE_INFO {
    tag "${meta.id}"
    label 'process_single'

    // ksieve is not published on bioconda yet: the environment and the images named here are for when it
    // is. Until then run without the conda, docker and singularity profiles: the task takes the ksieve on PATH.
    conda "${moduleDir}/environment.yml"
    container "${ workflow.containerEngine in ['singularity', 'apptainer'] && !task.ext.singularity_pull_docker_container ?
        'https://depot.galaxyproject.org/singularity/ksieve:0.2.0' :
        'quay.io/biocontainers/ksieve:0.2.0' }"

    input:
    tuple val(meta), path(filter)

    output:
    tuple val(meta), path("${prefix}.info.json"), emit: info
    tuple val(meta), path("${prefix}.log")      , emit: log
    tuple val("${task.process}"), val('ksieve'), eval('ksieve --version | sed "s/^ksieve //"'), emit: versions_ksieve, topic: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    prefix = task.ext.prefix ?: "${meta.id}"
    """
    ksieve info \\
        -q \\
        -t ${task.cpus} \\
        ${args} \\
        --json \\
        ${filter} \\
        > ${prefix}.info.json \\
        2> >(tee ${prefix}.log >&2)
    """

    stub:
    def args = task.ext.args ?: ''
    prefix = task.ext.prefix ?: "${meta.id}"
    """
    echo ${args}
    echo '{}' > ${prefix}.info.json
    touch ${prefix}.log
    """
}
