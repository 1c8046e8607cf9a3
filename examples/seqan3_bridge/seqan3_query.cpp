// Reading with seqan3, asking a ksieve filter: for every record of a FASTA or FASTQ file (seqan3
// decides the format by the extension, gzip included), its id, its looked-up k-mers and how many of
// them the filter holds, as `ksieve classify --report` counts them.
//
//   example_seqan3_query FILTER.ksf READS.{fa,fq}[.gz] [MIN_COUNT]
#include <ksieve/bridge/seqan3.hpp>
#include <ksieve/filters/support/error.hpp>

#include <seqan3/io/sequence_file/input.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

int main(int argc, char ** argv)
{
    if (argc < 3)
    {
        std::fprintf(stderr, "usage: %s FILTER.ksf READS [MIN_COUNT]\n", argv[0]);
        return 2;
    }
    try
    {
        auto const filter = ksieve::load_filter(argv[1]);
        std::uint64_t const min_count = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
        seqan3::sequence_file_input reads{argv[2]}; // dna5 sequences
        std::printf("read_id\tkmers\thits\n");
        for (auto const & record : reads)
        {
            auto const r = ksieve::bridge::query(*filter, record.sequence(), min_count);
            std::string const & id = record.id();
            std::printf("%.*s\t%llu\t%llu\n",
                        static_cast<int>(id.find_first_of(" \t") == std::string::npos
                                             ? id.size()
                                             : id.find_first_of(" \t")),
                        id.c_str(), static_cast<unsigned long long>(r.kmers),
                        static_cast<unsigned long long>(r.hits));
        }
        return 0;
    }
    catch (std::exception const & e)
    {
        std::fprintf(stderr, "example_seqan3_query: %s\n", e.what());
        return 1;
    }
}
