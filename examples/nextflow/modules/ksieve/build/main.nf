// ksieve build: a filter of the k-mers of references or reads; with meta.part = "I/S", part I of S
// (scatter over S jobs, gather with KSIEVE_MERGE).
process KSIEVE_BUILD {
    tag "$meta.id"
    label 'process_medium'

    conda "${moduleDir}/environment.yml"
    container "quay.io/biocontainers/ksieve:0.2.0--0"

    input:
    tuple val(meta), path(sequences)

    output:
    tuple val(meta), path("*.ksf"), emit: filter
    path "versions.yml"           , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    def part = meta.part ? "--part ${meta.part}" : ''
    """
    ksieve build -q -t ${task.cpus} ${args} ${part} -o ${prefix}.ksf ${sequences}

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        ksieve: \$(ksieve --version | sed 's/^ksieve //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    touch ${prefix}.ksf
    echo '"${task.process}": {ksieve: 0.2.0}' > versions.yml
    """
}
