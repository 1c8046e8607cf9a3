// Deterministic synthetic data for host-depletion benchmarks: a uniform random host genome (FASTA,
// records of at most 100 Mbp) and reads of 150 bp, half cut from the host (either strand,
// substitution errors at a given rate, names host_N) and half from an unrelated random genome of 50
// Mbp (names novel_N), alternating. Usage: synth_host HOST_BASES READS SUBST_RATE OUT_DIR   (writes
// OUT_DIR/host.fa and OUT_DIR/reads.fq) The same arguments always give the same bytes.
#include "synth_common.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace
{

using synth::random_genome;
using synth::splitmix64;

void write_fasta(std::string const & g, std::string const & path)
{
    FILE * const f = std::fopen(path.c_str(), "w");
    if (f == nullptr)
        std::exit(1);
    constexpr std::uint64_t record = 100000000;
    for (std::uint64_t c = 0; c * record < g.size(); ++c)
    {
        std::fprintf(f, ">chr%llu\n", static_cast<unsigned long long>(c + 1));
        std::uint64_t const end = std::min<std::uint64_t>(g.size(), (c + 1) * record);
        for (std::uint64_t i = c * record; i < end; i += 80)
        {
            std::fwrite(g.data() + i, 1, std::min<std::uint64_t>(80, end - i), f);
            std::fputc('\n', f);
        }
    }
    std::fclose(f);
}

void write_reads(std::string const & host, std::string const & other, std::uint64_t const n,
                 double const subst, std::string const & path)
{
    FILE * const f = std::fopen(path.c_str(), "w");
    if (f == nullptr)
        std::exit(1);
    splitmix64 rng{3};
    constexpr std::size_t len = 150;
    std::string const qual(len, 'I');
    std::string read(len, 'A');
    auto const threshold = static_cast<std::uint64_t>(subst * 1e6);
    for (std::uint64_t r = 0; r < n; ++r)
    {
        bool const from_host = r % 2 == 0;
        std::string const & g = from_host ? host : other;
        synth::cut_read(g, read, threshold, rng);
        std::fprintf(f, "@%s_%llu\n%s\n+\n%s\n", from_host ? "host" : "novel",
                     static_cast<unsigned long long>(r), read.c_str(), qual.c_str());
    }
    std::fclose(f);
}

} // namespace

int main(int argc, char ** argv)
{
    if (argc != 5)
    {
        std::fprintf(stderr, "usage: synth_host HOST_BASES READS SUBST_RATE OUT_DIR\n");
        return 2;
    }
    std::uint64_t const host_bases = std::strtoull(argv[1], nullptr, 10);
    std::uint64_t const reads = std::strtoull(argv[2], nullptr, 10);
    double const subst = std::strtod(argv[3], nullptr);
    std::string const dir = argv[4];
    if (host_bases < 1000 || reads == 0 || !(subst >= 0 && subst < 1))
    {
        std::fprintf(stderr, "synth_host: invalid arguments\n");
        return 2;
    }
    std::string const host = random_genome(host_bases, 1);
    write_fasta(host, dir + "/host.fa");
    write_reads(host, random_genome(50000000, 2), reads, subst, dir + "/reads.fq");
    return 0;
}
