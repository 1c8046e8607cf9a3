// ksieve classify: host removal. Single-end reads or read pairs (meta.single_end) against a filter; the
// novel (clean) reads, the known ones where save_known is true, the stats and a MultiQC file.
process KSIEVE_CLASSIFY {
    tag "$meta.id"
    label 'process_medium'

    conda "${moduleDir}/environment.yml"
    container "quay.io/biocontainers/ksieve:0.2.0--0"

    input:
    tuple val(meta), path(reads)
    tuple val(meta2), path(filter)
    val save_known

    output:
    tuple val(meta), path("*.novel*.fq.gz"), emit: reads
    tuple val(meta), path("*.known*.fq.gz"), emit: known, optional: true
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
    def known = !save_known ? '' : (meta.single_end ? "--known ${prefix}.known.fq.gz" : "--known ${prefix}.known_R1.fq.gz --known2 ${prefix}.known_R2.fq.gz")
    """
    ksieve classify -q -t ${task.cpus} ${args} -f ${filter} ${inputs} ${novel} ${known} --stats ${prefix}.stats.json --multiqc ${prefix}_mqc.json --sample ${meta.id}

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        ksieve: \$(ksieve --version | sed 's/^ksieve //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    def mates = meta.single_end ? [''] : ['_R1', '_R2']
    def outputs = mates.collect { "${prefix}.novel${it}.fq.gz" } + (save_known ? mates.collect { "${prefix}.known${it}.fq.gz" } : [])
    """
    for f in ${outputs.join(' ')}; do echo -n | gzip > \$f; done
    echo '{}' > ${prefix}.stats.json
    echo '{}' > ${prefix}_mqc.json

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        ksieve: 0.2.0
    END_VERSIONS
    """
}
