// Writers and output_file: verbatim round trips, conversions, deterministic BGZF, SAM/BAM/CRAM,
// atomic outputs.
#include "io_test_helpers.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <sstream>
#include <thread>

using namespace ksieve::io;
using namespace ksieve::io::test;

namespace
{

std::string gunzip(std::string const & path)
{
    return capture("gzip -dc " + quote_shell(path));
}

// Equal strings, or a short account of where they differ (instead of printing megabytes).
testing::AssertionResult same_bytes(std::string const & a, std::string const & b)
{
    if (a == b)
        return testing::AssertionSuccess();
    std::size_t const at = static_cast<std::size_t>(
        std::mismatch(a.begin(),
                      a.begin() + static_cast<std::ptrdiff_t>(std::min(a.size(), b.size())),
                      b.begin())
            .first -
        a.begin());
    return testing::AssertionFailure()
           << "sizes " << a.size() << " and " << b.size() << ", first difference at byte " << at;
}

std::string naive_fastq_to_fasta(std::vector<record> const & recs)
{
    std::string out;
    for (auto const & r : recs)
        out += ">" + r.header + "\n" + r.seq + "\n";
    return out;
}

// A small SAM file: header, a mapped forward read, a reverse-strand read, an unmapped read without
// qualities, tags of several types.
std::string const sam_text =
    "@HD\tVN:1.6\tSO:unsorted\n"
    "@SQ\tSN:chr1\tLN:1000\n"
    "@RG\tID:g1\tSM:s1\n"
    "r1\t0\tchr1\t11\t60\t8M\t*\t0\t0\tACGTACGT\tIIIIHHHH\tNM:i:0\tRG:Z:g1\n"
    "r2\t16\tchr1\t21\t37\t4M1I3M\t*\t0\t0\tTTGCAGGA\t!!##$$%%\tAS:i:-3\tXF:f:1.5\n"
    "r3\t4\t*\t0\t0\t*\t*\t0\t0\tNNACGT\t*\n";

} // namespace

TEST(io_writer, format_from_extension)
{
    EXPECT_EQ(format_from_extension("a.fq", seq_format::fasta), seq_format::fastq);
    EXPECT_EQ(format_from_extension("a.FASTQ.gz", seq_format::fasta), seq_format::fastq);
    EXPECT_EQ(format_from_extension("dir.fa/x.fa.gz", seq_format::fastq), seq_format::fasta);
    EXPECT_EQ(format_from_extension("x.fasta", seq_format::fastq), seq_format::fasta);
    EXPECT_EQ(format_from_extension("x.fna", seq_format::fastq), seq_format::fasta);
    EXPECT_EQ(format_from_extension("x.sam", seq_format::fastq), seq_format::sam);
    EXPECT_EQ(format_from_extension("x.sam.gz", seq_format::fastq), seq_format::sam);
    EXPECT_EQ(format_from_extension("x.bam", seq_format::fastq), seq_format::bam);
    EXPECT_EQ(format_from_extension("x.cram", seq_format::fastq), seq_format::cram);
    EXPECT_EQ(format_from_extension("x.txt", seq_format::fasta), seq_format::fasta);
    EXPECT_EQ(format_from_extension("x.gz", seq_format::fastq), seq_format::fastq);
    EXPECT_EQ(format_from_extension("-", seq_format::bam), seq_format::bam);
}

TEST(io_writer, same_format_round_trip_is_byte_identical)
{
    temp_dir dir;
    std::string const fq = random_fastq(5000, 11) + "@crlf\r\nAC\r\n+\r\nII\r\n";
    std::string const fa = "\n" + random_fasta(500, 12) + ">crlf x\r\nAC\r\nGT\r\n";
    write_file(dir / "in.fq", fq);
    write_file(dir / "in.fa", fa);
    copy_records(dir / "in.fq", dir / "out.fastq");
    copy_records(dir / "in.fa", dir / "out.fasta");
    EXPECT_EQ(read_file(dir / "out.fastq"), fq);
    EXPECT_EQ(read_file(dir / "out.fasta"),
              fa.substr(1)); // the leading blank line belongs to no record
    // no extension: the input's format
    copy_records(dir / "in.fq", dir / "out.txt");
    EXPECT_EQ(read_file(dir / "out.txt"), fq);
    // a missing final newline is supplied
    write_file(dir / "nonl.fq", "@a\nA\n+\nI");
    copy_records(dir / "nonl.fq", dir / "nonl.out.fq");
    EXPECT_EQ(read_file(dir / "nonl.out.fq"), "@a\nA\n+\nI\n");
    EXPECT_EQ(dir.entries().size(), 7u); // no temporary left behind
}

TEST(io_writer, conversions_match_naive_ones)
{
    temp_dir dir;
    std::string const fq = random_fastq(3000, 5, 150, true);
    write_file(dir / "in.fq", fq);
    copy_records(dir / "in.fq", dir / "out.fa");
    EXPECT_EQ(read_file(dir / "out.fa"), naive_fastq_to_fasta(naive_fastq(fq)));

    std::string const fa = random_fasta(300, 6);
    write_file(dir / "in.fa", fa);
    copy_records(dir / "in.fa", dir / "out.fq");
    std::string expected;
    for (auto const & r : naive_fasta(fa))
        expected += "@" + r.header + "\n" + r.seq + "\n+\n" + std::string(r.seq.size(), 'I') + "\n";
    EXPECT_EQ(read_file(dir / "out.fq"), expected);
}

TEST(io_writer, bgzf_output_is_deterministic_and_gzip_compatible)
{
    if (!have_tool("gzip"))
        GTEST_SKIP() << "gzip not installed";
    temp_dir dir;
    std::string const fq = random_fastq(40000, 21);
    write_file(dir / "in.fq", fq);
    std::vector<std::string> outputs;
    for (unsigned const threads : {1u, 1u, 2u, 4u})
    {
        writer_options o;
        o.threads = threads;
        std::string const out = dir / ("t" + std::to_string(outputs.size()) + ".fq.gz");
        copy_records(dir / "in.fq", out, o);
        outputs.push_back(read_file(out));
        EXPECT_TRUE(same_bytes(gunzip(out), fq))
            << threads << " threads: gzip -dc differs from the input";
    }
    for (std::size_t i = 1; i < outputs.size(); ++i)
        EXPECT_TRUE(same_bytes(outputs[i], outputs.front()))
            << "output " << i << " differs from output 0";
    std::string const & gz = outputs.front();
    ASSERT_GE(gz.size(), 18u);
    EXPECT_EQ(gz.substr(4, 4), std::string(4, '\0'));         // MTIME 0
    EXPECT_EQ(static_cast<unsigned char>(gz[3]) & 0x08u, 0u); // no FNAME
    // FASTQ -> FASTA.gz decompresses to the plain conversion
    copy_records(dir / "in.fq", dir / "conv.fa.gz");
    EXPECT_TRUE(same_bytes(gunzip(dir / "conv.fa.gz"), naive_fastq_to_fasta(naive_fastq(fq))));
}

// gzip level 1 fits its Huffman codes to the start of each piece of output: a piece whose start
// holds only a few distinct bytes and whose rest holds every printable byte still decompresses to
// its input.
TEST(io_writer, gzip_codes_fitted_to_a_piece_start_encode_the_rest_of_it)
{
    if (!have_tool("gzip"))
        GTEST_SKIP() << "gzip not installed";
    temp_dir dir;
    std::string text;
    for (std::size_t i = 0; text.size() < (std::size_t{700} << 10); ++i)
        text += ">a\n" + std::string(4000, "AC"[i % 2]) + "\n";
    std::mt19937 rng{11};
    for (std::size_t i = 0; i < 3000; ++i)
    {
        text += ">";
        for (std::size_t j = 0; j < 60; ++j)
            text += static_cast<char>(' ' + 1 +
                                      rng() % 94); // every printable byte but space and '>'-lines
        text += "\n";
        for (std::size_t j = 0; j < 200; ++j)
            text += "ACGTNRYKMSWacgtn-*"[rng() % 18];
        text += "\n";
    }
    write_file(dir / "in.fa", text);
    for (unsigned const threads : {1u, 3u})
    {
        writer_options o;
        o.threads = threads;
        copy_records(dir / "in.fa", dir / "out.fa.gz", o);
        EXPECT_TRUE(same_bytes(gunzip(dir / "out.fa.gz"), text)) << threads << " threads";
    }
}

// FASTA records whose text is exactly `bytes` long (bytes >= 64): reads of a random 20 kb genome
// with a few substitutions, so that the compressors find matches near and far and their levels
// differ.
std::string fasta_of_size(std::size_t const bytes, std::uint32_t const seed)
{
    std::mt19937 rng{seed};
    std::string genome(40000, 'A');
    for (char & b : genome)
        b = "ACGT"[rng() % 4];
    std::string out;
    for (std::size_t i = 0; out.size() < bytes; ++i)
    {
        std::string const head = ">r" + std::to_string(seed) + "_" + std::to_string(i) +
                                 " run=" + std::to_string(rng() % 7) +
                                 " lane=" + std::to_string(rng() % 3) + "\n";
        std::size_t const left = bytes - out.size();
        std::size_t len = 50 + rng() % 300;
        if (left < head.size() + len + 1 + 40) // the last record takes what is left
            len = left - head.size() - 1;
        out += head;
        std::size_t const at = rng() % (genome.size() - len);
        for (std::size_t j = 0; j < len; ++j)
            out += rng() % 16 == 0 ? "ACGT"[rng() % 4] : genome[at + j];
        out += '\n';
    }
    return out;
}

// Compressed outputs are independent members: a member's bytes depend on its input only, never on
// what the same compressing thread handled before it. With a first part that fills whole members,
// the output of first + second is the first part's output (without its end-of-file block) followed
// by the second part's. (gzip level 1 fits its Huffman codes to the start of each piece the writer
// hands over, so its members depend on their piece as well:
// bgzf_output_is_deterministic_and_gzip_compatible covers it.)
TEST(io_writer, compressed_members_do_not_depend_on_the_members_before_them)
{
    struct case_t
    {
        char const * ext;
        std::size_t member;
        std::size_t trailer;
        std::vector<int> levels;
    };
    std::vector<case_t> const cases{{".fa.gz", 0xff00, 28, {0, 2, 3, 6}},
                                    {".fa.zst", std::size_t{1} << 20, 0, {3}},
                                    {".fa.xz", std::size_t{1} << 20, 0, {0}},
                                    {".fa.bz2", 900000, 0, {1}}};
    temp_dir dir;
    for (auto const & c : cases)
    {
        std::size_t const first_bytes = c.member * (c.member < 100000 ? 7 : 1);
        std::string const second =
            fasta_of_size(c.member * (c.member < 100000 ? 5 : 1) / 2 + 12345, 3);
        std::string const firsts[] = {fasta_of_size(first_bytes, 1), fasta_of_size(first_bytes, 2)};
        ASSERT_EQ(firsts[0].size(), first_bytes);
        for (int const level : c.levels)
        {
            writer_options o;
            o.compression_level = level;
            auto compressed = [&](std::string const & text, std::string const & name)
            {
                write_file(dir / "in.fa", text);
                copy_records(dir / "in.fa", dir / (name + c.ext), o);
                return read_file(dir / (name + c.ext));
            };
            std::string const alone = compressed(second, "second");
            for (std::string const & first : firsts)
            {
                std::string const head = compressed(first, "first");
                std::string const both = compressed(first + second, "both");
                ASSERT_GE(head.size(), c.trailer);
                EXPECT_TRUE(same_bytes(both, head.substr(0, head.size() - c.trailer) + alone))
                    << c.ext << " level " << level;
            }
        }
    }
}

// An output that is given no record is still a stream of its format (a sample with no novel read
// gives a clean file that `zstd -t` and friends accept): the format's magic, then a stream that
// decodes to nothing.
TEST(io_writer, compressed_outputs_given_no_record_are_valid_empty_streams)
{
    std::vector<std::pair<std::string, std::string>> const cases{{".fa.gz", "\x1f\x8b"},
                                                                 {".fa.zst", "\x28\xb5\x2f\xfd"},
                                                                 {".fa.xz", std::string{"\xfd"
                                                                                        "7zXZ\0",
                                                                                        6}},
                                                                 {".fa.bz2", "BZh"}};
    temp_dir dir;
    write_file(dir / "in.fa", "");
    for (auto const & [ext, magic] : cases)
        for (unsigned const threads : {1u, 3u})
        {
            writer_options o;
            o.threads = threads;
            std::string const out = dir / ("out" + ext);
            copy_records(dir / "in.fa", out, o);
            std::string const bytes = read_file(out);
            ASSERT_GT(bytes.size(), magic.size()) << ext;
            EXPECT_EQ(bytes.substr(0, magic.size()), magic) << ext;
            std::vector<record> recs;
            EXPECT_NO_THROW(recs = read_all(out)) << ext;
            EXPECT_TRUE(recs.empty()) << ext;
            // the empty stream followed by records still reads as those records (a concatenation)
            write_file(dir / "one.fa", ">r\nACGT\n");
            copy_records(dir / "one.fa", dir / ("one" + ext), o);
            write_file(dir / ("cat" + ext), bytes + read_file(dir / ("one" + ext)));
            auto const both = read_all(dir / ("cat" + ext));
            ASSERT_EQ(both.size(), 1u) << ext;
            EXPECT_EQ(both[0].seq, "ACGT") << ext;
        }
}

TEST(io_writer, sam_input_fields_and_round_trips)
{
    temp_dir dir;
    write_file(dir / "in.sam", sam_text);
    seq_format f{};
    auto const recs = read_all(dir / "in.sam", {}, &f);
    EXPECT_EQ(f, seq_format::sam);
    ASSERT_EQ(recs.size(), 3u);
    EXPECT_EQ(recs[0].name, "r1");
    EXPECT_EQ(recs[0].header, "r1");
    EXPECT_EQ(recs[0].seq, "ACGTACGT");
    EXPECT_EQ(recs[0].qual, "IIIIHHHH");
    EXPECT_EQ(recs[1].seq, "TTGCAGGA"); // reverse strand: as stored
    EXPECT_EQ(recs[1].qual, "!!##$$%%");
    EXPECT_EQ(recs[2].seq, "NNACGT");
    EXPECT_EQ(recs[2].qual, "");
    EXPECT_EQ(reader::open(dir / "in.sam")->sam_header().substr(0, 4), "@HD\t");

    // SAM -> SAM reproduces the text; SAM -> BAM -> SAM too
    copy_records(dir / "in.sam", dir / "out.sam");
    EXPECT_EQ(read_file(dir / "out.sam"), sam_text);
    copy_records(dir / "in.sam", dir / "out.bam");
    EXPECT_EQ(reader::open(dir / "out.bam")->format(), seq_format::bam);
    EXPECT_EQ(read_all(dir / "out.bam"), recs); // raw included: the same htslib records
    copy_records(dir / "out.bam", dir / "back.sam");
    EXPECT_EQ(read_file(dir / "back.sam"), sam_text);
    copy_records(dir / "out.bam", dir / "out.sam.gz");
    if (have_tool("gzip"))
    {
        EXPECT_EQ(gunzip(dir / "out.sam.gz"), sam_text);
    }
    EXPECT_EQ(read_all(dir / "out.sam.gz"), recs);
    for (std::string const name : {"out.bam", "in.sam", "out.sam.gz"})
    {
        redirect_fd in{0, dir / name, O_RDONLY};
        EXPECT_EQ(read_all("-"), recs) << name;
    }
    // headerless SAM is recognised too
    write_file(dir / "nohdr.sam", "r3\t4\t*\t0\t0\t*\t*\t0\t0\tNNACGT\t*\n");
    auto const nohdr = read_all(dir / "nohdr.sam", {}, &f);
    EXPECT_EQ(f, seq_format::sam);
    ASSERT_EQ(nohdr.size(), 1u);
    EXPECT_EQ(nohdr[0].seq, "NNACGT");
}

TEST(io_writer, sam_to_fastx_and_fastx_to_bam)
{
    temp_dir dir;
    write_file(dir / "in.sam", sam_text);
    copy_records(dir / "in.sam", dir / "out.fq");
    EXPECT_EQ(read_file(dir / "out.fq"),
              "@r1\nACGTACGT\n+\nIIIIHHHH\n@r2\nTTGCAGGA\n+\n!!##$$%%\n@r3\nNNACGT\n+\nIIIIII\n");
    copy_records(dir / "in.sam", dir / "out.fa");
    EXPECT_EQ(read_file(dir / "out.fa"), ">r1\nACGTACGT\n>r2\nTTGCAGGA\n>r3\nNNACGT\n");

    std::string const fq = random_fastq(2000, 8);
    write_file(dir / "in.fq", fq);
    auto const expected = naive_fastq(fq);
    copy_records(dir / "in.fq", dir / "u.bam");
    copy_records(dir / "in.fq", dir / "u.sam");
    for (std::string const f : {"u.bam", "u.sam"})
    {
        auto const got = read_all(dir / f);
        ASSERT_EQ(got.size(), expected.size()) << f;
        for (std::size_t i = 0; i < got.size(); ++i)
        {
            EXPECT_EQ(got[i].name, expected[i].name);
            std::string upper = expected[i].seq;
            for (char & c : upper)
                c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            EXPECT_EQ(got[i].seq, upper); // SAM stores bases in upper case
            // a one-base read with quality '*' cannot be told from a missing QUAL in SAM text
            if (f == "u.sam" && expected[i].qual == "*")
                EXPECT_EQ(got[i].qual, "");
            else
                EXPECT_EQ(got[i].qual, expected[i].qual);
        }
    }
    // and back to FASTQ: name, bases (upper case), qualities
    copy_records(dir / "u.bam", dir / "back.fq");
    auto const back = naive_fastq(read_file(dir / "back.fq"));
    ASSERT_EQ(back.size(), expected.size());
    for (std::size_t i = 0; i < back.size(); ++i)
        EXPECT_EQ(back[i].qual, expected[i].qual);
}

TEST(io_writer, bam_output_is_deterministic_for_any_thread_count)
{
    temp_dir dir;
    std::string const fq = random_fastq(30000, 31);
    write_file(dir / "in.fq", fq);
    std::vector<std::string> outs;
    for (unsigned const threads : {1u, 1u, 3u, 8u})
    {
        writer_options o;
        o.threads = threads;
        std::string const out = dir / ("b" + std::to_string(outs.size()) + ".bam");
        copy_records(dir / "in.fq", out, o);
        outs.push_back(read_file(out));
    }
    for (auto const & o : outs)
        EXPECT_EQ(o, outs.front());
    // BAM -> BAM copies with several threads are identical as well
    std::vector<std::string> copies;
    for (unsigned const threads : {1u, 4u})
    {
        writer_options o;
        o.threads = threads;
        reader_options ro;
        ro.threads = threads;
        std::string const out = dir / ("c" + std::to_string(copies.size()) + ".bam");
        copy_records(dir / "b0.bam", out, o, ro);
        copies.push_back(read_file(out));
    }
    EXPECT_EQ(copies[0], copies[1]);
    EXPECT_EQ(copies[0], outs[0]);
}

// Threads of this process, from /proc/self/task.
std::size_t thread_count()
{
    std::size_t n = 0;
    for ([[maybe_unused]] auto const & e : std::filesystem::directory_iterator{"/proc/self/task"})
        ++n;
    return n;
}

TEST(io_writer, htslib_files_share_one_pool_of_threads)
{
    temp_dir dir;
    write_file(dir / "in.fq", random_fastq(3000, 37));
    copy_records(dir / "in.fq", dir / "in.bam");
    constexpr unsigned threads = 4;
    std::size_t const before = thread_count();
    reader_options ro;
    ro.threads = threads;
    auto r = reader::open(dir / "in.bam", ro);
    writer_options o;
    o.threads = threads;
    o.sam_header = r->sam_header();
    std::vector<std::unique_ptr<writer>> outs;
    for (char const * const name : {"a.bam", "b.bam", "c.sam.gz", "d.bam"})
        outs.push_back(writer::open(dir / name, r->format(), o));
    // a BAM input and four BAM/BGZF outputs with 4 threads each: one pool of 4 workers plus
    // htslib's one queue thread per open stream (5), not a pool of 4 per file (25)
    EXPECT_LE(thread_count(), before + threads + 5);
    record_batch batch;
    std::size_t n = 0;
    while (r->next(batch))
        for (std::size_t i = 0; i < batch.size(); ++i, ++n)
            outs[n % outs.size()]->write(batch[i]);
    for (auto & w : outs)
        w->close();
    EXPECT_EQ(n, 3000u);
    // every record in exactly one output: the outputs' records, sorted, are the input's, sorted
    auto const sorted_records = [](std::vector<std::string> const & files)
    {
        std::vector<std::string> recs;
        for (auto const & f : files)
        {
            std::istringstream in{read_file(f)};
            std::string l[4];
            while (std::getline(in, l[0]) && std::getline(in, l[1]) && std::getline(in, l[2]) &&
                   std::getline(in, l[3]))
                recs.push_back(l[0] + "\n" + l[1] + "\n" + l[3]);
        }
        std::sort(recs.begin(), recs.end());
        return recs;
    };
    std::vector<std::string> parts;
    for (char const * const name : {"a.bam", "b.bam", "c.sam.gz", "d.bam"})
    {
        parts.push_back(dir / (std::string{name} + ".fq"));
        copy_records(dir / name, parts.back());
    }
    copy_records(dir / "in.bam", dir / "all.fq");
    EXPECT_EQ(sorted_records(parts), sorted_records({dir / "all.fq"}));
}

TEST(io_writer, cram_round_trip_without_reference)
{
    temp_dir dir;
    std::string const fq = random_fastq(25000, 9);
    write_file(dir / "in.fq", fq);
    copy_records(dir / "in.fq", dir / "u.bam");
    copy_records(dir / "u.bam", dir / "u.cram");
    // CRAM output bytes do not depend on the thread count either
    writer_options threaded;
    threaded.threads = 4;
    copy_records(dir / "u.bam", dir / "t.cram", threaded);
    EXPECT_EQ(read_file(dir / "t.cram"), read_file(dir / "u.cram"));
    seq_format f{};
    auto const got = read_all(dir / "u.cram", {}, &f);
    EXPECT_EQ(f, seq_format::cram);
    auto const bam = read_all(dir / "u.bam");
    ASSERT_EQ(got.size(), bam.size());
    for (std::size_t i = 0; i < got.size(); ++i)
    {
        EXPECT_EQ(got[i].name, bam[i].name);
        EXPECT_EQ(got[i].seq, bam[i].seq);
        EXPECT_EQ(got[i].qual, bam[i].qual);
    }
}

TEST(io_output_file, commit_renames_and_destruction_cleans_up)
{
    temp_dir dir;
    std::string const target = dir / "out.txt";
    write_file(target, "old");
    {
        output_file out{target};
        EXPECT_NE(out.write_path(), target);
        EXPECT_EQ(std::filesystem::path{out.write_path()}.parent_path(), dir.path());
        write_file(out.write_path(), "new");
        EXPECT_EQ(read_file(target), "old"); // not replaced before commit
        out.commit();
    }
    EXPECT_EQ(read_file(target), "new");
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.txt"});
    {
        output_file out{target};
        write_file(out.write_path(), "partial");
    } // destroyed without commit
    EXPECT_EQ(read_file(target), "new");
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.txt"});
    // a symbolic link: the file it names is replaced, the link stays
    std::filesystem::create_symlink(target, dir / "link.txt");
    {
        output_file out{dir / "link.txt"};
        write_file(out.write_path(), "via link");
        out.commit();
    }
    EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.txt"));
    EXPECT_EQ(read_file(target), "via link");
    EXPECT_THROW(output_file{dir.path().string()}, ksieve::io_error);
}

TEST(io_output_file, writer_without_close_or_failing_leaves_nothing)
{
    temp_dir dir;
    write_file(dir / "in.fq", random_fastq(3000, 4));
    for (std::string const name : {"a.fq", "a.fq.gz", "a.bam", "a.sam", "a.fa"})
    {
        auto r = reader::open(dir / "in.fq");
        auto w = writer::open(dir / name, r->format());
        record_batch b;
        while (r->next(b))
            for (std::size_t i = 0; i < b.size(); ++i)
                w->write(b[i]);
        w.reset(); // abandoned: e.g. an error elsewhere
        EXPECT_EQ(dir.entries(), std::vector<std::string>{"in.fq"}) << name;
    }
    // an existing output stays as it was when the run fails
    write_file(dir / "keep.fq", "previous");
    {
        auto w = writer::open(dir / "keep.fq", seq_format::fastq);
        auto r = reader::open(dir / "in.fq");
        record_batch b;
        ASSERT_TRUE(r->next(b));
        w->write(b[0]);
    }
    EXPECT_EQ(read_file(dir / "keep.fq"), "previous");
    EXPECT_EQ(dir.entries(), (std::vector<std::string>{"in.fq", "keep.fq"}));
    // cannot create: a clear io_error naming the output
    try
    {
        (void)writer::open(dir / "no/such/dir/x.fq", seq_format::fastq);
        ADD_FAILURE() << "no error";
    }
    catch (ksieve::io_error const & e)
    {
        EXPECT_NE(std::string{e.what()}.find("no/such/dir/x.fq"), std::string::npos) << e.what();
    }
}

TEST(io_output_file, fifo_and_stdout_are_written_in_place)
{
    temp_dir dir;
    std::string const fq = random_fastq(2000, 14);
    write_file(dir / "in.fq", fq);
    std::string const fifo = dir / "pipe.fq";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string received;
    std::thread consumer{[&] { received = read_file(fifo); }};
    {
        output_file probe{fifo};
        EXPECT_EQ(probe.write_path(), fifo);
    }
    copy_records(dir / "in.fq", fifo);
    consumer.join();
    EXPECT_EQ(received, fq);
    struct stat st
    {
    };
    ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)); // not replaced by a regular file

    {
        output_file dev{"/dev/null"};
        EXPECT_EQ(dev.write_path(), "/dev/null");
        dev.commit();
    }
    copy_records(dir / "in.fq", "/dev/null");

    // "-": standard output, plain and BGZF
    {
        redirect_fd out{1, dir / "stdout.fq", O_WRONLY | O_CREAT | O_TRUNC};
        copy_records(dir / "in.fq", "-");
    }
    EXPECT_EQ(read_file(dir / "stdout.fq"), fq);
    // /dev/stdout: the same descriptor, appended after what is already there (no truncation)
    {
        redirect_fd out{1, dir / "devstdout.fq", O_WRONLY | O_CREAT | O_TRUNC};
        copy_records(dir / "in.fq", "/dev/stdout");
        copy_records(dir / "in.fq", "/dev/stdout");
    }
    EXPECT_EQ(read_file(dir / "devstdout.fq"), fq + fq);
    {
        redirect_fd out{1, dir / "stdout.bam", O_WRONLY | O_CREAT | O_TRUNC};
        copy_records(dir / "in.fq", dir / "in.bam");
        copy_records(dir / "in.bam", "-"); // BAM input: BAM to stdout
    }
    seq_format f{};
    EXPECT_EQ(read_all(dir / "stdout.bam", {}, &f), read_all(dir / "in.bam"));
    EXPECT_EQ(f, seq_format::bam);
    auto const files = dir.entries();
    EXPECT_EQ(std::count_if(files.begin(), files.end(),
                            [](std::string const & f)
                            { return f.find("ksieve-tmp") != std::string::npos; }),
              0);
}
