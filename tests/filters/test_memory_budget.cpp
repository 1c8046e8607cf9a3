// The memory budget of the filters: charges against a limit, released with the tables, and sizes
// parsed as users write them.
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <gtest/gtest.h>

namespace
{

class memory_budget : public ::testing::Test
{
protected:
    void TearDown() override { ksieve::set_memory_limit(0); }
};

TEST_F(memory_budget, charges_add_up_to_the_limit_and_are_released)
{
    std::uint64_t const base = ksieve::charged_memory();
    ksieve::set_memory_limit(base + 1000);
    EXPECT_EQ(ksieve::memory_limit(), base + 1000);
    EXPECT_TRUE(ksieve::memory_limit_is_explicit());
    {
        ksieve::memory_charge a{600};
        EXPECT_EQ(ksieve::charged_memory(), base + 600);
        EXPECT_THROW(ksieve::memory_charge{401}, ksieve::memory_limit_error);
        EXPECT_EQ(ksieve::charged_memory(), base + 600); // a refused charge leaves nothing
        ksieve::memory_charge b{400};
        EXPECT_EQ(ksieve::charged_memory(), base + 1000);
        ksieve::memory_charge c{std::move(b)};
        EXPECT_EQ(ksieve::charged_memory(), base + 1000);
    }
    EXPECT_EQ(ksieve::charged_memory(), base);
    ksieve::set_memory_limit(0);
    EXPECT_FALSE(ksieve::memory_limit_is_explicit());
    // the default: the machine's (or cgroup's) memory less what a run keeps for reads and buffers
    std::uint64_t const machine = ksieve::physical_memory();
    ASSERT_GT(machine, ksieve::memory_reserve());
    EXPECT_EQ(ksieve::memory_limit(), machine - ksieve::memory_reserve());
    std::uint64_t const kept = ksieve::memory_reserve();
    ksieve::set_memory_reserve(machine + 1); // more than there is: a quarter is left
    EXPECT_EQ(ksieve::memory_limit(), machine / 4);
    ksieve::set_memory_reserve(kept);
    EXPECT_EQ(ksieve::memory_limit(), machine - kept);
}

TEST_F(memory_budget, the_default_limit_is_planned_as_an_explicit_one_is)
{
    std::uint64_t const machine = ksieve::physical_memory();
    ASSERT_GT(machine, std::uint64_t{1} << 20);
    std::uint64_t const kept = machine / 10;
    ksieve::plan_default_memory_limit(kept);
    EXPECT_TRUE(ksieve::memory_limit_is_planned());
    EXPECT_FALSE(ksieve::memory_limit_is_explicit()); // messages name the cgroup or the machine
    EXPECT_EQ(ksieve::memory_limit(), machine - kept);
    EXPECT_EQ(ksieve::process_memory_limit(), machine);
    std::string const origin = ksieve::memory_limit_origin();
    EXPECT_NE(origin.find(ksieve::memory_limit_from_cgroup() ? "cgroup" : "machine's memory"),
              std::string::npos)
        << origin;
    EXPECT_NE(origin.find(ksieve::format_bytes(machine)), std::string::npos) << origin;
    // more kept than three quarters: the tables still get a quarter
    ksieve::plan_default_memory_limit(machine);
    EXPECT_EQ(ksieve::memory_limit(), machine / 4);
    // --max-memory replaces it; 0 restores the unplanned default
    ksieve::set_memory_limit(std::uint64_t{64} << 20, std::uint64_t{16} << 20);
    EXPECT_TRUE(ksieve::memory_limit_is_explicit());
    EXPECT_EQ(ksieve::memory_limit(), std::uint64_t{48} << 20);
    EXPECT_EQ(ksieve::memory_limit_origin().rfind("--max-memory 64 MiB", 0), 0u);
    ksieve::set_memory_limit(0);
    EXPECT_FALSE(ksieve::memory_limit_is_planned());
    EXPECT_EQ(ksieve::memory_limit(), machine - ksieve::memory_reserve());
}

TEST_F(memory_budget, filter_tables_are_charged_and_refused_over_the_limit)
{
    std::uint64_t const base = ksieve::charged_memory();
    ksieve::filter_config cfg;
    cfg.kmer = ksieve::kmer_params{21, true, ksieve::hash_id::mix2k_v1, 1, 1};
    cfg.fpr = 0.01;
    cfg.expected = 1000000;
    cfg.shard_bits = 4;
    for (auto const type :
         {ksieve::filter_type::quotient, ksieve::filter_type::bloom, ksieve::filter_type::cuckoo,
          ksieve::filter_type::counting_bloom, ksieve::filter_type::bloom_classic})
    {
        cfg.type = type;
        std::uint64_t bytes = 0;
        {
            auto const f = ksieve::make_filter(cfg);
            bytes = ksieve::charged_memory() - base;
            EXPECT_GE(bytes, f->stats().bytes * 9 / 10) << to_string(type);
            auto const copy = f->clone();
            EXPECT_EQ(ksieve::charged_memory() - base, 2 * bytes) << to_string(type);
        }
        EXPECT_EQ(ksieve::charged_memory(), base) << to_string(type);
        ksieve::set_memory_limit(base + bytes / 2);
        EXPECT_THROW((void)ksieve::make_filter(cfg), ksieve::memory_limit_error) << to_string(type);
        EXPECT_EQ(ksieve::charged_memory(), base) << to_string(type);
        ksieve::set_memory_limit(0);
    }
}

TEST_F(memory_budget, sizes_parse_in_binary_units)
{
    EXPECT_EQ(ksieve::parse_size("4096", "--max-memory"), 4096u);
    EXPECT_EQ(ksieve::parse_size("100k", "--max-memory"), 102400u);
    EXPECT_EQ(ksieve::parse_size("512M", "--max-memory"), 512u << 20);
    EXPECT_EQ(ksieve::parse_size("8G", "--max-memory"), std::uint64_t{8} << 30);
    EXPECT_EQ(ksieve::parse_size("8GB", "--max-memory"), std::uint64_t{8} << 30);
    EXPECT_EQ(ksieve::parse_size("8GiB", "--max-memory"), std::uint64_t{8} << 30);
    EXPECT_EQ(ksieve::parse_size("2.5g", "--max-memory"), std::uint64_t{5} << 29);
    EXPECT_EQ(ksieve::parse_size("1T", "--max-memory"), std::uint64_t{1} << 40);
    for (char const * bad : {"", "abc", "0", "-1G", "12Q", "1e400", "nan", "G"})
        EXPECT_THROW((void)ksieve::parse_size(bad, "--max-memory"), ksieve::usage_error) << bad;
    EXPECT_EQ(ksieve::format_bytes(100), "100 bytes");
    EXPECT_EQ(ksieve::format_bytes(std::uint64_t{3} << 30), "3.0 GiB");
}

} // namespace
