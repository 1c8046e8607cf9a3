// dedup within a memory budget far below what the run takes without one (24 MiB for the process,
// which peaks near 190 MB unlimited; the tables get about 8 MiB of it, less than they grow to
// unlimited): the run finishes (exit 0), looks at a sample of the k-mers, keeps at least as many
// reads as the run without a limit and at most 1.1x them, gives the same bytes for any thread
// count, says once on stderr that it reached the budget, and records in --stats what it forgot and
// from which read on; beyond the deepest sample the lowest counts are forgotten first (the quotient
// filter against an exact oracle).
#include "test_helpers.hpp"

#include <ksieve/filters/quotient/quotient_filter.hpp>

#include <map>

namespace
{

using namespace ksieve::test;

// Reads of a metagenome: 20 random genomes of 25 kbp, 150,000 reads of 150 bases at 0.5% errors,
// about 45x each.
void write_metagenome(std::string const & path)
{
    std::mt19937_64 rng{42};
    write_file(path, metagenome_fastq(rng, 20, 25000, 150000));
}

TEST(dedup_budget, a_budget_far_below_the_table_forgets_and_keeps_more_reads)
{
    temp_dir tmp;
    std::string const reads = tmp / "meta.fq";
    write_metagenome(reads);
    auto dedup = [&](std::string const & name, std::string const & extra, unsigned const t)
    {
        return run_ksieve("dedup -q -t " + std::to_string(t) + " " + extra + " --novel '" +
                              tmp / (name + ".fq") + "' --stats '" + tmp / (name + ".json") +
                              "' '" + reads + "'",
                          tmp);
    };
    auto const free_run = dedup("free", "", 2);
    ASSERT_EQ(free_run.status, 0) << free_run.err;
    std::string const free_json = read_file(tmp / "free.json");
    EXPECT_EQ(json_number(free_json, "forgotten_kmers"), 0.0);
    EXPECT_NE(free_json.find("\"forgetting_from_read\": null"), std::string::npos) << free_json;
    EXPECT_EQ(free_run.err, "");
    double const free_kept = json_number(free_json, "novel");
    std::string first;
    for (unsigned const t : {1u, 3u})
    {
        auto const r = dedup("limited" + std::to_string(t), "--max-memory 24M", t);
        ASSERT_EQ(r.status, 0) << r.err;
        // said once
        EXPECT_NE(r.err.find("ksieve: warning: the dedup filter reached its memory budget"),
                  std::string::npos)
            << r.err;
        EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
        std::string const json = read_file(tmp / ("limited" + std::to_string(t) + ".json"));
        EXPECT_GT(json_number(json, "forgotten_kmers"), 0.0);
        EXPECT_GE(json_number(json, "forgetting_from_read"), 1.0);
        // the tables' part of the process's 24 MiB (the rest is kept for reads and buffers)
        EXPECT_GT(json_number(json, "memory_budget"), 0.0);
        EXPECT_LT(json_number(json, "memory_budget"), 24.0 * 1024 * 1024);
        EXPECT_LT(json_number(json, "kmer_sample"), 1.0);
        EXPECT_GE(json_number(json, "novel"), free_kept);
        EXPECT_LE(json_number(json, "novel"), 1.1 * free_kept);
        EXPECT_EQ(json_number(json, "known") + json_number(json, "novel"), 150000.0);
        // the process's limit, and its peak resident set within it + 10% (sanitizer builds keep
        // shadow memory beyond it)
        EXPECT_EQ(json_number(json, "memory_limit"), 24.0 * 1024 * 1024);
        EXPECT_GT(json_number(json, "peak_resident_bytes"), 0.0);
#ifndef KSIEVE_SANITIZED
        EXPECT_LE(json_number(json, "peak_resident_bytes"), 1.1 * 24 * 1024 * 1024);
#endif
        std::string const out = read_file(tmp / ("limited" + std::to_string(t) + ".fq"));
        if (t == 1)
            first = out;
        else
            EXPECT_EQ(out, first) << "-t " << t;
    }
}

TEST(dedup_budget, forgetting_drops_the_lowest_counts_first)
{
    ksieve::filter_config cfg;
    cfg.type = ksieve::filter_type::quotient;
    cfg.fpr = 0;
    cfg.kmer.k = 15;
    auto f = ksieve::quotient_filter::create(cfg, 30, 0);
    std::mt19937_64 rng{9};
    std::map<std::uint64_t, std::uint64_t> oracle;
    while (oracle.size() < 3000)
        oracle[rng() & ((std::uint64_t{1} << 30) - 1)] = 1 + rng() % 5;
    for (auto const & [key, count] : oracle)
        ASSERT_EQ(f.insert(key, count), ksieve::insert_status::ok);
    std::uint64_t const used = f.used_slots();
    std::uint64_t const forgotten = f.forget(used / 2);
    EXPECT_LE(f.used_slots(), used / 2);
    EXPECT_EQ(f.distinct() + forgotten, oracle.size());
    // every key kept has its count; no forgotten key has a higher count than a kept one
    std::uint64_t lowest_kept = 100, highest_forgotten = 0;
    for (auto const & [key, count] : oracle)
    {
        std::uint64_t const c = f.count(key);
        if (c == 0)
            highest_forgotten = std::max(highest_forgotten, count);
        else
        {
            EXPECT_EQ(c, count) << key;
            lowest_kept = std::min(lowest_kept, count);
        }
    }
    EXPECT_LE(highest_forgotten, lowest_kept);
    // room within a cap: a table that cannot grow past its cap forgets; one that can, grows later
    auto g = ksieve::quotient_filter::create(cfg, 30, 0);
    for (auto const & [key, count] : oracle)
        ASSERT_EQ(g.insert(key, 1), ksieve::insert_status::ok);
    EXPECT_EQ(g.make_room(std::uint64_t{1} << 40, 1000000), 0u);
    EXPECT_EQ(g.distinct(), oracle.size());
    EXPECT_GT(g.make_room(g.bytes_at(g.slots()), g.slots()), 0u);
    EXPECT_LT(g.distinct(), oracle.size());
}

} // namespace
