// ksieve dedup: streaming deduplication (or, with --min-count C in ext.args, digital normalization to depth
// C) of single-end reads or read pairs (meta.single_end); the kept reads, the stats and a MultiQC file.
process KSIEVE_DEDUP {
    tag "$meta.id"
    label 'process_medium'

    conda "${moduleDir}/environment.yml"
    container "quay.io/biocontainers/ksieve:0.2.0--0"

    input:
    tuple val(meta), path(reads)

    output:
    tuple val(meta), path("*.novel*.fq.gz"), emit: reads
    tuple val(meta), path("*.stats.json")  , emit: stats
    tuple val(meta), path("*_mqc.json")    , emit: multiqc
    path "versions.yml"                    , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    def inputs = meta.single_end ? "${reads}" : "--paired ${reads[0]} ${reads[1]}"
    def novel = meta.single_end ? "--novel ${prefix}.novel.fq.gz" : "--novel ${prefix}.novel_R1.fq.gz --novel2 ${prefix}.novel_R2.fq.gz"
    """
    ksieve dedup -q -t ${task.cpus} ${args} ${inputs} ${novel} --stats ${prefix}.stats.json --multiqc ${prefix}_mqc.json --sample ${meta.id}

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        ksieve: \$(ksieve --version | sed 's/^ksieve //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    def mates = meta.single_end ? [''] : ['_R1', '_R2']
    """
    for f in ${mates.collect { "${prefix}.novel${it}.fq.gz" }.join(' ')}; do echo -n | gzip > \$f; done
    echo '{}' > ${prefix}.stats.json
    echo '{}' > ${prefix}_mqc.json

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        ksieve: 0.2.0
    END_VERSIONS
    """
}
