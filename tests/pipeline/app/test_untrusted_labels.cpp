// Labels from elsewhere stay names: every route that makes a label (--label, --label-by file and
// record, --label-map, merge --label-inputs) refuses a name outside the rule, a filter file whose
// label table holds one (written here byte by byte) is refused when it is opened, and
// --split-by-label writes only inside the directory its pattern names, creating it where missing,
// with the open-file limit raised as far as the hard limit allows or refused before any work.
#include "test_helpers.hpp"

#include <ksieve/filters/support/checksum.hpp>

#include <map>
#include <set>
#include <sys/resource.h>

namespace
{

using namespace ksieve::test;

// Every file and directory under `dir`, relative to it.
std::set<std::string> tree(std::string const & dir)
{
    std::set<std::string> names;
    for (auto const & e : fs::recursive_directory_iterator{dir})
        names.insert(fs::relative(e.path(), dir).string());
    return names;
}

// `ksieve ARGS` run from `dir` (a shell prefix such as `ulimit -n 256 &&` may come first).
run_result run_in(std::string const & dir, std::string const & prefix, std::string const & args)
{
    std::string const cmd = "cd '" + dir + "' && " + prefix + " exec '" + binary() + "' " + args +
                            " >'" + dir + "/.out' 2>'" + dir + "/.err'";
    int const raw = std::system(("bash -c \"" + cmd + "\"").c_str());
    run_result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    r.out = read_file(dir + "/.out");
    r.err = read_file(dir + "/.err");
    fs::remove(dir + "/.out");
    fs::remove(dir + "/.err");
    return r;
}

class untrusted_labels : public ::testing::Test
{
protected:
    void SetUp() override
    {
        std::mt19937_64 rng{41};
        for (std::string const & name : std::vector<std::string>{"a", "b"})
        {
            genomes[name] = random_dna(rng, 3000);
            write_file(tmp / (name + ".fa"), ">" + name + "_chr\n" + genomes[name] + "\n");
        }
        std::string fq;
        for (int r = 0; r < 40; ++r)
        {
            std::string const & g = genomes[r % 2 == 0 ? "a" : "b"];
            fq += "@r" + std::to_string(r) + "\n" + g.substr(rng() % (g.size() - 100), 100) +
                  "\n+\n" + std::string(100, 'I') + "\n";
        }
        write_file(tmp / "reads.fq", fq);
    }

    // A labeled filter of a.fa and b.fa under the labels `la` and `lb`.
    std::string labeled(std::string const & name, std::string const & la, std::string const & lb)
    {
        std::string const path = tmp / name;
        auto const r =
            run_ksieve("build -q --fpr 0 --sampling all -k 21 -o '" + path + "' --label " + la +
                           "=" + tmp / "a.fa" + " --label " + lb + "=" + tmp / "b.fa",
                       tmp);
        EXPECT_EQ(r.status, 0) << r.err;
        return path;
    }

    temp_dir tmp;
    std::map<std::string, std::string> genomes;
};

// The file with the label `from` renamed `to` (of the same length) in its label table, and its
// header checksum made right again: a file as a hostile writer would make it.
std::string patch_label(std::string const & path, std::string const & from, std::string const & to)
{
    EXPECT_EQ(from.size(), to.size());
    std::string bytes = read_file(path);
    std::string key(4, '\0');
    for (unsigned i = 0; i < 4; ++i)
        key[i] = static_cast<char>((from.size() >> (8 * i)) & 0xff);
    key += from;
    std::size_t const at = bytes.find(key);
    EXPECT_NE(at, std::string::npos);
    EXPECT_EQ(bytes.find(key, at + 1), std::string::npos);
    bytes.replace(at + 4, from.size(), to);
    std::uint32_t h = 0; // header size, u32 at offset 12
    for (unsigned i = 0; i < 4; ++i)
        h |= std::uint32_t{static_cast<unsigned char>(bytes[12 + i])} << (8 * i);
    std::uint64_t const sum = ksieve::checksum64(bytes.data(), h - 8);
    for (unsigned i = 0; i < 8; ++i)
        bytes[h - 8 + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
    std::string const out = path + ".patched.ksf";
    write_file(out, bytes);
    return out;
}

TEST_F(untrusted_labels, a_filter_naming_a_path_as_a_label_is_refused_when_opened)
{
    // a same-length rename of a valid label keeps a valid file
    std::string const good = patch_label(labeled("ok.ksf", "qqqq", "bb"), "qqqq", "zzzz");
    ASSERT_EQ(run_ksieve("info '" + good + "'", tmp).status, 0);
    for (std::string const & bad : std::vector<std::string>{"../x", "/abs/x", "a/b", ".", "..",
                                                            "a\nb", "-", ".x", "a\tb", "ambiguous"})
    {
        std::string const from(bad.size(), 'q');
        std::string const file = patch_label(labeled("f.ksf", from, "bb"), from, bad);
        std::string const split = tmp / "split";
        for (std::string const & args : std::vector<std::string>{
                 "info '" + file + "'",
                 "classify -f '" + file + "' --novel '" + tmp / "n.fq" + "' --split-by-label '" +
                     split + "/{label}.fq' '" + tmp / "reads.fq" + "'",
                 "merge -o '" + tmp / "m.ksf" + "' '" + file + "' '" + good + "'"})
        {
            auto const r = run_ksieve(args, tmp);
            EXPECT_EQ(r.status, 1) << args << "\n" << r.err;
            std::string const first = r.err.substr(0, r.err.find('\n'));
            EXPECT_TRUE(first.starts_with("ksieve: error: ")) << r.err;
            EXPECT_NE(first.find(file), std::string::npos) << first;
            EXPECT_NE(first.find("label"), std::string::npos) << first;
            EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
            EXPECT_FALSE(fs::exists(tmp / "n.fq"));
            EXPECT_FALSE(fs::exists(split));
            EXPECT_FALSE(fs::exists(tmp / "m.ksf"));
        }
        fs::remove(file);
    }
    EXPECT_FALSE(fs::exists(tmp / "x"));
    EXPECT_FALSE(fs::exists("/abs"));
}

TEST_F(untrusted_labels, no_route_makes_a_label_outside_the_rule)
{
    std::string const a = tmp / "a.fa";
    auto const before = tree(tmp.path().string());
    // --label: a usage error naming the label
    for (std::string const & bad :
         std::vector<std::string>{"../evil", "/abs/x", "a/b", ".", "..", ".hidden", "-x", "a b"})
    {
        auto const r =
            run_ksieve("build -o '" + tmp / "y.ksf" + "' --label='" + bad + "=" + a + "'", tmp);
        EXPECT_EQ(r.status, 2) << bad << "\n" << r.err;
        EXPECT_NE(r.err.find("'" + bad + "'"), std::string::npos) << r.err;
    }
    // --label-by file: the input whose name gives the label
    fs::copy_file(a, tmp / "bad name.fa");
    fs::copy_file(a, tmp / ".hidden.fa");
    for (std::string const & input : std::vector<std::string>{"bad name.fa", ".hidden.fa"})
    {
        auto const r = run_ksieve("build -o '" + tmp / "y.ksf" + "' --label-by file '" +
                                      tmp / "b.fa" + "' '" + tmp / input + "'",
                                  tmp);
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_NE(r.err.find(tmp / input), std::string::npos) << r.err;
    }
    // --label-by record: the record whose name is no label name
    write_file(tmp / "records.fa", ">good\n" + genomes["a"] + "\n>../up\n" + genomes["b"] + "\n");
    auto r = run_ksieve(
        "build -o '" + tmp / "y.ksf" + "' --label-by record '" + tmp / "records.fa" + "'", tmp);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("record 2"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("'../up'"), std::string::npos) << r.err;
    // --label-map: the line of the map
    write_file(tmp / "map.tsv", "good\tfine\n../up\t../up\n");
    r = run_ksieve("build -o '" + tmp / "y.ksf" + "' --label-by record --label-map '" +
                       tmp / "map.tsv" + "' '" + tmp / "records.fa" + "'",
                   tmp);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("line 2"), std::string::npos) << r.err;
    // merge --label-inputs: the input whose file name gives the label
    auto const plain = run_ksieve("build -q --fpr 0 -k 21 -o '" + tmp / "s 1.ksf" + "' " + a, tmp);
    ASSERT_EQ(plain.status, 0) << plain.err;
    r = run_ksieve("merge --label-inputs -o '" + tmp / "y.ksf" + "' '" + tmp / "s 1.ksf" + "'",
                   tmp);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(tmp / "s 1.ksf"), std::string::npos) << r.err;
    // nothing was made
    auto after = tree(tmp.path().string());
    for (std::string const & made :
         std::vector<std::string>{"bad name.fa", ".hidden.fa", "records.fa", "map.tsv", "s 1.ksf",
                                  "stdout.txt", "stderr.txt"})
        after.erase(made);
    EXPECT_EQ(after, before);
}

TEST_F(untrusted_labels, split_files_stay_inside_the_patterns_directory)
{
    std::string const f = labeled("l.ksf", "la", "lb");
    std::string const work = tmp / "work";
    fs::create_directories(work);
    struct pattern_case
    {
        std::string pattern;
        std::set<std::string> made; // under work/
    };
    for (auto const & c : std::vector<pattern_case>{
             {"{label}.fq", {"la.fq", "lb.fq", "ambiguous.fq"}},
             {"deep/er/x_{label}_y.fq",
              {"deep", "deep/er", "deep/er/x_la_y.fq", "deep/er/x_lb_y.fq",
               "deep/er/x_ambiguous_y.fq"}},
             {"out/{label}.fq.gz", {"out", "out/la.fq.gz", "out/lb.fq.gz", "out/ambiguous.fq.gz"}}})
    {
        auto const r = run_in(work, "",
                              "classify -q -f '" + f + "' --split-by-label '" + c.pattern + "' '" +
                                  tmp / "reads.fq" + "'");
        ASSERT_EQ(r.status, 0) << c.pattern << "\n" << r.err;
        EXPECT_EQ(tree(work), c.made) << c.pattern;
        // the reads of a.fa (even numbers) in la's file, those of b.fa in lb's
        if (!c.pattern.ends_with(".gz"))
        {
            std::string const dir = work + "/" + c.pattern.substr(0, c.pattern.rfind('/') + 1);
            std::string const stem = c.pattern.substr(c.pattern.rfind('/') + 1);
            auto name_of = [&](std::string const & label) {
                return dir + stem.substr(0, stem.find('{')) + label +
                       stem.substr(stem.find('}') + 1);
            };
            std::string const la = read_file(name_of("la")), lb = read_file(name_of("lb"));
            EXPECT_EQ(split_fastq(la).size() + split_fastq(lb).size(), 40u) << c.pattern;
            for (auto const & rec : split_fastq(la))
                EXPECT_EQ(std::stoi(rec.substr(2, rec.find('\n') - 2)) % 2, 0) << rec;
            for (auto const & rec : split_fastq(lb))
                EXPECT_EQ(std::stoi(rec.substr(2, rec.find('\n') - 2)) % 2, 1) << rec;
        }
        fs::remove_all(work);
        fs::create_directories(work);
    }
    for (std::string const & bad : std::vector<std::string>{"{label}/x.fq", "out/{label}{label}.fq",
                                                            "out/x.fq", "{label}/{label}.fq"})
    {
        auto const r = run_in(work, "",
                              "classify -f '" + f + "' --split-by-label '" + bad + "' '" +
                                  tmp / "reads.fq" + "'");
        EXPECT_EQ(r.status, 2) << bad << "\n" << r.err;
        EXPECT_NE(r.err.find(bad), std::string::npos) << r.err;
        EXPECT_TRUE(tree(work).empty()) << bad;
    }
}

// A filter of 2,000 labels (one per record) and reads of some of them.
class many_labels : public untrusted_labels
{
protected:
    void SetUp() override
    {
        std::mt19937_64 rng{2000};
        std::string fa, fq;
        for (int l = 0; l < 2000; ++l)
        {
            std::string const seq = random_dna(rng, 60);
            fa += ">L" + std::to_string(l) + "\n" + seq + "\n";
            if (l % 50 == 0)
                fq += "@r" + std::to_string(l) + "\n" + seq.substr(0, 50) + "\n+\n" +
                      std::string(50, 'I') + "\n";
        }
        write_file(tmp / "labels.fa", fa);
        write_file(tmp / "reads.fq", fq);
        filter = tmp / "many.ksf";
        auto const r = run_ksieve("build -q --fpr 0 --sampling all -k 21 -o '" + filter +
                                      "' --label-by record '" + tmp / "labels.fa" + "'",
                                  tmp);
        ASSERT_EQ(r.status, 0) << r.err;
    }
    std::string filter;
};

TEST_F(many_labels, split_raises_the_soft_open_file_limit_within_the_hard_one)
{
    std::string const work = tmp / "work";
    fs::create_directories(work);
    std::string const args = "classify -q -f '" + filter + "' --report r.tsv --split-by-label " +
                             "'by/{label}.fq' '" + tmp / "reads.fq" + "'";
    // a hard limit that allows it: the soft limit of 256 is raised
    rlimit limit{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &limit), 0);
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < 4096)
        GTEST_SKIP() << "the hard limit of open files here is " << limit.rlim_max;
    auto r = run_in(work, "ulimit -Sn 256 &&", args);
    ASSERT_EQ(r.status, 0) << r.err;
    auto const files = tree(work + "/by");
    EXPECT_EQ(files.size(), 2001u);
    for (int l = 0; l < 2000; l += 50)
        EXPECT_EQ(read_file(work + "/by/L" + std::to_string(l) + ".fq")
                      .substr(0, 2 + std::to_string(l).size() + 1),
                  "@r" + std::to_string(l) + "\n")
            << l;
    EXPECT_EQ(read_file(work + "/by/L1.fq"), "");
    fs::remove_all(work);
    fs::create_directories(work);
    // a hard limit of 256: refused before any work, with the numbers
    r = run_in(work, "ulimit -n 256 &&", args);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("open files"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("256"), std::string::npos) << r.err;
    auto const needs = r.err.find("needs ");
    ASSERT_NE(needs, std::string::npos) << r.err;
    EXPECT_GE(std::stoul(r.err.substr(needs + 6)), 2001u) << r.err; // 2,000 labels and ambiguous
    EXPECT_TRUE(tree(work).empty());
}

} // namespace
