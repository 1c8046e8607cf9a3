// Nextflow DSL2 module for ksieve: host removal of paired reads and per-sample filters merged at the end.
//   nextflow run examples/ksieve.nf --host host.fa.gz --reads 'reads/*_R{1,2}.fq.gz'
nextflow.enable.dsl = 2

params.host = 'host.fa.gz'
params.reads = 'reads/*_R{1,2}.fq.gz'
params.shards = 4

process KSIEVE_BUILD_SHARD {
    cpus 4
    input:
    tuple path(ref), val(i)
    output:
    path "host.${i}.ksf"
    script:
    // --expected auto: sized to the host genome; every shard job counts the whole input, so the parts match
    "ksieve build -q -t ${task.cpus} --expected auto --shard ${i}/${params.shards} -o host.${i}.ksf ${ref}"
}

process KSIEVE_MERGE_HOST {
    input:
    path parts
    val name
    output:
    path "${name}.ksf"
    script:
    "ksieve merge -q -o ${name}.ksf ${parts}"
}

process KSIEVE_MERGE_SAMPLES {
    input:
    path parts
    val name
    output:
    path "${name}.ksf"
    script:
    "ksieve merge -q -o ${name}.ksf ${parts}"
}

process KSIEVE_CLASSIFY {
    cpus 4
    input:
    tuple val(sample), path(reads)
    path filter
    output:
    tuple val(sample), path("${sample}_clean_R{1,2}.fq.gz"), emit: clean
    path "${sample}.stats.json", emit: stats
    script:
    """
    ksieve classify -q -t ${task.cpus} -f ${filter} --paired ${reads[0]} ${reads[1]} \\
        --novel ${sample}_clean_R1.fq.gz --novel2 ${sample}_clean_R2.fq.gz --stats ${sample}.stats.json
    """
}

process KSIEVE_SAMPLE_FILTER {
    cpus 4
    input:
    tuple val(sample), path(reads)
    output:
    path "${sample}.ksf"
    script:
    "ksieve build -q -t ${task.cpus} -o ${sample}.ksf ${reads}"
}

workflow {
    shards = Channel.of(0..<params.shards)
    host_parts = KSIEVE_BUILD_SHARD(Channel.fromPath(params.host).combine(shards))
    host = KSIEVE_MERGE_HOST(host_parts.collect(), 'host')
    reads = Channel.fromFilePairs(params.reads)
    KSIEVE_CLASSIFY(reads, host)
    sample_filters = KSIEVE_SAMPLE_FILTER(KSIEVE_CLASSIFY.out.clean)
    KSIEVE_MERGE_SAMPLES(sample_filters.collect(), 'all_samples')
}
