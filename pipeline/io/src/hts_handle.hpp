#pragma once
// Internal: one owning handle for htslib's objects (files, headers, records, thread pools, hFILE
// streams), used by the SAM/BAM/CRAM reader, the writers and the shared thread pool.
#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <htslib/sam.h>
#include <htslib/thread_pool.h>

#include <memory>

namespace ksieve::io::detail
{

/*! \brief Releases an htslib object the way htslib wants it released. A file is closed without a
 * check of its last writes (close a written file with hts_close() to see them); an hFILE is
 * closed abruptly (it was never handed to a reader or writer). Thread safety: as the object's own
 * release function. */
struct hts_release
{
    void operator()(htsFile * const fp) const noexcept { (void)hts_close(fp); }
    void operator()(sam_hdr_t * const hdr) const noexcept { sam_hdr_destroy(hdr); }
    void operator()(bam1_t * const rec) const noexcept { bam_destroy1(rec); }
    void operator()(hts_tpool * const pool) const noexcept { hts_tpool_destroy(pool); }
    void operator()(hFILE * const hf) const noexcept { hclose_abruptly(hf); }
};

/*! \brief An owned htslib object (null or valid), released by hts_release. */
template <typename T> using hts_ptr = std::unique_ptr<T, hts_release>;

/*! \brief Route htslib's errors to take_htslib_error() and drop its warnings (once per process). */
void quiet_htslib();

} // namespace ksieve::io::detail
