// ksieve build: a filter of the k-mers of references or reads. With meta.part = "I/S", part I of S
// (scatter the build over S jobs, gather the parts with KSIEVE_MERGE).
process KSIEVE_BUILD {
    tag "${meta.id}"
    label 'process_medium'

    // ksieve is not published on bioconda yet: the environment and the images named here are for when it
    // is. Until then run without the conda, docker and singularity profiles: the task takes the ksieve on PATH.
    conda "${moduleDir}/environment.yml"
    container "${ workflow.containerEngine in ['singularity', 'apptainer'] && !task.ext.singularity_pull_docker_container ?
        'https://depot.galaxyproject.org/singularity/ksieve:0.2.0' :
        'quay.io/biocontainers/ksieve:0.2.0' }"

    input:
    tuple val(meta), path(sequences)

    output:
    tuple val(meta), path("${prefix}.ksf"), emit: filter
    tuple val(meta), path("${prefix}.log"), emit: log
    tuple val("${task.process}"), val('ksieve'), eval('ksieve --version | sed "s/^ksieve //"'), emit: versions_ksieve, topic: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    prefix = task.ext.prefix ?: "${meta.id}"
    // the task's memory less a tenth: the scheduler also counts the shell and tee around ksieve and the
    // page cache of the files it writes, which --max-memory (the ksieve process) leaves out
    def max_memory = task.memory ? "--max-memory ${(task.memory.toMega() * 0.9).intValue()}M" : ''
    def part = meta.part ? "--part ${meta.part}" : ''
    """
    ksieve build \\
        -q \\
        -t ${task.cpus} \\
        ${max_memory} \\
        ${args} \\
        ${part} \\
        -o ${prefix}.ksf \\
        ${sequences} \\
        2> >(tee ${prefix}.log >&2)
    """

    stub:
    def args = task.ext.args ?: ''
    prefix = task.ext.prefix ?: "${meta.id}"
    """
    echo ${args}
    touch ${prefix}.ksf
    touch ${prefix}.log
    """
}
