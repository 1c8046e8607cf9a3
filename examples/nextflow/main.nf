// Host removal and per-sample filters with the ksieve modules (laid out as nf-core modules):
//   nextflow run examples/nextflow/main.nf --host host.fa.gz --input 'reads/*_R{1,2}.fq.gz' [-stub]
//   nextflow run examples/nextflow/main.nf --demo -stub      (the bundled lambda genome, no reads needed)
// The host filter is built in params.parts jobs and gathered with merge; each sample's reads are classified
// against it, each sample's clean reads become a filter, the sample filters are merged, and MultiQC reports
// the known and novel reads of every sample. The same steps and ksieve command lines as
// examples/snakemake/Snakefile (tests/workflows/test_workflows.py compares them).

include { KSIEVE_BUILD as KSIEVE_BUILD_HOST    } from './modules/ksieve/build/main'
include { KSIEVE_BUILD as KSIEVE_BUILD_SAMPLE  } from './modules/ksieve/build/main'
include { KSIEVE_MERGE as KSIEVE_MERGE_HOST    } from './modules/ksieve/merge/main'
include { KSIEVE_MERGE as KSIEVE_MERGE_SAMPLES } from './modules/ksieve/merge/main'
include { KSIEVE_CLASSIFY                      } from './modules/ksieve/classify/main'
include { MULTIQC                              } from './modules/multiqc/main'

workflow {
    ch_versions = Channel.empty()

    // --demo: the lambda genome bundled with ksieve as the host, its example reads as one single-end sample
    def bundled = "${projectDir}/../data"
    def host = params.host ?: (params.demo ? "${bundled}/lambda.fa.gz" : null)
    def input = params.input ?: (params.demo ? "${bundled}/reads.fq.gz" : null)
    def single_end = params.single_end || (params.demo && !params.input)
    if (!host) {
        error "Give the host reference with --host (or run the bundled example with --demo)"
    }
    if (!input) {
        error "Give the reads with --input 'reads/*_R{1,2}.fq.gz' (paired) or --input 'reads/*.fq.gz' --single_end"
    }

    // scatter the host build over params.parts jobs, gather with merge
    ch_parts = Channel.fromPath(host, checkIfExists: true)
        .combine(Channel.of(0..<params.parts))
        .map { ref, i -> [[id: "host.${i}", part: "${i}/${params.parts}"], ref] }
    KSIEVE_BUILD_HOST(ch_parts)
    ch_versions = ch_versions.mix(KSIEVE_BUILD_HOST.out.versions.first())

    KSIEVE_MERGE_HOST(KSIEVE_BUILD_HOST.out.filter.map { meta, f -> f }.collect().map { [[id: 'host'], it] })
    ch_versions = ch_versions.mix(KSIEVE_MERGE_HOST.out.versions)

    // reads: pairs (meta.single_end false) or single files (--single_end)
    ch_reads = single_end
        ? Channel.fromPath(input, checkIfExists: true).map { [[id: it.simpleName, single_end: true], it] }
        : Channel.fromFilePairs(input, checkIfExists: true).map { id, pair -> [[id: id, single_end: false], pair] }
    KSIEVE_CLASSIFY(ch_reads, KSIEVE_MERGE_HOST.out.filter.first(), params.save_known)
    ch_versions = ch_versions.mix(KSIEVE_CLASSIFY.out.versions.first())

    // per-sample filters of the clean reads, merged into one
    KSIEVE_BUILD_SAMPLE(KSIEVE_CLASSIFY.out.reads)
    ch_versions = ch_versions.mix(KSIEVE_BUILD_SAMPLE.out.versions.first())
    KSIEVE_MERGE_SAMPLES(KSIEVE_BUILD_SAMPLE.out.filter.map { meta, f -> f }.collect().map { [[id: 'all_samples'], it] })
    ch_versions = ch_versions.mix(KSIEVE_MERGE_SAMPLES.out.versions)

    // MultiQC: every sample's *_mqc.json and the versions of every tool
    ch_versions_yml = ch_versions.unique().collectFile(name: 'software_mqc_versions.yml', newLine: true, sort: true)
    MULTIQC(KSIEVE_CLASSIFY.out.multiqc.map { meta, f -> f }.mix(ch_versions_yml).collect())
}
