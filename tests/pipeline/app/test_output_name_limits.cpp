// Output names at the file system's limits and inputs that cannot be read as asked: a valid long
// output name is written (its temporary stays within NAME_MAX), one past NAME_MAX is refused before
// any work, and
// `--paired - -` is a usage error that says why.
#include "test_helpers.hpp"

#include <climits>

namespace
{

using namespace ksieve::test;

std::string examples(std::string const & name)
{
    return std::string{KSIEVE_TEST_DATA_DIR} + "/../../examples/data/" + name;
}

std::string long_name(std::size_t const bytes, std::string const & tail)
{
    return std::string(bytes - tail.size(), 'n') + tail;
}

bool has_temporary(fs::path const & dir)
{
    for (auto const & e : fs::directory_iterator{dir})
        if (e.path().filename().string().find(".ksieve-tmp.") != std::string::npos)
            return true;
    return false;
}

TEST(output_name_limits, build_and_classify_write_outputs_with_long_names)
{
    temp_dir const tmp;
    std::string const filter = tmp / long_name(252, ".ksf");
    std::string const short_filter = tmp / "lambda.ksf";
    run_result const b =
        run_ksieve("build -q -o '" + filter + "' '" + examples("lambda.fa.gz") + "'", tmp);
    ASSERT_EQ(b.status, 0) << b.err;
    ASSERT_EQ(
        run_ksieve("build -q -o '" + short_filter + "' '" + examples("lambda.fa.gz") + "'", tmp)
            .status,
        0);
    EXPECT_EQ(read_file(filter), read_file(short_filter));

    std::string const novel = tmp / long_name(248, ".fq");
    std::string const novel_short = tmp / "novel.fq";
    run_result const c = run_ksieve("classify -q -f '" + filter + "' --novel '" + novel + "' '" +
                                        examples("reads.fq.gz") + "'",
                                    tmp);
    ASSERT_EQ(c.status, 0) << c.err;
    ASSERT_EQ(run_ksieve("classify -q -f '" + short_filter + "' --novel '" + novel_short + "' '" +
                             examples("reads.fq.gz") + "'",
                         tmp)
                  .status,
              0);
    EXPECT_EQ(read_file(novel), read_file(novel_short));
    EXPECT_FALSE(has_temporary(tmp.path()));
}

TEST(output_name_limits, a_name_past_name_max_is_refused_before_any_work)
{
    temp_dir const tmp;
    std::string const filter = tmp / long_name(NAME_MAX + 1, ".ksf");
    // the input does not exist: a check up front reports the name, not the input
    run_result const b =
        run_ksieve("build -q -o '" + filter + "' '" + (tmp / "missing.fa") + "'", tmp);
    EXPECT_EQ(b.status, 1);
    EXPECT_NE(b.err.find("File name too long"), std::string::npos) << b.err;
    EXPECT_EQ(b.err.find("missing.fa"), std::string::npos) << b.err;
    std::string const novel = tmp / long_name(NAME_MAX + 1, ".fq");
    run_result const c = run_ksieve("classify -q -f '" + (tmp / "missing.ksf") + "' --novel '" +
                                        novel + "' '" + examples("reads.fq.gz") + "'",
                                    tmp);
    EXPECT_EQ(c.status, 1);
    EXPECT_NE(c.err.find("File name too long"), std::string::npos) << c.err;
    EXPECT_FALSE(has_temporary(tmp.path()));
}

TEST(output_name_limits, both_mates_from_stdin_is_a_usage_error)
{
    temp_dir const tmp;
    std::string const filter = tmp / "lambda.ksf";
    ASSERT_EQ(
        run_ksieve("build -q -o '" + filter + "' '" + examples("lambda.fa.gz") + "'", tmp).status,
        0);
    run_result const r = run_ksieve("classify -q -f '" + filter + "' --novel '" + (tmp / "n.fq") +
                                        "' --paired - - < '" + examples("reads.fq.gz") + "'",
                                    tmp);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("both mates cannot be read from stdin"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("input starts with"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "n.fq"));
}

} // namespace
