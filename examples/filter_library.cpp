// Using the ksieve filter library directly: hash the k-mers of two sequences, build a sharded
// quotient filter, query it, save it and query the saved file through an mmap.
//
//   example_filter_library [OUT.ksf]
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/kmers/kmer.hpp>
#include <ksieve/filters/support/error.hpp>

#include <cstdio>
#include <string>

int main(int argc, char ** argv)
{
    std::string const reference =
        "ACGTTGCATGTCGCATGATGCATGAGAGCTNNNNACGTTTGACGATCGATCGGGCTAGCTAGGCTAGCTAG";
    std::string const read = "TTGCATGTCGCATGATGCATGAGAGCTAAAAAAAAAAA";
    std::string const path = argc > 1 ? argv[1] : "example.ksf";
    try
    {
        ksieve::filter_config cfg;
        cfg.type = ksieve::filter_type::quotient;
        cfg.kmer.k = 15;
        cfg.fpr = 0;        // exact: no false positives, exact counts
        cfg.shard_bits = 2; // 4 shards
        auto filter = ksieve::make_filter(cfg);

        ksieve::kmer_scanner const scan{cfg.kmer.k, cfg.kmer.canonical};
        ksieve::kmer_hasher const hash = cfg.kmer.hasher();
        std::size_t inserted = 0;
        scan.for_each(reference,
                      [&](std::size_t, std::uint64_t const code)
                      {
                          if (filter->insert(hash(code)) != ksieve::insert_status::ok)
                              std::fprintf(stderr, "filter full\n");
                          ++inserted;
                      });
        filter->save(path);

        auto const loaded = ksieve::load_filter(path); // read-only, straight from the mmap
        std::size_t kmers = 0, hits = 0;
        scan.for_each(read,
                      [&](std::size_t, std::uint64_t const code)
                      {
                          ++kmers;
                          hits += loaded->count(hash(code)) > 0;
                      });
        std::printf("inserted %zu k-mers; read has %zu k-mers, %zu found: %s\n", inserted, kmers,
                    hits, 2 * hits >= kmers ? "known" : "novel");
        return 0;
    }
    catch (ksieve::error const & e)
    {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
