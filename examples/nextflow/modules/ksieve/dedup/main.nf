// ksieve dedup: streaming deduplication (or, with --min-count C in ext.args, digital normalization to depth
// C) of single-end reads or read pairs (meta.single_end); the kept reads, the stats and a MultiQC file.
process KSIEVE_DEDUP {
    tag "${meta.id}"
    label 'process_medium'

    // ksieve is not published on bioconda yet: the environment and the images named here are for when it
    // is. Until then run without the conda, docker and singularity profiles: the task takes the ksieve on PATH.
    conda "${moduleDir}/environment.yml"
    container "${ workflow.containerEngine in ['singularity', 'apptainer'] && !task.ext.singularity_pull_docker_container ?
        'https://depot.galaxyproject.org/singularity/ksieve:0.2.0' :
        'quay.io/biocontainers/ksieve:0.2.0' }"

    input:
    tuple val(meta), path(reads)

    output:
    tuple val(meta), path("${prefix}.novel*.fq.gz"), emit: reads
    tuple val(meta), path("${prefix}.stats.json")  , emit: stats
    tuple val(meta), path("${prefix}*_mqc.json")   , emit: multiqc
    tuple val(meta), path("${prefix}.log")         , emit: log
    tuple val("${task.process}"), val('ksieve'), eval('ksieve --version | sed "s/^ksieve //"'), emit: versions_ksieve, topic: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    prefix = task.ext.prefix ?: "${meta.id}"
    // the task's memory less a tenth: the scheduler also counts the shell and tee around ksieve and the
    // page cache of the files it writes, which --max-memory (the ksieve process) leaves out
    def max_memory = task.memory ? "--max-memory ${(task.memory.toMega() * 0.9).intValue()}M" : ''
    def inputs = meta.single_end ? "${reads}" : "--paired ${reads[0]} ${reads[1]}"
    def novel = meta.single_end ? "--novel ${prefix}.novel.fq.gz" : "--novel ${prefix}.novel_R1.fq.gz --novel2 ${prefix}.novel_R2.fq.gz"
    """
    ksieve dedup \\
        -q \\
        -t ${task.cpus} \\
        ${max_memory} \\
        ${args} \\
        ${inputs} \\
        ${novel} \\
        --stats ${prefix}.stats.json \\
        --multiqc ${prefix}_mqc.json \\
        --sample ${meta.id} \\
        2> >(tee ${prefix}.log >&2)
    """

    stub:
    def args = task.ext.args ?: ''
    prefix = task.ext.prefix ?: "${meta.id}"
    def mates = meta.single_end ? [''] : ['_R1', '_R2']
    """
    echo ${args}
    for f in ${mates.collect { "${prefix}.novel${it}.fq.gz" }.join(' ')}; do echo -n | gzip > \$f; done
    echo '{}' > ${prefix}.stats.json
    echo '{}' > ${prefix}_mqc.json
    echo '{}' > ${prefix}_general_mqc.json
    touch ${prefix}.log
    """
}
