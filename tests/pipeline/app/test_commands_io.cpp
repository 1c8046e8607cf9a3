// End-to-end tests of input/output paths through the ksieve binary: stdin/stdout, interleaved
// pairs, SAM/BAM input and output, SIGINT.
#include "test_helpers.hpp"

#include <sstream>

using namespace ksieve::test;

namespace
{

class commands_io : public ::testing::Test
{
protected:
    void SetUp() override
    {
        KSIEVE_REQUIRE_DATA();
        filter = tmp / "hs.ksf";
        auto const r = run_ksieve("build -q --sampling all -k 25 -o '" + filter + "' '" +
                                      data("HS11286.fa").string() + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
    }
    temp_dir tmp;
    std::string filter;
};

// SAM body lines (records) of a SAM text.
std::vector<std::string> sam_records(std::string const & text)
{
    std::vector<std::string> recs;
    std::istringstream s{text};
    std::string line;
    while (std::getline(s, line))
        if (!line.empty() && line[0] != '@')
            recs.push_back(line + "\n");
    return recs;
}

} // namespace

TEST_F(commands_io, stdin_input_and_stdout_output_equal_the_file_run)
{
    std::string const mixed = data("mixed.fq").string();
    auto const a = run_ksieve(
        "classify -q -f '" + filter + "' --novel '" + (tmp / "n.fq") + "' '" + mixed + "'", tmp);
    ASSERT_EQ(a.status, 0) << a.err;
    auto const b = run_ksieve("classify -q -f '" + filter + "' --novel - - < '" + mixed + "'", tmp);
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(b.out, read_file(tmp / "n.fq"));
    EXPECT_FALSE(b.out.empty());
}

TEST_F(commands_io, interleaved_input_equals_paired_input)
{
    auto const r1 = split_fastq(read_file(data("hs_R1.fq").string()));
    auto const r2 = split_fastq(read_file(data("hs_R2.fq").string()));
    ASSERT_EQ(r1.size(), r2.size());
    std::string interleaved;
    for (std::size_t i = 0; i < r1.size(); ++i)
        interleaved += r1[i] + r2[i];
    write_file(tmp / "il.fq", interleaved);
    auto const p =
        run_ksieve("classify -q -f '" + filter + "' --paired '" + data("hs_R1.fq").string() +
                       "' '" + data("hs_R2.fq").string() + "' --known '" + (tmp / "pk.fq") +
                       "' --novel '" + (tmp / "pn.fq") + "' --report '" + (tmp / "p.tsv") + "'",
                   tmp);
    ASSERT_EQ(p.status, 0) << p.err;
    auto const i = run_ksieve("classify -q -f '" + filter + "' --interleaved '" + (tmp / "il.fq") +
                                  "' --known '" + (tmp / "ik.fq") + "' --novel '" +
                                  (tmp / "in.fq") + "' --report '" + (tmp / "i.tsv") + "'",
                              tmp);
    ASSERT_EQ(i.status, 0) << i.err;
    EXPECT_EQ(read_file(tmp / "pk.fq"), read_file(tmp / "ik.fq"));
    EXPECT_EQ(read_file(tmp / "pn.fq"), read_file(tmp / "in.fq"));
    EXPECT_EQ(read_file(tmp / "p.tsv"), read_file(tmp / "i.tsv"));
    auto const rows = read_report(tmp / "p.tsv");
    EXPECT_EQ(rows.size(), r1.size());
    // Without --known2/--novel2 the mates are interleaved: merging back by pair gives the
    // interleaved input.
    EXPECT_EQ(merge_back(rows, split_fastq(read_file(tmp / "pk.fq")),
                         split_fastq(read_file(tmp / "pn.fq")), 2),
              interleaved);
}

TEST_F(commands_io, sam_and_bam_inputs_lose_nothing_and_classify_like_fastq)
{
    // Naive FASTQ -> unaligned SAM conversion (independent of ksieve).
    auto const fq = split_fastq(read_file(data("mixed.fq").string()));
    std::string sam = "@HD\tVN:1.6\tSO:unsorted\n";
    for (auto const & rec : fq)
    {
        std::istringstream s{rec};
        std::string name, seq, plus, qual;
        std::getline(s, name);
        std::getline(s, seq);
        std::getline(s, plus);
        std::getline(s, qual);
        sam += name.substr(1, name.find_first_of(" \t") - 1) + "\t4\t*\t0\t0\t*\t*\t0\t0\t" + seq +
               "\t" + qual + "\n";
    }
    write_file(tmp / "mixed.sam", sam);
    auto const a = run_ksieve("classify -q -f '" + filter + "' --report '" + (tmp / "fq.tsv") +
                                  "' '" + data("mixed.fq").string() + "'",
                              tmp);
    ASSERT_EQ(a.status, 0) << a.err;
    auto const b = run_ksieve("classify -q -f '" + filter + "' --report '" + (tmp / "sam.tsv") +
                                  "' --known '" + (tmp / "k.sam") + "' --novel '" +
                                  (tmp / "n.sam") + "' '" + (tmp / "mixed.sam") + "'",
                              tmp);
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(read_file(tmp / "sam.tsv"), read_file(tmp / "fq.tsv"));
    auto const rows = read_report(tmp / "sam.tsv");
    std::string body;
    for (auto const & r : sam_records(sam))
        body += r;
    EXPECT_EQ(merge_back(rows, sam_records(read_file(tmp / "k.sam")),
                         sam_records(read_file(tmp / "n.sam"))),
              body);

    // SAM -> BAM outputs, then the BAMs as input, written back as SAM: the same records.
    auto const c =
        run_ksieve("classify -q -f '" + filter + "' --known '" + (tmp / "k.bam") + "' --novel '" +
                       (tmp / "n.bam") + "' '" + (tmp / "mixed.sam") + "'",
                   tmp);
    ASSERT_EQ(c.status, 0) << c.err;
    auto const d =
        run_ksieve("classify -q -f '" + filter + "' --known '" + (tmp / "k2.sam") + "' --novel '" +
                       (tmp / "n2.sam") + "' '" + (tmp / "k.bam") + "' '" + (tmp / "n.bam") + "'",
                   tmp);
    ASSERT_EQ(d.status, 0) << d.err;
    EXPECT_EQ(sam_records(read_file(tmp / "k2.sam")), sam_records(read_file(tmp / "k.sam")));
    EXPECT_EQ(sam_records(read_file(tmp / "n2.sam")), sam_records(read_file(tmp / "n.sam")));
}

TEST_F(commands_io, sam_inputs_with_different_dictionaries_go_together_unless_written_as_sam)
{
    // The reads of mixed.fq split over two unaligned SAM files whose headers name different
    // references.
    auto const fq = split_fastq(read_file(data("mixed.fq").string()));
    ASSERT_GT(fq.size(), 10u);
    std::string sam[2] = {"@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chrA\tLN:1000\n",
                          "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chrB\tLN:2000\n"};
    std::string
        fq_again; // the same reads as the FASTQ that SAM -> FASTQ conversion writes (QNAME only)
    for (std::size_t i = 0; i < fq.size(); ++i)
    {
        std::istringstream s{fq[i]};
        std::string name, seq, plus, qual;
        std::getline(s, name);
        std::getline(s, seq);
        std::getline(s, plus);
        std::getline(s, qual);
        std::string const qname = name.substr(1, name.find_first_of(" \t") - 1);
        sam[i < fq.size() / 2 ? 0 : 1] +=
            qname + "\t4\t*\t0\t0\t*\t*\t0\t0\t" + seq + "\t" + qual + "\n";
        fq_again += "@" + qname + "\n" + seq + "\n+\n" + qual + "\n";
    }
    write_file(tmp / "a.sam", sam[0]);
    write_file(tmp / "b.sam", sam[1]);
    write_file(tmp / "ab.fq", fq_again);
    std::string const both = " '" + (tmp / "a.sam") + "' '" + (tmp / "b.sam") + "'";

    // FASTQ outputs: both inputs are read, nothing is lost, the classes are those of the same reads
    // as FASTQ.
    auto const f = run_ksieve("classify -q -f '" + filter + "' --report '" + (tmp / "fq.tsv") +
                                  "' --known '" + (tmp / "k.fq") + "' --novel '" + (tmp / "n.fq") +
                                  "' '" + (tmp / "ab.fq") + "'",
                              tmp);
    ASSERT_EQ(f.status, 0) << f.err;
    auto const s = run_ksieve("classify -q -f '" + filter + "' --report '" + (tmp / "sam.tsv") +
                                  "' --known '" + (tmp / "ks.fq") + "' --novel '" +
                                  (tmp / "ns.fq") + "'" + both,
                              tmp);
    ASSERT_EQ(s.status, 0) << s.err;
    EXPECT_EQ(read_file(tmp / "sam.tsv"), read_file(tmp / "fq.tsv"));
    EXPECT_EQ(read_file(tmp / "ks.fq"), read_file(tmp / "k.fq"));
    EXPECT_EQ(read_file(tmp / "ns.fq"), read_file(tmp / "n.fq"));
    EXPECT_FALSE(read_file(tmp / "ks.fq").empty());
    EXPECT_FALSE(read_file(tmp / "ns.fq").empty());

    // build and dedup take them too: the same filter and the same decisions as from the FASTQ.
    auto const b1 =
        run_ksieve("build -q --sampling all -k 25 -o '" + (tmp / "sam.ksf") + "'" + both, tmp);
    ASSERT_EQ(b1.status, 0) << b1.err;
    auto const b2 = run_ksieve("build -q --sampling all -k 25 -o '" + (tmp / "fq.ksf") + "' '" +
                                   (tmp / "ab.fq") + "'",
                               tmp);
    ASSERT_EQ(b2.status, 0) << b2.err;
    EXPECT_EQ(read_file(tmp / "sam.ksf"), read_file(tmp / "fq.ksf"));
    auto const d1 = run_ksieve("dedup -q -k 25 --report '" + (tmp / "dsam.tsv") + "'" + both, tmp);
    ASSERT_EQ(d1.status, 0) << d1.err;
    auto const d2 = run_ksieve(
        "dedup -q -k 25 --report '" + (tmp / "dfq.tsv") + "' '" + (tmp / "ab.fq") + "'", tmp);
    ASSERT_EQ(d2.status, 0) << d2.err;
    EXPECT_EQ(read_file(tmp / "dsam.tsv"), read_file(tmp / "dfq.tsv"));

    // SAM/BAM outputs would carry b.sam's records under a.sam's header: refused, naming the file,
    // and nothing is left behind.
    for (std::string const ext : {".sam", ".bam"})
    {
        auto const r =
            run_ksieve("classify -q -f '" + filter + "' --novel '" + (tmp / ("out" + ext)) +
                           "' --stats '" + (tmp / "out.json") + "'" + both,
                       tmp);
        EXPECT_EQ(r.status, 1) << ext;
        EXPECT_NE(r.err.find("ksieve: error: "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("b.sam"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("reference dictionary"), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(tmp / ("out" + ext)));
        EXPECT_FALSE(std::filesystem::exists(tmp / "out.json"));
    }
    // With the same dictionary, SAM output works (the reads of b.sam under a.sam's header).
    std::string b_same = sam[1];
    std::string const other = "SN:chrB\tLN:2000";
    b_same.replace(b_same.find(other), other.size(), "SN:chrA\tLN:1000");
    write_file(tmp / "b2.sam", b_same);
    auto const ok =
        run_ksieve("classify -q -f '" + filter + "' --novel '" + (tmp / "ok.sam") + "' --known '" +
                       (tmp / "okk.sam") + "' '" + (tmp / "a.sam") + "' '" + (tmp / "b2.sam") + "'",
                   tmp);
    ASSERT_EQ(ok.status, 0) << ok.err;
    EXPECT_EQ(sam_records(read_file(tmp / "ok.sam")).size() +
                  sam_records(read_file(tmp / "okk.sam")).size(),
              fq.size());
}

TEST_F(commands_io, sam_to_fastq_writes_seq_and_qual_as_stored_also_for_reverse_strand_reads)
{
    // Records go out with their sequence and quality as read. SEQ and QUAL of a FLAG 0x10 record
    // are written as stored (no reverse complement, unlike samtools fastq), so a FASTQ output holds
    // exactly the sequences that were read and classified.
    std::string const sam =
        "@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:c\tLN:1000\n"
        "fwd\t0\tc\t1\t60\t40M\t*\t0\t0\tACGTTGCAACGTTGCAACGTTGCAACGTTGCAACGTTGCA\t"
        "ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ\n"
        "rev\t16\tc\t1\t60\t40M\t*\t0\t0\tAACCGGTTNRYKMBVDHSWAACCGGTTAACCGGTTAACCG\t"
        "ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ\n";
    write_file(tmp / "s.sam", sam);
    std::string const fwd = "ACGTTGCAACGTTGCAACGTTGCAACGTTGCAACGTTGCA";
    std::string const rev = "AACCGGTTNRYKMBVDHSWAACCGGTTAACCGGTTAACCG";
    std::string const q = "ABCDEFGHIJABCDEFGHIJABCDEFGHIJABCDEFGHIJ";
    for (std::string const ext : {".fq", ".fa"})
    {
        auto const r =
            run_ksieve("classify -q -f '" + filter + "' --novel '" + (tmp / ("o" + ext)) +
                           "' --known '" + (tmp / ("k" + ext)) + "' '" + (tmp / "s.sam") + "'",
                       tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        std::string const expect =
            ext == ".fq" ? "@fwd\n" + fwd + "\n+\n" + q + "\n@rev\n" + rev + "\n+\n" + q + "\n"
                         : ">fwd\n" + fwd + "\n>rev\n" + rev + "\n";
        EXPECT_EQ(read_file(tmp / ("o" + ext)) + read_file(tmp / ("k" + ext)), expect) << ext;
    }
    // SAM to SAM keeps the record as stored.
    auto const r = run_ksieve("classify -q -f '" + filter + "' --novel '" + (tmp / "o.sam") +
                                  "' '" + (tmp / "s.sam") + "'",
                              tmp);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(sam_records(read_file(tmp / "o.sam")), sam_records(sam));
}

TEST_F(commands_io, truncated_bam_is_an_error_for_every_thread_count)
{
    // htslib 1.16 with decompression threads attached before the header hung on a truncated BAM
    // (waiting for its EOF marker) or read its truncated end as a clean end of file.
    auto const w = run_ksieve("classify -q -f '" + filter + "' --novel '" + (tmp / "all.bam") +
                                  "' '" + data("mixed.fq").string() + "'",
                              tmp);
    ASSERT_EQ(w.status, 0) << w.err;
    std::string const bam = read_file(tmp / "all.bam");
    ASSERT_GT(bam.size(), 20000u);
    for (std::size_t const cut :
         {std::size_t{60}, std::size_t{2000}, bam.size() / 2, bam.size() - 10})
    {
        write_file(tmp / "cut.bam", bam.substr(0, cut));
        for (int const t : {1, 2, 4})
        {
            std::string const cmd = "timeout 60 '" + binary() + "' classify -q -t " +
                                    std::to_string(t) + " -f '" + filter + "' --novel '" +
                                    (tmp / "n.fq") + "' '" + (tmp / "cut.bam") + "' 2>'" +
                                    (tmp / "err.txt") + "'";
            int const raw = std::system(cmd.c_str());
            ASSERT_TRUE(WIFEXITED(raw));
            EXPECT_EQ(WEXITSTATUS(raw), 1) << "cut " << cut << ", -t " << t << " (124 = hung)";
            std::string const err = read_file(tmp / "err.txt");
            EXPECT_EQ(err.rfind("ksieve: error: '" + (tmp / "cut.bam") + "'", 0), 0u) << err;
            EXPECT_FALSE(std::filesystem::exists(tmp / "n.fq"));
        }
    }
    // The whole file still reads with threads, and gives the records the single-threaded run gives.
    auto const a = run_ksieve("classify -q -t 1 -f '" + filter + "' --report '" + (tmp / "t1.tsv") +
                                  "' '" + (tmp / "all.bam") + "'",
                              tmp);
    auto const b = run_ksieve("classify -q -t 4 -f '" + filter + "' --report '" + (tmp / "t4.tsv") +
                                  "' '" + (tmp / "all.bam") + "'",
                              tmp);
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(read_file(tmp / "t1.tsv"), read_file(tmp / "t4.tsv"));
    // all.bam holds the novel reads of mixed.fq
    auto const fq = run_ksieve("classify -q -f '" + filter + "' --novel '" + (tmp / "all.fq") +
                                   "' '" + data("mixed.fq").string() + "'",
                               tmp);
    ASSERT_EQ(fq.status, 0) << fq.err;
    EXPECT_EQ(read_report(tmp / "t1.tsv").size(), split_fastq(read_file(tmp / "all.fq")).size());
    EXPECT_GT(read_report(tmp / "t1.tsv").size(), 1000u);
}

TEST_F(commands_io, signals_exit_128_plus_signal_and_leave_no_partial_output)
{
    // An endless FASTQ stream on stdin; the signal after two seconds. SIGTERM is what schedulers
    // (Snakemake, Nextflow, SLURM, timeout) send on cancel.
    for (auto const & [sig, status] :
         {std::pair{"INT", "130"}, std::pair{"TERM", "143"}, std::pair{"HUP", "129"}})
    {
        std::string const args = "classify -f '" + filter + "' --novel '" + (tmp / "n.fq") +
                                 "' --known '" + (tmp / "k.fq.gz") + "' --report '" +
                                 (tmp / "r.tsv") + "' -";
        std::string const cmd = "yes "
                                "'@r\nACGTTGCAACGTTGCAACGTTGCAACGTTGCAACGTTGCA\n+"
                                "\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII' | "
                                "timeout --preserve-status -s " +
                                std::string{sig} + " 2 '" + binary() + "' " + args + " 2>'" +
                                (tmp / "err.txt") + "'";
        int const raw = std::system(
            ("bash -c \"" + cmd + "\"; echo $? > '" + (tmp / "status.txt") + "'").c_str());
        (void)raw;
        EXPECT_EQ(read_file(tmp / "status.txt"), std::string{status} + "\n")
            << sig << ": " << read_file(tmp / "err.txt");
        EXPECT_NE(read_file(tmp / "err.txt")
                      .find("ksieve: error: interrupted (SIG" + std::string{sig} + ")"),
                  std::string::npos)
            << read_file(tmp / "err.txt");
        for (auto const & entry : std::filesystem::directory_iterator{tmp.path()})
        {
            std::string const name = entry.path().filename().string();
            EXPECT_TRUE(name == "hs.ksf" || name == "err.txt" || name == "status.txt" ||
                        name == "stdout.txt" || name == "stderr.txt")
                << sig << ": left behind: " << name;
        }
    }
}

// A reader of stdout that goes away (`| head -1`): exit 1 with the write error, no temporary file
// left.
TEST_F(commands_io, a_closed_stdout_pipe_is_a_write_error_and_leaves_nothing_behind)
{
    std::string cmd{"'"};
    cmd.append(binary()).append("' classify -f '").append(filter).append("' --novel - --known '");
    cmd.append(tmp / "k.fq.gz").append("' --report '").append(tmp / "r.tsv").append("' '");
    cmd.append(data("mixed.fq").string()).append("' 2>'").append(tmp / "err.txt");
    cmd.append("' | head -c 1 >/dev/null; echo \\${PIPESTATUS[0]} > '")
        .append(tmp / "status.txt")
        .append("'");
    int const raw = std::system(("bash -c \"" + cmd + "\"").c_str());
    (void)raw;
    EXPECT_EQ(read_file(tmp / "status.txt"), "1\n") << read_file(tmp / "err.txt");
    EXPECT_NE(read_file(tmp / "err.txt").find("ksieve: error: '-': write failed"),
              std::string::npos)
        << read_file(tmp / "err.txt");
    for (auto const & entry : std::filesystem::directory_iterator{tmp.path()})
    {
        std::string const name = entry.path().filename().string();
        EXPECT_TRUE(name == "hs.ksf" || name == "err.txt" || name == "status.txt" ||
                    name == "stdout.txt" || name == "stderr.txt")
            << "left behind: " << name;
    }
}

// An output that fails at the very end (/dev/full: writes fail with ENOSPC when flushed) must not
// leave the other outputs of the run committed: all are finished before any is renamed into place.
TEST_F(commands_io, a_late_output_error_commits_no_other_output)
{
    std::string const mixed = data("mixed.fq").string();
    for (std::string const failing :
         {"--known /dev/full", "--report /dev/full", "--stats /dev/full"})
    {
        auto const r = run_ksieve("classify -q -f '" + filter + "' --novel '" + (tmp / "n.fq") +
                                      "' " + failing + " '" + mixed + "'",
                                  tmp);
        EXPECT_EQ(r.status, 1) << failing << ": " << r.err;
        EXPECT_NE(r.err.find("ksieve: error:"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("/dev/full"), std::string::npos) << r.err;
        for (auto const & entry : std::filesystem::directory_iterator{tmp.path()})
        {
            std::string const name = entry.path().filename().string();
            EXPECT_TRUE(name == "hs.ksf" || name == "stdout.txt" || name == "stderr.txt")
                << failing << " left behind: " << name;
        }
    }
    // dedup: the saved filter is not committed either.
    auto const d = run_ksieve("dedup -q --save-filter '" + (tmp / "d.ksf") + "' --novel '" +
                                  (tmp / "n.fq") + "' --stats /dev/full '" + mixed + "'",
                              tmp);
    EXPECT_EQ(d.status, 1) << d.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "d.ksf"));
    EXPECT_FALSE(std::filesystem::exists(tmp / "n.fq"));
}
