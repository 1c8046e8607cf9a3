// GenBank and EMBL references (read through seqan3): a filter built from them is the filter built
// from the same sequences as FASTA, byte for byte (so every query, the distinct and the total k-mer
// counts agree); gzip'd files too; a truncated record is an error naming the file and the record.
#include "test_helpers.hpp"

#include <cctype>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

using namespace ksieve::test;

namespace
{

struct sequence
{
    std::string name;
    std::string bases;
};

std::vector<sequence> read_fasta(std::string const & path)
{
    std::vector<sequence> out;
    for (std::string const & rec : split_fasta(read_file(path)))
    {
        std::size_t const nl = rec.find('\n');
        sequence s{rec.substr(1, rec.find_first_of(" \t\n") - 1), {}};
        for (std::size_t i = nl + 1; i < rec.size(); ++i)
            if (rec[i] != '\n' && rec[i] != '\r')
                s.bases.push_back(rec[i]);
        out.push_back(std::move(s));
    }
    return out;
}

// Sequence lines as GenBank writes them: a right-aligned position, then blocks of 10 lower-case
// bases.
std::string genbank(std::vector<sequence> const & seqs)
{
    std::string out;
    for (auto const & s : seqs)
    {
        out += "LOCUS       " + s.name + "   " + std::to_string(s.bases.size()) +
               " bp    DNA     linear   PHG\n";
        out += "DEFINITION  test record.\nFEATURES             Location/Qualifiers\n     source    "
               "      1.." +
               std::to_string(s.bases.size()) + "\nORIGIN\n";
        for (std::size_t i = 0; i < s.bases.size(); i += 60)
        {
            char pos[32];
            std::snprintf(pos, sizeof pos, "%9zu", i + 1);
            out += pos;
            for (std::size_t j = i; j < std::min(i + 60, s.bases.size()); ++j)
            {
                if ((j - i) % 10 == 0)
                    out += ' ';
                out += static_cast<char>(std::tolower(static_cast<unsigned char>(s.bases[j])));
            }
            out += '\n';
        }
        out += "//\n";
    }
    return out;
}

// EMBL: blocks of 10 bases after five spaces, the position at the end of each line.
std::string embl(std::vector<sequence> const & seqs)
{
    std::string out;
    for (auto const & s : seqs)
    {
        out += "ID   " + s.name + "; SV 1; linear; genomic DNA; STD; PHG; " +
               std::to_string(s.bases.size()) + " BP.\n";
        out +=
            "XX\nDE   test record.\nXX\nSQ   Sequence " + std::to_string(s.bases.size()) + " BP;\n";
        for (std::size_t i = 0; i < s.bases.size(); i += 60)
        {
            std::string line = "    ";
            for (std::size_t j = i; j < std::min(i + 60, s.bases.size()); ++j)
            {
                if ((j - i) % 10 == 0)
                    line += ' ';
                line += static_cast<char>(std::tolower(static_cast<unsigned char>(s.bases[j])));
            }
            char pos[32];
            std::snprintf(pos, sizeof pos, "%10zu", std::min(i + 60, s.bases.size()));
            line.resize(70, ' ');
            out += line + pos + "\n";
        }
        out += "//\n";
    }
    return out;
}

} // namespace

TEST(annotated_input, genbank_and_embl_build_the_filter_of_the_same_fasta)
{
    KSIEVE_REQUIRE_DATA();
    temp_dir tmp;
    // lambda cut into three records, one with IUPAC codes (no k-mer spans them in either form)
    auto const whole = read_fasta(data("lambda.fa").string()).at(0).bases;
    std::vector<sequence> seqs{{"part1", whole.substr(0, 20000)},
                               {"part2", whole.substr(20000, 15000)},
                               {"part3", whole.substr(35000)}};
    seqs[1].bases[500] = 'R';
    seqs[1].bases[9000] = 'N';
    std::string fasta;
    for (auto const & s : seqs)
        fasta += ">" + s.name + "\n" + s.bases + "\n";
    std::string const fa = tmp / "ref.fa", gb = tmp / "ref.gbk", em = tmp / "ref.embl";
    write_file(fa, fasta);
    write_file(gb, genbank(seqs));
    write_file(em, embl(seqs));
    ASSERT_EQ(std::system(("gzip -kn '" + gb + "'").c_str()), 0);
    for (std::string const sampling : {"all", "minimizer:11"})
    {
        std::string const ref = tmp / "fa.ksf";
        auto const r =
            run_ksieve("build -q --sampling " + sampling + " -o '" + ref + "' '" + fa + "'", tmp);
        ASSERT_EQ(r.status, 0) << r.err;
        for (std::string const & in : {gb, em, gb + ".gz"})
        {
            std::string const out = tmp / "x.ksf";
            auto const b = run_ksieve(
                "build -q --sampling " + sampling + " -o '" + out + "' '" + in + "'", tmp);
            if (b.status != 0 && b.err.find("built with seqan3") != std::string::npos)
                GTEST_SKIP() << "built without seqan3";
            ASSERT_EQ(b.status, 0) << b.err;
            EXPECT_EQ(read_file(out), read_file(ref)) << in << " " << sampling;
        }
    }
    // classify of the records themselves: FASTA out, the names from the LOCUS lines
    std::string const known = tmp / "known.fa";
    auto const k = run_ksieve(
        "classify -q -f '" + (tmp / "fa.ksf") + "' --known '" + known + "' '" + gb + "'", tmp);
    ASSERT_EQ(k.status, 0) << k.err;
    auto const got = read_fasta(known);
    ASSERT_EQ(got.size(), seqs.size());
    for (std::size_t i = 0; i < seqs.size(); ++i)
    {
        EXPECT_EQ(got[i].name, seqs[i].name);
        EXPECT_EQ(got[i].bases.size(), seqs[i].bases.size());
    }
}

TEST(annotated_input, a_truncated_genbank_record_is_an_error_naming_file_and_record)
{
    KSIEVE_REQUIRE_DATA();
    temp_dir tmp;
    auto const whole = read_fasta(data("lambda.fa").string()).at(0).bases;
    std::string const text =
        genbank({{"a", whole.substr(0, 3000)}, {"b", whole.substr(3000, 3000)}});
    std::string const gb = tmp / "cut.gbk";
    write_file(gb, text.substr(0, text.size() - 200)); // the second record loses its end
    auto const r = run_ksieve("build -q -o '" + (tmp / "x.ksf") + "' '" + gb + "'", tmp);
    if (r.err.find("built with seqan3") != std::string::npos)
        GTEST_SKIP() << "built without seqan3";
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("ksieve: error: '" + gb + "': record 2: ", 0), 0u) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "x.ksf"));
}
