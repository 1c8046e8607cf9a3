// Robustness of the ksieve binary against hostile paths, truncated and crafted inputs, resource
// limits and signals. Every failure case asserts the exit status, a single `ksieve: error:` line
// (warnings may precede it) naming the file or option, and that nothing is left behind; the
// output-node cases assert that the node (device, FIFO, symbolic link) is still there with its
// kind.
#include "test_helpers.hpp"

#include <ksieve/filters/support/checksum.hpp>

#include <cmath>
#include <cstring>
#include <set>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using namespace ksieve::test;

namespace
{

class robustness : public host_filter_test
{
protected:
    /*! What every failure must look like: `status`, one `ksieve: error:` line, the last one,
     * containing `needle`. */
    static void expect_error(run_result const & r, int const status, std::string const & needle,
                             std::string const & what)
    {
        EXPECT_EQ(r.status, status) << what << ": " << r.err;
        std::size_t lines = 0;
        std::size_t pos = 0;
        while ((pos = r.err.find("ksieve: error:", pos)) != std::string::npos)
        {
            ++lines;
            ++pos;
        }
        EXPECT_EQ(lines, 1u) << what << ": " << r.err;
        auto const last = r.err.rfind("ksieve: error:");
        ASSERT_NE(last, std::string::npos) << what;
        EXPECT_EQ(r.err.find('\n', last), r.err.size() - 1)
            << what << ": the error is not the last line: " << r.err;
        EXPECT_NE(r.err.find(needle, last), std::string::npos)
            << what << ": '" << needle << "' missing: " << r.err;
    }

    /*! The files in the temporary directory, except the fixture's and the runner's own. */
    std::set<std::string> left_files() const
    {
        std::set<std::string> names;
        for (auto const & e : std::filesystem::directory_iterator{tmp.path()})
        {
            std::string const n = e.path().filename().string();
            if (n != "hs.ksf" && n != "stdout.txt" && n != "stderr.txt")
                names.insert(n);
        }
        return names;
    }

    void expect_no_temporaries(std::string const & what) const
    {
        for (auto const & n : left_files())
            EXPECT_EQ(n.find("ksieve-tmp"), std::string::npos) << what << ": left behind " << n;
    }

    /*! Run a bash command line (written to a script, so that it may hold any quotes); its exit
     * status. */
    int shell(std::string const & cmd) const
    {
        std::string const script = tmp / "cmd.sh";
        write_file(script, cmd + "\n");
        int const raw = std::system(("bash '" + script + "'").c_str());
        std::filesystem::remove(script);
        return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    }
};

mode_t kind_of(std::string const & path, bool const follow)
{
    struct stat st
    {
    };
    int const rc = follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
    return rc == 0 ? (st.st_mode & S_IFMT) : 0;
}

// A character device of our own (the null device's numbers) where we may create one, else nothing.
bool make_null_device(std::string const & path)
{
    return ::getuid() == 0 && ::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
}

// Every command that writes a filter or reads, into each kind of node: the node keeps its kind, a
// link stays a link, and the bytes reach what the node stands for.
TEST_F(robustness, outputs_into_devices_fifos_and_links_keep_the_node)
{
    std::string const expected = tmp / "expected.ksf";
    ASSERT_EQ(
        run_ksieve("build -q -o '" + expected + "' '" + data("HS11286.fa").string() + "'", tmp)
            .status,
        0);
    std::string const reference = read_file(expected);
    std::string const dev = tmp / "nulldev";
    bool const have_device = make_null_device(dev);
    std::vector<std::pair<std::string, std::string>> const commands = {
        {"build -o", "build -q -o OUT '" + data("HS11286.fa").string() + "'"},
        {"merge -o", "merge -q -o OUT '" + filter + "' '" + filter + "'"},
        {"dedup --save-filter", "dedup -q --save-filter OUT '" + reads + "'"},
        {"classify --novel", "classify -q -f '" + filter + "' --novel OUT '" + reads + "'"},
        {"classify --report", "classify -q -f '" + filter + "' --report OUT '" + reads + "'"},
        {"classify --stats", "classify -q -f '" + filter + "' --stats OUT '" + reads + "'"},
    };
    for (auto const & [name, command] : commands)
    {
        std::string const & cmd =
            command; // a lambda may not capture a structured binding (clang < 16)
        auto with = [&](std::string const & out)
        {
            std::string c = cmd;
            c.replace(c.find("OUT"), 3, "'" + out + "'");
            return c;
        };
        // FIFO, read by cat: the bytes arrive and the FIFO stays a FIFO.
        std::string const fifo = tmp / "fifo";
        ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
        std::string const got = tmp / "got";
        int const st = shell("cat \"" + fifo + "\" > \"" + got + "\" & \"" + binary() + "\" " +
                             with(fifo) + " 2>\"" + (tmp / "err") + "\"; s=$?; wait; exit $s");
        EXPECT_EQ(st, 0) << name << " into a FIFO: " << read_file(tmp / "err");
        EXPECT_EQ(kind_of(fifo, false), S_IFIFO) << name;
        EXPECT_FALSE(read_file(got).empty()) << name;
        if (name == "build -o")
        {
            EXPECT_EQ(read_file(got), reference);
        }
        // A symbolic link to the FIFO: followed, the link stays.
        std::string const link = tmp / "link";
        ASSERT_EQ(::symlink(fifo.c_str(), link.c_str()), 0);
        int const st2 = shell("cat \"" + fifo + "\" > \"" + got + "\" & \"" + binary() + "\" " +
                              with(link) + " 2>\"" + (tmp / "err") + "\"; s=$?; wait; exit $s");
        EXPECT_EQ(st2, 0) << name << " into a link to a FIFO: " << read_file(tmp / "err");
        EXPECT_EQ(kind_of(link, false), S_IFLNK) << name;
        EXPECT_EQ(kind_of(fifo, false), S_IFIFO) << name;
        std::filesystem::remove(link);
        std::filesystem::remove(fifo);
        std::filesystem::remove(got);
        // A character device, directly and through a link.
        if (have_device)
        {
            EXPECT_EQ(run_ksieve(with(dev), tmp).status, 0) << name;
            EXPECT_EQ(kind_of(dev, false), S_IFCHR) << name;
        }
        ASSERT_EQ(::symlink(have_device ? dev.c_str() : "/dev/null", link.c_str()), 0);
        auto const r = run_ksieve(with(link), tmp);
        EXPECT_EQ(r.status, 0) << name << ": " << r.err;
        EXPECT_EQ(kind_of(link, false), S_IFLNK) << name;
        EXPECT_EQ(kind_of(link, true), S_IFCHR) << name;
        std::filesystem::remove(link);
        // A link to a regular file: the file is replaced, the link stays; a dangling link: its
        // target is created.
        std::string const target = tmp / "target";
        write_file(target, "old");
        ASSERT_EQ(::symlink("target", link.c_str()), 0);
        auto const r2 = run_ksieve(with(link), tmp);
        EXPECT_EQ(r2.status, 0) << name << ": " << r2.err;
        EXPECT_EQ(kind_of(link, false), S_IFLNK) << name;
        EXPECT_NE(read_file(target), "old") << name;
        std::filesystem::remove(target);
        auto const r3 = run_ksieve(with(link), tmp);
        EXPECT_EQ(r3.status, 0) << name << ": " << r3.err;
        EXPECT_EQ(kind_of(link, false), S_IFLNK) << name;
        EXPECT_EQ(kind_of(target, false), S_IFREG)
            << name << ": the dangling link's target was not created";
        std::filesystem::remove(link);
        std::filesystem::remove(target);
        expect_no_temporaries(name);
    }
    EXPECT_EQ(kind_of("/dev/null", false), S_IFCHR);
}

// /dev/full (and a link to it) as a filter or compressed read output: a write error naming the
// path, the device untouched, nothing else committed.
TEST_F(robustness, a_full_device_is_a_write_error_and_stays_a_device)
{
    std::string const full_gz = tmp / "full.fq.gz";
    ASSERT_EQ(::symlink("/dev/full", full_gz.c_str()), 0);
    std::vector<std::pair<std::string, std::string>> const cases = {
        {"build -q -o /dev/full '" + data("HS11286.fa").string() + "'", "/dev/full"},
        {"merge -q -o /dev/full '" + filter + "' '" + filter + "'", "/dev/full"},
        {"dedup -q --save-filter /dev/full --novel '" + (tmp / "n.fq") + "' '" + reads + "'",
         "/dev/full"},
        {"classify -q -f '" + filter + "' --novel '" + full_gz + "' --known '" + (tmp / "k.fq") +
             "' '" + reads + "'",
         full_gz},
    };
    for (auto const & [cmd, needle] : cases)
    {
        auto const r = run_ksieve(cmd, tmp);
        expect_error(r, 1, needle, cmd);
        EXPECT_EQ(kind_of("/dev/full", false), S_IFCHR);
        EXPECT_EQ(left_files(), std::set<std::string>{"full.fq.gz"}) << cmd;
    }
}

// Byte offsets of the BGZF blocks of a file (each block's header holds its size).
std::vector<std::size_t> bgzf_blocks(std::string const & bytes)
{
    std::vector<std::size_t> starts;
    std::size_t pos = 0;
    while (pos + 18 <= bytes.size())
    {
        starts.push_back(pos);
        pos += (static_cast<unsigned char>(bytes[pos + 16]) |
                (static_cast<unsigned char>(bytes[pos + 17]) << 8)) +
               1;
    }
    return starts;
}

// A BGZF FASTQ or a BAM cut at a block boundary is a valid series of blocks: refused as truncated
// (file, pipe, every thread count) unless --allow-missing-eof.
TEST_F(robustness, bgzf_and_bam_cut_at_a_block_boundary_are_refused_as_truncated)
{
    // FASTQ in two BGZF parts whose boundary falls between records: the first part without its
    // marker.
    std::string const text = read_file(reads);
    std::size_t const half = split_fastq(text).size() / 2;
    std::size_t cut_at = 0;
    for (std::size_t i = 0; i < half; ++i)
        cut_at += split_fastq(text)[i].size();
    write_file(tmp / "part.fq", text.substr(0, cut_at));
    ASSERT_EQ(shell("bgzip -c \"" + (tmp / "part.fq") + "\" | head -c -28 > \"" +
                    (tmp / "cut.fq.gz") + "\""),
              0);
    ASSERT_EQ(shell("bgzip -c \"" + reads + "\" > \"" + (tmp / "whole.fq.gz") + "\""), 0);
    // BAM written by ksieve, cut after a middle block.
    auto const w = run_ksieve(
        "classify -q -f '" + filter + "' --novel '" + (tmp / "all.bam") + "' '" + reads + "'", tmp);
    ASSERT_EQ(w.status, 0) << w.err;
    std::string const bam = read_file(tmp / "all.bam");
    auto const blocks = bgzf_blocks(bam);
    ASSERT_GT(blocks.size(), 3u);
    write_file(tmp / "cut.bam", bam.substr(0, blocks[blocks.size() / 2]));
    std::filesystem::remove(tmp / "part.fq");

    for (std::string const input : {"cut.fq.gz", "cut.bam"})
        for (int const t : {1, 2})
        {
            std::string const args = "classify -q -t " + std::to_string(t) + " -f '" + filter +
                                     "' --novel '" + (tmp / "n.fq") + "' ";
            auto const r = run_ksieve(args + "'" + (tmp / input) + "'", tmp);
            expect_error(r, 1, "'" + (tmp / input) + "'", input);
            EXPECT_NE(r.err.find("end-of-file marker"), std::string::npos) << r.err;
            auto const p = run_ksieve(args + "- < '" + (tmp / input) + "'", tmp);
            expect_error(p, 1, "end-of-file marker", input + " from a pipe");
            EXPECT_FALSE(std::filesystem::exists(tmp / "n.fq"));
            expect_no_temporaries(input);
            auto const ok = run_ksieve(args + "--allow-missing-eof '" + (tmp / input) + "'", tmp);
            EXPECT_EQ(ok.status, 0) << ok.err;
            EXPECT_GT(split_fastq(read_file(tmp / "n.fq")).size(), 100u);
            std::filesystem::remove(tmp / "n.fq");
        }
    // The whole BGZF file reads as the plain one.
    auto const a = run_ksieve(
        "classify -q -f '" + filter + "' --report '" + (tmp / "a.tsv") + "' '" + reads + "'", tmp);
    auto const b = run_ksieve("classify -q -f '" + filter + "' --report '" + (tmp / "b.tsv") +
                                  "' '" + (tmp / "whole.fq.gz") + "'",
                              tmp);
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(read_file(tmp / "a.tsv"), read_file(tmp / "b.tsv"));
}

// A CRAM whose reference cannot be found: the error names the file and record and carries htslib's
// reason.
TEST_F(robustness, a_cram_without_its_reference_is_an_error_that_says_so)
{
    if (std::system("samtools --version >/dev/null 2>&1") != 0)
        GTEST_FAIL() << "samtools is not installed (scripts/install-deps.sh installs it)";
    // reads cut from HS11286's first record, aligned where they were cut, compressed against it
    std::string const fa = read_file(data("HS11286.fa").string());
    std::string const name = fa.substr(1, fa.find_first_of(" \n") - 1);
    std::string seq;
    for (std::size_t p = fa.find('\n') + 1; p < fa.size() && fa[p] != '>'; ++p)
        if (fa[p] != '\n')
            seq += fa[p];
    write_file(tmp / "ref.fa", ">" + name + "\n" + seq.substr(0, 20000) + "\n");
    std::string sam = "@HD\tVN:1.6\n@SQ\tSN:" + name + "\tLN:20000\n";
    for (int i = 0; i < 50; ++i)
        sam.append("r")
            .append(std::to_string(i))
            .append("\t0\t")
            .append(name)
            .append("\t")
            .append(std::to_string(i * 300 + 1))
            .append("\t60\t150M\t*\t0\t0\t")
            .append(seq, static_cast<std::size_t>(i) * 300, 150)
            .append("\t*\n");
    write_file(tmp / "al.sam", sam);
    ASSERT_EQ(
        shell("cd \"" + tmp.path().string() + "\" && samtools view -C -T ref.fa -o al.cram al.sam"),
        0);
    std::filesystem::remove(tmp / "ref.fa");
    std::filesystem::remove(tmp / "ref.fa.fai");
    std::filesystem::remove(tmp / "al.sam");
    std::filesystem::create_directories(tmp / "no-refs");
    std::string const env =
        "REF_PATH='" + (tmp / "no-refs") + "' REF_CACHE='" + (tmp / "no-refs") + "' ";
    int const st =
        shell(env + "\"" + binary() + "\" classify -q -f \"" + filter + "\" --novel \"" +
              (tmp / "n.fq") + "\" \"" + (tmp / "al.cram") + "\" 2>\"" + (tmp / "err") + "\"");
    run_result r;
    r.status = st;
    r.err = read_file(tmp / "err");
    expect_error(r, 1, "'" + (tmp / "al.cram") + "': record 1: ", "CRAM without its reference");
    EXPECT_NE(r.err.find("reference"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(htslib: "), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(tmp / "n.fq"));
}

// A huge -t is capped with a warning and gives the outputs of -t 1.
TEST_F(robustness, huge_thread_counts_are_capped_with_a_warning)
{
    auto const one = run_ksieve("classify -q -t 1 -f '" + filter + "' --novel '" + (tmp / "n1.fq") +
                                    "' '" + reads + "'",
                                tmp);
    ASSERT_EQ(one.status, 0) << one.err;
    for (std::string const t : {"100000", "50000"})
    {
        auto const r = run_ksieve("classify -q -t " + t + " -f '" + filter + "' --novel '" +
                                      (tmp / "n.fq") + "' '" + reads + "'",
                                  tmp);
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_NE(r.err.find("ksieve: warning: -t " + t), std::string::npos) << r.err;
        EXPECT_EQ(read_file(tmp / "n.fq"), read_file(tmp / "n1.fq"));
    }
    auto const b = run_ksieve("build -q -t 100000 -o '" + (tmp / "b.ksf") + "' '" +
                                  data("HS11286.fa").string() + "'",
                              tmp);
    EXPECT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(read_file(tmp / "b.ksf"), read_file(filter));
    expect_no_temporaries("-t 100000");
}

// The fixture's filter with bytes changed and the header checksum recomputed, so that only the
// semantic checks can refuse it.
std::string crafted_filter(std::string bytes, std::size_t const offset, std::string const & value)
{
    std::memcpy(bytes.data() + offset, value.data(), value.size());
    std::uint32_t header_size = 0;
    std::memcpy(&header_size, bytes.data() + 12, 4);
    std::uint64_t const sum =
        ksieve::checksum64(reinterpret_cast<unsigned char const *>(bytes.data()), header_size - 8);
    std::memcpy(bytes.data() + header_size - 8, &sum, 8);
    return bytes;
}

template <typename T> std::string raw(T const v)
{
    return std::string(reinterpret_cast<char const *>(&v), sizeof v);
}

// Crafted headers are refused before anything is allocated for them; a stream that is no filter is
// refused at its first bytes.
TEST_F(robustness, crafted_filter_headers_and_endless_streams_are_refused_cheaply)
{
    std::string const good = read_file(filter);
    struct crafted
    {
        std::string name;
        std::size_t offset;
        std::string value;
        std::string needle;
    };
    std::vector<crafted> const cases = {
        {"shards", 56, raw(std::uint32_t{24}), "shards"},
        {"nan_fpr", 40, raw(std::nan("")), "false positive rate"},
        {"negative_fpr", 40, raw(-0.25), "false positive rate"},
        {"fpr_one", 40, raw(1.0), "false positive rate"},
    };
    for (auto const & c : cases)
    {
        std::string const path = tmp / (c.name + ".ksf");
        write_file(path, crafted_filter(good, c.offset, c.value));
        for (std::string const cmd : {"info", "classify -q -f"})
        {
            std::string const tail = cmd == "info" ? "" : " '" + reads + "'";
            // A virtual memory limit far below the 790 MB that a shard table of 2^24 entries would
            // take (not under a sanitizer, whose shadow memory takes terabytes of address space;
            // clang defines no __SANITIZE_* macros).
            std::string const limit =
#if defined(KSIEVE_SANITIZED) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
                "";
#else
                "ulimit -v 400000; ";
#endif
            int const st = shell(limit + "\"" + binary() + "\" " + cmd + " \"" + path + "\"" +
                                 tail + " >/dev/null 2>\"" + (tmp / "err") + "\"");
            run_result r;
            r.status = st;
            r.err = read_file(tmp / "err");
            expect_error(r, 1, "'" + path + "'", c.name + " " + cmd);
            EXPECT_NE(r.err.find(c.needle), std::string::npos) << r.err;
        }
    }
    // /dev/zero and a stream of garbage: refused at once, not read to the end.
    auto const z = run_ksieve("info /dev/zero", tmp);
    expect_error(z, 1, "'/dev/zero' is not a ksieve filter file", "info /dev/zero");
    int const st = shell("timeout 20 \"" + binary() + "\" info <(yes) 2>\"" + (tmp / "err") + "\"");
    EXPECT_EQ(st, 1) << read_file(tmp / "err");
    // A filter through a pipe still loads.
    int const ok = shell("\"" + binary() + "\" info --json <(cat \"" + filter + "\") >\"" +
                         (tmp / "j") + "\"");
    EXPECT_EQ(ok, 0);
    EXPECT_NE(read_file(tmp / "j").find("\"k\""), std::string::npos);
}

// A BAM header that declares more text or references than the file can hold is refused before
// htslib allocates by those sizes.
TEST_F(robustness, bam_headers_declaring_impossible_sizes_are_refused)
{
    struct crafted
    {
        std::string name;
        std::string bytes; // decompressed BAM start
        std::string needle;
    };
    std::vector<crafted> const cases = {
        {"text", std::string{"BAM\1"} + raw(std::uint32_t{0x7ffffff0}) + "@HD\tVN:1.6\n",
         "bytes of header text"},
        {"references",
         std::string{"BAM\1"} + raw(std::uint32_t{0}) + raw(std::uint32_t{0x7ffffff0}) +
             raw(std::uint32_t{5}) + "chr1",
         "reference sequences"},
    };
    for (auto const & c : cases)
    {
        std::string const raw_path = tmp / (c.name + ".raw"), bam = tmp / (c.name + ".bam");
        write_file(raw_path, c.bytes);
        ASSERT_EQ(shell("bgzip -c '" + raw_path + "' > '" + bam + "'"), 0);
        for (std::string const via : {"file", "pipe"})
        {
            // through a pipe the size is unknown: the memory limit bounds the declared sizes
            std::string const input =
                via == "file" ? "'" + bam + "'" : "--max-memory 1G - < '" + bam + "'";
            auto const r = run_ksieve(
                "classify -q -f '" + filter + "' --novel '" + (tmp / "n.fq") + "' " + input, tmp);
            expect_error(r, 1, c.needle, c.name + " " + via);
            EXPECT_FALSE(std::filesystem::exists(tmp / "n.fq")) << c.name;
        }
    }
}

// Filters larger than the memory limit are refused before allocation, naming the option.
TEST_F(robustness, filters_larger_than_the_memory_limit_are_refused_up_front)
{
    std::string const fa = data("HS11286.fa").string();
    auto const huge = run_ksieve(
        "build -q --expected 1000000000000000000 -o '" + (tmp / "h.ksf") + "' '" + fa + "'", tmp);
    expect_error(huge, 1, "--expected 1000000000000000000", "--expected 1e18");
    auto const sci = run_ksieve(
        "build -q --expected 1e11 --max-memory 1G -o '" + (tmp / "h.ksf") + "' '" + fa + "'", tmp);
    expect_error(sci, 1, "--expected 100000000000", "--expected 1e11 --max-memory 1G");
    EXPECT_NE(sci.err.find("--max-memory"), std::string::npos) << sci.err;
    auto const bloom = run_ksieve("build -q --type bloom --expected 1e11 --max-memory 1G -o '" +
                                      (tmp / "h.ksf") + "' '" + fa + "'",
                                  tmp);
    expect_error(bloom, 1, "--expected 100000000000", "bloom --expected 1e11");
    // Sized from the input: the counted k-mers are named instead.
    auto const counted =
        run_ksieve("build -q --max-memory 1M -o '" + (tmp / "h.ksf") + "' '" + fa + "'", tmp);
    expect_error(counted, 1, "distinct k-mers counted in the input", "--max-memory 1M");
    // merge into more than the limit names its inputs.
    auto const m = run_ksieve("merge -q --max-memory 64K -o '" + (tmp / "m.ksf") + "' '" + filter +
                                  "' '" + filter + "'",
                              tmp);
    expect_error(m, 1, "'" + filter + "'", "merge --max-memory 64K");
    // a limit below what any dedup or classify run keeps besides its filter (the program, its
    // batches and buffers) is refused before any work, with the least limit named
    for (std::string const & cmd :
         std::vector<std::string>{"dedup", "classify -f '" + filter + "'"})
    {
        auto const d = run_ksieve(
            cmd + " -q --max-memory 3M --novel '" + (tmp / "n.fq") + "' '" + reads + "'", tmp);
        expect_error(d, 1, "--max-memory 3.0 MiB is below the", cmd + " --max-memory 3M");
        EXPECT_FALSE(std::filesystem::exists(tmp / "n.fq")) << cmd;
    }
    // --prefilter where it does not apply, and --prefilter-size without it: usage errors
    for (std::string const & bad : std::vector<std::string>{
             "--prefilter", "--prefilter --min-count 3 --fpr 0",
             "--prefilter --min-count 3 --save-filter '" + (tmp / "s.ksf") + "'",
             "--min-count 3 --prefilter-size 8M"})
        expect_error(
            run_ksieve("dedup -q " + bad + " --novel '" + (tmp / "n.fq") + "' '" + reads + "'",
                       tmp),
            2, "--prefilter", bad);
    // ... with the prefilter of normalization too (its bytes count in the limit): at 24M it fits;
    // at 1.5M and 1M not even the reads fit
    auto const pre = run_ksieve("dedup -q --min-count 5 --prefilter --max-memory 24M --novel '" +
                                    (tmp / "n.fq") + "' '" + reads + "'",
                                tmp);
    EXPECT_EQ(pre.status, 0) << pre.err;
    std::filesystem::remove(tmp / "n.fq");
    for (std::string const limit : {"1500K", "1M"})
    {
        auto const dn = run_ksieve("dedup -q --min-count 5 --prefilter --max-memory " + limit +
                                       " --novel '" + (tmp / "n.fq") + "' '" + reads + "'",
                                   tmp);
        expect_error(dn, 1, "--max-memory",
                     "dedup --min-count 5 --prefilter --max-memory " + limit);
    }
    for (std::string const bad : {"abc", "0", "-5G", "12Q"})
    {
        auto const u = run_ksieve(
            "build -q --max-memory " + bad + " -o '" + (tmp / "h.ksf") + "' '" + fa + "'", tmp);
        expect_error(u, 2, "--max-memory", "--max-memory " + bad);
    }
    EXPECT_TRUE(left_files().empty()) << *left_files().begin();
    // Within the limit, the same filter as without one.
    auto const fits =
        run_ksieve("build -q --max-memory 8G -o '" + (tmp / "f.ksf") + "' '" + fa + "'", tmp);
    ASSERT_EQ(fits.status, 0) << fits.err;
    EXPECT_EQ(read_file(tmp / "f.ksf"), read_file(filter));
}

// A second signal more than a second after the first ends the run at once, still removing the
// temporary outputs: the run is blocked writing into a FIFO whose reader never reads, so the first
// signal cannot end it. A signal while the run waits for the reader of a FIFO output (its open
// blocks) ends it as interrupted (128 + signal, the interruption named), not as an error of the
// output, and leaves no temporary behind.
TEST_F(robustness, a_signal_while_a_fifo_output_waits_for_its_reader_is_an_interruption)
{
    std::string const fifo = tmp / "fifo";
    for (auto const & [sig, expect] :
         std::vector<std::pair<std::string, std::string>>{{"INT", "130"}, {"TERM", "143"}})
    {
        ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
        std::string const cmd =
            "set -m; \"" + binary() + "\" classify -f \"" + filter + "\" --novel \"" + fifo +
            "\" --report \"" + (tmp / "r.tsv") + "\" \"" + reads + "\" 2>\"" + (tmp / "err") +
            "\" & sleep 1; kill -" + sig + " %1; wait %1; echo $? > \"" + (tmp / "status") + "\"";
        (void)shell(cmd);
        EXPECT_EQ(read_file(tmp / "status"), expect + "\n")
            << sig << ": " << read_file(tmp / "err");
        EXPECT_EQ(read_file(tmp / "err").rfind("ksieve: error: interrupted", 0), 0u)
            << read_file(tmp / "err");
        for (std::string const n : {"status", "err", "fifo"})
            std::filesystem::remove(tmp / n);
        EXPECT_TRUE(left_files().empty()) << sig << ": left behind " << *left_files().begin();
    }
}

TEST_F(robustness, a_late_second_signal_leaves_no_temporary_behind)
{
    std::string const fifo = tmp / "fifo";
    for (std::string const sig : {"INT", "TERM"})
    {
        ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
        // job control, so that the background job does not ignore SIGINT as non-interactive shells
        // make it
        std::string const cmd = "set -m; (sleep 5 < \"" + fifo +
                                "\" &); "
                                "yes "
                                "\"@r\nACGTTGCAACGTTGCAACGTTGCAACGTTGCAACGTTGCA\n+"
                                "\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\" | "
                                "head -n 4000000 | \"" +
                                binary() + "\" classify -f \"" + filter + "\" --novel \"" + fifo +
                                "\" --known \"" + (tmp / "k.fq.gz") + "\" --report \"" +
                                (tmp / "r.tsv") + "\" - 2>\"" + (tmp / "err") +
                                "\" & sleep 2; ls \"" + tmp.path().string() + "\" > \"" +
                                (tmp / "during") + "\"; kill -" + sig + " %1; sleep 1.5; kill -" +
                                sig + " %1; wait %1; echo $? > \"" + (tmp / "status") + "\"";
        (void)shell(cmd);
        std::string const status = read_file(tmp / "status");
        EXPECT_TRUE(status == "130\n" || status == "143\n")
            << sig << ": " << status << read_file(tmp / "err");
        // the temporaries existed while it ran
        EXPECT_NE(read_file(tmp / "during").find("r.tsv.ksieve-tmp"), std::string::npos)
            << read_file(tmp / "during");
        for (std::string const n : {"status", "err", "during", "fifo"})
            std::filesystem::remove(tmp / n);
        EXPECT_TRUE(left_files().empty()) << sig << ": left behind " << *left_files().begin();
    }
}

} // namespace
