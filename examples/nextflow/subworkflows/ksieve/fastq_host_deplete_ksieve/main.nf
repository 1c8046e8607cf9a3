// Host depletion with ksieve: take a host filter, or build one from references (scattered over val_parts
// jobs and merged); classify each sample's reads against it; optionally build a filter of each sample's
// clean reads and merge them (their union) or intersect them (the k-mers every sample holds); emit the clean reads and the files for MultiQC. Versions go to the
// `versions` topic (every module emits its own).
include { KSIEVE_BUILD as KSIEVE_BUILD_HOST    } from '../../../modules/ksieve/build/main'
include { KSIEVE_MERGE as KSIEVE_MERGE_HOST    } from '../../../modules/ksieve/merge/main'
include { KSIEVE_CLASSIFY                      } from '../../../modules/ksieve/classify/main'
include { KSIEVE_BUILD as KSIEVE_BUILD_SAMPLE  } from '../../../modules/ksieve/build/main'
include { KSIEVE_MERGE as KSIEVE_MERGE_SAMPLES } from '../../../modules/ksieve/merge/main'
include { KSIEVE_INTERSECT as KSIEVE_INTERSECT_SAMPLES } from '../../../modules/ksieve/intersect/main'

workflow FASTQ_HOST_DEPLETE_KSIEVE {

    take:
    ch_reads          // channel: [ val(meta), [ reads ] ]: one file where meta.single_end, else two
    ch_host           // channel: [ val(meta), path(host) ]: one host, a ksieve filter (*.ksf) or references
    val_parts         // integer: jobs a host build is scattered over (1: one job, no merge)
    val_save_known    // boolean: keep the known (host) reads too
    val_samples_filter // string: 'merge' (a filter of each sample's clean reads, their union), 'intersect' (the k-mers every sample holds) or 'none'

    main:
    if (!(val_samples_filter in [ 'merge', 'intersect', 'none' ])) {
        error("val_samples_filter is '${val_samples_filter}': merge, intersect or none")
    }
    ch_reads = ch_reads.map { meta, reads ->
        def files = reads instanceof List ? reads : [ reads ]
        if (meta.single_end && files.size() != 1) {
            error("Sample ${meta.id}: single_end reads are one file, not ${files.size()}")
        }
        if (!meta.single_end && files.size() != 2) {
            error("Sample ${meta.id}: paired-end reads are two files (mate 1 and mate 2), not ${files.size()}")
        }
        [ meta, meta.single_end ? files[0] : files ]
    }

    ch_host_kind = ch_host.branch { meta, host ->
        filter: host.name.endsWith('.ksf')
        references: true
    }

    // a host given as references: built in val_parts jobs (ksieve build --part I/S), gathered with merge
    if (val_parts > 1) {
        ch_parts = ch_host_kind.references
            .combine(channel.of(0..<val_parts))
            .map { meta, refs, i -> [ meta + [ id: "${meta.id}.${i}", part: "${i}/${val_parts}", host_id: meta.id ], refs ] }
        KSIEVE_BUILD_HOST(ch_parts)
        ch_host_parts = KSIEVE_BUILD_HOST.out.filter
            .map { meta, part -> [ meta.subMap(meta.keySet() - [ 'part', 'host_id' ]) + [ id: meta.host_id ], part ] }
            .groupTuple(size: val_parts)
        KSIEVE_MERGE_HOST(ch_host_parts)
        ch_built = KSIEVE_MERGE_HOST.out.filter
    } else {
        KSIEVE_BUILD_HOST(ch_host_kind.references)
        ch_built = KSIEVE_BUILD_HOST.out.filter
    }
    ch_filter = ch_host_kind.filter.mix(ch_built).first()

    KSIEVE_CLASSIFY(ch_reads, ch_filter, val_save_known)

    // a filter of each sample's clean reads; the filters merged into one, or intersected
    ch_samples_filter = channel.empty()
    if (val_samples_filter != 'none') {
        KSIEVE_BUILD_SAMPLE(KSIEVE_CLASSIFY.out.reads)
        ch_sample_filters = KSIEVE_BUILD_SAMPLE.out.filter
            .map { meta, filter -> filter }
            .toSortedList { a, b -> a.name <=> b.name }
            .map { filters -> [ [ id: 'all_samples' ], filters ] }
        if (val_samples_filter == 'intersect') {
            KSIEVE_INTERSECT_SAMPLES(ch_sample_filters)
            ch_samples_filter = KSIEVE_INTERSECT_SAMPLES.out.filter
        } else {
            KSIEVE_MERGE_SAMPLES(ch_sample_filters)
            ch_samples_filter = KSIEVE_MERGE_SAMPLES.out.filter
        }
    }

    emit:
    filter         = ch_filter                                              // channel: [ val(meta), path(ksf) ]: the host filter
    reads          = KSIEVE_CLASSIFY.out.reads                              // channel: [ val(meta), [ fq.gz ] ]: the clean reads
    known          = KSIEVE_CLASSIFY.out.known                              // channel: [ val(meta), [ fq.gz ] ]: the host reads (val_save_known)
    stats          = KSIEVE_CLASSIFY.out.stats                              // channel: [ val(meta), path(json) ]
    samples_filter = ch_samples_filter                                      // channel: [ val(meta), path(ksf) ]: the merged or intersected sample filters
    multiqc_files  = KSIEVE_CLASSIFY.out.multiqc.flatMap { meta, json -> json } // channel: [ path(json) ]: ksieve's MultiQC files
}
