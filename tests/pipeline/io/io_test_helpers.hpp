#pragma once
// Shared helpers of the I/O tests: temporary directories, files, naive parsers (the oracles), and
// reading/writing whole files through the ksieve::io API.
#include <ksieve/filters/support/error.hpp>
#include <ksieve/io/io.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace ksieve::io::test
{

namespace fs = std::filesystem;

/*! \brief An owned copy of a record_view. */
struct record
{
    std::string name, header, seq, qual, raw;
    bool operator==(record const &) const = default;
};

inline std::ostream & operator<<(std::ostream & os, record const & r)
{
    return os << "{" << r.header << " | " << r.seq << " | " << r.qual << "}";
}

inline record to_record(record_view const & v)
{
    return {std::string{v.name}, std::string{v.header}, std::string{v.seq}, std::string{v.qual},
            std::string{v.raw}};
}

/*! \brief A fresh directory under the system temporary directory, removed with everything in it. */
class temp_dir
{
public:
    temp_dir()
    {
        std::string tmpl = (fs::temp_directory_path() / "ksieve-io-test-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr)
            throw std::runtime_error{"mkdtemp failed"};
        path_ = tmpl;
    }
    ~temp_dir()
    {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    temp_dir(temp_dir const &) = delete;
    temp_dir & operator=(temp_dir const &) = delete;
    [[nodiscard]] std::string operator/(std::string const & name) const
    {
        return (path_ / name).string();
    }
    [[nodiscard]] fs::path const & path() const { return path_; }
    /*! \brief Names of the files in the directory, sorted. */
    [[nodiscard]] std::vector<std::string> entries() const
    {
        std::vector<std::string> out;
        for (auto const & e : fs::directory_iterator{path_})
            out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }

private:
    fs::path path_;
};

inline void write_file(std::string const & path, std::string const & bytes)
{
    std::ofstream f{path, std::ios::binary};
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f)
        throw std::runtime_error{"cannot write " + path};
}

inline std::string read_file(std::string const & path)
{
    std::ifstream f{path, std::ios::binary};
    if (!f)
        throw std::runtime_error{"cannot read " + path};
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline std::string quote_shell(std::string const & s)
{
    std::string out = "'";
    for (char const c : s)
        out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
    return out + "'";
}

/*! \brief Run a shell command; \returns its exit status. */
inline int shell(std::string const & command)
{
    int const rc = std::system(command.c_str());
    return rc == -1 ? -1 : WEXITSTATUS(rc);
}

inline bool have_tool(std::string const & tool)
{
    return shell("command -v " + tool + " >/dev/null 2>&1") == 0;
}

/*! \brief Output of a shell command (binary safe). */
inline std::string capture(std::string const & command)
{
    std::string out;
    std::FILE * const p = ::popen(command.c_str(), "r");
    if (p == nullptr)
        throw std::runtime_error{"popen failed"};
    char buf[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        out.append(buf, n);
    ::pclose(p);
    return out;
}

/*! \brief Every record of an input, through ksieve::io::reader. */
inline std::vector<record> read_all(std::string const & path, reader_options const & options = {},
                                    seq_format * format = nullptr)
{
    auto r = reader::open(path, options);
    if (format != nullptr)
        *format = r->format();
    std::vector<record> out;
    record_batch batch;
    std::uint64_t expect_first = 1;
    while (r->next(batch))
    {
        EXPECT_FALSE(batch.empty());
        EXPECT_EQ(batch.first_record_number(), expect_first);
        EXPECT_LE(batch.size(), std::max<std::size_t>(options.batch_records, 1));
        std::size_t bases = 0;
        for (std::size_t i = 0; i < batch.size(); ++i)
        {
            out.push_back(to_record(batch[i]));
            bases += batch[i].seq.size();
        }
        EXPECT_EQ(batch.bases(), bases);
        expect_first += batch.size();
    }
    EXPECT_TRUE(batch.empty());
    return out;
}

/*! \brief Read `in` and write all its records to `out` (format from out's extension). */
inline void copy_records(std::string const & in, std::string const & out,
                         writer_options options = {}, reader_options const & ropt = {})
{
    auto r = reader::open(in, ropt);
    options.sam_header = r->sam_header();
    auto w = writer::open(out, r->format(), options);
    record_batch batch;
    while (r->next(batch))
        for (std::size_t i = 0; i < batch.size(); ++i)
            w->write(batch[i]);
    w->close();
}

/*! \brief Oracle: a naive line-based FASTQ parser (4 lines per record, '\r' kept in raw only). */
inline std::vector<record> naive_fastq(std::string const & text)
{
    std::vector<record> out;
    std::istringstream in{text};
    std::string l[4];
    auto strip = [](std::string s)
    {
        if (!s.empty() && s.back() == '\r')
            s.pop_back();
        return s;
    };
    while (std::getline(in, l[0]))
    {
        if (strip(l[0]).empty())
            continue;
        for (int i = 1; i < 4; ++i)
            std::getline(in, l[i]);
        record r;
        r.header = strip(l[0]).substr(1);
        r.name = r.header.substr(0, r.header.find_first_of(" \t"));
        r.seq = strip(l[1]);
        r.qual = strip(l[3]);
        r.raw = l[0] + "\n" + l[1] + "\n" + l[2] + "\n" + l[3] + "\n";
        out.push_back(r);
    }
    return out;
}

/*! \brief Oracle: a naive FASTA parser (sequence = lines joined, '\r' removed; raw = all lines). */
inline std::vector<record> naive_fasta(std::string const & text)
{
    std::vector<record> out;
    std::istringstream in{text};
    std::string line;
    while (std::getline(in, line))
    {
        std::string const s =
            !line.empty() && line.back() == '\r' ? line.substr(0, line.size() - 1) : line;
        if (!s.empty() && s[0] == '>')
        {
            record r;
            r.header = s.substr(1);
            r.name = r.header.substr(0, r.header.find_first_of(" \t"));
            out.push_back(r);
        }
        else if (out.empty())
            continue; // leading blank lines
        else
            out.back().seq += s;
        out.back().raw += line + "\n";
    }
    return out;
}

/*! \brief Random FASTQ text with `n` records (lengths 0..max_len, some comments, some N). */
inline std::string random_fastq(std::size_t const n, std::uint32_t const seed,
                                std::size_t const max_len = 200, bool const crlf = false)
{
    std::mt19937 rng{seed};
    std::string out;
    char const * const eol = crlf ? "\r\n" : "\n";
    for (std::size_t i = 0; i < n; ++i)
    {
        std::size_t const len = rng() % (max_len + 1);
        out += "@read" + std::to_string(i);
        if (rng() % 2 == 0)
            out += " comment:" + std::to_string(rng() % 1000) + "\tmore";
        out += eol;
        for (std::size_t j = 0; j < len; ++j)
            out += "ACGTNacgt"[rng() % 9];
        out += eol;
        out += rng() % 3 == 0 ? "+read" + std::to_string(i) : std::string{"+"};
        out += eol;
        for (std::size_t j = 0; j < len; ++j)
            out += static_cast<char>('!' + rng() % 42);
        out += eol;
    }
    return out;
}

/*! \brief Random multi-line FASTA text (line width 1..80, some empty sequences). */
inline std::string random_fasta(std::size_t const n, std::uint32_t const seed,
                                std::size_t const max_len = 1000)
{
    std::mt19937 rng{seed};
    std::string out;
    for (std::size_t i = 0; i < n; ++i)
    {
        std::size_t const len = rng() % 7 == 0 ? 0 : rng() % (max_len + 1);
        std::size_t const width = 1 + rng() % 80;
        out += ">seq" + std::to_string(i) + (rng() % 2 == 0 ? " some description" : "") + "\n";
        for (std::size_t j = 0; j < len; ++j)
        {
            out += "ACGTN"[rng() % 5];
            if ((j + 1) % width == 0 || j + 1 == len)
                out += '\n';
        }
    }
    return out;
}

/*! \brief Redirect a standard descriptor to a file for the lifetime of the object. */
class redirect_fd
{
public:
    redirect_fd(int const fd, std::string const & path, int const flags) : fd_{fd}
    {
        std::fflush(nullptr);
        saved_ = ::dup(fd);
        int const f = ::open(path.c_str(), flags, 0666);
        if (f < 0 || saved_ < 0)
            throw std::runtime_error{"redirect failed"};
        ::dup2(f, fd);
        ::close(f);
    }
    ~redirect_fd()
    {
        std::fflush(nullptr);
        ::dup2(saved_, fd_);
        ::close(saved_);
    }
    redirect_fd(redirect_fd const &) = delete;
    redirect_fd & operator=(redirect_fd const &) = delete;

private:
    int fd_;
    int saved_{-1};
};

/*! \brief The path in single quotes, as error messages show it. */
inline std::string q(std::string const & path)
{
    std::string out;
    out.reserve(path.size() + 2);
    out += '\'';
    out += path;
    out += '\'';
    return out;
}

/*! \brief Expect `fn` to throw input_error whose message contains every string in `parts`. */
template <typename F> void expect_input_error(F && fn, std::vector<std::string> const & parts)
{
    try
    {
        fn();
        ADD_FAILURE() << "no input_error thrown";
    }
    catch (ksieve::input_error const & e)
    {
        std::string const msg = e.what();
        for (auto const & p : parts)
            EXPECT_NE(msg.find(p), std::string::npos)
                << "message '" << msg << "' lacks '" << p << "'";
    }
    catch (std::exception const & e)
    {
        ADD_FAILURE() << "wrong exception type: " << e.what();
    }
}

} // namespace ksieve::io::test
