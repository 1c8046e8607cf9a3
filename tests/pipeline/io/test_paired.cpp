// Paired input: lock-step files, interleaved files, mate-name checks and out-of-step errors.
#include "io_test_helpers.hpp"

#include <random>

using namespace ksieve::io;
using namespace ksieve::io::test;

namespace
{

// n mates per file; names "p<i>/1" and "p<i>/2", random lengths.
std::pair<std::string, std::string> make_pairs(std::size_t const n, std::uint32_t const seed)
{
    std::mt19937 rng{seed};
    std::string a, b;
    for (std::size_t i = 0; i < n; ++i)
        for (int mate = 1; mate <= 2; ++mate)
        {
            std::size_t const len = 1 + rng() % (mate == 1 ? 300 : 40);
            std::string seq, qual;
            for (std::size_t j = 0; j < len; ++j)
            {
                seq += "ACGT"[rng() % 4];
                qual += static_cast<char>('#' + rng() % 30);
            }
            (mate == 1 ? a : b) += "@p" + std::to_string(i) + "/" + std::to_string(mate) + " x\n" +
                                   seq + "\n+\n" + qual + "\n";
        }
    return {a, b};
}

std::pair<std::vector<record>, std::vector<record>> read_pairs(std::unique_ptr<paired_reader> p,
                                                               std::size_t const max_batch)
{
    std::vector<record> a, b;
    record_batch r1, r2;
    std::uint64_t first = 1;
    while (p->next(r1, r2))
    {
        EXPECT_EQ(r1.size(), r2.size());
        EXPECT_LE(r1.size(), max_batch);
        EXPECT_EQ(r1.first_record_number(), first);
        EXPECT_EQ(r2.first_record_number(), first);
        first += r1.size();
        for (std::size_t i = 0; i < r1.size(); ++i)
        {
            a.push_back(to_record(r1[i]));
            b.push_back(to_record(r2[i]));
        }
    }
    EXPECT_TRUE(r1.empty());
    EXPECT_TRUE(r2.empty());
    return {a, b};
}

reader_options limits(std::size_t const records, std::size_t const bases)
{
    reader_options o;
    o.batch_records = records;
    o.batch_bases = bases;
    return o;
}

} // namespace

TEST(io_paired, mate_names_match)
{
    EXPECT_TRUE(mate_names_match("read1/1", "read1/2"));
    EXPECT_TRUE(mate_names_match("read1", "read1"));
    EXPECT_TRUE(mate_names_match("read1/1", "read1"));
    EXPECT_TRUE(mate_names_match("read1 1:N:0", "read1 2:N:0"));
    EXPECT_TRUE(mate_names_match("read1/1\tx", "read1/2 y"));
    EXPECT_FALSE(mate_names_match("read1/1", "read2/2"));
    EXPECT_FALSE(mate_names_match("read1/3", "read1/4"));
    EXPECT_FALSE(mate_names_match("read1", "read10"));
    EXPECT_TRUE(mate_names_match("", ""));
    // fastq-dump --readids: NAME.1 / NAME.2 (and _ or : as separator), mate 1 first
    EXPECT_TRUE(mate_names_match("SRR059298.1.1", "SRR059298.1.2"));
    EXPECT_TRUE(mate_names_match("SRR059298.7.1 7 length=100", "SRR059298.7.2 7 length=100"));
    EXPECT_TRUE(mate_names_match("frag_1", "frag_2"));
    EXPECT_TRUE(mate_names_match("frag:1", "frag:2"));
    EXPECT_FALSE(mate_names_match("SRR059298.1.2", "SRR059298.1.1"));
    EXPECT_FALSE(mate_names_match("SRR059298.1.1", "SRR059298.2.2"));
    EXPECT_FALSE(mate_names_match("SRR059298.11", "SRR059298.12"));
    EXPECT_FALSE(mate_names_match("frag.1", "frag_2"));
    EXPECT_FALSE(mate_names_match("1", "2"));
}

TEST(io_paired, two_files_in_lock_step)
{
    temp_dir dir;
    auto const [a, b] = make_pairs(5000, 1);
    write_file(dir / "r1.fq", a);
    write_file(dir / "r2.fq", b);
    auto const ea = naive_fastq(a);
    auto const eb = naive_fastq(b);
    // R1 reads are long and R2 short: batches are cut by R1's base limit, R2 follows by count
    for (auto const & opt :
         {reader_options{}, limits(7, 1 << 30), limits(1000, 3000), limits(1, 1)})
    {
        auto const [ga, gb] = read_pairs(
            paired_reader::open_pair(dir / "r1.fq", dir / "r2.fq", opt), opt.batch_records);
        EXPECT_EQ(ga, ea);
        EXPECT_EQ(gb, eb);
    }
    auto p = paired_reader::open_pair(dir / "r1.fq", dir / "r2.fq");
    EXPECT_EQ(p->format(), seq_format::fastq);
    EXPECT_EQ(p->sam_header(), "");
}

TEST(io_paired, out_of_step_files_name_both_and_the_record)
{
    temp_dir dir;
    auto const [a, b] = make_pairs(100, 2);
    auto const cut = [](std::string const & s, std::size_t const records)
    {
        std::size_t pos = 0;
        for (std::size_t i = 0; i < 4 * records; ++i)
            pos = s.find('\n', pos) + 1;
        return s.substr(0, pos);
    };
    write_file(dir / "R1.fq", a);
    write_file(dir / "R2.fq", cut(b, 60));
    write_file(dir / "S1.fq", cut(a, 40));
    write_file(dir / "S2.fq", b);
    for (auto const & opt : {reader_options{}, limits(7, 1 << 30), limits(100, 1)})
    {
        expect_input_error(
            [&] { read_pairs(paired_reader::open_pair(dir / "R1.fq", dir / "R2.fq", opt), 1000); },
            {q(dir / "R1.fq"), q(dir / "R2.fq"), "out of step",
             q(dir / "R2.fq") + " ends after record 60", "record 61"});
        expect_input_error(
            [&] { read_pairs(paired_reader::open_pair(dir / "S1.fq", dir / "S2.fq", opt), 1000); },
            {q(dir / "S1.fq"), q(dir / "S2.fq"), "out of step",
             q(dir / "S1.fq") + " ends after record 40", "record 41"});
    }
    write_file(dir / "empty.fq", "");
    expect_input_error(
        [&] { read_pairs(paired_reader::open_pair(dir / "empty.fq", dir / "R1.fq"), 1000); },
        {"out of step", "ends after record 0"});
}

TEST(io_paired, mate_name_mismatch)
{
    temp_dir dir;
    auto const [a, b] = make_pairs(50, 3);
    std::string b2 = b;
    std::size_t const at = b2.find("@p17/2");
    ASSERT_NE(at, std::string::npos);
    b2.replace(at, 6, "@q17/2");
    write_file(dir / "m1.fq", a);
    write_file(dir / "m2.fq", b2);
    expect_input_error(
        [&] {
            read_pairs(paired_reader::open_pair(dir / "m1.fq", dir / "m2.fq", limits(5, 1 << 30)),
                       5);
        },
        {q(dir / "m1.fq"), q(dir / "m2.fq"), "record 18", "p17/1", "q17/2"});
    // different formats
    write_file(dir / "f.fa", ">p0/2\nACGT\n");
    write_file(dir / "one.fq", "@p0/1\nACGT\n+\nIIII\n");
    expect_input_error([&]
                       { read_pairs(paired_reader::open_pair(dir / "one.fq", dir / "f.fa"), 100); },
                       {"FASTQ", "FASTA"});
}

TEST(io_paired, interleaved)
{
    temp_dir dir;
    auto const [a, b] = make_pairs(3001, 4);
    auto const ea = naive_fastq(a);
    auto const eb = naive_fastq(b);
    std::string inter;
    for (std::size_t i = 0; i < ea.size(); ++i)
        inter += ea[i].raw + eb[i].raw;
    write_file(dir / "i.fq", inter);
    for (auto const & opt :
         {reader_options{}, limits(5, 1 << 30), limits(1000, 2000), limits(1, 1)})
    {
        auto const [ga, gb] =
            read_pairs(paired_reader::open_interleaved(dir / "i.fq", opt), opt.batch_records);
        EXPECT_EQ(ga, ea);
        EXPECT_EQ(gb, eb);
    }
    // odd number of records
    write_file(dir / "odd.fq", inter + ea[0].raw);
    expect_input_error([&]
                       { read_pairs(paired_reader::open_interleaved(dir / "odd.fq"), 1 << 20); },
                       {q(dir / "odd.fq"), "record 6003", "odd number"});
    // mates that are not mates
    std::string swapped;
    for (std::size_t i = 0; i < ea.size(); ++i)
        swapped += i == 10 ? eb[i].raw + eb[i + 1].raw : ea[i].raw + eb[i].raw;
    write_file(dir / "sw.fq", swapped);
    expect_input_error([&] { read_pairs(paired_reader::open_interleaved(dir / "sw.fq"), 1 << 20); },
                       {q(dir / "sw.fq"), "record 21", "mate names differ"});
}

TEST(io_paired, interleaved_fasta_and_sam)
{
    temp_dir dir;
    write_file(dir / "i.fa", ">a/1\nAC\nGT\n>a/2\nTT\n>b/1\n\n>b/2\nG\n");
    auto const [ga, gb] =
        read_pairs(paired_reader::open_interleaved(dir / "i.fa", limits(1, 1)), 1);
    ASSERT_EQ(ga.size(), 2u);
    EXPECT_EQ(ga[0], (record{"a/1", "a/1", "ACGT", "", ">a/1\nAC\nGT\n"}));
    EXPECT_EQ(gb[0], (record{"a/2", "a/2", "TT", "", ">a/2\nTT\n"}));
    EXPECT_EQ(ga[1], (record{"b/1", "b/1", "", "", ">b/1\n\n"}));
    EXPECT_EQ(gb[1], (record{"b/2", "b/2", "G", "", ">b/2\nG\n"}));
    write_file(dir / "p.sam", "@HD\tVN:1.6\n"
                              "x\t77\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII\n"
                              "x\t141\t*\t0\t0\t*\t*\t0\t0\tGG\t##\n");
    auto p = paired_reader::open_interleaved(dir / "p.sam");
    EXPECT_EQ(p->format(), seq_format::sam);
    EXPECT_EQ(p->sam_header(), "@HD\tVN:1.6\n");
    record_batch r1, r2;
    ASSERT_TRUE(p->next(r1, r2));
    ASSERT_EQ(r1.size(), 1u);
    EXPECT_EQ(r1[0].seq, "ACGT");
    EXPECT_EQ(r2[0].seq, "GG");
    EXPECT_EQ(r2[0].qual, "##");
    // the copies made for r1/r2 still carry the htslib record: write them as SAM again
    writer_options o;
    o.sam_header = p->sam_header();
    auto w = writer::open(dir / "out.sam", seq_format::sam, o);
    w->write(r1[0]);
    w->write(r2[0]);
    w->close();
    EXPECT_EQ(read_file(dir / "out.sam"), read_file(dir / "p.sam"));
    EXPECT_FALSE(p->next(r1, r2));
}
