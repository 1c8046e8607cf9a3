#pragma once
// Shared helpers of the pipeline tests: temporary directories, running the ksieve binary, naive
// record splitting (independent of ksieve's readers) and file comparison.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ksieve::test
{

namespace fs = std::filesystem;

inline fs::path data_dir()
{
    return fs::path{KSIEVE_GENERATED_DATA_DIR};
}
inline fs::path data(std::string const & name)
{
    return data_dir() / name;
}
inline std::string binary()
{
    return KSIEVE_BINARY;
}

/*! Skip the test when the generated data is missing (the generate_test_data fixture failed). */
#define KSIEVE_REQUIRE_DATA()                                                                      \
    do                                                                                             \
    {                                                                                              \
        if (!std::filesystem::exists(::ksieve::test::data_dir() / ".complete"))                    \
            GTEST_FAIL() << "test data missing: run tests/data/generate.sh "                       \
                         << KSIEVE_GENERATED_DATA_DIR;                                             \
    } while (0)

class temp_dir
{
public:
    temp_dir()
    {
        std::random_device rd;
        path_ = fs::temp_directory_path() /
                ("ksieve-test-" + std::to_string(rd()) + std::to_string(rd()));
        fs::create_directories(path_);
    }
    ~temp_dir()
    {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    [[nodiscard]] fs::path const & path() const noexcept { return path_; }
    [[nodiscard]] std::string operator/(std::string const & name) const
    {
        return (path_ / name).string();
    }

private:
    fs::path path_;
};

struct run_result
{
    int status{-1};
    std::string err;
    std::string out;
};

/*! The number after `"key":` in a flat JSON text (--stats, info --json); a failure if the key is
 * missing. */
inline double json_number(std::string const & json, std::string const & key)
{
    auto const p = json.find("\"" + key + "\":");
    EXPECT_NE(p, std::string::npos) << key;
    return p == std::string::npos ? -1.0 : std::stod(json.substr(p + key.size() + 3));
}

/*! Run `ksieve ARGS` through the shell; capture exit status, stdout and stderr. */
inline run_result run_ksieve(std::string const & args, temp_dir const & tmp)
{
    std::string const out = tmp / "stdout.txt";
    std::string const err = tmp / "stderr.txt";
    std::string cmd{"'"}; // appended piecewise: `"..." + std::string&&` trips a GCC 12 -Wrestrict
                          // false positive
    cmd.append(binary())
        .append("' ")
        .append(args)
        .append(" >'")
        .append(out)
        .append("' 2>'")
        .append(err)
        .append("'");
    int const raw = std::system(cmd.c_str());
    run_result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    auto slurp = [](std::string const & p)
    {
        std::ifstream f{p, std::ios::binary};
        std::stringstream s;
        s << f.rdbuf();
        return s.str();
    };
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

inline std::string read_file(std::string const & path)
{
    std::ifstream f{path, std::ios::binary};
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

inline void write_file(std::string const & path, std::string const & text)
{
    std::ofstream f{path, std::ios::binary};
    f << text;
}

/*! Decompress with gzip -dc (independent of ksieve). */
inline std::string gunzip(std::string const & path, temp_dir const & tmp)
{
    std::string const out = tmp / "gunzip.tmp";
    std::string const cmd = "gzip -dc '" + path + "' > '" + out + "'";
    if (std::system(cmd.c_str()) != 0)
        return "<gunzip failed>";
    return read_file(out);
}

/*! Naive FASTQ split: 4 lines per record, each record's exact bytes. */
/*! Random bases A, C, G, T. */
inline std::string random_dna(std::mt19937_64 & rng, std::size_t const n)
{
    std::string s(n, 'A');
    for (auto & c : s)
        c = "ACGT"[rng() % 4];
    return s;
}

/*! FASTQ of `reads` reads of 150 bases from `genomes` random genomes of `length` bases each (a read
 * from a random one, at a random place), each base changed with probability 1/200 (0.5% errors):
 * a synthetic metagenome. */
inline std::string metagenome_fastq(std::mt19937_64 & rng, std::size_t const genomes,
                                    std::size_t const length, std::size_t const reads)
{
    std::vector<std::string> g;
    for (std::size_t i = 0; i < genomes; ++i)
        g.push_back(random_dna(rng, length));
    std::string fq;
    for (std::size_t i = 0; i < reads; ++i)
    {
        std::string const & from = g[rng() % g.size()];
        std::string seq = from.substr(rng() % (from.size() - 150), 150);
        for (char & c : seq)
            if (rng() % 200 == 0)
                c = "ACGT"[rng() % 4];
        fq += "@m" + std::to_string(i) + "\n" + seq + "\n+\n" + std::string(150, 'I') + "\n";
    }
    return fq;
}

inline std::vector<std::string> split_fastq(std::string const & text)
{
    std::vector<std::string> recs;
    std::size_t pos = 0;
    while (pos < text.size())
    {
        std::size_t end = pos;
        for (int l = 0; l < 4 && end != std::string::npos; ++l)
        {
            end = text.find('\n', end);
            if (end != std::string::npos)
                ++end;
        }
        if (end == std::string::npos)
            end = text.size();
        recs.push_back(text.substr(pos, end - pos));
        pos = end;
    }
    return recs;
}

/*! Naive FASTA split: a record starts at a line beginning with '>'. */
inline std::vector<std::string> split_fasta(std::string const & text)
{
    std::vector<std::string> recs;
    std::size_t pos = 0;
    while (pos < text.size())
    {
        std::size_t next = text.find("\n>", pos);
        std::size_t const end = next == std::string::npos ? text.size() : next + 1;
        recs.push_back(text.substr(pos, end - pos));
        pos = end;
    }
    return recs;
}

/*! Per-read report rows: id, kmers, hits, class. */
struct report_row
{
    std::string id;
    std::uint64_t kmers{0};
    std::uint64_t hits{0};
    std::string cls;
};

inline std::vector<report_row> read_report(std::string const & path)
{
    std::vector<report_row> rows;
    std::ifstream f{path};
    std::string line;
    std::getline(f, line);
    EXPECT_EQ(line, "read_id\tkmers\thits\tclass");
    while (std::getline(f, line))
    {
        std::istringstream s{line};
        report_row r;
        std::getline(s, r.id, '\t');
        s >> r.kmers >> r.hits >> r.cls;
        rows.push_back(r);
    }
    return rows;
}

/*! Interleave known and novel records back into input order following the report's classes. */
inline std::string merge_back(std::vector<report_row> const & rows,
                              std::vector<std::string> const & known,
                              std::vector<std::string> const & novel, std::size_t per_unit = 1)
{
    std::string all;
    std::size_t k = 0, n = 0;
    for (auto const & r : rows)
    {
        for (std::size_t m = 0; m < per_unit; ++m)
        {
            if (r.cls == "known")
                all += k < known.size() ? known[k++] : std::string{"<missing known>"};
            else
                all += n < novel.size() ? novel[n++] : std::string{"<missing novel>"};
        }
    }
    EXPECT_EQ(k, known.size()) << "known output has extra records";
    EXPECT_EQ(n, novel.size()) << "novel output has extra records";
    return all;
}

/*! Reverse complement of an ACGT string (others kept). */
inline std::string revcomp(std::string const & s)
{
    std::string r(s.rbegin(), s.rend());
    for (auto & c : r)
        c = c == 'A' ? 'T' : c == 'C' ? 'G' : c == 'G' ? 'C' : c == 'T' ? 'A' : c;
    return r;
}

// Exact set of canonical k-mers (as upper-case strings) of all sequences of a FASTA file: the
// oracle.
inline std::unordered_set<std::string> kmer_set_of_fasta(std::string const & path, unsigned const k)
{
    std::unordered_set<std::string> set;
    std::ifstream f{path};
    std::string line, seq;
    auto flush = [&]
    {
        for (auto & c : seq)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        for (std::size_t i = 0; i + k <= seq.size(); ++i)
        {
            std::string const s = seq.substr(i, k);
            if (s.find_first_not_of("ACGT") != std::string::npos)
                continue;
            std::string const rc = revcomp(s);
            set.insert(std::min(s, rc));
        }
        seq.clear();
    };
    while (std::getline(f, line))
    {
        if (!line.empty() && line[0] == '>')
            flush();
        else
            seq += line;
    }
    flush();
    return set;
}

// Hits of each FASTQ read against the oracle set.
inline std::vector<std::pair<std::uint64_t, std::uint64_t>>
oracle_hits(std::vector<std::string> const & fastq_records,
            std::unordered_set<std::string> const & set, unsigned const k)
{
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    for (auto const & rec : fastq_records)
    {
        std::size_t const a = rec.find('\n') + 1;
        std::string seq = rec.substr(a, rec.find('\n', a) - a);
        for (auto & c : seq)
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        std::uint64_t kmers = 0, hits = 0;
        for (std::size_t i = 0; i + k <= seq.size(); ++i)
        {
            std::string const s = seq.substr(i, k);
            if (s.find_first_not_of("ACGT") != std::string::npos)
                continue;
            ++kmers;
            hits += set.count(std::min(s, revcomp(s)));
        }
        out.emplace_back(kmers, hits);
    }
    return out;
}

/*! The fixture of the end-to-end tests of each command: a temporary directory, and build_hs() for a
 * filter of HS11286 with every k-mer (--sampling all). */
class commands : public ::testing::Test
{
protected:
    void SetUp() override { KSIEVE_REQUIRE_DATA(); }
    temp_dir tmp;

    std::string build_hs(std::string const & extra = "")
    {
        std::string const path = tmp / "hs.ksf";
        auto const r = run_ksieve("build -q --sampling all -o '" + path + "' " + extra + " '" +
                                      data("HS11286.fa").string() + "'",
                                  tmp);
        EXPECT_EQ(r.status, 0) << r.err;
        return path;
    }
};

/*! A fixture with a host filter of HS11286 (build defaults) in `filter` and the mixed reads in
 * `reads`. */
class host_filter_test : public ::testing::Test
{
protected:
    void SetUp() override
    {
        KSIEVE_REQUIRE_DATA();
        filter = tmp / "hs.ksf";
        auto const r =
            run_ksieve("build -q -o '" + filter + "' '" + data("HS11286.fa").string() + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        reads = data("mixed.fq").string();
    }
    temp_dir tmp;
    std::string filter;
    std::string reads;
};

} // namespace ksieve::test
