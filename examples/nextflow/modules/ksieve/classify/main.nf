// ksieve classify: host removal of paired reads; the novel (clean) pairs, the stats and a MultiQC file.
process KSIEVE_CLASSIFY {
    tag "$meta.id"
    label 'process_medium'

    conda "${moduleDir}/environment.yml"
    container "quay.io/biocontainers/ksieve:0.2.0--0"

    input:
    tuple val(meta), path(reads)
    path filter

    output:
    tuple val(meta), path("*.clean_R{1,2}.fq.gz"), emit: reads
    tuple val(meta), path("*.json")              , emit: stats
    path "*_mqc.json"                            , emit: multiqc
    path "versions.yml"                          , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    ksieve classify -q -t ${task.cpus} ${args} -f ${filter} --paired ${reads[0]} ${reads[1]} --novel ${prefix}.clean_R1.fq.gz --novel2 ${prefix}.clean_R2.fq.gz --stats ${prefix}.json --multiqc ${prefix}_mqc.json --sample ${meta.id}

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        ksieve: \$(ksieve --version | sed 's/^ksieve //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    echo | gzip > ${prefix}.clean_R1.fq.gz
    echo | gzip > ${prefix}.clean_R2.fq.gz
    echo '{}' > ${prefix}.json
    echo '{}' > ${prefix}_mqc.json
    echo '"${task.process}": {ksieve: 0.2.0}' > versions.yml
    """
}
