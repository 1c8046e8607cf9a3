#pragma once
/*! \file
 * \brief The three-stage batch pipeline (reader thread -> processing on the calling thread and
 * optional further workers -> writer thread) with a bounded number of batches in flight.
 */
#include <cstdint>
#include <functional>
#include <vector>

#include <ksieve/engine/unit_result.hpp>
#include <ksieve/io/io.hpp>
#include <ksieve/io/unit_source.hpp>

namespace ksieve
{

/*! \brief One batch travelling through the pipeline. Thread safety: owned by one stage at a time.
 */
struct work_item
{
    io::record_batch r1;
    io::record_batch r2; //!< mates (empty unless paired)
    std::vector<unit_result> results;
    std::uint64_t sequence{0}; //!< the batch's position in the input (0, 1, ...)
};

/*! \brief Runs process(item) on the calling thread for every batch in input order, with reading
 * ahead in one thread and write(item) behind in another (write may be empty). At most 3 batches are
 * in flight. \throws the first exception of process, write or the source, once every thread has
 * stopped; running out of memory (std::bad_alloc) becomes a resource_error that says in which
 * stage, a thread that cannot be started a resource_error naming it (no thread is left running). */
void run_stream(unit_source & source, std::function<void(work_item &)> const & process,
                std::function<void(work_item const &)> const & write);

/*! \brief run_stream() with `workers` batches processed at once: process(item, worker) runs on the
 * calling thread (worker 0) and on workers - 1 further threads (1, 2, ...), each batch on one of
 * them, while write still sees the batches one at a time in input order. process must be safe to
 * run concurrently for different items and different worker indices (a scratch per worker). At most
 * workers + 2 batches are in flight. The first exception of a worker stops the others and is
 * rethrown after every thread has stopped (errors as for the other overload). */
void run_stream(unit_source & source, std::function<void(work_item &, unsigned)> const & process,
                std::function<void(work_item const &)> const & write, unsigned workers);

} // namespace ksieve
