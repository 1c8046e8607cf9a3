// Real data shipped in tests/data (cut from the bowtie2, GASiC and Kleborate examples): round trips
// against the decompressed files and naive parsers. Each test skips with the reason when its file
// is missing.
#include "io_test_helpers.hpp"

using namespace ksieve::io;
using namespace ksieve::io::test;

namespace
{

std::string const data_dir = KSIEVE_TEST_DATA_DIR;
std::string const reads_1 = data_dir + "/reads/reads_1.fq.gz";
std::string const reads_2 = data_dir + "/reads/reads_2.fq.gz";
std::string const longreads = data_dir + "/reads/longreads.fq.gz";
std::string const combined_bam_gz = data_dir + "/reads/combined_reads.bam.gz";
std::string const lambda = data_dir + "/../../examples/data/lambda.fa.gz";
std::string const srr = data_dir + "/reads/SRR059298_head.fastq.gz";
std::string const kleborate = data_dir + "/genomes/";

#define KSIEVE_REQUIRE_FILE(path)                                                                  \
    do                                                                                             \
    {                                                                                              \
        if (!std::filesystem::exists(path))                                                        \
            GTEST_SKIP() << (path) << " is missing (incomplete source tree)";                      \
        if (!have_tool("gzip"))                                                                    \
            GTEST_SKIP() << "gzip not installed";                                                  \
    } while (false)

std::string gunzip(std::string const & path)
{
    return capture("gzip -dc " + quote_shell(path));
}

// Read a gzipped FASTQ/FASTA, write it back plain and gzipped (BGZF): both equal the decompressed
// file.
void expect_round_trip(std::string const & gz, std::string const & ext, temp_dir const & dir)
{
    std::string const plain = gunzip(gz);
    ASSERT_FALSE(plain.empty());
    copy_records(gz, dir / ("rt." + ext));
    EXPECT_EQ(read_file(dir / ("rt." + ext)), plain) << gz;
    writer_options o;
    o.threads = 3;
    copy_records(gz, dir / ("rt." + ext + ".gz"), o);
    EXPECT_EQ(gunzip(dir / ("rt." + ext + ".gz")), plain) << gz;
}

} // namespace

TEST(io_data, bowtie2_paired_reads)
{
    KSIEVE_REQUIRE_FILE(reads_1);
    KSIEVE_REQUIRE_FILE(reads_2);
    temp_dir dir;
    auto const e1 = naive_fastq(gunzip(reads_1));
    auto const e2 = naive_fastq(gunzip(reads_2));
    ASSERT_EQ(e1.size(), e2.size());
    reader_options o;
    o.batch_records = 999;
    auto p = paired_reader::open_pair(reads_1, reads_2, o);
    record_batch r1, r2;
    std::size_t n = 0;
    while (p->next(r1, r2))
        for (std::size_t i = 0; i < r1.size(); ++i, ++n)
        {
            ASSERT_LT(n, e1.size());
            EXPECT_EQ(to_record(r1[i]), e1[n]);
            EXPECT_EQ(to_record(r2[i]), e2[n]);
        }
    EXPECT_EQ(n, e1.size());
    expect_round_trip(reads_1, "fq", dir);
    // R1 against a shortened R2: out of step
    std::string const r2_plain = gunzip(reads_2);
    write_file(dir / "short_2.fq", r2_plain.substr(0, r2_plain.size() / 2));
    auto const short2 = naive_fastq(read_file(dir / "short_2.fq"));
    bool const cut_clean = short2.back().qual.size() == short2.back().seq.size();
    if (cut_clean)
    {
        expect_input_error(
            [&]
            {
                auto q = paired_reader::open_pair(reads_1, dir / "short_2.fq");
                while (q->next(r1, r2))
                {
                }
            },
            {q(reads_1), q(dir / "short_2.fq")});
    }
    else
    {
        expect_input_error(
            [&]
            {
                auto q = paired_reader::open_pair(reads_1, dir / "short_2.fq");
                while (q->next(r1, r2))
                {
                }
            },
            {q(dir / "short_2.fq"), "record " + std::to_string(short2.size())});
    }
}

TEST(io_data, bowtie2_long_reads_and_lambda_reference)
{
    KSIEVE_REQUIRE_FILE(longreads);
    KSIEVE_REQUIRE_FILE(lambda);
    temp_dir dir;
    EXPECT_EQ(read_all(longreads), naive_fastq(gunzip(longreads)));
    expect_round_trip(longreads, "fastq", dir);
    std::string const fa = gunzip(lambda);
    auto const recs = read_all(lambda);
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_EQ(recs, naive_fasta(fa));
    EXPECT_EQ(recs[0].name, "gi|9626243|ref|NC_001416.1|");
    EXPECT_EQ(recs[0].seq.size(), 48502u); // phage lambda genome
    expect_round_trip(lambda, "fa", dir);
}

TEST(io_data, bowtie2_gzipped_bam)
{
    // combined_reads.bam.gz is a BAM file (BGZF) compressed once more with gzip
    KSIEVE_REQUIRE_FILE(combined_bam_gz);
    temp_dir dir;
    ASSERT_EQ(
        shell("gzip -dc " + quote_shell(combined_bam_gz) + " > " + quote_shell(dir / "c.bam")), 0);
    seq_format f{};
    auto const direct = read_all(dir / "c.bam", {}, &f);
    EXPECT_EQ(f, seq_format::bam);
    ASSERT_GT(direct.size(), 1000u);
    // read through the extra gzip layer: the same records
    auto const wrapped = read_all(combined_bam_gz, {}, &f);
    EXPECT_EQ(f, seq_format::bam);
    EXPECT_EQ(wrapped, direct);
    reader_options threaded;
    threaded.threads = 4;
    EXPECT_EQ(read_all(dir / "c.bam", threaded), direct);
    // BAM -> BAM -> the same records; BAM -> FASTQ equals a naive conversion
    copy_records(dir / "c.bam", dir / "copy.bam");
    EXPECT_EQ(read_all(dir / "copy.bam"), direct);
    copy_records(dir / "c.bam", dir / "c.fq");
    std::string expected;
    for (auto const & r : direct)
        expected += "@" + r.name + "\n" + r.seq + "\n+\n" +
                    (r.qual.empty() ? std::string(r.seq.size(), 'I') : r.qual) + "\n";
    EXPECT_EQ(read_file(dir / "c.fq"), expected);
    // the file holds 1000 mate pairs (flags 77/141) followed by 600 unpaired long reads: read as
    // interleaved, the pairs come out and then the unpaired reads fail the mate check
    ASSERT_EQ(direct.size(), 2600u);
    reader_options o;
    o.batch_records = 250;
    auto p = paired_reader::open_interleaved(dir / "c.bam", o);
    record_batch r1, r2;
    std::size_t pairs = 0;
    expect_input_error(
        [&]
        {
            while (p->next(r1, r2))
                for (std::size_t i = 0; i < r1.size(); ++i, ++pairs)
                {
                    EXPECT_EQ(to_record(r1[i]), direct[2 * pairs]);
                    EXPECT_EQ(to_record(r2[i]), direct[2 * pairs + 1]);
                }
        },
        {q(dir / "c.bam"), "record 2001", "mate names differ"});
    EXPECT_EQ(pairs, 1000u);
}

TEST(io_data, gasic_fastq_with_repeated_plus_names)
{
    KSIEVE_REQUIRE_FILE(srr);
    temp_dir dir;
    std::string const plain = gunzip(srr);
    auto const expected = naive_fastq(plain);
    EXPECT_EQ(read_all(srr), expected);
    expect_round_trip(srr, "fq", dir);
    copy_records(srr, dir / "srr.fa");
    std::string fasta;
    for (auto const & r : expected)
        fasta += ">" + r.header + "\n" + r.seq + "\n";
    EXPECT_EQ(read_file(dir / "srr.fa"), fasta);
    // stdin through gzip's pipe
    write_file(dir / "srr.gz", read_file(srr));
    {
        redirect_fd in{0, dir / "srr.gz", O_RDONLY};
        EXPECT_EQ(read_all("-"), expected);
    }
}

TEST(io_data, kleborate_genomes_from_xz)
{
    if (!std::filesystem::exists(kleborate))
        GTEST_SKIP() << kleborate << " is missing (incomplete source tree)";
    if (!have_tool("xz"))
        GTEST_SKIP() << "xz not installed";
    temp_dir dir;
    int checked = 0;
    for (auto const & e : std::filesystem::directory_iterator{kleborate})
    {
        std::string const path = e.path().string();
        if (!path.ends_with(".fna.xz"))
            continue;
        // the xz file is read as what xz -dc gives
        std::string const fna = dir / "g.fna";
        ASSERT_EQ(shell("xz -dc " + quote_shell(path) + " > " + quote_shell(fna)), 0);
        std::string const text = read_file(fna);
        auto const recs = read_all(fna);
        EXPECT_EQ(recs, naive_fasta(text)) << path;
        EXPECT_EQ(read_all(path), recs) << path;
        EXPECT_GE(recs.size(), 1u);
        copy_records(fna, dir / "copy.fa");
        EXPECT_EQ(read_file(dir / "copy.fa"), text) << path;
        if (++checked == 2)
            break; // two genomes are enough (keeps the test short)
    }
    if (checked == 0)
        GTEST_SKIP() << "no .fna.xz files in " << kleborate;
}
