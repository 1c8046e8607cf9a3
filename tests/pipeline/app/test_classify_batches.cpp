// classify of an input of many batches, which several threads process at once: the outputs are the
// bytes of the one-thread run, and every read is in exactly one of them.
#include "test_helpers.hpp"

#include <fstream>

using namespace ksieve::test;

namespace
{

using classify_batches = host_filter_test;

// The oracle: the one-thread run, and the input itself (known and novel reads together are the
// input's records, each once). The input repeats the mixed reads five times: 40,000 reads of about
// 6 M bases, more than one batch (2 M bases each), so that batches finish out of order on several
// threads.
TEST_F(classify_batches, many_batches_on_several_threads_give_the_one_thread_bytes)
{
    std::string const input = tmp / "many.fq";
    {
        std::string const once = read_file(reads);
        std::ofstream out{input, std::ios::binary};
        for (int i = 0; i < 5; ++i)
            out << once;
    }
    std::string const original = read_file(input);
    for (std::string const extra : {"", "--report"})
    {
        std::string reference_known, reference_novel;
        for (int const t : {1, 3})
        {
            std::string const d = tmp / ("t" + std::to_string(t) + (extra.empty() ? "" : "r"));
            std::filesystem::create_directories(d);
            std::string const report = extra.empty() ? "" : " --report '" + d + "/r.tsv'";
            auto const r = run_ksieve("classify -q -t " + std::to_string(t) + " -f '" + filter +
                                          "' --known '" + d + "/k.fq' --novel '" + d + "/n.fq'" +
                                          report + " '" + input + "'",
                                      tmp);
            ASSERT_EQ(r.status, 0) << r.err;
            std::string const known = read_file(d + "/k.fq"), novel = read_file(d + "/n.fq");
            EXPECT_EQ(known.size() + novel.size(), original.size());
            EXPECT_EQ(split_fastq(known).size() + split_fastq(novel).size(), 40000u);
            EXPECT_GT(split_fastq(known).size(), 10000u);
            EXPECT_GT(split_fastq(novel).size(), 10000u);
            if (t == 1)
            {
                reference_known = known;
                reference_novel = novel;
            }
            else
            {
                EXPECT_EQ(known, reference_known) << "threads " << t << " " << extra;
                EXPECT_EQ(novel, reference_novel) << "threads " << t << " " << extra;
            }
        }
    }
}

} // namespace
