#pragma once
/*! \file
 * \brief The three-stage batch pipeline
 * (reader thread -> processing on the calling thread, and optionally further workers -> writer thread)
 * with bounded memory.
 *
 * A bounded number of batches is in flight; an exception in the reader or writer thread is captured and
 * rethrown once on the calling thread (KMC style), after both threads have stopped.
 */
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <ksieve/engine/engine.hpp>
#include <ksieve/io/unit_source.hpp>

namespace ksieve
{

/*! \brief One batch travelling through the pipeline. */
struct work_item
{
    io::record_batch r1;
    io::record_batch r2;   //!< mates (empty unless paired)
    std::vector<unit_result> results;
    std::uint64_t first_unit{0};
    std::uint64_t sequence{0}; //!< the batch's position in the input (0, 1, ...)
};

/*! \brief Runs process(item) on the calling thread for every batch in input order, with reading ahead in
 * one thread and write(item) behind in another (write may be empty). At most 3 batches are in flight. */
void run_stream(unit_source & source, std::function<void(work_item &)> const & process,
                std::function<void(work_item const &)> const & write);

/*! \brief run_stream() with `workers` batches processed at once: process(item, worker) runs on the calling
 * thread (worker 0) and on workers - 1 further threads (1, 2, ...), each batch on one of them, while write
 * still sees the batches one at a time in input order. process must be safe to run concurrently for
 * different items and different worker indices (a scratch per worker). At most workers + 2 batches are in
 * flight. The first exception of a worker stops the others and is rethrown after every thread has stopped. */
void run_stream(unit_source & source, std::function<void(work_item &, unsigned)> const & process,
                std::function<void(work_item const &)> const & write, unsigned workers);

} // namespace ksieve
