// Readers: FASTA/FASTQ parsing, compression and stdin, batching, malformed input.
#include "io_test_helpers.hpp"

#include <fcntl.h>

using namespace ksieve::io;
using namespace ksieve::io::test;

namespace
{

reader_options small_batches(std::size_t const records, std::size_t const bases)
{
    reader_options o;
    o.batch_records = records;
    o.batch_bases = bases;
    return o;
}

} // namespace

TEST(io_reader, fastq_fields_and_record_numbers)
{
    temp_dir dir;
    std::string const text =
        "@r1 first read\nACGT\n+\nIIII\n@r2\tx\n\n+r2\n\n@r3\nacgtN\n+\n!!!!#\n";
    write_file(dir / "a.fq", text);
    seq_format format{};
    auto const recs = read_all(dir / "a.fq", small_batches(2, 1000), &format);
    EXPECT_EQ(format, seq_format::fastq);
    ASSERT_EQ(recs.size(), 3u);
    EXPECT_EQ(recs[0],
              (record{"r1", "r1 first read", "ACGT", "IIII", "@r1 first read\nACGT\n+\nIIII\n"}));
    EXPECT_EQ(recs[1], (record{"r2", "r2\tx", "", "", "@r2\tx\n\n+r2\n\n"}));
    EXPECT_EQ(recs[2], (record{"r3", "r3", "acgtN", "!!!!#", "@r3\nacgtN\n+\n!!!!#\n"}));
    EXPECT_EQ(recs, naive_fastq(text));
}

TEST(io_reader, fasta_multiline_and_empty_sequences)
{
    temp_dir dir;
    std::string const text =
        "\n>chr1 desc\nACGT\nAC\n\nGG\n>empty\n>one\nTTTT\n>last no newline\nAC\nGT";
    write_file(dir / "a.fa", text);
    seq_format format{};
    auto const recs = read_all(dir / "a.fa", {}, &format);
    EXPECT_EQ(format, seq_format::fasta);
    ASSERT_EQ(recs.size(), 4u);
    EXPECT_EQ(recs[0],
              (record{"chr1", "chr1 desc", "ACGTACGG", "", ">chr1 desc\nACGT\nAC\n\nGG\n"}));
    EXPECT_EQ(recs[1], (record{"empty", "empty", "", "", ">empty\n"}));
    EXPECT_EQ(recs[2], (record{"one", "one", "TTTT", "", ">one\nTTTT\n"}));
    EXPECT_EQ(recs[3],
              (record{"last", "last no newline", "ACGT", "", ">last no newline\nAC\nGT\n"}));
    EXPECT_EQ(recs, naive_fasta(text));
}

TEST(io_reader, crlf_kept_in_raw_stripped_from_views)
{
    temp_dir dir;
    std::string const fq = random_fastq(500, 7, 150, true);
    write_file(dir / "crlf.fq", fq);
    auto const recs = read_all(dir / "crlf.fq", small_batches(33, 1 << 20));
    EXPECT_EQ(recs, naive_fastq(fq));
    for (auto const & r : recs)
    {
        EXPECT_EQ(r.header.find('\r'), std::string::npos);
        EXPECT_EQ(r.seq.find('\r'), std::string::npos);
        EXPECT_EQ(r.qual.find('\r'), std::string::npos);
    }
    std::string const fa = ">a x\r\nACGT\r\nGG\r\n>b\r\nTT\r\n";
    write_file(dir / "crlf.fa", fa);
    auto const frecs = read_all(dir / "crlf.fa");
    ASSERT_EQ(frecs.size(), 2u);
    EXPECT_EQ(frecs[0], (record{"a", "a x", "ACGTGG", "", ">a x\r\nACGT\r\nGG\r\n"}));
    EXPECT_EQ(frecs[1], (record{"b", "b", "TT", "", ">b\r\nTT\r\n"}));
}

// Wrapped (multi-line) FASTQ: sequence lines up to '+', quality lines up to the sequence's length
// (a quality line may start with '@' or '+'); raw keeps the record's bytes, seq/qual are joined.
// Against records made by wrapping one-line records, in batches of every size (records cut at every
// place by refills).
TEST(io_reader, wrapped_fastq_records_are_joined_and_kept_verbatim)
{
    temp_dir dir;
    std::string const one_line =
        "@r1 c\nACGTACGTAC\n+\n@+IIIIIIII\n@r2\nAC\n+\nII\n@r3\nacgtNacgtNa\n+r3\n++@@##!!IIJ\n";
    // r1 wrapped at 4, r2 as is, r3 wrapped at 3 with CRLF ends
    std::string const wrapped =
        "@r1 c\nACGT\nACGT\nAC\n+\n@+II\nIIII\nII\n@r2\nAC\n+\nII\n"
        "@r3\r\nacg\r\ntNa\r\ncgt\r\nNa\r\n+r3\r\n++@\r\n@##\r\n!!I\r\nIJ\r\n";
    write_file(dir / "one.fq", one_line);
    write_file(dir / "wrapped.fq", wrapped);
    auto const expect = read_all(dir / "one.fq");
    ASSERT_EQ(expect.size(), 3u);
    for (std::size_t const records : {1, 2, 3})
        for (std::size_t const bases : {1, 5, 1000})
        {
            auto const got = read_all(dir / "wrapped.fq", small_batches(records, bases));
            ASSERT_EQ(got.size(), 3u) << records << " " << bases;
            for (std::size_t i = 0; i < 3; ++i)
            {
                EXPECT_EQ(got[i].name, expect[i].name);
                EXPECT_EQ(got[i].header, expect[i].header);
                EXPECT_EQ(got[i].seq, expect[i].seq) << i;
                EXPECT_EQ(got[i].qual, expect[i].qual) << i;
            }
            EXPECT_EQ(got[0].raw, "@r1 c\nACGT\nACGT\nAC\n+\n@+II\nIIII\nII\n");
            EXPECT_EQ(got[2].raw,
                      "@r3\r\nacg\r\ntNa\r\ncgt\r\nNa\r\n+r3\r\n++@\r\n@##\r\n!!I\r\nIJ\r\n");
        }
    // Many wrapped records across refills of the reader's 1 MiB chunks.
    std::string big_one, big_wrapped;
    std::mt19937 rng{5};
    for (int i = 0; i < 20000; ++i)
    {
        std::string seq, qual;
        std::size_t const len = 1 + rng() % 150;
        for (std::size_t j = 0; j < len; ++j)
        {
            seq += "ACGT"[rng() % 4];
            qual += static_cast<char>('!' + rng() % 40);
        }
        std::string const name = "@q" + std::to_string(i) + "\n";
        big_one += name + seq + "\n+\n" + qual + "\n";
        big_wrapped += name;
        for (std::size_t j = 0; j < len; j += 60)
            big_wrapped += seq.substr(j, 60) + "\n";
        big_wrapped += "+\n";
        for (std::size_t j = 0; j < len; j += 60)
            big_wrapped += qual.substr(j, 60) + "\n";
    }
    write_file(dir / "big_one.fq", big_one);
    write_file(dir / "big_wrapped.fq", big_wrapped);
    auto const a = read_all(dir / "big_one.fq");
    auto const b = read_all(dir / "big_wrapped.fq", small_batches(777, 1 << 16));
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
    {
        ASSERT_EQ(a[i].seq, b[i].seq) << i;
        ASSERT_EQ(a[i].qual, b[i].qual) << i;
    }
}

TEST(io_reader, utf8_byte_order_mark_at_the_start_is_dropped)
{
    temp_dir dir;
    std::string const bom = "\xEF\xBB\xBF";
    std::string const fq = random_fastq(50, 3, 100, false);
    std::string const fa = ">a x\nACGT\nGG\n>b\nTT\n";
    write_file(dir / "bom.fq", bom + fq);
    write_file(dir / "bom.fa", bom + fa);
    write_file(dir / "bom_only", bom);
    seq_format format{};
    EXPECT_EQ(read_all(dir / "bom.fq", small_batches(7, 1 << 20), &format), naive_fastq(fq));
    EXPECT_EQ(format, seq_format::fastq);
    EXPECT_EQ(read_all(dir / "bom.fa", {}, &format), naive_fasta(fa));
    EXPECT_EQ(format, seq_format::fasta);
    EXPECT_TRUE(read_all(dir / "bom_only").empty());
    // Only at the start: a BOM-like byte sequence later is data (here: a malformed FASTQ record).
    write_file(dir / "late.fq", fq + bom + fq);
    EXPECT_THROW(read_all(dir / "late.fq"), ksieve::input_error);
}

TEST(io_reader, empty_inputs_have_no_records)
{
    temp_dir dir;
    write_file(dir / "empty", "");
    write_file(dir / "blank", "\n\n\r\n");
    EXPECT_TRUE(read_all(dir / "empty").empty());
    EXPECT_TRUE(read_all(dir / "blank").empty());
    if (have_tool("gzip"))
    {
        ASSERT_EQ(shell("gzip -c < " + quote_shell(dir / "empty") + " > " +
                        quote_shell(dir / "empty.gz")),
                  0);
        EXPECT_TRUE(read_all(dir / "empty.gz").empty());
    }
}

TEST(io_reader, plain_gzip_multimember_bgzf_and_stdin_agree)
{
    if (!have_tool("gzip"))
        GTEST_SKIP() << "gzip not installed";
    temp_dir dir;
    std::string const text = random_fastq(20000, 42);
    std::vector<record> const expected = naive_fastq(text);
    write_file(dir / "r.fq", text);
    ASSERT_EQ(shell("gzip -c " + quote_shell(dir / "r.fq") + " > " + quote_shell(dir / "r.gz")), 0);
    // two gzip members
    std::size_t const half = text.find("\n@read10000") + 1;
    write_file(dir / "h1", text.substr(0, half));
    write_file(dir / "h2", text.substr(half));
    ASSERT_EQ(shell("gzip -c " + quote_shell(dir / "h1") + " > " + quote_shell(dir / "multi.gz") +
                    " && gzip -c " + quote_shell(dir / "h2") + " >> " +
                    quote_shell(dir / "multi.gz")),
              0);
    // BGZF through our writer (verbatim copy of the plain input)
    copy_records(dir / "r.fq", dir / "r.fq.gz");
    std::string const bgzf = read_file(dir / "r.fq.gz");
    ASSERT_GE(bgzf.size(), 18u);
    EXPECT_EQ(bgzf[12], 'B');
    EXPECT_EQ(bgzf[13], 'C');

    for (auto const & opt :
         {reader_options{}, small_batches(1000, 50000), small_batches(3, 1 << 30)})
    {
        EXPECT_EQ(read_all(dir / "r.fq", opt), expected);
        EXPECT_EQ(read_all(dir / "r.gz", opt), expected);
        EXPECT_EQ(read_all(dir / "multi.gz", opt), expected);
        EXPECT_EQ(read_all(dir / "r.fq.gz", opt), expected);
    }
    reader_options threaded;
    threaded.threads = 4;
    EXPECT_EQ(read_all(dir / "r.fq.gz", threaded), expected);
    for (std::string const f : {"r.fq", "r.gz", "r.fq.gz"})
    {
        redirect_fd in{0, dir / f, O_RDONLY};
        EXPECT_EQ(read_all("-"), expected) << f;
    }
}

TEST(io_reader, format_detected_from_content_not_name)
{
    temp_dir dir;
    write_file(dir / "reads.fa", "@q\nAC\n+\nII\n");
    write_file(dir / "genome.fastq", ">g\nACGT\n");
    seq_format f{};
    EXPECT_EQ(read_all(dir / "reads.fa", {}, &f).size(), 1u);
    EXPECT_EQ(f, seq_format::fastq);
    EXPECT_EQ(read_all(dir / "genome.fastq", {}, &f).size(), 1u);
    EXPECT_EQ(f, seq_format::fasta);
    if (have_tool("gzip"))
    {
        ASSERT_EQ(shell("gzip -c " + quote_shell(dir / "genome.fastq") + " > " +
                        quote_shell(dir / "plain.txt")),
                  0);
        auto const recs = read_all(dir / "plain.txt", {}, &f);
        EXPECT_EQ(f, seq_format::fasta);
        ASSERT_EQ(recs.size(), 1u);
        EXPECT_EQ(recs[0].seq, "ACGT");
    }
}

TEST(io_reader, long_records_and_tiny_batches)
{
    temp_dir dir;
    // a 3 MB single-line and a 5 MB multi-line FASTA record around small ones: buffer growth
    std::string text = ">small\nAC\n>big1\n" + std::string(3u << 20, 'A') + "\n>big2\n";
    std::mt19937 rng{1};
    for (int i = 0; i < 5 * 1024 * 16; ++i)
    {
        for (int j = 0; j < 64; ++j)
            text += "ACGT"[rng() % 4];
        text += '\n';
    }
    text += ">tail\nG\n";
    write_file(dir / "long.fa", text);
    auto const expected = naive_fasta(text);
    EXPECT_EQ(read_all(dir / "long.fa"), expected);
    EXPECT_EQ(read_all(dir / "long.fa", small_batches(1, 1)), expected);
    // batches stop at the base limit
    auto r = reader::open(dir / "long.fa", small_batches(100, 10));
    record_batch b;
    ASSERT_TRUE(r->next(b));
    EXPECT_EQ(b.size(), 2u); // "small" (2 bases) then big1 reaches the limit
    EXPECT_EQ(b.bases(), 2u + (3u << 20));
}

// keep_raw = false: multi-line sequences joined in place (CRLF, empty lines, records longer than a
// read, tiny and large batches) equal the naive parse; raw views are empty where a sequence was
// joined in place.
TEST(io_reader, sequences_joined_in_place_equal_the_naive_parse)
{
    temp_dir dir;
    std::mt19937 rng{3};
    std::string text = ">small x\nAC\n>one\nTTTT\n>empty\n>crlf\r\nAC\r\nGT\r\n\r\nA\r\n>big\n";
    for (int i = 0; i < 3 * 1024 * 16; ++i)
    {
        for (int j = 0; j < 60 + static_cast<int>(rng() % 9); ++j)
            text += "ACGTN"[rng() % 5];
        text += '\n';
    }
    text += ">tail\nG\nC";
    write_file(dir / "a.fa", text);
    auto const expected = naive_fasta(text);
    for (reader_options o : {reader_options{}, small_batches(1, 1), small_batches(3, 1 << 20)})
    {
        o.keep_raw = false;
        auto const got = read_all(dir / "a.fa", o);
        ASSERT_EQ(got.size(), expected.size());
        for (std::size_t i = 0; i < got.size(); ++i)
        {
            EXPECT_EQ(got[i].name, expected[i].name) << i;
            EXPECT_EQ(got[i].header, expected[i].header) << i;
            EXPECT_EQ(got[i].seq, expected[i].seq) << i;
            std::string const & raw = expected[i].raw;
            std::size_t const second =
                raw.find('\n', raw.find('\n') + 1); // end of the first sequence line
            bool const multi_line = second != std::string::npos && second + 1 < raw.size();
            EXPECT_EQ(got[i].raw, multi_line ? std::string{} : expected[i].raw) << i;
        }
    }
}

TEST(io_reader, batch_copy_and_move_keep_views_valid)
{
    temp_dir dir;
    write_file(dir / "a.fa", ">a\nAC\nGT\n>b\nT\n");
    auto r = reader::open(dir / "a.fa");
    record_batch b;
    ASSERT_TRUE(r->next(b));
    record_batch copy{b};
    record_batch moved{std::move(b)};
    b = copy; // assign back into the moved-from batch
    for (record_batch const * x : {&copy, &moved, &b})
    {
        ASSERT_EQ(x->size(), 2u);
        EXPECT_EQ((*x)[0].seq, "ACGT");
        EXPECT_EQ((*x)[1].raw, ">b\nT\n");
        EXPECT_GE((*x)[0].raw.data(), x->storage_.data());
        EXPECT_LE((*x)[0].raw.data() + (*x)[0].raw.size(), x->storage_.data() + x->storage_.size());
    }
    EXPECT_NE(copy[0].raw.data(), moved[0].raw.data());
}

TEST(io_reader, malformed_fastq_names_file_and_record)
{
    temp_dir dir;
    std::string const good = "@a\nAC\n+\nII\n@b\nGG\n+\nII\n";
    struct bad_case
    {
        std::string text;
        std::string record;
        std::string what;
    };
    std::vector<bad_case> const cases = {
        {good + "@c\nACG\n+\nII\n", "record 3", "quality length 2 differs from sequence length 3"},
        {good + "@c\nACG\nIII\n", "record 3", "'+'"},
        {good + "@c\nACG\n@d\nAC\n+\nII\n", "record 3", "expected a '+' line"},
        {good + "@c\nAC\nG\n+\nIIII\n@d\nAC\n+\nII\n", "record 3",
         "quality length 4 differs from sequence length 3"},
        {good + "@c\nAC\nG\n+\nII\n", "record 3", "truncated"},
        {good + "@c\nACG\n", "record 3", "truncated"},
        {good + "@c\nACG\n+\n", "record 3", "truncated"},
        {good + "@c x\nACG\n+d\nIII\n", "record 3",
         "the '+' line names 'd', not this record's 'c x'"},
        {good + "@c\nAC\nG\n+c2\nIII\n", "record 3", "the '+' line names 'c2'"}, // wrapped
        {good + "@c", "record 3", "truncated"},
        {good + "XYZ\n", "record 3", "expected '@'"},
        {"\x01garbage", "record 1", "byte 0x01"},
        {"hello\n", "record 1", "not FASTA, FASTQ"},
    };
    int i = 0;
    for (auto const & c : cases)
    {
        std::string const path = dir / ("bad" + std::to_string(i++) + ".fq");
        write_file(path, c.text);
        expect_input_error([&] { read_all(path, small_batches(1, 1)); },
                           {q(path), c.record, c.what});
        expect_input_error([&] { read_all(path); }, {q(path), c.record, c.what});
    }
    // A '+' line may repeat the whole header or the name (CRLF too, and in a wrapped record).
    write_file(
        dir / "plus.fq",
        "@a x\nAC\n+a x\nII\n@b y\r\nAC\r\n+b\r\nII\r\n@c\nA\nC\n+c\nI\nI\n@d x \nAC\n+d x\nII\n");
    auto const plus = read_all(dir / "plus.fq");
    ASSERT_EQ(plus.size(), 4u); // trailing blanks of the header or the '+' line do not count
    EXPECT_EQ(plus[2].seq, "AC");
    write_file(dir / "bad.fa", ">a\nAC\nx>b\n");
    EXPECT_EQ(read_all(dir / "bad.fa").at(0).seq, "ACx>b"); // '>' inside a line is sequence
}

TEST(io_reader, truncated_and_corrupted_gzip)
{
    if (!have_tool("gzip"))
        GTEST_SKIP() << "gzip not installed";
    temp_dir dir;
    std::string const text = random_fastq(30000, 3);
    write_file(dir / "r.fq", text);
    ASSERT_EQ(shell("gzip -c " + quote_shell(dir / "r.fq") + " > " + quote_shell(dir / "r.gz")), 0);
    std::string const gz = read_file(dir / "r.gz");
    write_file(dir / "cut.gz", gz.substr(0, gz.size() / 2));
    expect_input_error([&] { read_all(dir / "cut.gz"); },
                       {q(dir / "cut.gz"), "record ", "truncated"});
    // the record number is the one being read when the data ran out: after the records that are
    // complete
    try
    {
        read_all(dir / "cut.gz");
    }
    catch (ksieve::input_error const & e)
    {
        std::string const msg = e.what();
        std::size_t const at = msg.find("record ") + 7;
        std::uint64_t const n = std::stoull(msg.substr(at));
        EXPECT_GT(n, 1000u);
        EXPECT_LT(n, 30000u);
    }
    std::string corrupt = gz;
    for (std::size_t i = corrupt.size() / 3; i < corrupt.size() / 3 + 64; ++i)
        corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
    write_file(dir / "bad.gz", corrupt);
    // corrupted deflate data may decompress to garbage before zlib notices: any input_error naming
    // file and record will do
    expect_input_error([&] { read_all(dir / "bad.gz"); }, {q(dir / "bad.gz"), "record "});
    // corrupted CRC (last 8 bytes: CRC32, ISIZE): only zlib can tell
    std::string bad_crc = gz;
    bad_crc[bad_crc.size() - 8] = static_cast<char>(bad_crc[bad_crc.size() - 8] ^ 1);
    write_file(dir / "crc.gz", bad_crc);
    expect_input_error([&] { read_all(dir / "crc.gz"); },
                       {q(dir / "crc.gz"), "record 30001", "gzip"});
    // BGZF truncated in the middle of a block
    copy_records(dir / "r.fq", dir / "b.fq.gz");
    std::string const bg = read_file(dir / "b.fq.gz");
    write_file(dir / "bcut.gz", bg.substr(0, bg.size() / 2 + 7));
    for (unsigned const threads : {1u, 4u})
    {
        reader_options o;
        o.threads = threads;
        expect_input_error([&] { read_all(dir / "bcut.gz", o); },
                           {q(dir / "bcut.gz"), "record ", "BGZF"});
    }
}

TEST(io_reader, unsupported_compression_and_missing_files)
{
    temp_dir dir;
    write_file(dir / "x.fq.xz", std::string{"\xFD"
                                            "7zXZ\0\0",
                                            7} +
                                    "junk");
    expect_input_error([&] { read_all(dir / "x.fq.xz"); }, {"x.fq.xz", "record 1", "xz"});
    EXPECT_THROW((void)reader::open(dir / "missing.fq"), ksieve::io_error);
    try
    {
        (void)reader::open(dir / "missing.fq");
    }
    catch (ksieve::io_error const & e)
    {
        EXPECT_NE(std::string{e.what()}.find("missing.fq"), std::string::npos);
    }
    EXPECT_THROW((void)reader::open(dir.path().string()), ksieve::io_error);
}
