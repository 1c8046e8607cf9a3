// gzip input through ISA-L (igzip) and zlib: both decoders give the same bytes as an independent
// decompression (gzip -dc, or the known original) for single- and multi-member files of several
// compressors, and the same errors for truncated, corrupted and garbage-trailed files.
#include "../../../pipeline/io/src/gzip.hpp"
#include "io_test_helpers.hpp"

#include <htslib/hfile.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace ksieve::io;
using namespace ksieve::io::test;
using ksieve::io::detail::default_gzip_backend;
using ksieve::io::detail::gzip_backend;
using ksieve::io::detail::gzip_backend_from_env;
using ksieve::io::detail::have_isal;
using ksieve::io::detail::make_gzip_source;
using ksieve::io::detail::make_hfile_source;
using ksieve::io::detail::source_error;

namespace
{

struct decoded
{
    std::string bytes;
    bool failed{false};
    std::string error;
};

// All bytes of a gzip file through make_gzip_source with `backend`, read in random-sized pieces.
decoded decode(std::string const & path, gzip_backend const backend, std::uint32_t const seed = 1)
{
    hFILE * const hf = hopen(path.c_str(), "r");
    if (hf == nullptr)
        throw std::runtime_error{"cannot open " + path};
    auto src = make_gzip_source(make_hfile_source(hf), backend);
    std::mt19937 rng{seed};
    std::string buf(std::size_t{1} << 17, '\0');
    decoded out;
    try
    {
        for (;;)
        {
            std::size_t const want = 1 + rng() % (rng() % 2 == 0 ? 100 : buf.size());
            std::size_t const got = src->read(buf.data(), want);
            if (got == 0)
                break;
            EXPECT_LE(got, want);
            out.bytes.append(buf.data(), got);
        }
    }
    catch (source_error const & e)
    {
        out.failed = true;
        out.error = e.what();
    }
    return out;
}

std::vector<gzip_backend> backends()
{
    std::vector<gzip_backend> b{gzip_backend::zlib};
    if (have_isal())
        b.push_back(gzip_backend::isal);
    return b;
}

char const * name(gzip_backend const b)
{
    return b == gzip_backend::isal ? "isal" : "zlib";
}

// One gzip member made with zlib: optional FEXTRA/FNAME/FCOMMENT/FHCRC, a full flush every
// `flush_every` input bytes (0: none; many small blocks, stored ones at level 0).
std::string zlib_member(std::string const & data, int const level, bool const full_header = false,
                        std::size_t const flush_every = 0)
{
    z_stream zs{};
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error{"deflateInit2"};
    std::string extra = "XYZ";
    std::string fname = "reads.fq";
    std::string comment = "made by test_io_gzip";
    gz_header h{};
    if (full_header)
    {
        h.extra = reinterpret_cast<Bytef *>(extra.data());
        h.extra_len = static_cast<uInt>(extra.size());
        h.name = reinterpret_cast<Bytef *>(fname.data());
        h.comment = reinterpret_cast<Bytef *>(comment.data());
        h.hcrc = 1;
        h.os = 3;
        deflateSetHeader(&zs, &h);
    }
    std::string out(deflateBound(&zs, data.size()) + 1024 + data.size() / 8, '\0');
    zs.next_out = reinterpret_cast<Bytef *>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    std::size_t pos = 0;
    int ret = Z_OK;
    while (ret != Z_STREAM_END)
    {
        std::size_t const step =
            flush_every == 0 ? data.size() - pos : std::min(flush_every, data.size() - pos);
        zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data() + pos));
        zs.avail_in = static_cast<uInt>(step);
        pos += step;
        int const flush = pos == data.size() ? Z_FINISH : Z_FULL_FLUSH;
        ret = deflate(&zs, flush);
        if (ret != Z_OK && ret != Z_STREAM_END)
            throw std::runtime_error{"deflate"};
        if (zs.avail_out == 0)
            throw std::runtime_error{"deflate output too small"};
    }
    out.resize(out.size() - zs.avail_out);
    deflateEnd(&zs);
    return out;
}

std::string gzip_cli(temp_dir const & dir, std::string const & data, std::string const & command)
{
    write_file(dir / "in.tmp", data);
    std::string const out = capture(command + " < " + quote_shell(dir / "in.tmp"));
    return out;
}

// Test data: ~3 MB of random FASTQ plus some edge cases, as (name, original, compressed) triples.
struct gz_case
{
    std::string name;
    std::string original;
    std::string compressed;
};

class io_gzip : public ::testing::Test
{
protected:
    static void SetUpTestSuite()
    {
        dir_ = new temp_dir;
        text_ = new std::string{random_fastq(12000, 7)};
        cases_ = new std::vector<gz_case>;
        temp_dir const & dir = *dir_;
        std::string const & text = *text_;
        auto & c = *cases_;
        c.push_back({"gzip-1", text, gzip_cli(dir, text, "gzip -1 -n -c")});
        c.push_back({"gzip-9", text, gzip_cli(dir, text, "gzip -9 -c")});
        if (have_tool("pigz"))
        {
            c.push_back({"pigz", text, gzip_cli(dir, text, "pigz -p 2 -6 -c")});
            c.push_back({"pigz-independent", text, gzip_cli(dir, text, "pigz -p 2 -i -b 128 -c")});
        }
        std::size_t const a = text.size() / 3;
        std::size_t const b = 2 * text.size() / 3 + 17; // members need not end at line ends
        std::string const empty_member = gzip_cli(dir, "", "gzip -c");
        c.push_back({"multi-member", text,
                     gzip_cli(dir, text.substr(0, a), "gzip -6 -c") + empty_member +
                         zlib_member(text.substr(a, b - a), 1, true) +
                         zlib_member(text.substr(b), 9)});
        c.push_back({"zero-padding", text,
                     zlib_member(text.substr(0, a), 6) + std::string(7, '\0') +
                         zlib_member(text.substr(a), 6) + std::string(1000, '\0')});
        c.push_back({"empty-member", "", empty_member});
        c.push_back({"two-empty-members", "", empty_member + empty_member});
        c.push_back({"one-byte", "A", gzip_cli(dir, "A", "gzip -c")});
        c.push_back({"one-byte-members", "ABC",
                     zlib_member("A", 6) + zlib_member("B", 0) + zlib_member("C", 9, true)});
        c.push_back(
            {"full-header", text.substr(0, 500000), zlib_member(text.substr(0, 500000), 6, true)});
        c.push_back({"small-blocks", text.substr(0, 300000),
                     zlib_member(text.substr(0, 300000), 6, false, 777)});
        c.push_back({"stored-blocks", text.substr(0, 300000),
                     zlib_member(text.substr(0, 300000), 0, false, 70000)});
        std::mt19937 rng{5};
        std::string binary(1 << 20, '\0');
        for (char & ch : binary)
            ch = static_cast<char>(rng());
        c.push_back({"incompressible", binary, gzip_cli(dir, binary, "gzip -1 -c")});
        // BGZF (our writer): many members with extra fields and an empty end-of-file member
        write_file(dir / "bgzf-src.fq", text);
        copy_records(dir / "bgzf-src.fq", dir / "bgzf.fq.gz");
        c.push_back({"bgzf", text, read_file(dir / "bgzf.fq.gz")});
        for (std::size_t i = 0; i < c.size(); ++i)
            write_file(dir / (c[i].name + ".gz"), c[i].compressed);
    }

    static void TearDownTestSuite()
    {
        delete cases_;
        delete text_;
        delete dir_;
        cases_ = nullptr;
        text_ = nullptr;
        dir_ = nullptr;
    }

    static std::string path(std::string const & name) { return *dir_ / (name + ".gz"); }

    // Write `bytes` as a file and decode it with every backend; \returns the results (zlib first).
    static std::vector<decoded> decode_all(std::string const & file, std::string const & bytes)
    {
        write_file(*dir_ / file, bytes);
        std::vector<decoded> out;
        for (gzip_backend const b : backends())
            out.push_back(decode(*dir_ / file, b));
        return out;
    }

    static temp_dir * dir_;
    static std::string * text_;
    static std::vector<gz_case> * cases_;
};

temp_dir * io_gzip::dir_ = nullptr;
std::string * io_gzip::text_ = nullptr;
std::vector<gz_case> * io_gzip::cases_ = nullptr;

// Every result failed with the same message (containing `part`); the bytes before the error are a
// prefix of `original` (`whole`: all of it).
void expect_same_failure(std::vector<decoded> const & r, std::string const & original,
                         std::string const & part, bool const whole = false)
{
    for (std::size_t i = 0; i < r.size(); ++i)
    {
        SCOPED_TRACE(name(backends()[i]));
        ASSERT_TRUE(r[i].failed) << "no error; " << r[i].bytes.size() << " bytes read";
        EXPECT_NE(r[i].error.find(part), std::string::npos) << r[i].error;
        EXPECT_EQ(r[i].error, r[0].error);
        ASSERT_LE(r[i].bytes.size(), original.size());
        EXPECT_TRUE(original.compare(0, r[i].bytes.size(), r[i].bytes) == 0)
            << "output is not a prefix";
        if (whole)
        {
            EXPECT_EQ(r[i].bytes.size(), original.size());
        }
    }
}

} // namespace

TEST(io_gzip_backend, environment_variable_selects_zlib)
{
    gzip_backend const preferred = have_isal() ? gzip_backend::isal : gzip_backend::zlib;
    EXPECT_EQ(gzip_backend_from_env(nullptr), preferred);
    EXPECT_EQ(gzip_backend_from_env(""), preferred);
    EXPECT_EQ(gzip_backend_from_env("0"), preferred);
    EXPECT_EQ(gzip_backend_from_env("1"), gzip_backend::zlib);
    EXPECT_EQ(gzip_backend_from_env("yes"), gzip_backend::zlib);
    EXPECT_EQ(default_gzip_backend(), gzip_backend_from_env(std::getenv("KSIEVE_ZLIB")));
}

TEST_F(io_gzip, both_backends_equal_the_original_and_gzip_dc)
{
    ASSERT_FALSE(cases_->empty());
    for (auto const & c : *cases_)
    {
        SCOPED_TRACE(c.name);
        // gzip -dc stops at zero padding between members
        if (c.name != "zero-padding")
        {
            std::string const independent = capture("gzip -dc " + quote_shell(path(c.name)));
            ASSERT_TRUE(independent == c.original) << independent.size() << " bytes from gzip -dc";
        }
        for (gzip_backend const b : backends())
        {
            SCOPED_TRACE(name(b));
            for (std::uint32_t const seed : {1u, 2u})
            {
                decoded const d = decode(path(c.name), b, seed);
                EXPECT_FALSE(d.failed) << d.error;
                EXPECT_EQ(d.bytes.size(), c.original.size());
                EXPECT_TRUE(d.bytes == c.original);
            }
        }
    }
}

TEST_F(io_gzip, reader_records_equal_the_naive_parser)
{
    std::vector<record> const expected = naive_fastq(*text_);
    for (std::string const n : {"gzip-9", "multi-member", "zero-padding", "bgzf"})
    {
        SCOPED_TRACE(n);
        EXPECT_EQ(read_all(path(n)), expected);
        reader_options small;
        small.batch_records = 7;
        small.batch_bases = 3000;
        EXPECT_EQ(read_all(path(n), small), expected);
    }
}

// Run by reader_records_with_kseive_zlib_set in a child process (any environment works here).
TEST_F(io_gzip, reader_uses_the_backend_of_the_environment)
{
    EXPECT_EQ(default_gzip_backend(), gzip_backend_from_env(std::getenv("KSIEVE_ZLIB")));
    EXPECT_EQ(read_all(path("multi-member")), naive_fastq(*text_));
    std::string const gz = read_file(path("gzip-1"));
    write_file(*dir_ / "env-cut.fq.gz", gz.substr(0, gz.size() / 2));
    expect_input_error(
        [&] { read_all(*dir_ / "env-cut.fq.gz"); },
        {q(*dir_ / "env-cut.fq.gz"), "record ", "unexpected end of gzip data (truncated file)"});
}

TEST_F(io_gzip, reader_records_with_ksieve_zlib_set)
{
    // the backend is chosen once per process: run the test above in a child with KSIEVE_ZLIB=1
    std::string const self = fs::read_symlink("/proc/self/exe").string();
    std::string const out =
        capture("KSIEVE_ZLIB=1 " + quote_shell(self) +
                " --gtest_filter=io_gzip.reader_uses_the_backend_of_the_environment 2>&1; "
                "echo \"rc=$?\"");
    EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
    EXPECT_NE(out.find("rc=0"), std::string::npos) << out;
}

TEST_F(io_gzip, truncated_files_fail_in_both_backends)
{
    std::string const & text = *text_;
    for (std::string const n : {"gzip-1", "multi-member", "bgzf"})
    {
        std::string const gz = read_file(path(n));
        std::vector<std::size_t> cuts{
            1, 2, 3, 5, 10, 11, gz.size() / 2, gz.size() - 8, gz.size() - 4, gz.size() - 1};
        for (std::size_t const cut : cuts)
        {
            SCOPED_TRACE(n + " cut at " + std::to_string(cut) + " of " + std::to_string(gz.size()));
            expect_same_failure(decode_all("cut.gz", gz.substr(0, cut)), text,
                                "unexpected end of gzip data (truncated file)",
                                cut >= gz.size() - 8 && n != "bgzf");
        }
    }
    // a member cut inside its header after complete members
    std::string const one = read_file(path("one-byte"));
    for (std::size_t const cut : {1u, 2u, 4u, 9u, 12u})
    {
        SCOPED_TRACE("second member cut at " + std::to_string(cut));
        auto const r = decode_all("cut2.gz", one + one.substr(0, cut));
        expect_same_failure(r, "AA", "unexpected end of gzip data (truncated file)");
        for (auto const & d : r)
            EXPECT_GE(d.bytes.size(), 1u); // the first member is complete
    }
    // the reader names the file and the record
    std::string const gz = read_file(path("gzip-9"));
    write_file(*dir_ / "cut.fq.gz", gz.substr(0, gz.size() - 8));
    expect_input_error(
        [&] { read_all(*dir_ / "cut.fq.gz"); },
        {q(*dir_ / "cut.fq.gz"), "record 12001", "unexpected end of gzip data (truncated file)"});
}

TEST_F(io_gzip, corrupted_files_fail_in_both_backends)
{
    std::string const & text = *text_;
    for (std::string const n : {"gzip-1", "gzip-9", "multi-member"})
    {
        std::string const gz = read_file(path(n));
        for (std::size_t const at : {gz.size() / 5, gz.size() / 2, 3 * gz.size() / 4})
        {
            SCOPED_TRACE(n + " byte flipped at " + std::to_string(at));
            std::string bad = gz;
            bad[at] = static_cast<char>(bad[at] ^ 0x10);
            auto const r = decode_all("flip.gz", bad);
            for (std::size_t i = 0; i < r.size(); ++i)
            {
                SCOPED_TRACE(name(backends()[i]));
                ASSERT_TRUE(r[i].failed);
                // deflate errors are named differently by the two libraries
                EXPECT_NE(r[i].error.find("gzip data"), std::string::npos) << r[i].error;
            }
        }
        // trailer: CRC32 then ISIZE
        std::string bad_crc = gz;
        bad_crc[gz.size() - 6] = static_cast<char>(bad_crc[gz.size() - 6] ^ 1);
        {
            SCOPED_TRACE(n + " CRC");
            expect_same_failure(decode_all("crc.gz", bad_crc), text,
                                "corrupted gzip data (incorrect data check)", true);
        }
        std::string bad_size = gz;
        bad_size[gz.size() - 3] = static_cast<char>(bad_size[gz.size() - 3] ^ 1);
        auto const r = decode_all("isize.gz", bad_size);
        for (std::size_t i = 0; i < r.size(); ++i)
        {
            SCOPED_TRACE(n + " ISIZE " + name(backends()[i]));
            ASSERT_TRUE(r[i].failed);
            EXPECT_NE(r[i].error.find("corrupted gzip data (incorrect"), std::string::npos)
                << r[i].error;
            EXPECT_TRUE(r[i].bytes == text);
        }
    }
    // header fields zlib checks before any output
    std::string const gz = read_file(path("full-header"));
    std::string const orig = text_->substr(0, 500000);
    std::string method = gz;
    method[2] = 7;
    expect_same_failure(decode_all("method.gz", method), orig,
                        "corrupted gzip data (unknown compression method)");
    std::string flags = gz;
    flags[3] = static_cast<char>(flags[3] | 0x20);
    expect_same_failure(decode_all("flags.gz", flags), orig,
                        "corrupted gzip data (unknown header flags set)");
    std::string hcrc = gz;
    hcrc[4] = static_cast<char>(hcrc[4] ^ 1); // MTIME is covered by the header CRC
    for (auto const & d : decode_all("hcrc.gz", hcrc))
    {
        EXPECT_TRUE(d.failed);
        EXPECT_NE(d.error.find("corrupted gzip data"), std::string::npos) << d.error;
        EXPECT_TRUE(d.bytes.empty());
    }
    // the reader: the error comes after all records, naming the file
    std::string const g9 = read_file(path("gzip-9"));
    std::string bad = g9;
    bad[g9.size() - 8] = static_cast<char>(bad[g9.size() - 8] ^ 1);
    write_file(*dir_ / "crc.fq.gz", bad);
    expect_input_error(
        [&] { read_all(*dir_ / "crc.fq.gz"); },
        {q(*dir_ / "crc.fq.gz"), "record 12001", "corrupted gzip data (incorrect data check)"});
}

TEST_F(io_gzip, data_after_the_last_member)
{
    std::string const & text = *text_;
    std::string const gz = read_file(path("gzip-1"));
    std::string const member2 = read_file(path("one-byte"));
    // zero padding is skipped
    for (auto const & d : decode_all("pad.gz", gz + std::string(3, '\0')))
    {
        EXPECT_FALSE(d.failed) << d.error;
        EXPECT_TRUE(d.bytes == text);
    }
    // anything else is garbage (two bytes that are not a gzip magic) or a truncated member (one
    // byte)
    expect_same_failure(decode_all("garbage.gz", gz + "garbage!"), text,
                        "trailing garbage after gzip data", true);
    expect_same_failure(decode_all("garbage2.gz", gz + std::string(5, '\0') + "xy"), text,
                        "trailing garbage after gzip data", true);
    expect_same_failure(decode_all("garbage1.gz", gz + "x"), text,
                        "unexpected end of gzip data (truncated file)", true);
    // a following member with a bad method byte counts as garbage, as in zlib
    std::string next = member2;
    next[2] = 9;
    expect_same_failure(decode_all("badnext.gz", gz + next), text,
                        "trailing garbage after gzip data", true);
    // the reader reports it after the last record
    write_file(*dir_ / "garbage.fq.gz", gz + "garbage!");
    expect_input_error(
        [&] { read_all(*dir_ / "garbage.fq.gz"); },
        {q(*dir_ / "garbage.fq.gz"), "record 12001", "trailing garbage after gzip data"});
}
