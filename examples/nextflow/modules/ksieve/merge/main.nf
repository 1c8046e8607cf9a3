// ksieve merge: the union of compatible filters (the parts of one build --part scatter, or per-sample filters).
process KSIEVE_MERGE {
    tag "$meta.id"
    label 'process_single'

    conda "${moduleDir}/environment.yml"
    container "quay.io/biocontainers/ksieve:0.2.0--0"

    input:
    tuple val(meta), path(filters)

    output:
    tuple val(meta), path("${meta.id}.ksf"), emit: filter
    path "versions.yml"                  , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    """
    ksieve merge -q -t ${task.cpus} ${args} -o ${meta.id}.ksf ${filters}

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        ksieve: \$(ksieve --version | sed 's/^ksieve //')
    END_VERSIONS
    """

    stub:
    """
    touch ${meta.id}.ksf
    echo '"${task.process}": {ksieve: 0.2.0}' > versions.yml
    """
}
