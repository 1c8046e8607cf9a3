// ksieve merge: the union of compatible filters (the parts of one scattered build, or per-sample filters).
process KSIEVE_MERGE {
    tag "$meta.id"
    label 'process_medium'

    conda "${moduleDir}/environment.yml"
    container "quay.io/biocontainers/ksieve:0.2.0--0"

    input:
    tuple val(meta), path(filters, stageAs: 'in/*')

    output:
    tuple val(meta), path("*.ksf"), emit: filter
    path "versions.yml"           , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    ksieve merge -q -t ${task.cpus} ${args} -o ${prefix}.ksf ${filters}

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        ksieve: \$(ksieve --version | sed 's/^ksieve //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    touch ${prefix}.ksf

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        ksieve: 0.2.0
    END_VERSIONS
    """
}
