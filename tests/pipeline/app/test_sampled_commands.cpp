// Sampled filters end to end: build --sampling minimizer:W and classify against a naive
// implementation of the definition (minimizers from the list of valid k-mers, an exact set), for
// several k, W and thread counts; records longer than the engine's windows; mixed schemes refused.
#include <ksieve/app/commands.hpp>
#include <ksieve/filters/kmers/kmer.hpp>
#include <ksieve/filters/kmers/sampling.hpp>

#include "test_helpers.hpp"

#include <map>
#include <random>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace
{

using namespace ksieve::test;

// Letters-based DUST: masked iff the pairs of equal trinucleotides, times 100, exceed
// threshold * (k - 3).
bool naive_low_complexity(std::string const & s, std::uint32_t const threshold)
{
    std::map<std::string, std::uint64_t> counts;
    std::uint64_t pairs = 0;
    for (std::size_t i = 0; i + 3 <= s.size(); ++i)
        pairs += counts[s.substr(i, 3)]++;
    return threshold != 0 && pairs * 100 > std::uint64_t{threshold} * (s.size() - 3);
}

// build's default spaced pattern for k and window W ("" = plain k-mers): k 31 with minimizers.
std::string default_pattern(unsigned const k, std::size_t const w)
{
    return k == 31 && w > 1 ? std::string{ksieve::build_spaced_pattern} : std::string{};
}

// The valid k-mers of one sequence in order, each as the letters of its chosen strand with the
// pattern's ignored positions read as A ('0' in `pattern`; "" = none), and their codes (the
// smaller strand).
void naive_kmers(std::string seq, unsigned const k, std::string const & pattern,
                 std::vector<std::string> & letters, std::vector<std::uint64_t> & codes)
{
    auto masked = [&](std::string s)
    {
        for (std::size_t j = 0; j < pattern.size(); ++j)
            if (pattern[j] == '0')
                s[j] = 'A';
        return s;
    };
    for (auto & c : seq)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (std::size_t i = 0; i + k <= seq.size(); ++i)
    {
        std::string const s = seq.substr(i, k);
        if (s.find_first_not_of("ACGT") != std::string::npos)
            continue;
        std::string const f = masked(s), r = masked(revcomp(s));
        std::uint64_t fw = 0, rc = 0;
        (void)ksieve::encode_kmer(f, fw);
        (void)ksieve::encode_kmer(r, rc);
        codes.push_back(std::min(fw, rc));
        letters.push_back(rc < fw ? r : f);
    }
}

// The hashed keys of the minimizers of one sequence, from the definition (naively), less the
// low-complexity ones for a mask threshold.
std::vector<std::uint64_t> naive_sampled_keys(std::string const & seq, unsigned const k,
                                              std::size_t const w, std::uint32_t const mask = 0,
                                              std::string const & pattern = {})
{
    std::vector<std::string> letters;
    std::vector<std::uint64_t> codes;
    naive_kmers(seq, k, pattern, letters, codes);
    ksieve::kmer_hasher const hash{k, ksieve::default_hash_seed};
    std::set<std::size_t> chosen;
    std::size_t const n = codes.size();
    std::size_t const windows = n == 0 ? 0 : (n < w ? 1 : n - w + 1);
    for (std::size_t i = 0; i < windows; ++i)
    {
        std::size_t best = i;
        for (std::size_t j = i; j < std::min(n, i + w); ++j)
            if (ksieve::minimizer_order(codes[j], ksieve::default_hash_seed) <
                ksieve::minimizer_order(codes[best], ksieve::default_hash_seed))
                best = j;
        chosen.insert(best);
    }
    std::vector<std::uint64_t> out;
    for (auto const i : chosen)
        if (!naive_low_complexity(letters[i], mask))
            out.push_back(hash(codes[i]));
    return out;
}

// What classify reports of a read against an exact set of sampled keys: its minimizers and their
// hits, known by the rule (min_hits, fraction); a short read left novel with at least one hit is
// looked up with every k-mer (low-complexity ones, DUST above 1.5 or the filter's mask, left out)
// and is known, with those k-mers and hits, where they meet the rule.
struct naive_row
{
    std::uint64_t kmers{0}, hits{0};
    bool known{false};
    bool rescued{false};
};
naive_row naive_classify(std::string const & seq, unsigned const k, std::size_t const w,
                         std::unordered_set<std::uint64_t> const & set, std::uint32_t const mask,
                         std::string const & pattern, std::uint64_t const min_hits = 2,
                         double const fraction = 0.004)
{
    auto rule = [&](std::uint64_t const h, std::uint64_t const n) {
        return n > 0 && h >= min_hits &&
               static_cast<double>(h) / static_cast<double>(n) >= fraction;
    };
    naive_row r;
    for (auto const key : naive_sampled_keys(seq, k, w, mask, pattern))
    {
        ++r.kmers;
        r.hits += set.count(key);
    }
    r.known = rule(r.hits, r.kmers);
    if (r.known || r.hits == 0 || r.kmers > 512)
        return r;
    std::vector<std::string> letters;
    std::vector<std::uint64_t> codes;
    naive_kmers(seq, k, pattern, letters, codes);
    ksieve::kmer_hasher const hash{k, ksieve::default_hash_seed};
    std::uint64_t n = 0, h = 0;
    for (std::size_t i = 0; i < codes.size(); ++i)
        if (!naive_low_complexity(letters[i], mask != 0 ? mask : 150))
        {
            ++n;
            h += set.count(hash(codes[i]));
        }
    if (rule(h, n))
        r = naive_row{n, h, true, true};
    return r;
}

std::vector<std::string> fasta_sequences(std::string const & path)
{
    std::vector<std::string> out;
    for (auto const & rec : split_fasta(read_file(path)))
    {
        std::string seq;
        std::size_t const a = rec.find('\n');
        for (std::size_t i = a + 1; i < rec.size(); ++i)
            if (rec[i] != '\n' && rec[i] != '\r')
                seq += rec[i];
        out.push_back(seq);
    }
    return out;
}

std::string fastq_sequence(std::string const & rec)
{
    std::size_t const a = rec.find('\n') + 1;
    return rec.substr(a, rec.find('\n', a) - a);
}

class sampled_commands : public ::testing::Test
{
protected:
    void SetUp() override { KSIEVE_REQUIRE_DATA(); }
    temp_dir tmp;
};

} // namespace

TEST_F(sampled_commands, classify_equals_the_naive_definition_for_any_k_w_and_threads)
{
    std::string const ref = data("lambda.fa").string();
    std::vector<std::string> reads = split_fastq(read_file(data("lambda_reads.fq").string()));
    auto const foreign = split_fastq(read_file(data("hs_R1.fq").string()));
    reads.insert(reads.end(), foreign.begin(), foreign.end());
    for (auto const & [k, w] :
         std::vector<std::pair<unsigned, std::size_t>>{{31, 15}, {25, 8}, {21, 2}})
    {
        std::unordered_set<std::uint64_t> set;
        std::string const pattern = default_pattern(k, w);
        for (auto const & seq : fasta_sequences(ref))
            for (auto const key : naive_sampled_keys(seq, k, w, 0, pattern))
                set.insert(key);
        std::string name = "m";
        name += std::to_string(w);
        name += ".ksf";
        std::string const f = tmp / name;
        auto const b = run_ksieve("build -q -t 2 --fpr 0 -k " + std::to_string(k) +
                                      " --sampling minimizer:" + std::to_string(w) + " -o '" + f +
                                      "' '" + ref + "'",
                                  tmp);
        ASSERT_EQ(b.status, 0) << b.err;
        auto const info = run_ksieve("info --json '" + f + "'", tmp);
        EXPECT_EQ(json_number(info.out, "distinct_kmers"), static_cast<double>(set.size()));
        EXPECT_NE(info.out.find("\"minimizer:" + std::to_string(w) + "\""), std::string::npos)
            << info.out;
        std::string first_report;
        for (unsigned const threads : {1u, 3u})
        {
            std::string const report =
                tmp / std::string{"r"}.append(std::to_string(threads)).append(".tsv");
            auto const r =
                run_ksieve("classify -q -t " + std::to_string(threads) + " -f '" + f +
                               "' --report '" + report + "' '" + data("lambda_reads.fq").string() +
                               "' '" + data("hs_R1.fq").string() + "'",
                           tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            auto const rows = read_report(report);
            ASSERT_EQ(rows.size(), reads.size());
            for (std::size_t i = 0; i < rows.size(); ++i)
            {
                naive_row const want =
                    naive_classify(fastq_sequence(reads[i]), k, w, set, 0, pattern);
                ASSERT_EQ(rows[i].kmers, want.kmers) << "k " << k << " w " << w << " read " << i;
                ASSERT_EQ(rows[i].hits, want.hits) << "k " << k << " w " << w << " read " << i;
                ASSERT_EQ(rows[i].cls, want.known ? "known" : "novel") << "read " << i;
            }
            if (threads == 1)
                first_report = read_file(report);
            else
                EXPECT_EQ(read_file(report), first_report);
        }
    }
}

TEST_F(sampled_commands, long_records_with_ns_hold_exactly_their_minimizers)
{
    // Records longer than the engine's 256 Ki-base windows, with runs of N across window
    // boundaries.
    std::mt19937_64 rng{3};
    std::string fa;
    std::vector<std::string> seqs;
    for (std::size_t const len : {700000u, 300000u, 40u})
    {
        std::string seq(len, 'A');
        for (auto & c : seq)
            c = "ACGT"[rng() % 4];
        for (std::size_t const at : {262140u, 262150u, 524280u, 100u})
            if (at + 60 < len)
                seq.replace(at, 5 + at % 50, std::string(5 + at % 50, 'N'));
        seqs.push_back(seq);
        fa += ">r" + std::to_string(len) + "\n" + seq + "\n";
    }
    std::string const ref = tmp / "long.fa";
    write_file(ref, fa);
    std::unordered_set<std::uint64_t> set;
    for (auto const & seq : seqs)
        for (auto const key : naive_sampled_keys(seq, 31, 15, 0, default_pattern(31, 15)))
            set.insert(key);
    std::string const f = tmp / "long.ksf";
    auto const b = run_ksieve(
        "build -q -t 2 --fpr 0 --sampling minimizer:15 -o '" + f + "' '" + ref + "'", tmp);
    ASSERT_EQ(b.status, 0) << b.err;
    auto const info = run_ksieve("info --json '" + f + "'", tmp);
    EXPECT_EQ(json_number(info.out, "distinct_kmers"), static_cast<double>(set.size()));
    EXPECT_EQ(json_number(info.out, "total_count"),
              static_cast<double>(set.size())); // each minimizer once
    // Classified as reads, the records find every one of their minimizers.
    std::string const report = tmp / "long.tsv";
    auto const r =
        run_ksieve("classify -q -t 2 -f '" + f + "' --report '" + report + "' '" + ref + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    auto const rows = read_report(report);
    ASSERT_EQ(rows.size(), seqs.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
    {
        EXPECT_EQ(rows[i].kmers,
                  naive_sampled_keys(seqs[i], 31, 15, 0, default_pattern(31, 15)).size());
        EXPECT_EQ(rows[i].hits, rows[i].kmers);
    }
}

TEST_F(sampled_commands, mixed_schemes_are_refused)
{
    std::string const ref = data("lambda.fa").string();
    std::string const all = tmp / "all.ksf", m15 = tmp / "m15.ksf";
    ASSERT_EQ(run_ksieve("build -q -o '" + all + "' '" + ref + "'", tmp).status, 0);
    ASSERT_EQ(
        run_ksieve("build -q --sampling minimizer:15 -o '" + m15 + "' '" + ref + "'", tmp).status,
        0);
    auto const c = run_ksieve(
        "classify -q -f '" + all + "' -f '" + m15 + "' '" + data("hs_R1.fq").string() + "'", tmp);
    EXPECT_EQ(c.status, 1);
    EXPECT_NE(c.err.find("sampling and mask must agree"), std::string::npos) << c.err;
    auto const m =
        run_ksieve("merge -q -o '" + (tmp / "m.ksf") + "' '" + all + "' '" + m15 + "'", tmp);
    EXPECT_EQ(m.status, 1);
    EXPECT_NE(m.err.find("minimizer:15"), std::string::npos) << m.err;
    EXPECT_FALSE(fs::exists(tmp / "m.ksf"));
    auto const bad = run_ksieve(
        "build -q --sampling minimizer:0 -o '" + (tmp / "x.ksf") + "' '" + ref + "'", tmp);
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--sampling"), std::string::npos) << bad.err;
}

// dedup --sampling minimizer:W against its serial definition computed naively (the minimizers of
// each read from the definition, an exact multiset of the novel reads' minimizers), for any thread
// count; and with the prefilter of normalization, the same bytes for any thread count.
TEST_F(sampled_commands, dedup_with_minimizers_equals_the_naive_serial_definition)
{
    std::string const input = data("hs_R1.fq").string();
    auto const copy = split_fastq(read_file(input));
    std::vector<std::string> records;
    for (int c = 0; c < 3; ++c)
        records.insert(records.end(), copy.begin(), copy.end());
    for (auto const & [k, w] : std::vector<std::pair<unsigned, std::size_t>>{{21, 5}, {31, 11}})
    {
        std::uint64_t const min_count = 2;
        double const fraction = 0.6;
        std::unordered_map<std::uint64_t, std::uint64_t> counts;
        std::vector<std::string> expected_class;
        std::vector<std::uint64_t> expected_kmers, expected_hits;
        for (auto const & rec : records)
        {
            // each selected position once; a key selected at two positions counts twice
            auto const keys = naive_sampled_keys(fastq_sequence(rec), k, w);
            std::uint64_t hits = 0;
            for (auto const key : keys)
            {
                auto const it = counts.find(key);
                hits += it != counts.end() && it->second >= min_count;
            }
            bool const known = !keys.empty() && static_cast<double>(hits) >=
                                                    fraction * static_cast<double>(keys.size());
            expected_class.push_back(known ? "known" : "novel");
            expected_kmers.push_back(keys.size());
            expected_hits.push_back(hits);
            if (!known)
                for (auto const key : keys)
                    ++counts[key];
        }
        std::size_t known_reads = 0;
        for (auto const & c : expected_class)
            known_reads += c == "known";
        EXPECT_GT(known_reads, records.size() / 3); // later copies are known
        for (int const t : {1, 3})
        {
            std::string const report = tmp / ("r" + std::to_string(t) + ".tsv");
            auto const r = run_ksieve("dedup -q --fpr 0 -k " + std::to_string(k) +
                                          " --sampling minimizer:" + std::to_string(w) +
                                          " --min-count 2 --min-hit-fraction 0.6 -t " +
                                          std::to_string(t) + " --report '" + report + "' '" +
                                          input + "' '" + input + "' '" + input + "'",
                                      tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            auto const rows = read_report(report);
            ASSERT_EQ(rows.size(), expected_class.size());
            for (std::size_t i = 0; i < rows.size(); ++i)
            {
                ASSERT_EQ(rows[i].kmers, expected_kmers[i]) << "read " << i << " w " << w;
                ASSERT_EQ(rows[i].cls, expected_class[i])
                    << "read " << i << " w " << w << " threads " << t;
                ASSERT_EQ(rows[i].hits, expected_hits[i])
                    << "read " << i << " w " << w << " threads " << t;
            }
        }
    }
    // normalization with minimizers and the prefilter (speculation, no report): the same bytes for
    // 1 and 3 threads
    std::string outs[2];
    for (int const t : {1, 3})
    {
        std::string const out = tmp / ("n" + std::to_string(t) + ".fq");
        auto const r = run_ksieve("dedup -q --sampling minimizer:11 --min-count 3 --prefilter -t " +
                                      std::to_string(t) + " --novel '" + out + "' '" + input +
                                      "' '" + input + "' '" + input + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        outs[t == 1 ? 0 : 1] = read_file(out);
    }
    EXPECT_EQ(outs[0], outs[1]);
    EXPECT_FALSE(outs[0].empty());
}

// A reference and reads rich in microsatellites: build --mask dust:T and classify against the
// definition (masked minimizers count neither as k-mers nor as hits), any thread count; info names
// the mask; masked and unmasked filters are never used together; usage errors.
TEST_F(sampled_commands, masked_filters_equal_the_naive_definition_and_refuse_unmasked_ones)
{
    std::mt19937_64 rng{5};
    std::string const acgt = "ACGT";
    std::string genome;
    while (genome.size() < 60000)
    {
        for (int i = 0; i < 400; ++i)
            genome += acgt[rng() % 4];
        std::string unit;
        for (std::size_t j = 0, n = 1 + rng() % 6; j < n; ++j)
            unit += acgt[rng() % 4];
        for (std::size_t len = 20 + rng() % 60; len > 0; --len)
            genome += unit[len % unit.size()];
    }
    std::string const ref = tmp / "micro.fa", reads_fq = tmp / "micro.fq";
    write_file(ref, ">micro\n" + genome + "\n");
    std::string fq;
    std::vector<std::string> seqs;
    for (int i = 0; i < 600; ++i)
    {
        std::string seq = genome.substr(rng() % (genome.size() - 150), 150);
        if (i % 3 == 0) // a foreign read with a microsatellite of the reference's kinds
        {
            for (auto & c : seq)
                c = acgt[rng() % 4];
            seq.replace(40, 50, std::string(25, 'C') + std::string(25, 'T'));
        }
        seqs.push_back(seq);
        fq += "@r" + std::to_string(i) + "\n" + seq + "\n+\n" + std::string(150, 'I') + "\n";
    }
    write_file(reads_fq, fq);
    for (auto const & [k, w, t] :
         std::vector<std::tuple<unsigned, std::size_t, std::uint32_t>>{{31, 11, 150}, {21, 5, 90}})
    {
        std::string const pattern = default_pattern(k, w);
        std::unordered_set<std::uint64_t> set;
        for (auto const key : naive_sampled_keys(genome, k, w, t, pattern))
            set.insert(key);
        std::string const f = tmp / ("mask" + std::to_string(k) + ".ksf");
        std::string const mask = "dust:" + std::to_string(t / 100) + "." +
                                 (t % 100 < 10 ? "0" : "") + std::to_string(t % 100);
        auto const b = run_ksieve("build -q -t 2 --fpr 0 -k " + std::to_string(k) +
                                      " --sampling minimizer:" + std::to_string(w) + " --mask " +
                                      mask + " -o '" + f + "' '" + ref + "'",
                                  tmp);
        ASSERT_EQ(b.status, 0) << b.err;
        auto const info = run_ksieve("info --json '" + f + "'", tmp);
        EXPECT_EQ(json_number(info.out, "distinct_kmers"), static_cast<double>(set.size()));
        EXPECT_EQ(json_number(info.out, "format_version"), pattern.empty() ? 4.0 : 6.0);
        EXPECT_NE(info.out.find("\"mask\": \"" + mask + "\""), std::string::npos) << info.out;
        std::string first;
        std::uint64_t masked_away = 0;
        for (unsigned const threads : {1u, 3u})
        {
            std::string const report = tmp / ("r" + std::to_string(threads) + ".tsv");
            auto const r = run_ksieve("classify -q -t " + std::to_string(threads) + " -f '" + f +
                                          "' --report '" + report + "' '" + reads_fq + "'",
                                      tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            auto const rows = read_report(report);
            ASSERT_EQ(rows.size(), seqs.size());
            for (std::size_t i = 0; i < rows.size(); ++i)
            {
                naive_row const want = naive_classify(seqs[i], k, w, set, t, pattern);
                ASSERT_EQ(rows[i].kmers, want.kmers) << "k " << k << " read " << i;
                ASSERT_EQ(rows[i].hits, want.hits) << "k " << k << " read " << i;
                ASSERT_EQ(rows[i].cls, want.known ? "known" : "novel") << "read " << i;
                masked_away += naive_sampled_keys(seqs[i], k, w, 0, pattern).size() -
                               naive_sampled_keys(seqs[i], k, w, t, pattern).size();
            }
            if (threads == 1)
                first = read_file(report);
            else
                EXPECT_EQ(read_file(report), first);
        }
        EXPECT_GT(masked_away, 100u); // the data exercises the mask
    }
    std::string const plain = tmp / "plain.ksf", masked = tmp / "mask31.ksf";
    ASSERT_EQ(
        run_ksieve("build -q --sampling minimizer:11 -o '" + plain + "' '" + ref + "'", tmp).status,
        0);
    EXPECT_EQ(json_number(run_ksieve("info --json '" + plain + "'", tmp).out, "format_version"),
              6.0); // spaced k-mers, the default for k 31
    auto const c =
        run_ksieve("classify -q -f '" + plain + "' -f '" + masked + "' '" + reads_fq + "'", tmp);
    EXPECT_EQ(c.status, 1);
    EXPECT_NE(c.err.find("mask must agree"), std::string::npos) << c.err;
    auto const m =
        run_ksieve("merge -q -o '" + (tmp / "m.ksf") + "' '" + plain + "' '" + masked + "'", tmp);
    EXPECT_EQ(m.status, 1);
    EXPECT_NE(m.err.find("dust:1.50"), std::string::npos) << m.err;
    EXPECT_FALSE(fs::exists(tmp / "m.ksf"));
    for (std::string const bad :
         {"--sampling all --mask dust", "--mask dust:0", "--mask dust:15.01", "--mask dusty",
          "-k 7 --sampling minimizer:3 --mask dust"})
    {
        auto const u =
            run_ksieve("build -q " + bad + " -o '" + (tmp / "x.ksf") + "' '" + ref + "'", tmp);
        EXPECT_EQ(u.status, 2) << bad;
        EXPECT_NE(u.err.find("--mask"), std::string::npos) << bad << ": " << u.err;
        EXPECT_FALSE(fs::exists(tmp / "x.ksf"));
    }
}

// classify's default rule (no rule option given) against the rule applied naively to an exact set:
// long reads with 8% errors (substitutions, insertions, deletions) from both strands of the
// reference, short reads, and foreign long reads; any thread count. The default keeps noisy host
// long reads out of the novel output and calls no foreign read known.
TEST_F(sampled_commands, default_rule_equals_the_naive_rule_and_finds_noisy_long_reads)
{
    std::string const ref = data("lambda.fa").string();
    std::string genome;
    for (auto const & seq : fasta_sequences(ref))
        genome += seq;
    std::mt19937_64 rng{9};
    std::string const acgt = "ACGT";
    auto noisy = [&](std::string const & in, unsigned const percent)
    {
        std::string out;
        for (char const c : in)
        {
            unsigned const roll = static_cast<unsigned>(rng() % 1000);
            if (roll >= percent * 10)
                out += c;
            else if (roll % 10 < 4) // substitution
                out += acgt[(std::string_view{acgt}.find(c) + 1 + rng() % 3) % 4];
            else if (roll % 10 < 7) // insertion
                out += std::string{c} + acgt[rng() % 4];
            // else deletion
        }
        return out;
    };
    std::vector<std::string> seqs, truth;
    for (int i = 0; i < 300; ++i)
    {
        std::size_t const len = i % 3 == 0 ? 150 : 1000 + rng() % 7000;
        std::string seq = genome.substr(rng() % (genome.size() - len), len);
        if (i % 2 == 1)
            seq = revcomp(seq);
        bool const foreign = i % 5 == 4;
        if (foreign)
            for (auto & c : seq)
                c = acgt[rng() % 4];
        seqs.push_back(len == 150 ? noisy(seq, 0) : noisy(seq, 8));
        truth.push_back(foreign ? "novel" : "known");
    }
    std::string fq;
    for (std::size_t i = 0; i < seqs.size(); ++i)
        fq += "@r" + std::to_string(i) + "\n" + seqs[i] + "\n+\n" +
              std::string(seqs[i].size(), 'I') + "\n";
    std::string const reads = tmp / "noisy.fq", f = tmp / "default.ksf";
    write_file(reads, fq);
    ASSERT_EQ(run_ksieve("build -q --fpr 0 -o '" + f + "' '" + ref + "'", tmp).status, 0);
    // the default window, from build's default scheme "minimizer:W"
    std::string const scheme{ksieve::build_default_sampling};
    ASSERT_EQ(scheme.rfind("minimizer:", 0), 0U);
    std::size_t const window = std::stoul(scheme.substr(10));
    std::string const pattern = default_pattern(31, window);
    std::unordered_set<std::uint64_t> set;
    for (auto const key : naive_sampled_keys(genome, 31, window, 0, pattern))
        set.insert(key);
    for (unsigned const threads : {1u, 3u})
    {
        std::string const report = tmp / ("d" + std::to_string(threads) + ".tsv");
        std::string const stats = tmp / ("d" + std::to_string(threads) + ".json");
        auto const r =
            run_ksieve("classify -q -t " + std::to_string(threads) + " -f '" + f + "' --report '" +
                           report + "' --stats '" + stats + "' '" + reads + "'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        auto const rows = read_report(report);
        ASSERT_EQ(rows.size(), seqs.size());
        std::size_t agree = 0, hosts = 0, rescued = 0;
        for (std::size_t i = 0; i < rows.size(); ++i)
        {
            naive_row const want = naive_classify(seqs[i], 31, window, set, 0, pattern,
                                                  ksieve::classify_default_min_hits,
                                                  ksieve::classify_default_fraction);
            ASSERT_EQ(rows[i].kmers, want.kmers) << "read " << i;
            ASSERT_EQ(rows[i].hits, want.hits) << "read " << i;
            ASSERT_EQ(rows[i].cls, want.known ? "known" : "novel") << "read " << i;
            rescued += want.rescued ? 1 : 0;
            agree += rows[i].cls == truth[i] ? 1 : 0;
            hosts += truth[i] == "known" ? 1 : 0;
        }
        EXPECT_EQ(agree, rows.size())
            << "of " << hosts << " host reads and " << rows.size() - hosts << " foreign ones";
        EXPECT_EQ(json_number(read_file(stats), "rescued_units"), static_cast<double>(rescued));
        // without --report the lookups stop at the decision (rounds of growing size): the same
        // classes
        std::string const novel = tmp / "novel.fq";
        auto const e = run_ksieve("classify -q -t " + std::to_string(threads) + " -f '" + f +
                                      "' --novel '" + novel + "' '" + reads + "'",
                                  tmp);
        ASSERT_EQ(e.status, 0) << e.err;
        std::string want;
        auto const records = split_fastq(fq);
        for (std::size_t i = 0; i < rows.size(); ++i)
            if (rows[i].cls == "novel")
                want += records[i];
        EXPECT_EQ(read_file(novel), want);
    }
}

// --spaced: patterns checked before any work (usage error, nothing written), recorded in the file
// (info; format version 6, or 3 with `none`), the default for k 31 with minimizers only.
TEST_F(sampled_commands, spaced_patterns_are_checked_and_recorded)
{
    std::string const ref = data("lambda.fa").string();
    std::string const out = tmp / "s.ksf";
    std::string const p31 = ksieve::build_spaced_pattern;
    std::vector<std::string> const bads{"--spaced 101",
                                        "--spaced " + std::string(30, '1') + "0",
                                        "--spaced 1" + std::string(29, '0') + "1",
                                        "--spaced 11" + std::string(27, '1') + "01",
                                        "--spaced auto2",
                                        "--sampling all --spaced " + p31,
                                        "-k 21 --spaced " + p31};
    for (std::string const & bad : bads)
    {
        auto const u = run_ksieve("build -q " + bad + " -o '" + out + "' '" + ref + "'", tmp);
        EXPECT_EQ(u.status, 2) << bad;
        EXPECT_NE(u.err.find("--spaced"), std::string::npos) << bad << ": " << u.err;
        EXPECT_FALSE(fs::exists(out)) << bad;
    }
    auto info_of = [&](std::string const & opts)
    {
        fs::remove(out);
        auto const b = run_ksieve("build -q " + opts + " -o '" + out + "' '" + ref + "'", tmp);
        EXPECT_EQ(b.status, 0) << opts << ": " << b.err;
        return run_ksieve("info --json '" + out + "'", tmp).out;
    };
    std::string const d = info_of("");
    EXPECT_NE(d.find("\"spaced\": \"" + p31 + "\""), std::string::npos) << d;
    EXPECT_EQ(json_number(d, "format_version"), 6.0);
    EXPECT_EQ(json_number(d, "target_fpr"), ksieve::build_default_sampled_fpr);
    for (std::string const plain : {"--spaced none", "-k 25", "--sampling all"})
    {
        std::string const i = info_of(plain);
        EXPECT_EQ(i.find("\"spaced\""), std::string::npos) << plain << ": " << i;
        EXPECT_EQ(json_number(i, "format_version"), 3.0) << plain;
    }
    EXPECT_EQ(json_number(info_of("--sampling all"), "target_fpr"), ksieve::build_default_fpr);
    std::string const own = "1111111111111110111111111111111";
    EXPECT_NE(info_of("--spaced " + own).find(own), std::string::npos);
}
