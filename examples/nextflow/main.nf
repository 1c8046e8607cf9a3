#!/usr/bin/env nextflow
// Host removal and per-sample filters with ksieve (the modules and the subworkflow are laid out as nf-core's):
//   nextflow run examples/nextflow/main.nf --input samplesheet.csv --host host.fa.gz
//   nextflow run examples/nextflow/main.nf -profile test          (the bundled lambda genome and reads)
//   nextflow run examples/nextflow/main.nf -profile test -stub    (every process's stub: no ksieve needed)
// samplesheet.csv: a header line sample,fastq_1,fastq_2 and a line per sample (fastq_2 empty for single-end
// reads). FASTQ_HOST_DEPLETE_KSIEVE builds the host filter in params.parts jobs and merges them, classifies
// each sample's reads against it, builds a filter of each sample's clean reads and merges (or intersects) them; MultiQC
// reports every sample's known and novel reads and the versions of the tools. The same ksieve command lines
// as examples/snakemake/workflow/Snakefile (tests/workflows/test_workflows.py compares them).

include { FASTQ_HOST_DEPLETE_KSIEVE } from './subworkflows/ksieve/fastq_host_deplete_ksieve/main'
include { MULTIQC                   } from './modules/nf-core/multiqc/main'

// [ meta, reads ] of a sample sheet row; paths relative to the launch directory
def sampleFromRow(row) {
    if (!row.sample || !row.fastq_1) {
        error("Sample sheet ${params.input}: each row needs sample and fastq_1 (row ${row})")
    }
    def single_end = !row.fastq_2
    def fastq_1 = file(row.fastq_1, checkIfExists: true)
    def reads = single_end ? fastq_1 : [ fastq_1, file(row.fastq_2, checkIfExists: true) ]
    return [ [ id: row.sample, single_end: single_end ], reads ]
}

workflow {

    // --demo: the lambda genome bundled with ksieve as the host, its example reads as one single-end sample
    def bundled = "${projectDir}/../data"
    def host = params.host ?: (params.demo ? "${bundled}/lambda.fa.gz" : null)
    if (!host) {
        error("Give the host with --host (references, or a ksieve filter *.ksf), or run the bundled example with --demo")
    }
    if (!params.input && !params.demo) {
        error("Give the reads with --input samplesheet.csv (columns sample,fastq_1,fastq_2), or run the bundled example with --demo")
    }

    ch_reads = params.input
        ? channel.fromPath(params.input, checkIfExists: true).splitCsv(header: true, strip: true).map { row -> sampleFromRow(row) }
        : channel.of([ [ id: 'demo', single_end: true ], file("${bundled}/reads.fq.gz", checkIfExists: true) ])
    ch_host = channel.of([ [ id: 'host' ], file(host, checkIfExists: true) ])

    FASTQ_HOST_DEPLETE_KSIEVE(ch_reads, ch_host, params.parts, params.save_known, params.samples_filter)

    // the versions of every tool (the versions topic) as MultiQC's table of software versions
    ch_versions_yml = channel.topic('versions')
        .map { process, tool, version -> "${process.tokenize(':').last()}:\n  ${tool}: ${version}" }
        .unique()
        .collectFile(name: 'ksieve_software_mqc_versions.yml', newLine: true, sort: true)

    MULTIQC(
        FASTQ_HOST_DEPLETE_KSIEVE.out.multiqc_files
            .mix(ch_versions_yml)
            .collect()
            .map { files -> [ [ id: 'ksieve' ], files, [], [], [], [] ] }
    )
}
