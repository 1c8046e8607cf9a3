// Tests of ksieve dedup --exact: the sequence keys against their definition, the binary against a
// naive set of sequences (single reads and pairs, on both strands or forward only, with N's, lower
// case and reverse-complement and swapped-mate duplicates, for several thread counts, from a file
// and from stdin), against seqkit rmdup -s, and its usage errors.
#include "test_helpers.hpp"

#include <ksieve/engine/exact_dedup.hpp>

#include <set>

using namespace ksieve::test;

namespace
{

// Upper case and complement, written independently of the engine's tables.
char upper(char const c)
{
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
}
char complement(char const c)
{
    switch (upper(c))
    {
    case 'A':
        return 'T';
    case 'T':
        return 'A';
    case 'C':
        return 'G';
    case 'G':
        return 'C';
    case 'R':
        return 'Y';
    case 'Y':
        return 'R';
    case 'K':
        return 'M';
    case 'M':
        return 'K';
    case 'B':
        return 'V';
    case 'V':
        return 'B';
    case 'D':
        return 'H';
    case 'H':
        return 'D';
    default:
        return upper(c);
    }
}
std::string upper_form(std::string s)
{
    for (auto & c : s)
        c = upper(c);
    return s;
}
std::string reverse_complement_form(std::string const & s)
{
    std::string r(s.rbegin(), s.rend());
    for (auto & c : r)
        c = complement(c);
    return r;
}

// prefix followed by i (appended: `"..." + std::string&&` trips a GCC 12 -Wrestrict false
// positive)
std::string numbered(char const * const prefix, std::size_t const i)
{
    return std::string{prefix}.append(std::to_string(i));
}

// Whether two texts are equal; a failure shows where they first differ (gtest's own line diff of
// long texts needs memory quadratic in their lines).
::testing::AssertionResult same_text(std::string const & a, std::string const & b)
{
    if (a == b)
        return ::testing::AssertionSuccess();
    std::size_t at = 0;
    while (at < a.size() && at < b.size() && a[at] == b[at])
        ++at;
    std::size_t const from = at > 60 ? at - 60 : 0;
    return ::testing::AssertionFailure() << "the texts (" << a.size() << " and " << b.size()
                                         << " bytes) differ at byte " << at << ":\n"
                                         << a.substr(from, 120) << "\n---\n"
                                         << b.substr(from, 120);
}

struct fq_read
{
    std::string name, seq;
};

std::string fastq(std::vector<fq_read> const & reads)
{
    std::string text;
    for (auto const & r : reads)
        text += "@" + r.name + "\n" + r.seq + "\n+\n" + std::string(r.seq.size(), 'I') + "\n";
    return text;
}

// The oracle: per unit, whether an earlier unit had the same key (a naive set of sequences).
// Single reads: the upper-case form, with both strands the smaller of it and its reverse
// complement; pairs: both mates' upper-case forms, in either order with both strands.
std::vector<bool> naive_known(std::vector<fq_read> const & r1, std::vector<fq_read> const * r2,
                              bool const both_strands)
{
    std::set<std::pair<std::string, std::string>> seen;
    std::vector<bool> known;
    for (std::size_t u = 0; u < r1.size(); ++u)
    {
        std::pair<std::string, std::string> key;
        if (r2 == nullptr)
        {
            key.first = upper_form(r1[u].seq);
            if (both_strands)
                key.first = std::min(key.first, reverse_complement_form(r1[u].seq));
        }
        else
        {
            key = {upper_form(r1[u].seq), upper_form((*r2)[u].seq)};
            if (both_strands && key.second < key.first)
                std::swap(key.first, key.second);
        }
        known.push_back(!seen.insert(key).second);
    }
    return known;
}

// The FASTQ records of the reads whose known flag is `which`, in order.
std::string select(std::vector<fq_read> const & reads, std::vector<bool> const & known,
                   bool const which)
{
    std::vector<fq_read> out;
    for (std::size_t i = 0; i < reads.size(); ++i)
        if (known[i] == which)
            out.push_back(reads[i]);
    return fastq(out);
}

// Random reads with planted duplicates: exact copies, reverse complements, lower-case copies,
// copies with an N, and N's throughout.
std::vector<fq_read> planted_reads(std::size_t const n, unsigned const seed)
{
    std::mt19937_64 rng{seed};
    auto base = [&] { return "ACGT"[rng() % 4]; };
    std::vector<fq_read> reads;
    for (std::size_t i = 0; i < n; ++i)
    {
        fq_read r{numbered("r", i), {}};
        unsigned const kind = static_cast<unsigned>(rng() % 10);
        if (i == 0 || kind >= 5)
        {
            r.seq.resize(20 + rng() % 60);
            for (auto & c : r.seq)
                c = rng() % 50 == 0 ? 'N' : base();
            if (kind == 9) // a short one: equal short reads come up by chance too
                r.seq.resize(2 + rng() % 3);
        }
        else
        {
            std::string const & old = reads[rng() % reads.size()].seq;
            r.seq = kind == 0   ? old
                    : kind == 1 ? revcomp(old)
                    : kind == 2 ? upper_form(old) // (old may be lower case)
                                : old;
            if (kind == 3)
                for (auto & c : r.seq)
                    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (kind == 4 && !r.seq.empty())
                r.seq[rng() % r.seq.size()] = 'N';
        }
        reads.push_back(std::move(r));
    }
    return reads;
}

class dedup_exact : public ::testing::Test
{
protected:
    temp_dir tmp;

    // Runs `ksieve dedup --exact EXTRA INPUTS` with --novel/--known (and mate-2 outputs when
    // paired), --report and --stats into directory `dir`; expects success.
    void run(std::string const & dir, std::string const & extra, std::string const & inputs,
             bool const paired)
    {
        std::filesystem::create_directories(dir);
        std::string args = "dedup --exact -q " + extra + " --novel '" + dir + "/n.fq' --known '" +
                           dir + "/k.fq' --report '" + dir + "/r.tsv' --stats '" + dir +
                           "/s.json' ";
        if (paired)
            args += "--novel2 '" + dir + "/n2.fq' --known2 '" + dir + "/k2.fq' ";
        auto const r = run_ksieve(args + inputs, tmp);
        ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
    }
};

} // namespace

TEST(sequence_keys, the_reverse_hash_is_the_hash_of_the_reverse_complement)
{
    std::mt19937_64 rng{7};
    std::string const alphabet = "ACGTNacgtnRYKMBVDHSWUryk.-";
    for (int i = 0; i < 2000; ++i)
    {
        std::string s(rng() % 70, 'A');
        for (auto & c : s)
            c = alphabet[rng() % alphabet.size()];
        std::uint64_t const seed = rng();
        EXPECT_EQ(ksieve::sequence_hash(s, seed, true),
                  ksieve::sequence_hash(reverse_complement_form(s), seed, false))
            << s;
        EXPECT_EQ(ksieve::sequence_hash(s, seed, false),
                  ksieve::sequence_hash(upper_form(s), seed, false));
        ksieve::sequence_key_options const both{true, seed};
        EXPECT_EQ(ksieve::read_key(s, both), ksieve::read_key(reverse_complement_form(s), both));
        std::string t(rng() % 40, 'C');
        for (auto & c : t)
            c = alphabet[rng() % 4];
        EXPECT_EQ(ksieve::pair_key(s, t, both), ksieve::pair_key(t, s, both));
        ksieve::sequence_key_options const forward{false, seed};
        if (upper_form(s) != upper_form(t))
        {
            EXPECT_NE(ksieve::pair_key(s, t, forward), ksieve::pair_key(t, s, forward));
        }
    }
    // Different sequences have different keys (any collision among these would be a bug).
    std::set<std::uint64_t> keys;
    std::size_t distinct = 0;
    std::set<std::string> seen;
    for (int i = 0; i < 50000; ++i)
    {
        std::string s(1 + rng() % 40, 'A');
        for (auto & c : s)
            c = alphabet[rng() % 5];
        if (seen.insert(s).second)
        {
            ++distinct;
            keys.insert(ksieve::sequence_hash(s, ksieve::default_hash_seed, false));
        }
    }
    EXPECT_EQ(keys.size(), distinct);
}

TEST_F(dedup_exact, single_reads_equal_a_naive_set_of_sequences_for_every_thread_count)
{
    // Over 16384 reads: duplicates across batches as well as inside them.
    auto const reads = planted_reads(40000, 1);
    std::string const in = tmp / "in.fq";
    write_file(in, fastq(reads));
    for (bool const both : {true, false})
    {
        auto const known = naive_known(reads, nullptr, both);
        std::size_t const dups =
            static_cast<std::size_t>(std::count(known.begin(), known.end(), true));
        ASSERT_GT(dups, 10000u);
        for (int const t : {1, 2, 3})
        {
            std::string const d = tmp / ((both ? "both" : "fwd") + std::to_string(t));
            run(d, std::string{"-t "} + std::to_string(t) + (both ? "" : " --no-canonical"),
                "'" + in + "'", false);
            EXPECT_TRUE(same_text(read_file(d + "/n.fq"), select(reads, known, false))) << d;
            EXPECT_TRUE(same_text(read_file(d + "/k.fq"), select(reads, known, true))) << d;
            auto const rows = read_report(d + "/r.tsv");
            ASSERT_EQ(rows.size(), reads.size());
            for (std::size_t i = 0; i < rows.size(); ++i)
            {
                ASSERT_EQ(rows[i].id, reads[i].name);
                ASSERT_EQ(rows[i].kmers, 1u);
                ASSERT_EQ(rows[i].hits, known[i] ? 1u : 0u);
                ASSERT_EQ(rows[i].cls, known[i] ? "known" : "novel");
            }
            std::string const stats = read_file(d + "/s.json");
            EXPECT_EQ(json_number(stats, "reads"), static_cast<double>(reads.size()));
            EXPECT_EQ(json_number(stats, "known"), static_cast<double>(dups));
            EXPECT_EQ(json_number(stats, "known") + json_number(stats, "novel"),
                      json_number(stats, "reads"));
            EXPECT_EQ(json_number(stats, "kmers"), static_cast<double>(reads.size()));
            EXPECT_EQ(json_number(stats, "hits"), static_cast<double>(dups));
            EXPECT_EQ(json_number(stats, "min_hit_fraction"), 1.0);
            for (auto const * f : {"/n.fq", "/k.fq", "/r.tsv"})
            {
                EXPECT_TRUE(same_text(read_file(d + f), read_file(tmp / ((both ? "both1" : "fwd1") +
                                                                         std::string{f}))));
            }
        }
    }
}

TEST_F(dedup_exact, pairs_are_one_unit_and_swapped_mates_are_duplicates_on_both_strands)
{
    auto const pool = planted_reads(6000, 2);
    std::mt19937_64 rng{3};
    std::vector<fq_read> r1, r2;
    for (std::size_t u = 0; u < 20000; ++u)
    {
        std::string const name = numbered("p", u);
        std::size_t a = rng() % pool.size(), b = rng() % pool.size();
        unsigned const kind = static_cast<unsigned>(rng() % 6);
        if (kind <= 3 && u > 0) // a copy of an earlier pair: as it was, swapped, one mate changed,
        {                       // or one mate reverse-complemented (a duplicate on no strand)
            std::size_t const v = rng() % u;
            std::string s1 = r1[v].seq, s2 = r2[v].seq;
            if (kind == 1)
                std::swap(s1, s2);
            if (kind == 2)
                s2 = pool[b].seq;
            if (kind == 3)
                s1 = revcomp(s1);
            r1.push_back({name, s1});
            r2.push_back({name, s2});
            continue;
        }
        r1.push_back({name, pool[a].seq});
        r2.push_back({name, pool[b].seq});
    }
    write_file(tmp / "R1.fq", fastq(r1));
    write_file(tmp / "R2.fq", fastq(r2));
    std::string interleaved;
    for (std::size_t u = 0; u < r1.size(); ++u)
        interleaved += fastq({r1[u], r2[u]});
    write_file(tmp / "il.fq", interleaved);
    for (bool const both : {true, false})
    {
        auto const known = naive_known(r1, &r2, both);
        ASSERT_GT(std::count(known.begin(), known.end(), true), 5000);
        for (int const t : {1, 3})
        {
            std::string const d = tmp / ((both ? "both" : "fwd") + std::to_string(t));
            std::string const strand = both ? "" : " --no-canonical";
            run(d, numbered("-t ", static_cast<std::size_t>(t)) + strand,
                "--paired '" + (tmp / "R1.fq") + "' '" + (tmp / "R2.fq") + "'", true);
            EXPECT_TRUE(same_text(read_file(d + "/n.fq"), select(r1, known, false)));
            EXPECT_TRUE(same_text(read_file(d + "/n2.fq"), select(r2, known, false)));
            EXPECT_TRUE(same_text(read_file(d + "/k.fq"), select(r1, known, true)));
            EXPECT_TRUE(same_text(read_file(d + "/k2.fq"), select(r2, known, true)));
            std::string const stats = read_file(d + "/s.json");
            EXPECT_EQ(json_number(stats, "reads"), 2.0 * static_cast<double>(r1.size()));
            EXPECT_EQ(json_number(stats, "known_units") + json_number(stats, "novel_units"),
                      static_cast<double>(r1.size()));
            // the same pairs, interleaved in one file
            std::string const i = d + "i";
            run(i, numbered("-t ", static_cast<std::size_t>(t)) + strand,
                "--interleaved '" + (tmp / "il.fq") + "'", true);
            EXPECT_TRUE(same_text(read_file(i + "/r.tsv"), read_file(d + "/r.tsv")));
            EXPECT_TRUE(same_text(read_file(i + "/n2.fq"), read_file(d + "/n2.fq")));
        }
    }
}

TEST_F(dedup_exact, stdin_compressed_outputs_multiqc_and_a_lossy_filter)
{
    auto const reads = planted_reads(5000, 4);
    std::string const in = tmp / "in.fq";
    write_file(in, fastq(reads));
    auto const known = naive_known(reads, nullptr, true);
    std::string const d = tmp / "stdin";
    std::filesystem::create_directories(d);
    auto const r = run_ksieve("dedup --exact -q --novel '" + d + "/n.fq.gz' --multiqc '" + d +
                                  "/m_mqc.json' --stats '" + d + "/s.json' - < '" + in + "'",
                              tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(same_text(gunzip(d + "/n.fq.gz", tmp), select(reads, known, false)));
    std::string const mqc = read_file(d + "/m_mqc.json");
    EXPECT_NE(mqc.find("\"ksieve_dedup\""), std::string::npos) << mqc;
    EXPECT_NE(mqc.find(numbered("\"known\": ", static_cast<std::size_t>(
                                                   std::count(known.begin(), known.end(), true)))),
              std::string::npos)
        << mqc;
    // a filter of 1e-6 false positives, sized for the reads, and --exact-hits (hits are exact
    // anyway): the same classes here
    std::string const l = tmp / "lossy";
    run(l, "--fpr 1e-6 --expected 5000 --exact-hits --strict", "'" + in + "'", false);
    EXPECT_TRUE(same_text(read_file(l + "/n.fq"), select(reads, known, false)));
}

TEST_F(dedup_exact, a_filter_that_cannot_grow_within_max_memory_samples_and_finishes)
{
    // 300,000 distinct reads, each then seen again: without a limit the second copies are dropped
    std::mt19937_64 rng{8};
    std::vector<fq_read> reads;
    for (std::size_t i = 0; i < 300000; ++i)
    {
        fq_read r{numbered("m", i), std::string(32, 'A')};
        for (auto & c : r.seq)
            c = "ACGT"[rng() % 4];
        reads.push_back(std::move(r));
    }
    for (std::size_t i = 0; i < 300000; ++i)
        reads.push_back(fq_read{numbered("again", i), reads[i].seq});
    std::string const in = tmp / "in.fq";
    write_file(in, fastq(reads));
    auto const r = run_ksieve("dedup --exact -q --max-memory 22M --novel '" + (tmp / "n.fq") +
                                  "' --stats '" + (tmp / "s.json") + "' '" + in + "'",
                              tmp);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("reached its memory budget"), std::string::npos) << r.err;
    std::string const stats = read_file(tmp / "s.json");
    EXPECT_LT(json_number(stats, "kmer_sample"), 1.0);
    // every first copy kept; of the second copies, those whose sequences were remembered dropped
    double const kept = json_number(stats, "novel");
    EXPECT_GE(kept, 300000.0);
    EXPECT_LT(kept, 600000.0);
    auto const free_run =
        run_ksieve("dedup --exact -q --stats '" + (tmp / "f.json") + "' '" + in + "'", tmp);
    ASSERT_EQ(free_run.status, 0) << free_run.err;
    EXPECT_EQ(json_number(read_file(tmp / "f.json"), "novel"), 300000.0);
}

TEST_F(dedup_exact, options_of_kmer_dedup_are_usage_errors)
{
    std::string const in = tmp / "in.fq";
    write_file(in, fastq(planted_reads(100, 5)));
    for (std::string const & option : std::vector<std::string>{
             "-k 31", "--kmer 21", "--sampling all", "--sampling minimizer:5", "--min-count 1",
             "--min-hit-fraction 0.5", "--prefilter", "--prefilter-size 1M",
             "--save-filter '" + (tmp / "f.ksf") + "'", "--type bloom", "--expected auto"})
    {
        auto const r = run_ksieve(
            "dedup --exact " + option + " --novel '" + (tmp / "n.fq") + "' '" + in + "'", tmp);
        EXPECT_EQ(r.status, 2) << option << "\n" << r.err;
        EXPECT_EQ(r.err.rfind("ksieve: error: ", 0), 0u) << option << "\n" << r.err;
        EXPECT_FALSE(std::filesystem::exists(tmp / "n.fq")) << option;
        EXPECT_FALSE(std::filesystem::exists(tmp / "f.ksf")) << option;
    }
    auto const r = run_ksieve("dedup --exact -k 21 '" + in + "'", tmp);
    EXPECT_NE(r.err.find("-k/--kmer does not apply"), std::string::npos) << r.err;
}

namespace
{

// The names of the records of a FASTQ text, in order.
std::vector<std::string> names_of(std::string const & text)
{
    std::vector<std::string> names;
    for (auto const & rec : split_fastq(text))
        names.push_back(rec.substr(1, rec.find_first_of(" \t\n") - 1));
    return names;
}

} // namespace

// seqkit rmdup -s keeps the first of the reads equal on either strand, -P on the forward strand
// only, -i ignoring case: ksieve dedup --exact (--no-canonical) keeps the same reads.
TEST_F(dedup_exact, keeps_what_seqkit_rmdup_by_sequence_keeps)
{
    if (std::system("seqkit version >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "seqkit is not installed (scripts/install-deps.sh installs it)";
    std::string const bundled =
        gunzip(std::string{KSIEVE_TEST_DATA_DIR} + "/../../examples/data/reads.fq.gz", tmp);
    ASSERT_GT(bundled.size(), 1000u);
    std::vector<fq_read> reads;
    for (auto const & rec : split_fastq(bundled))
    {
        std::size_t const a = rec.find('\n') + 1;
        reads.push_back({rec.substr(1, a - 2), rec.substr(a, rec.find('\n', a) - a)});
    }
    std::mt19937_64 rng{6};
    std::size_t const n = reads.size();
    for (std::size_t i = 0; i < n / 2; ++i) // copies, reverse complements, copies with an N
    {
        fq_read r{numbered("dup", i), reads[rng() % reads.size()].seq};
        if (i % 3 == 1)
            r.seq = revcomp(r.seq);
        if (i % 3 == 2)
            r.seq[rng() % r.seq.size()] = 'N';
        reads.push_back(r);
    }
    std::vector<fq_read> mixed_case = reads; // lower-case copies besides: seqkit needs -i for them
    for (std::size_t i = 0; i < n / 4; ++i)
    {
        fq_read r{numbered("low", i), upper_form(reads[rng() % reads.size()].seq)};
        for (std::size_t j = 0; j < r.seq.size(); j += 1 + rng() % 3)
            r.seq[j] = static_cast<char>(std::tolower(static_cast<unsigned char>(r.seq[j])));
        mixed_case.push_back(r);
    }
    for (auto const & [set, ignore_case] :
         {std::pair{&reads, std::string{}}, std::pair{&mixed_case, std::string{" -i"}}})
    {
        std::string const in = tmp / "in.fq";
        write_file(in, fastq(*set));
        for (bool const both : {true, false})
        {
            std::string const seqkit_out = tmp / "seqkit.fq";
            std::string const cmd = "seqkit rmdup -s" + ignore_case + (both ? "" : " -P") + " '" +
                                    in + "' -o '" + seqkit_out + "' 2>/dev/null";
            ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
            std::string const d = tmp / "ksieve";
            run(d, both ? "" : "--no-canonical", "'" + in + "'", false);
            auto const kept = names_of(read_file(d + "/n.fq"));
            EXPECT_EQ(kept, names_of(read_file(seqkit_out))) << cmd;
            EXPECT_LT(kept.size(), set->size());
        }
    }
}
