// The limits of cluster jobs: two runs writing one output path at the same time (one wins whole, no
// temporary left), a cgroup memory limit (read and kept to, or refused up front naming it; cgroup
// v2 where its memory controller can be used, else v1; skipped without root or a writable cgroup
// file system, and in sanitizer builds, whose shadow memory no such limit fits), a filter larger
// than the cgroup's memory used from its file mapping, and info's estimate of the filter bytes a
// million reads touch.
#include "memory_cgroup.hpp"
#include "test_helpers.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <set>

namespace
{

using namespace ksieve::test;

// A reference of `bases` random bases and `reads` reads of 150 bases, half of them from it.
void write_data(temp_dir const & tmp, std::size_t const bases, std::size_t const reads,
                std::uint64_t const seed)
{
    std::mt19937_64 rng{seed};
    std::string const ref = random_dna(rng, bases);
    write_file(tmp / "ref.fa", ">ref\n" + ref + "\n");
    std::string fq;
    fq.reserve(reads * 330);
    for (std::size_t i = 0; i < reads; ++i)
    {
        std::string const seq =
            i % 2 == 0 ? ref.substr(rng() % (ref.size() - 150), 150) : random_dna(rng, 150);
        fq += "@q" + std::to_string(i) + "\n" + seq + "\n+\n" + std::string(150, 'I') + "\n";
    }
    write_file(tmp / "reads.fq", fq);
}

// Names in `dir` that a run leaves only while it writes.
std::vector<std::string> temporaries_in(std::string const & dir)
{
    std::vector<std::string> left;
    for (auto const & e : fs::directory_iterator{dir})
        if (std::string const n = e.path().filename().string();
            n.find(".ksieve-tmp.") != std::string::npos ||
            n.find(".ksieve-old.") != std::string::npos)
            left.push_back(n);
    return left;
}

int status_of(int const raw)
{
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

TEST(concurrent_writers, one_run_wins_each_output_whole_and_no_temporary_is_left)
{
    temp_dir tmp;
    write_data(tmp, 40000, 60000, 7);
    std::string const k = "'" + binary() + "'";
    ASSERT_EQ(run_ksieve("build -q --sampling all -k 21 -o '" + tmp / "a.ksf" + "' '" +
                             tmp / "ref.fa" + "'",
                         tmp)
                  .status,
              0);
    ASSERT_EQ(run_ksieve("build -q -k 25 -o '" + tmp / "b.ksf" + "' '" + tmp / "ref.fa" + "'", tmp)
                  .status,
              0);
    // each alone: what a whole output of each looks like
    auto classify =
        [&](std::string const & filter, std::string const & report, std::string const & novel)
    {
        return k + " classify -q -t 1 -f '" + tmp / filter + "' --report '" + report +
               "' --novel '" + novel + "' '" + tmp / "reads.fq" + "'";
    };
    ASSERT_EQ(std::system(classify("a.ksf", tmp / "a.tsv", tmp / "a.fq").c_str()), 0);
    ASSERT_EQ(std::system(classify("b.ksf", tmp / "b.tsv", tmp / "b.fq").c_str()), 0);
    std::string const a_tsv = read_file(tmp / "a.tsv"), b_tsv = read_file(tmp / "b.tsv");
    std::string const a_fq = read_file(tmp / "a.fq"), b_fq = read_file(tmp / "b.fq");
    ASSERT_NE(a_tsv, b_tsv);
    ASSERT_NE(a_fq, b_fq);
    std::string const out = tmp / "out";
    fs::create_directories(out);
    std::set<std::string> winners;
    for (int round = 0; round < 4; ++round)
    {
        // the same outputs from two runs started together; then two builds of one filter path
        std::string const both = "( " + classify("a.ksf", out + "/r.tsv", out + "/n.fq") + " & " +
                                 classify("b.ksf", out + "/r.tsv", out + "/n.fq") + " & " + k +
                                 " build -q -t 1 --sampling all -k 21 -o '" + out + "/f.ksf' '" +
                                 tmp / "ref.fa" + "' & " + k + " build -q -t 1 -k 25 -o '" + out +
                                 "/f.ksf' '" + tmp / "ref.fa" +
                                 "' & wait %1 && wait %2 && wait %3 && wait %4 )";
        ASSERT_EQ(status_of(std::system(both.c_str())), 0) << both;
        std::string const r = read_file(out + "/r.tsv"), n = read_file(out + "/n.fq");
        EXPECT_TRUE(r == a_tsv || r == b_tsv) << "report mixes the runs, round " << round;
        EXPECT_TRUE(n == a_fq || n == b_fq) << "reads mix the runs, round " << round;
        winners.insert(r == a_tsv ? "a" : "b");
        std::string const f = read_file(out + "/f.ksf");
        EXPECT_TRUE(f == read_file(tmp / "a.ksf") || f == read_file(tmp / "b.ksf"))
            << "filter mixes the runs, round " << round;
        EXPECT_EQ(run_ksieve("info '" + out + "/f.ksf'", tmp).status, 0);
        EXPECT_EQ(temporaries_in(out), std::vector<std::string>{});
    }
}

class cgroup_limits : public ::testing::Test
{
protected:
    void SetUp() override
    {
#ifdef KSIEVE_SANITIZED
        GTEST_SKIP() << "sanitizer builds reserve shadow memory that no small limit fits";
#endif
        if (::geteuid() != 0)
            GTEST_SKIP() << "not root: no cgroup of the test's own";
    }
    temp_dir tmp;
};

TEST_F(cgroup_limits, a_filter_that_cannot_fit_is_refused_up_front_naming_the_limit)
{
    memory_cgroup const cg{std::uint64_t{96} << 20};
    if (!cg.ok())
        GTEST_SKIP() << "no memory cgroup can be made here";
    write_data(tmp, 20000, 100, 3);
    for (std::string const & args :
         {"build -q -t 1 --sampling all --fpr 0 --expected 1000000000 -o '" + tmp / "x.ksf" +
              "' '" + tmp / "ref.fa" + "'",
          "build -q -t 2 --sampling all --fpr 0 --expected 100000000 -o '" + tmp / "x.ksf" + "' '" +
              tmp / "ref.fa" + "'",
          "dedup -q -t 1 --fpr 0 --expected 1000000000 --novel '" + tmp / "n.fq" + "' '" +
              tmp / "reads.fq" + "'"})
    {
        auto const r = cg.run(args, tmp);
        EXPECT_EQ(r.status, 1) << args << "\n" << r.err; // not killed (137)
        EXPECT_NE(r.err.find("cgroup, 96 MiB"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(tmp / "x.ksf"));
        EXPECT_FALSE(fs::exists(tmp / "n.fq"));
        EXPECT_EQ(temporaries_in(tmp.path().string()), std::vector<std::string>{});
    }
    // a run that fits the limit does its work
    auto const r = cg.run(
        "build -q -t 1 --sampling all -o '" + tmp / "x.ksf" + "' '" + tmp / "ref.fa" + "'", tmp);
    EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(cgroup_limits, a_limit_below_what_a_run_needs_is_refused_before_any_work)
{
    // classify's workers each hold a batch: 20 MiB is below what 4 threads need
    memory_cgroup const cg{std::uint64_t{20} << 20};
    if (!cg.ok())
        GTEST_SKIP() << "no memory cgroup can be made here";
    write_data(tmp, 20000, 100, 4);
    auto const r = cg.run(
        "classify -q -t 4 -f x.ksf --novel '" + tmp / "n.fq" + "' '" + tmp / "reads.fq" + "'", tmp);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("cgroup is 20 MiB"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("4 threads"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "n.fq"));
}

TEST_F(cgroup_limits, a_filter_larger_than_the_memory_runs_from_its_mapping)
{
    write_data(tmp, 17'000'000, 600, 5);
    std::string const filter = tmp / "big.ksf";
    ASSERT_EQ(
        run_ksieve("build -q --sampling all --fpr 0 -o '" + filter + "' '" + tmp / "ref.fa" + "'",
                   tmp)
            .status,
        0);
    std::uint64_t const filter_bytes = fs::file_size(filter);
    ASSERT_GT(filter_bytes, std::uint64_t{90} << 20);
    std::string const args = "classify -q -t 1 -f '" + filter + "' --report '";
    ASSERT_EQ(run_ksieve(args + tmp / "free.tsv" + "' '" + tmp / "reads.fq" + "'", tmp).status, 0);
    std::string const free_report = read_file(tmp / "free.tsv");
    // every read of the reference is known (the oracle of an exact filter)
    std::size_t known = 0;
    std::istringstream rows{free_report};
    std::string row;
    std::getline(rows, row);
    for (std::size_t i = 0; std::getline(rows, row); ++i)
        if (row.ends_with("\tknown"))
        {
            ++known;
            EXPECT_EQ(std::stoul(row.substr(1)) % 2, 0u) << row;
        }
    EXPECT_EQ(known, 300u);
    memory_cgroup const cg{std::uint64_t{72} << 20};
    if (!cg.ok())
        GTEST_SKIP() << "no memory cgroup can be made here";
    // drop the filter from the page cache, so that the run reads it within the limit
    int const fd = ::open(filter.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    auto const r = cg.run(args + tmp / "limited.tsv" + "' '" + tmp / "reads.fq" + "'", tmp);
    ASSERT_EQ(r.status, 0) << "a 72 MiB cgroup, a filter of " << filter_bytes << " bytes\n"
                           << r.err;
    EXPECT_EQ(read_file(tmp / "limited.tsv"), free_report);
}

TEST(memory_limit, the_whole_process_stays_within_max_memory)
{
#ifdef KSIEVE_SANITIZED
    GTEST_SKIP() << "sanitizer builds keep shadow and quarantine memory beyond the limit";
#endif
    temp_dir tmp;
    // a metagenome of 20 genomes of 25 kbp, 120,000 reads at 0.5% errors, and its genomes
    std::mt19937_64 rng{44};
    std::string const fq = metagenome_fastq(rng, 20, 25000, 120000);
    std::mt19937_64 again{44};
    std::vector<std::string> genomes;
    for (int g = 0; g < 20; ++g)
        genomes.push_back(random_dna(again, 25000));
    write_file(tmp / "meta.fq", fq);
    std::string fa;
    for (std::size_t g = 0; g < genomes.size(); ++g)
        fa += ">g" + std::to_string(g) + "\n" + genomes[g] + "\n";
    write_file(tmp / "ref.fa", fa);
    std::uint64_t const limit = std::uint64_t{40} << 20;
    std::string const reads = "'" + tmp / "meta.fq" + "'";
    for (std::string const & args :
         {"dedup -q -t 2 --max-memory 40M --novel '" + tmp / "n.fq.gz" + "' " + reads,
          "dedup -q -t 2 --max-memory 40M --min-count 20 --novel '" + tmp / "n.fq" +
              "' --report '" + tmp / "d.tsv" + "' " + reads,
          "build -q -t 2 --max-memory 40M --sampling all -o '" + tmp / "f.ksf" + "' '" +
              tmp / "ref.fa" + "'",
          "classify -q -t 2 --max-memory 40M -f '" + tmp / "f.ksf" + "' --report '" +
              tmp / "c.tsv" + "' --novel '" + tmp / "c.fq.gz" + "' " + reads})
    {
        cgroup_run const r = run_with_peak(args, tmp);
        EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
        EXPECT_LE(r.peak, limit + limit / 10) << args << ": peak " << r.peak;
    }
}

TEST(info_estimates, the_filter_bytes_a_million_reads_touch)
{
    temp_dir tmp;
    write_data(tmp, 200000, 10, 6);
    for (std::string const sampling : {"all", "minimizer:8"})
    {
        std::string const f = tmp / "f.ksf";
        ASSERT_EQ(run_ksieve("build -q --sampling " + sampling + " -o '" + f + "' '" +
                                 tmp / "ref.fa" + "'",
                             tmp)
                      .status,
                  0);
        auto const r = run_ksieve("info --json '" + f + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        double const lookups = json_number(r.out, "lookups_per_million_reads");
        double const bytes = json_number(r.out, "bytes_read_per_million_reads");
        double const payload = json_number(r.out, "payload_bytes");
        // 120 k-mers of 31 in a read of 150; about 2 / 9 of them minimizers of windows of 8, and
        // one
        double const want = sampling == "all" ? 120e6 : 1e6 * (1 + 2 * 120.0 / 9);
        EXPECT_NEAR(lookups, want, 1.0) << sampling;
        // that many lookups touch every 4 KiB page of so small a filter
        EXPECT_LE(bytes, payload) << sampling;
        EXPECT_GE(bytes, 0.99 * payload) << sampling;
        auto const text = run_ksieve("info '" + f + "'", tmp);
        EXPECT_NE(text.out.find("bytes_read_per_million_reads\t" +
                                std::to_string(static_cast<std::uint64_t>(bytes))),
                  std::string::npos)
            << text.out;
    }
}

} // namespace
