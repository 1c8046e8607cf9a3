#pragma once
/*! \file
 * \brief The three-stage batch pipeline
 * (reader thread -> processing on the calling thread -> writer thread) with bounded memory.
 *
 * At most `depth` batches are in flight; an exception in the reader or writer thread is captured and
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
};

/*! \brief Runs process(item) on the calling thread for every batch in input order, with reading ahead in
 * one thread and write(item) behind in another (write may be empty). */
void run_stream(unit_source & source, std::function<void(work_item &)> const & process,
                std::function<void(work_item const &)> const & write, std::size_t depth = 3);

} // namespace ksieve
