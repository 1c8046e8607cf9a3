// Running out of threads or memory is an error, never an abort: build, classify and dedup run under
// a range of address-space limits (ulimit -v, which also bounds the stacks of new threads). At
// every limit a run either succeeds with exactly the outputs of an unlimited run, or fails with
// exit status 1, a first stderr line `ksieve: error: out of ...`, and no output or temporary file
// left.
#include "test_helpers.hpp"

#include <random>
#include <set>

using namespace ksieve::test;

namespace
{

// A random reference and reads: half taken from the reference (some twice), half random.
void write_inputs(temp_dir const & tmp)
{
    std::mt19937_64 rng{20261127};
    auto random_bases = [&](std::size_t const n)
    {
        std::string s(n, 'A');
        for (char & c : s)
            c = "ACGT"[rng() % 4];
        return s;
    };
    std::string const ref = random_bases(48000);
    write_file(tmp / "ref.fa", ">ref\n" + ref + "\n");
    std::string fq;
    for (int i = 0; i < 1200; ++i)
    {
        std::string const seq =
            i % 2 == 0 ? ref.substr(rng() % (ref.size() - 150), 150) : random_bases(150);
        int const copies = i % 7 == 0 ? 2 : 1;
        for (int c = 0; c < copies; ++c)
            fq += "@r" + std::to_string(i) + "_" + std::to_string(c) + "\n" + seq + "\n+\n" +
                  std::string(150, 'I') + "\n";
    }
    write_file(tmp / "reads.fq", fq);
}

struct limited_run
{
    int status{-1};
    std::string first_err_line;
};

// `ksieve ARGS` in `dir` under an address-space limit of `kib` KiB (0: none).
limited_run run_limited(std::string const & dir, std::string const & args, unsigned const kib)
{
    std::string cmd = "cd '" + dir + "' && ";
    // threads' stacks are reserved at the size of the stack limit: the common 8 MiB, so that the
    // address space a run needs does not depend on the limits of the shell that runs the tests
    if (kib > 0)
        cmd +=
            "{ ulimit -s 8192 2>/dev/null || true; } && ulimit -v " + std::to_string(kib) + " && ";
    cmd += "exec '" + binary() + "' " + args + " >stdout.txt 2>stderr.txt";
    int const raw = std::system(cmd.c_str());
    limited_run r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    std::string const err = read_file(dir + "/stderr.txt");
    r.first_err_line = err.substr(0, err.find('\n'));
    return r;
}

// The files a run left in `dir`, but for its captured stdout and stderr.
std::set<std::string> outputs_in(std::string const & dir)
{
    std::set<std::string> names;
    for (auto const & e : fs::directory_iterator{dir})
        if (std::string const name = e.path().filename().string();
            name != "stdout.txt" && name != "stderr.txt")
            names.insert(name);
    return names;
}

class resource_limits : public ::testing::Test
{
protected:
    void SetUp() override
    {
#if defined(KSIEVE_SANITIZED)
        // (a sanitizer reserves terabytes of address space for its shadow memory: an address-space
        // limit stops the sanitizer itself, not the code under test)
        GTEST_SKIP() << "address-space limits do not apply to sanitized executables";
#endif
    }
    static void SetUpTestSuite()
    {
        tmp_ = new temp_dir{};
        write_inputs(*tmp_);
        limited_run const r =
            run_limited(tmp_->path().string(), "build -q -t 1 -o filter.ksf ref.fa", 0);
        ASSERT_EQ(r.status, 0) << r.first_err_line;
    }
    static void TearDownTestSuite()
    {
        delete tmp_;
        tmp_ = nullptr;
    }

    // `args` (inputs as ../NAME, outputs in the run's folder) at limits from 20 to 100 MB: each run
    // as described in the file comment, the unlimited run's outputs as the oracle.
    static void expect_error_or_same_outputs(std::string const & args)
    {
        std::string const base = tmp_->path() / ("run" + std::to_string(++runs_));
        fs::create_directories(base + "/free");
        limited_run const free = run_limited(base + "/free", args, 0);
        ASSERT_EQ(free.status, 0) << args << ": " << free.first_err_line;
        std::set<std::string> const expected = outputs_in(base + "/free");
        ASSERT_FALSE(expected.empty()) << args;
        unsigned failures = 0;
        for (unsigned kib = 20000; kib <= 100000; kib += 6000)
        {
            std::string const dir = base + "/" + std::to_string(kib);
            fs::create_directories(dir);
            limited_run const r = run_limited(dir, args, kib);
            std::string const what = args + " under ulimit -v " + std::to_string(kib);
            std::set<std::string> const left = outputs_in(dir);
            if (r.status == 0)
            {
                EXPECT_EQ(left, expected) << what;
                for (std::string const & name : expected)
                {
                    EXPECT_EQ(read_file(dir + "/" + name), read_file(base + "/free/" + name))
                        << what << ": " << name;
                }
                continue;
            }
            ++failures;
            EXPECT_EQ(r.status, 1) << what << ": " << r.first_err_line;
            EXPECT_EQ(r.first_err_line.rfind("ksieve: error: out of ", 0), 0u)
                << what << ": " << r.first_err_line;
            EXPECT_TRUE(left.empty()) << what << ": " << left.size() << " files left, first "
                                      << (left.empty() ? std::string{} : *left.begin());
        }
        // the smallest limits are below what any run needs: the sweep did reach the failures
        EXPECT_GT(failures, 0u) << args;
    }

    static inline temp_dir * tmp_ = nullptr;
    static inline int runs_ = 0;
};

TEST_F(resource_limits, classify_fails_cleanly_or_gives_the_same_outputs)
{
    for (char const * const t : {"1", "2", "3"})
    {
        expect_error_or_same_outputs(
            std::string{"classify -q -t "} + t +
            " -f ../../filter.ksf --novel novel.fq --report report.tsv ../../reads.fq");
        expect_error_or_same_outputs(
            std::string{"classify -q -t "} + t +
            " -f ../../filter.ksf --novel novel.fq --known known.fq ../../reads.fq");
    }
}

TEST_F(resource_limits, dedup_fails_cleanly_or_gives_the_same_outputs)
{
    for (char const * const t : {"1", "2", "3"})
    {
        expect_error_or_same_outputs(std::string{"dedup -q -t "} + t +
                                     " --novel novel.fq --report report.tsv ../../reads.fq");
        expect_error_or_same_outputs(std::string{"dedup -q -t "} + t +
                                     " --novel novel.fq ../../reads.fq");
    }
}

TEST_F(resource_limits, build_fails_cleanly_or_gives_the_same_filter)
{
    for (char const * const t : {"1", "2"})
    {
        expect_error_or_same_outputs(std::string{"build -q -t "} + t +
                                     " --sampling all -o out.ksf ../../ref.fa");
        expect_error_or_same_outputs(std::string{"build -q -t "} + t + " -o out.ksf ../../ref.fa");
    }
}

// dedup's memory besides the filter grows by at most 60 bytes per base of the longest record, over
// a base of 64 MiB, for any thread count: a record of 5.04 Mbp runs within that address space and
// comes out as it went in (one novel record). Without the bound it needed about 90 bytes per base
// with one thread and 145 with two.
TEST_F(resource_limits, dedup_of_a_long_record_stays_within_60_bytes_per_base)
{
    std::mt19937_64 rng{5040000};
    std::string record(5040000, 'A');
    for (char & c : record)
        c = "ACGT"[rng() % 4];
    std::string const fasta = ">chr\n" + record + "\n";
    write_file(*tmp_ / "long.fa", fasta);
    unsigned const kib = 65536 + static_cast<unsigned>(60 * record.size() / 1024);
    for (std::string const args :
         {"dedup -q -t 1 --novel novel.fa ../long.fa", "dedup -q -t 2 --novel novel.fa ../long.fa",
          "dedup -q -t 2 --novel novel.fa --report report.tsv ../long.fa"})
    {
        std::string const dir = tmp_->path() / ("long" + std::to_string(++runs_));
        fs::create_directories(dir);
        limited_run const r = run_limited(dir, args, kib);
        ASSERT_EQ(r.status, 0) << args << " under ulimit -v " << kib << ": " << r.first_err_line;
        EXPECT_EQ(read_file(dir + "/novel.fa"), fasta) << args;
    }
}

} // namespace
