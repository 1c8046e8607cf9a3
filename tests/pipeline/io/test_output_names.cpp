// Output names at the limits of the file system: temporaries of long names stay within NAME_MAX
// beside their output, names that cannot be created are refused up front, and filter files written
// under a temporary name report the output's own name in their errors.
#include "io_test_helpers.hpp"

#include <ksieve/filters/common/filter_file.hpp>

#include <climits>
#include <set>

namespace
{

using namespace ksieve::io;
using namespace ksieve::io::test;

// A file name of `bytes` bytes that ends with `tail`.
std::string long_name(std::size_t const bytes, std::string const & tail)
{
    return std::string(bytes - tail.size(), 'n') + tail;
}

TEST(output_names, temporary_of_a_long_name_fits_name_max_in_the_same_directory)
{
    temp_dir const tmp;
    for (std::size_t const bytes : {200u, 230u, 248u, 252u, 255u})
    {
        std::string const path = (tmp.path() / long_name(bytes, ".fq")).string();
        output_file const out{path};
        fs::path const temp{out.write_path()};
        EXPECT_LE(temp.filename().string().size(), std::size_t{NAME_MAX}) << bytes;
        EXPECT_EQ(temp.parent_path(), tmp.path()) << bytes;
        EXPECT_NE(temp.filename().string().find(".ksieve-tmp."), std::string::npos) << bytes;
    }
}

TEST(output_names, a_248_byte_output_is_written_and_moved_into_place)
{
    temp_dir const tmp;
    std::string const path = (tmp.path() / long_name(248, ".fq")).string();
    {
        text_output out{path, writer_options{}};
        out.buffer() = "@r\nACGT\n+\nIIII\n";
        out.finish();
        out.commit();
    }
    EXPECT_EQ(read_file(path), "@r\nACGT\n+\nIIII\n");
    EXPECT_EQ(std::distance(fs::directory_iterator{tmp.path()}, fs::directory_iterator{}), 1);
}

TEST(output_names, long_names_that_share_their_start_get_distinct_temporaries)
{
    temp_dir const tmp;
    std::string const stem(250, 's');
    output_file const a{(tmp.path() / (stem + "1.fq")).string()};
    output_file const b{(tmp.path() / (stem + "2.fq")).string()};
    output_file const c{
        (tmp.path() / (stem + "1.fq")).string()}; // the same name again: the counter differs
    std::set<std::string> const names{a.write_path(), b.write_path(), c.write_path()};
    EXPECT_EQ(names.size(), 3u);
}

TEST(output_names, names_past_name_max_are_refused_up_front)
{
    temp_dir const tmp;
    EXPECT_NO_THROW(check_output_name((tmp.path() / long_name(NAME_MAX, ".ksf")).string()));
    std::string const too_long = (tmp.path() / long_name(NAME_MAX + 1, ".ksf")).string();
    try
    {
        check_output_name(too_long);
        ADD_FAILURE() << "a file name of NAME_MAX + 1 bytes was accepted";
    }
    catch (ksieve::io_error const & e)
    {
        EXPECT_NE(std::string{e.what()}.find(too_long), std::string::npos) << e.what();
        EXPECT_NE(std::string{e.what()}.find("File name too long"), std::string::npos) << e.what();
    }
    EXPECT_THROW(check_output_name((tmp.path() / "x.fq.lz4").string()), ksieve::io_error);
    EXPECT_NO_THROW(check_output_name("-"));
    EXPECT_EQ(tmp.entries(), std::vector<std::string>{});
}

TEST(output_names, filter_write_errors_name_the_output_not_its_temporary)
{
    temp_dir const tmp;
    std::string const path = (tmp.path() / "out.ksf").string();
    output_file const out{path};
    // a directory where the temporary goes: the filter file cannot be created there
    fs::create_directory(out.write_path());
    ksieve::filter_file_header header;
    header.type = ksieve::filter_type::bloom;
    header.kmer = ksieve::kmer_params{5, true, ksieve::hash_id::mix2k_v1, 99};
    header.fpr = 0.25;
    std::vector<std::uint64_t> const words(8, 1);
    std::vector<ksieve::shard_blob> const shards{ksieve::shard_blob{{}, words}};
    try
    {
        ksieve::write_filter_file(out.write_path(), header, shards);
        ADD_FAILURE() << "a filter file was written over a directory";
    }
    catch (ksieve::io_error const & e)
    {
        std::string const what = e.what();
        EXPECT_NE(what.find("'" + path + "'"), std::string::npos) << what;
        EXPECT_EQ(what.find(".ksieve-tmp."), std::string::npos) << what;
    }
    fs::remove(out.write_path());
}

} // namespace
