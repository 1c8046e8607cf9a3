// Inside a batch job's memory limit: with no --max-memory, a real memory cgroup of 128 MiB (v2
// where its memory controller can be used, else v1; skipped where none can be made, and in
// sanitizer builds) sizes every run as --max-memory 128M would. dedup (single, paired, exact,
// from stdin), classify with 200 gzip'd split outputs, build and merge each end with exit status 0
// and a peak resident memory within the limit and a tenth, or are refused before any work naming
// the limit. Paired dedup under --max-memory 24M keeps to it for 1, 2 and 3 threads; a record too
// long for the limit is refused naming it.
#include "memory_cgroup.hpp"
#include "test_helpers.hpp"

namespace
{

using namespace ksieve::test;

constexpr std::uint64_t mib = std::uint64_t{1} << 20;

// Reads of the synthetic metagenome as pairs: fragments of 400 bases, mate 1 their first 150,
// mate 2 the reverse complement of their last 150; 0.5% errors.
void write_pairs(temp_dir const & tmp, std::size_t const pairs, std::uint64_t const seed)
{
    std::mt19937_64 rng{seed};
    std::vector<std::string> genomes;
    for (int g = 0; g < 20; ++g)
        genomes.push_back(random_dna(rng, 25000));
    std::string r1, r2;
    for (std::size_t i = 0; i < pairs; ++i)
    {
        std::string const & from = genomes[rng() % genomes.size()];
        std::string frag = from.substr(rng() % (from.size() - 400), 400);
        for (char & c : frag)
            if (rng() % 200 == 0)
                c = "ACGT"[rng() % 4];
        std::string const name = "@p" + std::to_string(i);
        r1 += name + "/1\n" + frag.substr(0, 150) + "\n+\n" + std::string(150, 'I') + "\n";
        r2 += name + "/2\n" + revcomp(frag.substr(250)) + "\n+\n" + std::string(150, 'I') + "\n";
    }
    write_file(tmp / "r1.fq", r1);
    write_file(tmp / "r2.fq", r2);
}

class job_memory : public ::testing::Test
{
protected:
    void SetUp() override
    {
#ifdef KSIEVE_SANITIZED
        GTEST_SKIP() << "sanitizer builds keep shadow and quarantine memory beyond any small limit";
#endif
    }

    // A run within `limit`: exit 0 and its peak within the limit and a tenth, or exit 1 before any
    // work with an error naming the limit (`named`) and no output left.
    static void expect_within(cgroup_run const & r, std::uint64_t const limit,
                              std::string const & named, std::string const & what,
                              std::vector<std::string> const & outputs)
    {
        if (r.status == 0)
        {
            EXPECT_LE(r.peak, limit + limit / 10) << what << ": peak " << r.peak;
            for (std::string const & o : outputs)
                EXPECT_TRUE(fs::exists(o)) << what << ": " << o;
            return;
        }
        EXPECT_EQ(r.status, 1) << what << " (137: killed by the kernel)\n" << r.err;
        EXPECT_NE(r.err.find(named), std::string::npos) << what << "\n" << r.err;
        for (std::string const & o : outputs)
            EXPECT_FALSE(fs::exists(o)) << what << ": " << o;
    }
    temp_dir tmp;
};

TEST_F(job_memory, every_command_keeps_within_a_128_mib_cgroup_without_max_memory)
{
    if (::geteuid() != 0)
        GTEST_SKIP() << "not root: no cgroup of the test's own";
    std::uint64_t const limit = 128 * mib;
    memory_cgroup const cg{limit};
    if (!cg.ok())
        GTEST_SKIP() << "no memory cgroup can be made here";
    // a metagenome of 150,000 reads, 75,000 pairs of it, and a labeled reference of 200 labels with
    // 60,000 reads from it
    std::mt19937_64 rng{128};
    write_file(tmp / "meta.fq", metagenome_fastq(rng, 20, 25000, 150000));
    write_pairs(tmp, 75000, 129);
    std::string fa, fq;
    std::vector<std::string> refs;
    for (int l = 0; l < 200; ++l)
    {
        refs.push_back(random_dna(rng, 5000));
        fa += ">l" + std::to_string(l) + "\n" + refs.back() + "\n";
    }
    for (int i = 0; i < 60000; ++i)
        fq += "@s" + std::to_string(i) + "\n" +
              refs[rng() % refs.size()].substr(rng() % 4850, 150) + "\n+\n" +
              std::string(150, 'I') + "\n";
    write_file(tmp / "labels.fa", fa);
    write_file(tmp / "screen.fq", fq);
    std::string const big = random_dna(rng, 8000000);
    write_file(tmp / "ref.fa", ">ref\n" + big + "\n");
    ASSERT_EQ(run_ksieve("build -q --label-by record -o '" + tmp / "labels.ksf" + "' '" +
                             tmp / "labels.fa" + "'",
                         tmp)
                  .status,
              0);
    ASSERT_EQ(
        run_ksieve("build -q --part 0/2 -o '" + tmp / "p0.ksf" + "' '" + tmp / "ref.fa" + "'", tmp)
            .status,
        0);
    ASSERT_EQ(
        run_ksieve("build -q --part 1/2 -o '" + tmp / "p1.ksf" + "' '" + tmp / "ref.fa" + "'", tmp)
            .status,
        0);
    std::string const t = tmp.path().string() + "/";
    std::string const named = "cgroup";
    struct job
    {
        std::string args;
        std::vector<std::string> outputs;
    };
    std::vector<job> const jobs{
        {"dedup -q -t 2 --novel " + t + "d.fq.gz " + t + "meta.fq", {t + "d.fq.gz"}},
        {"dedup -q -t 1 --min-count 20 --novel " + t + "n.fq " + t + "meta.fq", {t + "n.fq"}},
        {"dedup -q -t 2 --paired --novel " + t + "p1.fq.gz --novel2 " + t + "p2.fq.gz " + t +
             "r1.fq " + t + "r2.fq",
         {t + "p1.fq.gz", t + "p2.fq.gz"}},
        {"dedup -q -t 2 --exact --novel " + t + "e.fq " + t + "meta.fq", {t + "e.fq"}},
        {"dedup -q -t 2 --novel " + t + "s.fq.gz - < " + t + "meta.fq", {t + "s.fq.gz"}},
        {"classify -q -t 2 -f " + t + "labels.ksf --split-by-label '" + t +
             "split/{label}.fq.gz' --report " + t + "c.tsv " + t + "screen.fq",
         {t + "c.tsv", t + "split/l0.fq.gz", t + "split/l199.fq.gz"}},
        {"build -q -t 2 -o " + t + "b.ksf " + t + "ref.fa", {t + "b.ksf"}},
        {"build -q -t 2 --sampling all -o " + t + "ball.ksf " + t + "ref.fa", {t + "ball.ksf"}},
        {"merge -q -t 2 -o " + t + "m.ksf " + t + "p0.ksf " + t + "p1.ksf", {t + "m.ksf"}}};
    for (job const & j : jobs)
        expect_within(cg.run(j.args, tmp), limit, named, j.args, j.outputs);
    // the plan saw the cgroup's limit: --stats reports it
    auto const r = cg.run("dedup -q -t 2 --stats " + t + "st.json " + t + "meta.fq", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(json_number(read_file(t + "st.json"), "memory_limit"), static_cast<double>(limit));
}

TEST_F(job_memory, a_cgroup_below_what_a_run_needs_is_refused_before_any_work_naming_it)
{
    if (::geteuid() != 0)
        GTEST_SKIP() << "not root: no cgroup of the test's own";
    memory_cgroup const cg{20 * mib};
    if (!cg.ok())
        GTEST_SKIP() << "no memory cgroup can be made here";
    std::mt19937_64 rng{20};
    write_file(tmp / "meta.fq", metagenome_fastq(rng, 2, 5000, 1000));
    std::string const t = tmp.path().string() + "/";
    auto const r = cg.run("dedup -q -t 3 --novel " + t + "n.fq " + t + "meta.fq", tmp);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("the memory limit of this process's cgroup is 20 MiB"), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(t + "n.fq"));
}

TEST_F(job_memory, paired_dedup_keeps_within_24m_for_any_thread_count)
{
    write_pairs(tmp, 75000, 24);
    std::string const t = tmp.path().string() + "/";
    std::uint64_t const limit = 24 * mib;
    std::string first;
    for (char const * const threads : {"1", "2", "3"})
    {
        std::string const args = std::string{"dedup -q --paired --max-memory 24M -t "} + threads +
                                 " --novel " + t + "u1.fq --novel2 " + t + "u2.fq " + t + "r1.fq " +
                                 t + "r2.fq";
        cgroup_run const r = run_with_peak(args, tmp);
        ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
        EXPECT_LE(r.peak, limit + limit / 10) << args << ": peak " << r.peak;
        // the same pairs kept for any thread count
        std::string const kept = read_file(t + "u1.fq") + read_file(t + "u2.fq");
        if (first.empty())
            first = kept;
        EXPECT_EQ(kept, first) << args;
    }
}

// dedup holds a record at once (about 40 bytes a base): under a limit, a record that would take
// more than half of the filter's part of it is refused with an error naming the input and the
// record, and nothing is written; one that fits runs within the limit.
TEST_F(job_memory, a_record_too_long_for_the_limit_is_refused_naming_it)
{
    std::mt19937_64 rng{4000};
    std::string const t = tmp.path().string() + "/";
    write_file(t + "long.fa", ">short\nACGTACGTACGTACGTACGTACGTACGTACGTACGT\n>chr\n" +
                                  random_dna(rng, 4000000) + "\n");
    auto const refused = run_with_peak("dedup -q --max-memory 128M --novel " + t + "n.fa " + t +
                                           "long.fa",
                                       tmp);
    EXPECT_EQ(refused.status, 1) << refused.err;
    EXPECT_EQ(refused.err.rfind("ksieve: error: ", 0), 0u) << refused.err;
    EXPECT_NE(refused.err.find(t + "long.fa"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("record 2"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("--max-memory"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(t + "n.fa"));
    std::uint64_t const limit = 128 * mib;
    EXPECT_LE(refused.peak, limit + limit / 10);
    // a record that fits: within the limit, and out as it went in
    std::string const fits = ">chr\n" + random_dna(rng, 400000) + "\n";
    write_file(t + "fits.fa", fits);
    auto const r =
        run_with_peak("dedup -q --max-memory 128M --novel " + t + "n.fa " + t + "fits.fa", tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_LE(r.peak, limit + limit / 10);
    EXPECT_EQ(read_file(t + "n.fa"), fits);
}

} // namespace
