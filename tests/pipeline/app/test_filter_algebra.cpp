// merge, intersect and subtract against an exact multiset oracle: the canonical k-mers of each
// sample counted naively. Exact filters must hold exactly the oracle's k-mers with its counts;
// lossy filters must lose none (union, intersection) or lose at most what fingerprint collisions
// explain (subtraction).
#include "test_helpers.hpp"

#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/kmers/kmer.hpp>

#include <algorithm>
#include <filesystem>
#include <map>

using namespace ksieve::test;

namespace
{

using multiset = std::map<std::uint64_t, std::uint64_t>; // canonical k-mer code -> count

constexpr unsigned k = 21;

// The canonical k-mers of the reads of a FASTQ text, counted.
multiset count_kmers(std::string const & fastq)
{
    multiset m;
    ksieve::kmer_scanner const scan{k, true};
    for (auto const & rec : split_fastq(fastq))
    {
        auto const a = rec.find('\n') + 1;
        std::string const seq = rec.substr(a, rec.find('\n', a) - a);
        scan.for_each(seq, [&](std::size_t, std::uint64_t const code) { ++m[code]; });
    }
    return m;
}

multiset with_min_count(multiset m, std::uint64_t const c)
{
    std::erase_if(m, [&](auto const & e) { return e.second < c; });
    return m;
}

class filter_algebra : public ::testing::Test
{
protected:
    void SetUp() override
    {
        KSIEVE_REQUIRE_DATA();
        // three samples: halves of one read set (sharing k-mers), and another organism's reads
        auto reads = split_fastq(read_file(data("hs_R1.fq").string()));
        reads.resize(std::min<std::size_t>(reads.size(), 2400));
        std::string a, b;
        for (std::size_t i = 0; i < reads.size(); ++i)
        {
            (i < reads.size() * 2 / 3 ? a : b) += reads[i];
            if (i < reads.size() / 4)
                b += reads[i]; // shared with a
        }
        auto const other = split_fastq(read_file(data("mixed.fq").string()));
        std::string c;
        for (std::size_t i = 0; i < other.size() && i < 2000; ++i)
            c += other[i];
        for (auto const & [name, text] : {std::pair{"a", a}, std::pair{"b", b}, std::pair{"c", c}})
        {
            write_file(tmp / (std::string{name} + ".fq"), text);
            truth[name] = count_kmers(text);
        }
    }

    // Build sample `name` into `out` with extra options.
    void build(std::string const & name, std::string const & out, std::string const & options)
    {
        std::string const kmer = options.find("-k ") == std::string::npos ? "-k 21 " : "";
        auto const r = run_ksieve("build -q " + kmer + "--sampling all " + options + " -o '" +
                                      (tmp / out) + "' '" + (tmp / (name + ".fq")) + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
    }

    // Every key of the universe (all samples) queried in the filter at `path`: its count.
    multiset query(std::string const & path) const
    {
        auto const f = ksieve::load_filter(path);
        ksieve::kmer_hasher const hash = f->kmer().hasher();
        multiset got;
        for (auto const & [name, m] : truth)
            for (auto const & [code, c] : m)
                if (std::uint64_t const n = f->count(hash(code)); n != 0)
                    got[code] = n;
        return got;
    }

    temp_dir tmp;
    std::map<std::string, multiset> truth;
};

multiset oracle_union(std::vector<multiset> const & in)
{
    multiset r;
    for (auto const & m : in)
        for (auto const & [code, c] : m)
            r[code] += c;
    return r;
}

multiset oracle_intersect(std::vector<multiset> const & in)
{
    multiset r;
    for (auto const & [code, c] : in[0])
    {
        std::uint64_t least = c;
        bool all = true;
        for (std::size_t i = 1; i < in.size() && all; ++i)
        {
            auto const it = in[i].find(code);
            all = it != in[i].end();
            if (all)
                least = std::min(least, it->second);
        }
        if (all)
            r[code] = least;
    }
    return r;
}

multiset oracle_subtract(std::vector<multiset> const & in, bool const counts)
{
    multiset r;
    for (auto const & [code, c] : in[0])
    {
        std::uint64_t others = 0;
        bool absent = true;
        for (std::size_t i = 1; i < in.size(); ++i)
            if (auto const it = in[i].find(code); it != in[i].end())
            {
                absent = false;
                others += it->second;
            }
        if (counts ? c > others : absent)
            r[code] = counts ? c - others : c;
    }
    return r;
}

// Exact filters, different shard layouts and sizes, several thread counts, with and without
// --min-count: every operation gives exactly the oracle's multiset.
TEST_F(filter_algebra, exact_filters_equal_the_multiset_oracle_for_every_operation)
{
    build("a", "a.ksf", "--fpr 0 --shards 16");
    build("b", "b.ksf", "--fpr 0 --shards 4");
    build("c", "c.ksf", "--fpr 0 --shards 64 --expected 10000000");
    ASSERT_GT(oracle_intersect({truth["a"], truth["b"]}).size(), 1000u);
    struct op_case
    {
        std::string command;
        std::vector<std::string> inputs;
    };
    for (op_case const & c :
         {op_case{"merge", {"a", "b", "c"}}, op_case{"intersect", {"a", "b"}},
          op_case{"intersect", {"b", "a", "c"}}, op_case{"subtract", {"a", "b"}},
          op_case{"subtract", {"b", "a", "c"}}, op_case{"subtract --counts", {"b", "a"}}})
        for (std::uint64_t const min_count : {1u, 2u})
        {
            std::vector<multiset> in;
            std::string args;
            for (auto const & n : c.inputs)
            {
                in.push_back(with_min_count(truth[n], min_count));
                args += " '" + (tmp / (n + ".ksf")) + "'";
            }
            multiset const expected = c.command == "merge" ? oracle_union(in)
                                      : c.command == "intersect"
                                          ? oracle_intersect(in)
                                          : oracle_subtract(in, c.command != "subtract");
            std::string bytes_one;
            for (int const t : {1, 3})
            {
                std::string const out = tmp / "out.ksf";
                auto const r =
                    run_ksieve(c.command + " -t " + std::to_string(t) + " --min-count " +
                                   std::to_string(min_count) + " -o '" + out + "'" + args,
                               tmp);
                ASSERT_EQ(r.status, 0) << c.command << ": " << r.err;
                std::string const what = c.command + " of " + std::to_string(c.inputs.size()) +
                                         " inputs, --min-count " + std::to_string(min_count);
                EXPECT_NE(r.err.find(std::to_string(expected.size()) + " distinct k-mers"),
                          std::string::npos)
                    << what << ": " << r.err;
                if (t == 1)
                {
                    multiset const got = query(out);
                    EXPECT_EQ(got.size(), expected.size()) << what;
                    EXPECT_TRUE(got == expected) << what;
                    bytes_one = read_file(out);
                }
                else
                    EXPECT_EQ(read_file(out), bytes_one)
                        << what << ": -t " << t << " differs from -t 1";
            }
        }
}

// Many per-sample inputs (the walk's scan of up to 16 heads and its heap beyond) and one-shard
// filters large enough that the walk gives back the inputs' pages while it is still reading them:
// the oracle's multisets, the same bytes for 1 and 3 threads.
TEST_F(filter_algebra, many_inputs_and_large_shards_equal_the_multiset_oracle)
{
    auto const reads = split_fastq(read_file(tmp / "a.fq"));
    std::vector<multiset> parts;
    std::vector<std::string> quoted; // " 'FILE'" of each part's filter
    std::string args;
    for (std::size_t p = 0; p < 20; ++p)
    {
        std::string text;
        for (std::size_t i = p; i < reads.size(); i += 20)
            text += reads[i];
        text += reads[0]; // a read every sample holds (the intersection)
        std::string name{"p"};
        name += std::to_string(p);
        write_file(tmp / (name + ".fq"), text);
        parts.push_back(count_kmers(text));
        build(name, name + ".ksf", "--fpr 0 --shards 4");
        quoted.push_back(" '" + (tmp / (name + ".ksf")) + "'");
        args += quoted.back();
    }
    build("a", "a1.ksf", "--fpr 0 --shards 1");
    build("b", "b1.ksf", "--fpr 0 --shards 1");
    ASSERT_GT(std::filesystem::file_size(tmp / "a1.ksf"),
              std::size_t{512} << 10); // several 256 KiB steps
    std::vector<multiset> const ab{truth["a"], truth["b"]};
    std::string const ab_args = " '" + (tmp / "a1.ksf") + "' '" + (tmp / "b1.ksf") + "'";
    std::vector<multiset> const first17(parts.begin(), parts.begin() + 17);
    ASSERT_GT(oracle_intersect(first17).size(), 50u);
    std::string args17; // the first 17 of args
    for (std::size_t p = 0; p < 17; ++p)
        args17 += quoted[p];
    struct op_case
    {
        std::string command;
        std::string args;
        multiset expected;
    };
    for (op_case const & c : {op_case{"merge", args, oracle_union(parts)},
                              op_case{"intersect", args17, oracle_intersect(first17)},
                              op_case{"subtract", args17, oracle_subtract(first17, false)},
                              op_case{"merge", ab_args, oracle_union(ab)},
                              op_case{"subtract", ab_args, oracle_subtract(ab, false)}})
    {
        std::string bytes_one;
        for (int const t : {1, 3})
        {
            std::string const out = tmp / "out.ksf";
            auto const r = run_ksieve(
                c.command + " -t " + std::to_string(t) + " -o '" + out + "'" + c.args, tmp);
            ASSERT_EQ(r.status, 0) << c.command << ": " << r.err;
            if (t == 1)
            {
                EXPECT_TRUE(query(out) == c.expected) << c.command << c.args;
                bytes_one = read_file(out);
            }
            else
                EXPECT_EQ(read_file(out), bytes_one) << c.command << ": -t 3 differs from -t 1";
        }
    }
}

// Lossy filters: union and intersection lose no k-mer (and never count less); subtraction loses a
// k-mer of A only to a fingerprint collision, within the false-positive rate.
TEST_F(filter_algebra, lossy_filters_lose_nothing_but_collisions)
{
    build("a", "a.ksf", "--fpr 0.01 --shards 16");
    build("b", "b.ksf", "--fpr 0.01 --shards 8");
    std::vector<multiset> const in{truth["a"], truth["b"]};
    for (std::string const command : {"merge", "intersect", "subtract"})
    {
        std::string const out = tmp / (command + ".ksf");
        auto const r = run_ksieve(
            command + " -o '" + out + "' '" + (tmp / "a.ksf") + "' '" + (tmp / "b.ksf") + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        multiset const expected = command == "merge"       ? oracle_union(in)
                                  : command == "intersect" ? oracle_intersect(in)
                                                           : oracle_subtract(in, false);
        multiset const got = query(out);
        std::size_t lost = 0;
        for (auto const & [code, c] : expected)
        {
            auto const it = got.find(code);
            if (it == got.end())
                ++lost;
            else
                EXPECT_GE(it->second, command == "subtract" ? std::uint64_t{1} : c) << command;
        }
        if (command == "subtract")
            EXPECT_LE(static_cast<double>(lost), 0.02 * static_cast<double>(expected.size()) + 5)
                << lost;
        else
            EXPECT_EQ(lost, 0u) << command;
    }
    // Bloom filters intersect by AND with no false negatives; they cannot subtract.
    build("a", "ab.ksf", "--type bloom --expected 2000000");
    build("b", "bb.ksf", "--type bloom --expected 2000000");
    auto const i = run_ksieve("intersect -q -o '" + (tmp / "ib.ksf") + "' '" + (tmp / "ab.ksf") +
                                  "' '" + (tmp / "bb.ksf") + "'",
                              tmp);
    ASSERT_EQ(i.status, 0) << i.err;
    multiset const both = oracle_intersect(in);
    multiset const got = query(tmp / "ib.ksf");
    EXPECT_TRUE(std::all_of(both.begin(), both.end(),
                            [&](auto const & e) { return got.contains(e.first); }));
}

// Combinations that cannot work are refused with the reason, exit 1 or 2, and no output.
TEST_F(filter_algebra, impossible_combinations_are_refused_and_leave_nothing)
{
    build("a", "a.ksf", "--fpr 0");
    build("a", "k25.ksf", "--fpr 0 -k 25");
    build("a", "bloom.ksf", "--type bloom --expected 2000000");
    build("a", "cuckoo.ksf", "--type cuckoo --expected 2000000");
    build("a", "counting.ksf", "--type counting-bloom --expected 2000000");
    struct refusal
    {
        std::string args;
        int status;
        std::string needle;
    };
    std::string const a = "'" + (tmp / "a.ksf") + "'";
    for (refusal const & c : {
             refusal{"subtract -o OUT " + a + " '" + (tmp / "k25.ksf") + "'", 1, "k = 25"},
             refusal{"intersect -o OUT " + a + " '" + (tmp / "bloom.ksf") + "'", 1,
                     "filter types differ"},
             refusal{"subtract -o OUT '" + (tmp / "bloom.ksf") + "' '" + (tmp / "bloom.ksf") + "'",
                     1, "a Bloom filter cannot remove k-mers"},
             refusal{"intersect -o OUT '" + (tmp / "cuckoo.ksf") + "' '" + (tmp / "cuckoo.ksf") +
                         "'",
                     1, "cuckoo filters cannot be combined"},
             refusal{"intersect -o OUT '" + (tmp / "counting.ksf") + "' '" +
                         (tmp / "counting.ksf") + "'",
                     1, "counting Bloom filters only merge"},
             refusal{"intersect --min-count 2 -o OUT '" + (tmp / "bloom.ksf") + "' '" +
                         (tmp / "bloom.ksf") + "'",
                     2, "--min-count above 1 needs quotient filters"},
             refusal{"subtract -o OUT " + a, 2, "at least one filter to subtract"},
         })
    {
        std::string args = c.args;
        std::string const out = tmp / "out.ksf";
        if (auto const p = args.find("OUT"); p != std::string::npos)
            args.replace(p, 3, std::string{"'"}.append(out).append("'"));
        auto const r = run_ksieve(args, tmp);
        EXPECT_EQ(r.status, c.status) << args << ": " << r.err;
        EXPECT_EQ(r.err.rfind("ksieve: error: ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(c.needle), std::string::npos) << args << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(tmp / "out.ksf")) << args;
        for (auto const & e : std::filesystem::directory_iterator{tmp.path()})
            EXPECT_EQ(e.path().string().find("ksieve-tmp"), std::string::npos) << args;
    }
}

// A corrupted payload in one input: exit status 1 naming the file, what the output path held before
// left as it was, no temporary left behind; for every operation, for an input moved to another
// shard layout and for Bloom filters.
TEST_F(filter_algebra, corrupted_inputs_are_refused_and_leave_the_output_as_it_was)
{
    build("a", "a.ksf", "--fpr 0 --shards 16");
    build("b", "b.ksf", "--fpr 0 --shards 16");
    build("b", "b4.ksf", "--fpr 0 --shards 4");
    build("a", "bloom_a.ksf", "--type bloom --expected 100000 --shards 16");
    build("b", "bloom_b.ksf", "--type bloom --expected 100000 --shards 16");
    // A flipped bit in the payload of the last shards (the file's last quarter, before the end
    // marker).
    auto corrupt = [&](std::string const & from, std::string const & to)
    {
        std::string bytes = read_file(tmp / from);
        bytes[bytes.size() - bytes.size() / 8] ^= 0x10;
        write_file(tmp / to, bytes);
        // (classify checks every payload when it loads a filter: it must find the damage too)
        auto const r =
            run_ksieve("classify -q -f '" + (tmp / to) + "' '" + (tmp / "a.fq") + "'", tmp);
        ASSERT_EQ(r.status, 1) << to;
        ASSERT_NE(r.err.find("checksum mismatch"), std::string::npos) << r.err;
    };
    corrupt("b.ksf", "bad.ksf");
    corrupt("b4.ksf", "bad4.ksf");
    corrupt("bloom_b.ksf", "bad_bloom.ksf");
    std::string const out = tmp / "out.ksf";
    auto q = [&](std::string const & name) { return " '" + (tmp / name) + "'"; };
    for (std::string const & c :
         {"merge" + q("a.ksf") + q("bad.ksf"), "intersect" + q("bad.ksf") + q("a.ksf"),
          "subtract" + q("a.ksf") + q("bad.ksf"), "merge" + q("a.ksf") + q("bad4.ksf"),
          "merge" + q("bloom_a.ksf") + q("bad_bloom.ksf")})
        for (int const t : {1, 3})
        {
            write_file(out, "what the output path held");
            std::string const args = c.substr(0, c.find(' ')) + " -t " + std::to_string(t) +
                                     " -o '" + out + "'" + c.substr(c.find(' '));
            auto const r = run_ksieve(args, tmp);
            EXPECT_EQ(r.status, 1) << args << ": " << r.err;
            EXPECT_EQ(r.err.rfind("ksieve: error: ", 0), 0u) << r.err;
            EXPECT_NE(r.err.find("checksum mismatch"), std::string::npos) << args << ": " << r.err;
            EXPECT_NE(r.err.find("bad"), std::string::npos) << args << ": " << r.err;
            EXPECT_EQ(read_file(out), "what the output path held") << args;
            for (auto const & e : std::filesystem::directory_iterator{tmp.path()})
                EXPECT_EQ(e.path().string().find("ksieve-tmp"), std::string::npos) << args;
        }
}

} // namespace
