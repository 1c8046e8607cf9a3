// Host removal and per-sample filters with the ksieve modules (nf-core style):
//   nextflow run examples/nextflow/main.nf --host host.fa.gz --reads 'reads/*_R{1,2}.fq.gz' [-stub]
// The same steps, command lines and outputs as examples/snakemake/Snakefile.
nextflow.enable.dsl = 2

include { KSIEVE_BUILD as KSIEVE_BUILD_HOST    } from './modules/ksieve/build/main'
include { KSIEVE_BUILD as KSIEVE_BUILD_SAMPLE  } from './modules/ksieve/build/main'
include { KSIEVE_MERGE as KSIEVE_MERGE_HOST    } from './modules/ksieve/merge/main'
include { KSIEVE_MERGE as KSIEVE_MERGE_SAMPLES } from './modules/ksieve/merge/main'
include { KSIEVE_CLASSIFY                      } from './modules/ksieve/classify/main'

workflow {
    host = Channel.fromPath(params.host, checkIfExists: true)
    // scatter the host build over params.parts jobs (one part of the key space each), gather with merge
    parts = host
        .combine(Channel.of(0..<params.parts))
        .map { ref, i -> [[id: "host.${i}", part: "${i}/${params.parts}"], ref] }
    KSIEVE_BUILD_HOST(parts)
    KSIEVE_MERGE_HOST(KSIEVE_BUILD_HOST.out.filter.map { meta, f -> f }.collect().map { [[id: 'host'], it] })

    reads = Channel.fromFilePairs(params.reads, checkIfExists: true).map { id, pair -> [[id: id], pair] }
    KSIEVE_CLASSIFY(reads, KSIEVE_MERGE_HOST.out.filter.map { meta, f -> f }.first())

    KSIEVE_BUILD_SAMPLE(KSIEVE_CLASSIFY.out.reads)
    KSIEVE_MERGE_SAMPLES(KSIEVE_BUILD_SAMPLE.out.filter.map { meta, f -> f }.collect().map { [[id: 'all_samples'], it] })
}
