// Compressed outputs and inputs through the executable: .gz (BGZF), .zst, .xz and .bz2 outputs that
// the system tools accept and that decompress to the plain output's bytes, for 1 and several
// threads; the same formats as inputs; names of formats that cannot be written refused before any
// work.
#include "test_helpers.hpp"

namespace
{

using namespace ksieve::test;

struct tool
{
    std::string ext, test, cat;
};

std::vector<tool> const tools{{"gz", "gzip -t", "gzip -dc"},
                              {"zst", "zstd -q -t", "zstd -q -dc"},
                              {"xz", "xz -t", "xz -dc"},
                              {"bz2", "bzip2 -t", "bzip2 -dc"}};

int shell(std::string const & cmd)
{
    return std::system(cmd.c_str());
}

class compressed_io : public ::testing::Test
{
protected:
    void SetUp() override
    {
        KSIEVE_REQUIRE_DATA();
        filter = tmp / "lambda.ksf";
        ASSERT_EQ(
            run_ksieve("build -q -o '" + filter + "' '" + data("lambda.fa").string() + "'", tmp)
                .status,
            0);
        // input: lambda reads (known) and real SRA reads (novel), about 3 MiB of FASTQ (several
        // members of every codec)
        input = tmp / "in.fq";
        ASSERT_EQ(shell("cat '" + data("lambda_reads.fq").string() + "' > '" + input +
                        "' && gzip -dc '" + data("sra.fq.gz").string() + "' | head -n 40000 >> '" +
                        input + "'"),
                  0);
        auto const r = run_ksieve("classify -q -t 1 -f '" + filter + "' --novel '" +
                                      (tmp / "novel.fq") + "' --known '" + (tmp / "known.fq") +
                                      "' --report '" + (tmp / "report.tsv") + "' '" + input + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        novel = read_file(tmp / "novel.fq");
        known = read_file(tmp / "known.fq");
        report = read_file(tmp / "report.tsv");
        ASSERT_EQ(report.rfind("read_id\tkmers\thits\tclass\n", 0), 0u);
        ASSERT_GT(novel.size(), std::size_t{1} << 20);
        ASSERT_FALSE(known.empty());
    }
    temp_dir tmp;
    std::string filter, input, novel, known, report;
};

} // namespace

TEST_F(compressed_io, outputs_pass_the_tools_and_hold_the_plain_bytes_for_any_thread_count)
{
    for (auto const & t : tools)
    {
        std::string first;
        for (std::string const threads : {"1", "3"})
        {
            SCOPED_TRACE(t.ext + " -t " + threads);
            std::string const n = tmp / ("n" + threads + ".fq." + t.ext),
                              k = tmp / ("k" + threads + ".fq." + t.ext);
            // the report and the stats are compressed by their names too
            std::string const rep = tmp / ("r.tsv." + t.ext), st = tmp / ("s.json." + t.ext);
            auto const r = run_ksieve("classify -q -t " + threads + " -f '" + filter +
                                          "' --novel '" + n + "' --known '" + k + "' --report '" +
                                          rep + "' --stats '" + st + "' '" + input + "'",
                                      tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            for (auto const & [file, plain] : std::vector<std::pair<std::string, std::string>>{
                     {n, novel}, {k, known}, {rep, report}, {st, ""}})
            {
                EXPECT_EQ(shell(t.test + " '" + file + "'"), 0) << file;
                ASSERT_EQ(shell(t.cat + " '" + file + "' > '" + (tmp / "plain") + "'"), 0);
                if (file == st)
                    EXPECT_NE(read_file(tmp / "plain").find("\"reads\": "), std::string::npos);
                else
                    EXPECT_EQ(read_file(tmp / "plain"), plain) << file;
            }
            if (threads == "1")
                first = read_file(n);
            else
                EXPECT_EQ(read_file(n), first) << "compressed bytes differ between thread counts";
        }
    }
    // gzip output is BGZF: it ends with the BGZF end-of-file block
    std::string const gz = read_file(tmp / "n1.fq.gz");
    ASSERT_GE(gz.size(), 28u);
    EXPECT_EQ(
        gz.substr(gz.size() - 28),
        std::string(
            "\x1f\x8b\x08\x04\0\0\0\0\0\xff\x06\0\x42\x43\x02\0\x1b\0\x03\0\0\0\0\0\0\0\0\0", 28));
}

// A compressed output that gets no record (every read known) is an empty stream the tools accept,
// so that a pipeline reading a sample's clean reads does not fail on a sample that has none.
TEST_F(compressed_io, outputs_given_no_record_pass_the_tools_as_empty_streams)
{
    for (auto const & t : tools)
    {
        SCOPED_TRACE(t.ext);
        std::string const n = tmp / ("none.fq." + t.ext);
        auto const r = run_ksieve("classify -q -f '" + filter + "' --novel '" + n + "' '" +
                                      data("lambda_reads.fq").string() + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_FALSE(read_file(n).empty());
        EXPECT_EQ(shell(t.test + " '" + n + "'"), 0);
        ASSERT_EQ(shell(t.cat + " '" + n + "' > '" + (tmp / "none.plain") + "'"), 0);
        EXPECT_EQ(read_file(tmp / "none.plain"), "");
    }
}

// A CRAM file's header names the file it was written as (its file id): the output's name, never the
// temporary one that carries the process id, so that two runs write the same bytes.
TEST_F(compressed_io, cram_outputs_are_named_after_the_output_not_its_temporary)
{
    std::string const dir = tmp.path().string();
    std::string const cmd = "cd '" + dir + "' && '" + binary() + "' classify -q -f '" + filter +
                            "' --novel k.cram '" + input + "'";
    ASSERT_EQ(shell(cmd), 0);
    std::string const first = read_file(tmp / "k.cram");
    ASSERT_GE(first.size(), 26u);
    EXPECT_EQ(first.substr(0, 6), std::string("CRAM\x03\0", 6));
    EXPECT_EQ(first.substr(6, 20), std::string("k.cram\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20));
    ASSERT_EQ(shell(cmd), 0);
    EXPECT_EQ(read_file(tmp / "k.cram"), first);
}

// Filter files, used in place, refuse a compressed name before any work.
TEST_F(compressed_io, filter_outputs_refuse_compressed_names)
{
    std::string const fa = data("lambda.fa").string();
    for (std::string const & args :
         {"build -q -o '" + (tmp / "f.ksf.gz") + "' '" + fa + "'",
          "merge -q -o '" + (tmp / "f.ksf.zst") + "' '" + filter + "'",
          "dedup -q --save-filter '" + (tmp / "f.ksf.xz") + "' '" + fa + "'"})
    {
        auto const r = run_ksieve(args, tmp);
        EXPECT_EQ(r.status, 2) << args << ": " << r.err;
        EXPECT_NE(r.err.find("filter files are not compressed"), std::string::npos) << r.err;
    }
    for (std::string const n : {"f.ksf.gz", "f.ksf.zst", "f.ksf.xz"})
        EXPECT_FALSE(std::filesystem::exists(tmp / n)) << n;
}

TEST_F(compressed_io, compressed_inputs_read_as_the_plain_input_and_truncation_is_an_error)
{
    for (auto const & t : tools)
    {
        SCOPED_TRACE(t.ext);
        std::string const z = tmp / ("in.fq." + t.ext);
        std::string const cmd = t.ext == "gz"    ? "gzip"
                                : t.ext == "zst" ? "zstd -q"
                                : t.ext == "xz"  ? "xz"
                                                 : "bzip2";
        ASSERT_EQ(shell(cmd + " -c '" + input + "' > '" + z + "'"), 0);
        std::string const n = tmp / "zn.fq";
        auto const r =
            run_ksieve("classify -q -t 2 -f '" + filter + "' --novel '" + n + "' '" + z + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(read_file(n), novel);
        // concatenated streams / frames / members are read whole
        std::string const twice = tmp / ("twice.fq." + t.ext);
        ASSERT_EQ(shell("cat '" + z + "' '" + z + "' > '" + twice + "'"), 0);
        auto const r2 =
            run_ksieve("classify -q -f '" + filter + "' --novel '" + n + "' '" + twice + "'", tmp);
        ASSERT_EQ(r2.status, 0) << r2.err;
        EXPECT_EQ(read_file(n), novel + novel);
        // a truncated file is an error naming the file, and leaves no output
        std::string const cut = tmp / ("cut.fq." + t.ext);
        std::string const bytes = read_file(z);
        write_file(cut, bytes.substr(0, bytes.size() / 2));
        std::string const out = tmp / "cut_out.fq";
        auto const r3 =
            run_ksieve("classify -q -f '" + filter + "' --novel '" + out + "' '" + cut + "'", tmp);
        EXPECT_EQ(r3.status, 1);
        EXPECT_NE(r3.err.find("ksieve: error: '" + cut + "'"), std::string::npos) << r3.err;
        EXPECT_FALSE(fs::exists(out));
    }
}

TEST_F(compressed_io, names_of_formats_that_cannot_be_written_are_refused_before_any_work)
{
    for (std::string const name :
         {"out.fq.lz4", "out.fq.lzma", "out.fq.zip", "out.fq.Z", "out.bam.zst", "out.sam.xz"})
    {
        SCOPED_TRACE(name);
        std::string const known_out = tmp / "known_first.fq";
        auto const r = run_ksieve("classify -q -f '" + filter + "' --known '" + known_out +
                                      "' --novel '" + (tmp / name) + "' '" + input + "'",
                                  tmp);
        EXPECT_EQ(r.status, 2) << r.err; // a usage error
        EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(tmp / name));
        EXPECT_FALSE(fs::exists(known_out));
    }
    // the same for the report, the stats and the MultiQC file, which are written at the end of the
    // run
    for (std::string const opt : {"--report", "--stats", "--multiqc"})
    {
        SCOPED_TRACE(opt);
        std::string const novel_out = tmp / "novel_first.fq";
        for (std::string const & cmd :
             {std::string{"classify -q -f '"} + filter + "'", std::string{"dedup -q"}})
        {
            auto const r = run_ksieve(cmd + " --novel '" + novel_out + "' " + opt + " '" +
                                          (tmp / "out.txt.lz4") + "' '" + input + "'",
                                      tmp);
            EXPECT_EQ(r.status, 2) << cmd;
            EXPECT_NE(r.err.find("out.txt.lz4"), std::string::npos) << r.err;
            EXPECT_FALSE(fs::exists(novel_out)) << cmd;
        }
    }
}
