// Deterministic synthetic metagenome for the normalization benchmarks: G uniform random genomes of
// 2-6 Mbp with skewed abundances (relative coverages spread log-uniformly from MIN_COV to MAX_COV:
// a genome's share of the reads is its relative coverage times its length), and reads of 150 bp
// drawn in random order (each read picks its genome by abundance, so every prefix of the file is a
// sample of the same composition), either strand, substitutions at SUBST_RATE per base. Read names
// are g<genome>_<n>; qualities 'I'. Writes FASTQ to stdout and the genomes' table (name, length,
// share, reads, coverage in the READS reads) to OUT_TSV. With the defaults, 10 M reads cover the
// genomes from about 0.14x to 130x. Usage: synth_metagenome READS OUT_TSV [GENOMES=20]
// [SUBST_RATE=0.005] [MIN_COV=0.1] [MAX_COV=90] The same arguments always give the same bytes.
// With SYNTH_TICK_EVERY=N and SYNTH_TICK_FILE=PATH in the environment it also writes, every N
// reads, "reads<TAB>seconds since start" to PATH: piped into a consumer, writes wait for it to
// read, so the lines time the consumer's progress through the stream (within the 1 MiB output
// buffer).
#include "synth_common.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace
{

constexpr std::size_t read_length = 150;

struct genome
{
    std::string seq;
    double relative_coverage;
    double weight; // probability that a read comes from this genome
    std::uint64_t reads{0};
};

std::vector<genome> make_genomes(unsigned const count, double const min_cov, double const max_cov)
{
    synth::splitmix64 rng{2024};
    std::vector<genome> out(count);
    double total = 0;
    for (unsigned i = 0; i < count; ++i)
    {
        std::uint64_t const length = 2000000 + rng() % 4000001;
        out[i].seq = synth::random_genome(length, 100 + i);
        double const t = count == 1 ? 1.0 : static_cast<double>(i) / (count - 1);
        out[i].relative_coverage = min_cov * std::pow(max_cov / min_cov, t);
        out[i].weight = out[i].relative_coverage * static_cast<double>(length);
        total += out[i].weight;
    }
    for (auto & g : out)
        g.weight /= total;
    return out;
}

// Cumulative weights scaled to 2^53, for picking a genome with one random number.
std::vector<std::uint64_t> cumulative(std::vector<genome> const & gs)
{
    std::vector<std::uint64_t> c;
    double acc = 0;
    for (auto const & g : gs)
    {
        acc += g.weight;
        c.push_back(static_cast<std::uint64_t>(std::ldexp(std::min(acc, 1.0), 53)));
    }
    c.back() = std::uint64_t{1} << 53;
    return c;
}

} // namespace

int main(int argc, char ** argv)
{
    if (argc < 3 || argc > 7)
    {
        std::fprintf(stderr,
                     "usage: synth_metagenome READS OUT_TSV [GENOMES=20] [SUBST_RATE=0.005] "
                     "[MIN_COV=0.1] [MAX_COV=90]\n");
        return 2;
    }
    std::uint64_t const reads = std::strtoull(argv[1], nullptr, 10);
    unsigned const count =
        argc > 3 ? static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10)) : 20;
    double const subst = argc > 4 ? std::strtod(argv[4], nullptr) : 0.005;
    double const min_cov = argc > 5 ? std::strtod(argv[5], nullptr) : 0.1;
    double const max_cov = argc > 6 ? std::strtod(argv[6], nullptr) : 90;
    if (reads == 0 || count == 0 || count > 1000 || !(subst >= 0 && subst < 1) ||
        !(min_cov > 0 && max_cov >= min_cov))
    {
        std::fprintf(stderr, "synth_metagenome: invalid arguments\n");
        return 2;
    }
    std::vector<genome> gs = make_genomes(count, min_cov, max_cov);
    std::vector<std::uint64_t> const cum = cumulative(gs);
    synth::splitmix64 rng{7};
    auto const threshold = static_cast<std::uint64_t>(subst * 1e6);
    std::string const qual(read_length, 'I');
    std::string read(read_length, 'A');
    static char out_buf[1 << 20];
    std::setvbuf(stdout, out_buf, _IOFBF, sizeof out_buf);
    char const * const tick_every_text = std::getenv("SYNTH_TICK_EVERY");
    char const * const tick_path = std::getenv("SYNTH_TICK_FILE");
    std::uint64_t const tick_every = tick_every_text != nullptr && tick_path != nullptr
                                         ? std::strtoull(tick_every_text, nullptr, 10)
                                         : 0;
    FILE * const ticks = tick_every != 0 ? std::fopen(tick_path, "w") : nullptr;
    if (tick_every != 0 && ticks == nullptr)
    {
        std::fprintf(stderr, "synth_metagenome: cannot write %s\n", tick_path);
        return 1;
    }
    auto const start = std::chrono::steady_clock::now();
    for (std::uint64_t r = 0; r < reads; ++r)
    {
        if (ticks != nullptr && r % tick_every == 0 && r != 0)
        {
            std::chrono::duration<double> const t = std::chrono::steady_clock::now() - start;
            std::fprintf(ticks, "%llu\t%.3f\n", static_cast<unsigned long long>(r), t.count());
            std::fflush(ticks);
        }
        std::uint64_t const x = rng() >> 11;
        std::size_t g = 0;
        while (cum[g] <= x)
            ++g;
        synth::cut_read(gs[g].seq, read, threshold, rng);
        ++gs[g].reads;
        std::printf("@g%zu_%llu\n%s\n+\n%s\n", g, static_cast<unsigned long long>(r), read.c_str(),
                    qual.c_str());
    }
    if (std::fflush(stdout) != 0)
        return 1;
    if (ticks != nullptr)
    {
        std::chrono::duration<double> const t = std::chrono::steady_clock::now() - start;
        std::fprintf(ticks, "%llu\t%.3f\n", static_cast<unsigned long long>(reads), t.count());
        if (std::fclose(ticks) != 0)
            return 1;
    }
    FILE * const t = std::fopen(argv[2], "w");
    if (t == nullptr)
        return 1;
    std::fprintf(t, "genome\tlength\tweight\treads\tcoverage\n");
    for (std::size_t i = 0; i < gs.size(); ++i)
        std::fprintf(t, "g%zu\t%zu\t%.6g\t%llu\t%.3f\n", i, gs[i].seq.size(), gs[i].weight,
                     static_cast<unsigned long long>(gs[i].reads),
                     static_cast<double>(gs[i].reads) * read_length /
                         static_cast<double>(gs[i].seq.size()));
    return std::fclose(t) == 0 ? 0 : 1;
}
