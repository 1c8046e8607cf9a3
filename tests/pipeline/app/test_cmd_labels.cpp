// Labeled filters end to end: build --label / --label-by / --label-map, merge --label-inputs,
// classify's label column, --stats labels, --multiqc and --split-by-label, each checked against an
// exact oracle of k-mer -> label set built from the inputs.
#include "test_helpers.hpp"

#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/kmers/kmer.hpp>

#include <map>
#include <set>

namespace
{

using namespace ksieve::test;
using label_set = std::set<std::string>;
constexpr unsigned k = 21;

std::string canonical(std::string const & s)
{
    return std::min(s, revcomp(s));
}

// fn(kmer, labels the filter gives it, whether the filter holds it) for every k-mer of the oracle.
template <typename Fn>
void for_each_oracle_kmer(ksieve::any_filter const & f,
                          std::map<std::string, label_set> const & oracle, Fn && fn)
{
    ksieve::kmer_scanner const scanner{k, true};
    ksieve::kmer_hasher const hasher{k, f.kmer().seed};
    for (auto const & entry : oracle) // (a lambda may not capture a structured binding: clang < 16)
    {
        std::string const & kmer = entry.first;
        label_set const & want = entry.second;
        scanner.for_each(kmer,
                         [&](std::size_t, std::uint64_t const code)
                         {
                             std::uint64_t const c = f.count(hasher(code));
                             label_set got;
                             if (c > 0)
                                 for (auto const l : f.labels()->classes.at(c - 1))
                                     got.insert(f.labels()->names.at(l));
                             fn(kmer, want, got, c > 0);
                         });
    }
}

class labels_test : public ::testing::Test
{
protected:
    // Genomes a, b and c: random, with a part shared by a and b and one shared by all.
    virtual void make_genomes(std::mt19937_64 & rng)
    {
        std::string const shared = random_dna(rng, 400); // in a and b
        std::string const everywhere = random_dna(rng, 300);
        genomes["a"] = random_dna(rng, 3000) + shared + everywhere;
        genomes["b"] = random_dna(rng, 2000) + revcomp(shared) + everywhere;
        genomes["c"] = random_dna(rng, 2500) + everywhere;
    }

    void SetUp() override
    {
        std::mt19937_64 rng{11};
        make_genomes(rng);
        for (auto const & [name, seq] : genomes)
        {
            write_file(tmp / (name + ".fa"), ">" + name + "_chr\n" + seq + "\n");
            for (std::size_t i = 0; i + k <= seq.size(); ++i)
                if (seq.substr(i, k).find_first_not_of("ACGT") == std::string::npos)
                    oracle[canonical(seq.substr(i, k))].insert(name);
        }
        // reads: 30 from each genome (some across the shared parts), 20 random
        std::string fq;
        for (auto const & [name, seq] : genomes)
            for (int r = 0; r < 30; ++r)
            {
                std::size_t const p = rng() % (seq.size() - 100);
                fq += "@" + name + "_" + std::to_string(r) + "\n" + seq.substr(p, 100) + "\n+\n" +
                      std::string(100, 'I') + "\n";
            }
        for (int r = 0; r < 20; ++r)
            fq += "@novel_" + std::to_string(r) + "\n" + random_dna(rng, 100) + "\n+\n" +
                  std::string(100, 'I') + "\n";
        reads = tmp / "reads.fq";
        write_file(reads, fq);
    }

    std::string build(std::string const & name, std::string const & args)
    {
        std::string const path = tmp / name;
        auto const r =
            run_ksieve("build -q --fpr 0 --sampling all -k 21 -o '" + path + "' " + args, tmp);
        EXPECT_EQ(r.status, 0) << r.err;
        return path;
    }
    std::string labeled_build(std::string const & name, std::string const & extra = "")
    {
        return build(name, extra + " --label a=" + tmp / "a.fa" + " --label b=" + tmp / "b.fa" +
                               " --label c=" + tmp / "c.fa");
    }

    // The labels the filter gives every k-mer of the oracle equal the oracle's.
    void expect_oracle_labels(std::string const & path)
    {
        auto const f = ksieve::load_filter(path);
        ASSERT_TRUE(f->labeled());
        std::size_t checked = 0;
        for_each_oracle_kmer(
            *f, oracle,
            [&](std::string const & kmer, label_set const & want, label_set const & got, bool)
            {
                EXPECT_EQ(got, want) << kmer;
                ++checked;
            });
        EXPECT_EQ(checked, oracle.size());
        EXPECT_EQ(f->stats().distinct, oracle.size()); // nothing else
    }

    // The oracle's label of each read: the label with the most hits, ambiguous on a tie.
    std::map<std::string, std::string> oracle_read_labels()
    {
        std::map<std::string, std::string> out;
        for (auto const & rec : split_fastq(read_file(reads)))
        {
            std::string const id = rec.substr(1, rec.find('\n') - 1);
            std::size_t const a = rec.find('\n') + 1;
            std::string const seq = rec.substr(a, rec.find('\n', a) - a);
            std::map<std::string, int> tally;
            for (std::size_t i = 0; i + k <= seq.size(); ++i)
                if (auto const it = oracle.find(canonical(seq.substr(i, k))); it != oracle.end())
                    for (auto const & l : it->second)
                        ++tally[l];
            int most = 0;
            std::string best = "-";
            for (auto const & [l, n] : tally)
                if (n > most)
                {
                    most = n;
                    best = l;
                }
                else if (n == most)
                    best = "ambiguous";
            out[id] = best;
        }
        return out;
    }

    temp_dir tmp;
    std::map<std::string, std::string> genomes;
    std::map<std::string, label_set> oracle;
    std::string reads;
};

TEST_F(labels_test, labeled_build_holds_each_kmers_label_set_for_any_thread_count)
{
    auto const one = labeled_build("one.ksf", "-t 1");
    auto const two = labeled_build("two.ksf", "-t 2");
    expect_oracle_labels(one);
    EXPECT_EQ(read_file(one), read_file(two));
    // labels from file names and from a record map give the same filter
    auto const by_file = build("by_file.ksf", "--label-by file " + tmp / "a.fa" + " " +
                                                  tmp / "b.fa" + " " + tmp / "c.fa");
    EXPECT_EQ(read_file(one), read_file(by_file));
    write_file(tmp / "map.tsv", "# record\tlabel\na_chr\ta\nb_chr\tb\nc_chr\tc\n");
    auto const by_record =
        build("by_record.ksf", "--label-by record --label-map " + tmp / "map.tsv" + " " +
                                   tmp / "a.fa" + " " + tmp / "b.fa" + " " + tmp / "c.fa");
    EXPECT_EQ(read_file(one), read_file(by_record));
}

TEST_F(labels_test, lossy_labeled_filters_never_lose_a_label_and_add_few)
{
    double const fpr = 0.01;
    auto const path = tmp / "lossy.ksf";
    auto const r = run_ksieve("build -q --fpr 0.01 --sampling all -k 21 -o '" + path +
                                  "' --label a=" + tmp / "a.fa" + " --label b=" + tmp / "b.fa" +
                                  " --label c=" + tmp / "c.fa",
                              tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    auto const f = ksieve::load_filter(path);
    std::size_t extra = 0;
    for_each_oracle_kmer(*f, oracle,
                         [&](std::string const & kmer, label_set const & want,
                             label_set const & got, bool const held)
                         {
                             EXPECT_TRUE(held) << kmer;
                             for (auto const & l : want)
                                 EXPECT_TRUE(got.count(l)) << kmer << " lost " << l;
                             extra += got.size() - std::min(got.size(), want.size());
                         });
    // a false label comes from a fingerprint shared with a k-mer of another label
    EXPECT_LE(static_cast<double>(extra), 2 * fpr * static_cast<double>(oracle.size()) + 2);
}

TEST_F(labels_test, merge_of_per_sample_filters_equals_the_labeled_build)
{
    auto const joint = labeled_build("joint.ksf");
    std::string inputs;
    for (char const * n : {"a", "b", "c"})
        inputs += " '" + build(std::string{n} + ".ksf", tmp / (std::string{n} + ".fa")) + "'";
    auto const m = tmp / "merged.ksf";
    auto const r = run_ksieve("merge -q --label-inputs -o '" + m + "'" + inputs, tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    expect_oracle_labels(m);
    // the same classify answers, read by read
    auto const rj = run_ksieve(
        "classify -q -f '" + joint + "' --report '" + tmp / "j.tsv" + "' '" + reads + "'", tmp);
    auto const rm = run_ksieve(
        "classify -q -f '" + m + "' --report '" + tmp / "m.tsv" + "' '" + reads + "'", tmp);
    ASSERT_EQ(rj.status, 0) << rj.err;
    ASSERT_EQ(rm.status, 0) << rm.err;
    EXPECT_EQ(read_file(tmp / "j.tsv"), read_file(tmp / "m.tsv"));
    // a labeled merge without --label-inputs refuses an unlabeled input, naming it
    auto const bad = run_ksieve(
        "merge -q -o '" + tmp / "x.ksf" + "' '" + joint + "' '" + tmp / "a.ksf" + "'", tmp);
    EXPECT_EQ(bad.status, 1);
    EXPECT_NE(bad.err.find("a.ksf"), std::string::npos) << bad.err;
}

TEST_F(labels_test, classify_names_each_reads_label_as_the_oracle_does)
{
    auto const f = labeled_build("l.ksf");
    std::string const base = "classify -q -f '" + f + "' --min-hits 1 --min-hit-fraction 0.01 ";
    auto const r1 =
        run_ksieve(base + "-t 1 --report '" + tmp / "r1.tsv" + "' --stats '" + tmp / "s.json" +
                       "' --multiqc '" + tmp / "x_mqc.json" + "' --split-by-label '" +
                       tmp / "out_{label}.fq" + "' '" + reads + "'",
                   tmp);
    ASSERT_EQ(r1.status, 0) << r1.err;
    auto const r2 =
        run_ksieve(base + "-t 2 --report '" + tmp / "r2.tsv" + "' '" + reads + "'", tmp);
    ASSERT_EQ(r2.status, 0) << r2.err;
    EXPECT_EQ(read_file(tmp / "r1.tsv"), read_file(tmp / "r2.tsv"));

    auto const want = oracle_read_labels();
    std::istringstream rep{read_file(tmp / "r1.tsv")};
    std::string line;
    std::getline(rep, line);
    EXPECT_EQ(line, "read_id\tkmers\thits\tclass\tlabel");
    std::map<std::string, std::size_t> per_label;
    std::size_t rows = 0;
    while (std::getline(rep, line))
    {
        std::istringstream s{line};
        std::string id, kmers, hits, cls, label;
        std::getline(s, id, '\t');
        std::getline(s, kmers, '\t');
        std::getline(s, hits, '\t');
        std::getline(s, cls, '\t');
        std::getline(s, label, '\t');
        EXPECT_EQ(label, cls == "known" ? want.at(id) : "-") << id;
        if (cls == "known")
            ++per_label[label];
        ++rows;
    }
    EXPECT_EQ(rows, want.size());
    EXPECT_GE(per_label["a"], 25u); // reads of each genome mostly get its label
    EXPECT_GE(per_label["c"], 20u);
    // --stats labels, --split-by-label files and the MultiQC bars agree with the report
    std::string const stats = read_file(tmp / "s.json");
    std::string const mqc = read_file(tmp / "x_mqc.json");
    for (std::string const l : {"a", "b", "c", "ambiguous"})
    {
        EXPECT_EQ(split_fastq(read_file(tmp / ("out_" + l + ".fq"))).size(), per_label[l]) << l;
        EXPECT_NE(stats.find("\"" + l + "\": " + std::to_string(per_label[l])), std::string::npos)
            << stats;
        EXPECT_NE(mqc.find("\"" + l + "\": " + std::to_string(per_label[l])), std::string::npos)
            << mqc;
    }
}

TEST_F(labels_test, info_lists_labels_and_shared_kmers)
{
    auto const f = labeled_build("l.ksf");
    auto const r = run_ksieve("info '" + f + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    std::map<std::string, std::size_t> n;
    std::size_t ab = 0;
    for (auto const & [kmer, set] : oracle)
    {
        for (auto const & l : set)
            ++n[l];
        ab += set.count("a") && set.count("b");
    }
    for (std::string const l : {"a", "b", "c"})
        EXPECT_NE(r.out.find("label\t" + l + "\t" + std::to_string(n[l]) + "\n"), std::string::npos)
            << r.out;
    EXPECT_NE(r.out.find("shared\ta\tb\t" + std::to_string(ab) + "\n"), std::string::npos) << r.out;
    auto const j = run_ksieve("info --json '" + f + "'", tmp);
    EXPECT_NE(j.out.find("\"shared_kmers\""), std::string::npos);
    EXPECT_NE(j.out.find("\"name\": \"b\""), std::string::npos);
}

TEST_F(labels_test, label_misuse_is_a_clear_usage_error)
{
    auto const f = labeled_build("l.ksf");
    auto const plain = build("plain.ksf", tmp / "a.fa");
    struct bad_case
    {
        std::string args;
        std::string says;
    };
    for (auto const & c : std::vector<bad_case>{
             {"classify -f '" + f + "' --split-by-label '" + tmp / "x.fq" + "' '" + reads + "'",
              "{label}"},
             {"classify -f '" + f + "' -f '" + plain + "' '" + reads + "'", "only -f"},
             {"classify -f '" + f + "' --min-count 2 '" + reads + "'", "label sets"},
             {"classify -f '" + plain + "' --split-by-label '" + tmp / "{label}.fq" + "' '" +
                  reads + "'",
              "labeled filter"},
             {"build -o '" + tmp / "y.ksf" + "' --label-by colour '" + tmp / "a.fa" + "'",
              "file or record"},
             {"build -o '" + tmp / "y.ksf" + "' --label a '" + tmp / "a.fa" + "'", "NAME=FILE"},
             {"build -o '" + tmp / "y.ksf" + "' --type bloom --label a=" + tmp / "a.fa", "qf"},
             {"build -o '" + tmp / "y.ksf" + "' --label ambiguous=" + tmp / "a.fa", "'ambiguous'"},
         })
    {
        auto const r = run_ksieve(c.args, tmp);
        EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    }
    EXPECT_FALSE(fs::exists(tmp / "y.ksf"));
    // a record without a label in the map names the record
    write_file(tmp / "map.tsv", "a_chr\ta\n");
    auto const r = run_ksieve("build -q --label-by record --label-map '" + tmp / "map.tsv" +
                                  "' -o '" + tmp / "z.ksf" + "' '" + tmp / "b.fa" + "'",
                              tmp);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("b_chr"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "z.ksf"));
}

// The same checks on real genomes: a Klebsiella pneumoniae genome and another strain's (which share
// most of their k-mers), and the lambda phage.
class real_labels_test : public labels_test
{
protected:
    void make_genomes(std::mt19937_64 &) override
    {
        KSIEVE_REQUIRE_DATA();
        auto first_bases = [](std::string const & path, std::size_t const n)
        {
            std::string seq;
            for (auto const & rec : split_fasta(read_file(path)))
            {
                std::istringstream in{rec};
                std::string line;
                std::getline(in, line);
                while (std::getline(in, line) && seq.size() < n)
                    seq += line;
                if (seq.size() >= n)
                    break;
            }
            for (auto & c : seq)
                c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            return seq.substr(0, n);
        };
        genomes["a"] = first_bases(data("HS11286.fa").string(), 60000);
        genomes["b"] = first_bases(data("klebs4.fa").string(), 60000);
        genomes["c"] = first_bases(data("lambda.fa").string(), 48000);
    }
};

TEST_F(real_labels_test, labels_of_real_genomes_equal_the_oracle)
{
    auto const one = labeled_build("one.ksf", "-t 1");
    auto const two = labeled_build("two.ksf", "-t 2");
    expect_oracle_labels(one);
    EXPECT_EQ(read_file(one), read_file(two));
    auto const r = run_ksieve(
        "classify -q -t 2 -f '" + one + "' --report '" + tmp / "r.tsv" + "' '" + reads + "'", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    auto const want = oracle_read_labels();
    std::istringstream rep{read_file(tmp / "r.tsv")};
    std::string line;
    std::getline(rep, line);
    std::size_t known = 0;
    while (std::getline(rep, line))
    {
        std::vector<std::string> col;
        std::istringstream s{line};
        for (std::string c; std::getline(s, c, '\t');)
            col.push_back(c);
        ASSERT_EQ(col.size(), 5u) << line;
        EXPECT_EQ(col[4], col[3] == "known" ? want.at(col[0]) : "-") << line;
        known += col[3] == "known";
    }
    EXPECT_GE(known, 90u); // the genomes' reads
}

} // namespace
