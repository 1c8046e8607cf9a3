// The batch pipeline: batches processed by several workers at once are written in input order,
// exactly once each, and an error in a worker stops the run and is rethrown.
#include <ksieve/engine/stream.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace
{

class stream : public ::testing::Test
{
protected:
    void SetUp() override
    {
        dir =
            std::filesystem::temp_directory_path() /
            ("ksieve_stream_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir);
        path = (dir / "reads.fq").string();
        std::ofstream out{path};
        for (int i = 0; i < records; ++i)
            out << "@r" << i << "\nACGTACGTAC\n+\nIIIIIIIIII\n";
    }
    void TearDown() override { std::filesystem::remove_all(dir); }

    // Small batches, so that the run has many of them.
    [[nodiscard]] ksieve::unit_source source() const
    {
        ksieve::io::reader_options options;
        options.batch_records = 37;
        return ksieve::unit_source{ksieve::input_args{{path}}, options};
    }

    static constexpr int records = 5000;
    std::filesystem::path dir;
    std::string path;
};

// The oracle is the input itself: the record names written, in order, are r0, r1, ... once each,
// for any number of workers, although the workers finish their batches out of order (a batch's work
// takes a time that depends on its position).
TEST_F(stream, workers_write_every_batch_once_in_input_order)
{
    for (unsigned const workers : {1u, 2u, 5u})
    {
        auto src = source();
        std::vector<std::string> written;
        std::atomic<int> concurrent{0}, most{0};
        std::set<unsigned> used;
        std::mutex used_mutex;
        ksieve::run_stream(
            src,
            [&](ksieve::work_item & item, unsigned const worker)
            {
                int const now = ++concurrent;
                for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);)
                {
                }
                {
                    std::lock_guard lock{used_mutex};
                    used.insert(worker);
                }
                std::this_thread::sleep_for(
                    std::chrono::microseconds{(item.sequence * 7919) % 400});
                item.results.assign(item.r1.size(), ksieve::unit_result{});
                --concurrent;
            },
            [&](ksieve::work_item const & item)
            {
                ASSERT_EQ(item.results.size(), item.r1.size());
                for (std::size_t i = 0; i < item.r1.size(); ++i)
                    written.emplace_back(item.r1[i].name);
            },
            workers);
        ASSERT_EQ(written.size(), static_cast<std::size_t>(records)) << "workers " << workers;
        for (int i = 0; i < records; ++i)
        {
            std::string want = "r";
            want += std::to_string(i);
            ASSERT_EQ(written[static_cast<std::size_t>(i)], want) << "workers " << workers;
        }
        EXPECT_LE(most.load(), static_cast<int>(workers));
        for (unsigned const w : used)
            EXPECT_LT(w, workers);
    }
}

// An exception in one worker ends the run (no hang), is rethrown once, and nothing after the
// failing batch is written.
TEST_F(stream, a_worker_error_stops_the_run_and_is_rethrown)
{
    auto src = source();
    std::uint64_t last_written = 0;
    bool any = false;
    EXPECT_THROW(ksieve::run_stream(
                     src,
                     [&](ksieve::work_item & item, unsigned)
                     {
                         if (item.sequence == 20)
                             throw std::runtime_error{"batch 20"};
                     },
                     [&](ksieve::work_item const & item)
                     {
                         last_written = item.sequence;
                         any = true;
                     },
                     3),
                 std::runtime_error);
    if (any)
    {
        EXPECT_LT(last_written, 20u);
    }
}

} // namespace
