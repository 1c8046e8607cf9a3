// merge, intersect and subtract of filters built without --expected (each sized for its own k-mers,
// so of different shard counts and fingerprint widths): the result equals the filter of the
// narrower layout built from the inputs' sequences, and a stop signal in the middle of moving a
// large filter to that layout ends the run as an interruption, leaving nothing behind.
#include "test_helpers.hpp"

#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>

#include <map>
#include <random>
#include <utility>

using namespace ksieve::test;

namespace
{

using contents =
    std::map<std::pair<std::size_t, std::uint64_t>, std::uint64_t>; // (shard, value) -> count

// A uniform random sequence of n bases.
std::string random_bases(std::size_t const n, std::uint64_t const seed)
{
    std::mt19937_64 rng{seed};
    std::string s(n, 'A');
    for (auto & c : s)
        c = "ACGT"[rng() & 3];
    return s;
}

void write_fasta(std::string const & path, std::string const & seq)
{
    std::string text = ">s\n";
    for (std::size_t i = 0; i < seq.size(); i += 80)
        text += seq.substr(i, 80) + "\n";
    write_file(path, text);
}

contents contents_of(std::string const & path)
{
    auto const f = ksieve::load_filter(path);
    auto const & q = static_cast<ksieve::sharded_filter<ksieve::quotient_filter> const &>(*f);
    contents m;
    for (std::size_t s = 0; s < f->num_shards(); ++s)
        q.shard(s).for_each([&](std::uint64_t const v, std::uint64_t const c) { m[{s, v}] += c; });
    return m;
}

std::string info_field(std::string const & path, std::string const & key, temp_dir const & tmp)
{
    auto const r = run_ksieve("info --json '" + path + "'", tmp);
    EXPECT_EQ(r.status, 0) << r.err;
    return std::to_string(static_cast<std::uint64_t>(json_number(r.out, key)));
}

class merge_layouts : public ::testing::Test
{
protected:
    temp_dir tmp;
    void build(std::string const & out, std::string const & inputs,
               std::string const & options = "")
    {
        auto const r = run_ksieve(
            "build -q -t 2 --sampling all " + options + " -o '" + (tmp / out) + "' " + inputs, tmp);
        ASSERT_EQ(r.status, 0) << r.err;
    }
};

} // namespace

// Filters of their own sizes (2 shards of wide fingerprints and 1 of narrow ones): merge, intersect
// and subtract give the contents of the operation's k-mers in a filter of the narrow input's
// layout.
TEST_F(merge_layouts, filters_of_their_own_sizes_combine_in_the_narrower_width)
{
    std::string const a = random_bases(700000, 1);
    std::string const b = a.substr(0, 20000) + random_bases(15000, 2); // shares k-mers with a
    write_fasta(tmp / "a.fa", a);
    write_fasta(tmp / "b.fa", b);
    write_fasta(tmp / "b_only.fa", b.substr(20000));
    build("a.ksf", "'" + (tmp / "a.fa") + "'");
    build("b.ksf", "'" + (tmp / "b.fa") + "'");
    ASSERT_EQ(info_field(tmp / "a.ksf", "shards", tmp), "2");
    ASSERT_EQ(info_field(tmp / "b.ksf", "shards", tmp), "1");
    // the result's layout: b's fingerprint width (the narrower), in a's 2 shards, which keep as
    // many bits of each hash at b's size; built from the sequences
    std::string const layout =
        "--expected " + info_field(tmp / "b.ksf", "expected", tmp) + " --shards 2";
    build("union.ksf", "'" + (tmp / "a.fa") + "' '" + (tmp / "b.fa") + "'", layout);
    build("b_same.ksf", "'" + (tmp / "b.fa") + "'", layout);
    build("b_only.ksf", "'" + (tmp / "b_only.fa") + "'", layout);
    for (std::string const order : {"a b", "b a"})
    {
        SCOPED_TRACE(order);
        std::string const in = order == "a b"
                                   ? "'" + (tmp / "a.ksf") + "' '" + (tmp / "b.ksf") + "'"
                                   : "'" + (tmp / "b.ksf") + "' '" + (tmp / "a.ksf") + "'";
        auto const m = run_ksieve("merge -q -t 2 -o '" + (tmp / "m.ksf") + "' " + in, tmp);
        ASSERT_EQ(m.status, 0) << m.err;
        EXPECT_EQ(info_field(tmp / "m.ksf", "shards", tmp), "2");
        EXPECT_TRUE(contents_of(tmp / "m.ksf") == contents_of(tmp / "union.ksf"));
    }
    // b's k-mers that a lacks (b_only, except k-mers across the junction and chance fingerprint
    // collisions)
    auto const s = run_ksieve("subtract -q -t 2 -o '" + (tmp / "s.ksf") + "' '" + (tmp / "b.ksf") +
                                  "' '" + (tmp / "a.ksf") + "'",
                              tmp);
    ASSERT_EQ(s.status, 0) << s.err;
    contents const sub = contents_of(tmp / "s.ksf");
    contents const only = contents_of(tmp / "b_only.ksf");
    std::size_t extra = 0, missing = 0;
    for (auto const & [key, count] : sub)
        extra += only.count(key) == 0 ? 1 : 0; // (only the 30 k-mers across the junction)
    for (auto const & [key, count] : only)
        missing += sub.count(key) == 0 ? 1 : 0;
    EXPECT_LE(extra, 30u);
    EXPECT_LE(missing, 60u);
    EXPECT_GE(sub.size(), 14000u);
    // intersect: b's first 20000 bases, with the smaller count of each
    auto const i = run_ksieve("intersect -q -t 2 -o '" + (tmp / "i.ksf") + "' '" + (tmp / "a.ksf") +
                                  "' '" + (tmp / "b.ksf") + "'",
                              tmp);
    ASSERT_EQ(i.status, 0) << i.err;
    contents const both = contents_of(tmp / "i.ksf");
    contents const b_same = contents_of(tmp / "b_same.ksf");
    EXPECT_GE(both.size(), 19900u);
    for (auto const & [key, count] : both)
        EXPECT_TRUE(b_same.count(key) == 1 && b_same.at(key) >= count);
}

// SIGTERM while a large filter (8 shards) is moved to the layout of a small one (1 shard): the run
// ends as interrupted (143, nothing left behind) or, where it had already finished, with its
// complete output; never by the SIGKILL that follows ten seconds later.
TEST_F(merge_layouts, sigterm_while_moving_a_filter_to_another_layout_interrupts_the_run)
{
    write_fasta(tmp / "big.fa", random_bases(3000000, 3));
    write_fasta(tmp / "small.fa", random_bases(100000, 4));
    build("big.ksf", "'" + (tmp / "big.fa") + "'");
    build("small.ksf", "'" + (tmp / "small.fa") + "'");
    ASSERT_EQ(info_field(tmp / "big.ksf", "shards", tmp), "8");
    ASSERT_EQ(info_field(tmp / "small.ksf", "shards", tmp), "1");
    for (char const * const command : {"merge", "subtract"})
        for (char const * const delay : {"0.2", "0.5"})
        {
            SCOPED_TRACE(std::string{command} + " signalled after " + delay + " s");
            std::string const cmd =
                "timeout --preserve-status -k 10 -s TERM " + std::string{delay} + " '" + binary() +
                "' " + command + " -q -t 2 -o '" + (tmp / "out.ksf") + "' '" + (tmp / "big.ksf") +
                "' '" + (tmp / "small.ksf") + "' 2>'" + (tmp / "err.txt") + "'";
            int const raw = std::system(
                ("bash -c \"" + cmd + "\"; echo $? > '" + (tmp / "status.txt") + "'").c_str());
            (void)raw;
            std::string const status = read_file(tmp / "status.txt");
            std::string const err = read_file(tmp / "err.txt");
            EXPECT_TRUE(status == "143\n" || status == "0\n") << status << err;
            if (status == "143\n")
            {
                EXPECT_NE(err.find("ksieve: error: interrupted (SIGTERM)"), std::string::npos)
                    << err;
                EXPECT_FALSE(std::filesystem::exists(tmp / "out.ksf"));
            }
            else
                EXPECT_EQ(run_ksieve("info '" + (tmp / "out.ksf") + "'", tmp).status, 0);
            for (auto const & entry : std::filesystem::directory_iterator{tmp.path()})
                EXPECT_EQ(entry.path().filename().string().find("ksieve-tmp"), std::string::npos)
                    << "left behind: " << entry.path().filename();
            std::filesystem::remove(tmp / "out.ksf");
        }
}
