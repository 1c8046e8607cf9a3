// Deterministic human-like data for host-depletion benchmarks (same arguments, same bytes): a host
// genome with isochores and repeats, individuals with variants, microbes with microsatellites,
// reads (short, paired, long, chimeric) named by their origin, and the host's share of repeated
// 31-mers.
#include "synth_common.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace
{

using synth::between;
using synth::gap;
using synth::mutate;
using synth::normal;
using synth::other_base;
using synth::random_base;
using synth::random_sequence;
using synth::reverse_complement;
using synth::splitmix64;
using synth::unit;

constexpr char const * usage_text = R"(usage:
  synth_human host --bases N --seed S OUT.fa
      isochores, Alu-like, L1-like, microsatellites, alpha satellite, segmental duplications;
      records of <= 100 Mbp; composition TSV on stderr
  synth_human individual REF.fa --seed S [--haplotypes H] [--snp 0.001] [--indel 0.0001] OUT.fa
      each haplotype (records NAME_hI) with its own SNPs and 1-10 bp indels
  synth_human microbe IN.fa --seed S [--fraction 0.03] OUT.fa
      IN with microsatellites and homopolymers inserted (about FRACTION of the bases)
  synth_human reads --kind short|pairs|long|chimera --n N --seed S --prefix P
                    [--error E] [--foreign A.fa,B.fa] OUT.fq [OUT2.fq] GENOME.fa...
      short: 150 bp, substitutions at E (default 0.003) rising towards 3'; pairs: FR, fragment
      N(350, 50), OUT and OUT2; long: log-normal length (mean 8 kb, min 500), E split 40/30/30
      sub/ins/del; chimera: a host part of 5-50% (3% errors) joined to a --foreign read
  synth_human stats FASTA [--use P]
      share of 31-mer positions whose k-mer occurs more than once: exact, or estimated from the
      first P of the hash partitions (of about 32 M positions each)
)";

[[noreturn]] void fail(std::string const & what)
{
    std::fprintf(stderr, "synth_human: error: %s\n", what.c_str());
    std::exit(1);
}

// ---- Arguments and files ----

struct arguments
{
    std::vector<std::string> positional;
    std::map<std::string, std::string> options;

    char const * get(std::string const & key) const
    {
        auto const it = options.find(key);
        return it == options.end() ? nullptr : it->second.c_str();
    }
    std::string text(std::string const & key, std::string const & fallback = {}) const
    {
        return get(key) != nullptr ? get(key) : fallback;
    }
    std::uint64_t count(std::string const & key, std::uint64_t const fallback) const
    {
        return get(key) != nullptr ? std::strtoull(get(key), nullptr, 10) : fallback;
    }
    double real(std::string const & key, double const fallback) const
    {
        return get(key) != nullptr ? std::strtod(get(key), nullptr) : fallback;
    }
};

arguments parse_arguments(int const argc, char ** argv)
{
    arguments a;
    for (int i = 2; i < argc; ++i)
    {
        std::string const s = argv[i];
        if (s.size() > 2 && s.starts_with("--"))
        {
            if (i + 1 >= argc)
                fail("option " + s + " needs a value");
            a.options[s.substr(2)] = argv[++i];
        }
        else
            a.positional.push_back(s);
    }
    return a;
}

struct genome
{
    std::vector<std::string> names;
    std::vector<std::string> seqs;
    std::vector<std::uint64_t> ends; //!< cumulative lengths, for picking a record by its length

    void index()
    {
        ends.clear();
        std::uint64_t total = 0;
        for (auto const & s : seqs)
            ends.push_back(total += s.size());
    }
    /*! \brief A record chosen with probability proportional to its length. */
    std::size_t pick(splitmix64 & rng) const
    {
        std::uint64_t const at = rng() % ends.back();
        return static_cast<std::size_t>(std::upper_bound(ends.begin(), ends.end(), at) -
                                        ends.begin());
    }
};

/*! \brief The records of a FASTA file: names up to the first blank ('|' and the like as '_'),
 * sequences in upper case. */
genome read_fasta(std::string const & path)
{
    FILE * const f = std::fopen(path.c_str(), "rb");
    if (f == nullptr)
        fail("cannot open '" + path + "'");
    std::string text;
    if (std::fseek(f, 0, SEEK_END) == 0 && std::ftell(f) > 0)
        text.reserve(static_cast<std::size_t>(std::ftell(f)));
    std::rewind(f);
    std::vector<char> buf(1 << 22);
    for (std::size_t got = 0; (got = std::fread(buf.data(), 1, buf.size(), f)) > 0;)
        text.append(buf.data(), got);
    std::fclose(f);
    genome g;
    for (std::size_t at = 0; at < text.size();)
    {
        std::size_t end = std::min(text.find('\n', at), text.size());
        std::size_t const next = end + 1;
        if (end > at && text[end - 1] == '\r')
            --end;
        if (text[at] == '>')
        {
            std::string_view const line = std::string_view(text).substr(at + 1, end - at - 1);
            std::string name(line.substr(0, line.find_first_of(" \t")));
            for (auto & c : name)
                c = std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '_';
            g.names.push_back(std::move(name));
            g.seqs.emplace_back();
        }
        else if (!g.seqs.empty())
            g.seqs.back().append(text, at, end - at);
        at = next;
    }
    for (auto & s : g.seqs)
        for (auto & c : s)
            c = c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    if (g.seqs.empty() || g.seqs.front().empty())
        fail("'" + path + "' holds no FASTA record");
    g.index();
    return g;
}

/*! \brief Buffered output file that fails loudly. */
struct output
{
    FILE * f;
    std::string path;
    explicit output(std::string p) : f(std::fopen(p.c_str(), "wb")), path(std::move(p))
    {
        if (f == nullptr)
            fail("cannot write '" + path + "'");
        std::setvbuf(f, nullptr, _IOFBF, 1 << 22);
    }
    ~output()
    {
        if (std::fclose(f) != 0)
            fail("cannot write '" + path + "'");
    }
    output(output const &) = delete;
    output & operator=(output const &) = delete;
    void put(char const * data, std::size_t const size)
    {
        if (std::fwrite(data, 1, size, f) != size)
            fail("cannot write '" + path + "'");
    }
    void put(std::string const & s) { put(s.data(), s.size()); }
    void fastq(std::string const & name, std::string const & seq)
    {
        put("@" + name + "\n" + seq + "\n+\n" + std::string(seq.size(), 'I') + "\n");
    }
};

void write_fasta_record(output & out, std::string const & name, std::string_view const seq)
{
    out.put(">" + name + "\n");
    for (std::size_t i = 0; i < seq.size(); i += 80)
    {
        out.put(seq.data() + i, std::min<std::size_t>(80, seq.size() - i));
        out.put("\n", 1);
    }
}

// ---- host: a genome built element by element ----

enum element : std::size_t
{
    background,
    alu,
    line1,
    microsatellite,
    duplication,
    satellite,
    element_count
};
constexpr std::array<char const *, element_count> element_names{
    "background", "alu", "l1", "microsatellite", "segmental_duplication", "alpha_satellite"};
// target shares of the genome (alpha satellite: one array in the middle of each chromosome)
constexpr std::array<double, element_count> element_share{0.62, 0.10, 0.17, 0.03, 0.05, 0.03};
// mean appended bases of one element (background: a stretch between two elements)
constexpr std::array<double, element_count> element_mean{1000, 306, 1120, 56, 55000, 1};

/*! \brief A microsatellite: a unit of 1-6 bases (homopolymers and dinucleotides most often)
 * repeated over 15-300 bases, with 2% impurities. */
std::string make_microsatellite(splitmix64 & rng)
{
    static constexpr std::array<unsigned, 10> units{1, 1, 1, 2, 2, 2, 3, 4, 5, 6};
    std::string const unit_seq = random_sequence(units[rng() % units.size()], 0.4, rng);
    auto const len = static_cast<std::size_t>(std::min(300.0, 15 - 40 * std::log(unit(rng))));
    std::string s;
    while (s.size() < len)
        s += unit_seq;
    s.resize(len);
    return mutate(s, 0.02, 0.2, rng);
}

struct host_builder
{
    splitmix64 rng;
    std::string g; // the whole genome; chromosomes are cut at write time
    std::array<std::string, 3> alu_family;
    std::string l1;
    std::string monomer;
    std::array<std::uint64_t, element_count> bases{};
    std::uint64_t isochore_end = 0;
    double gc = 0.41;

    explicit host_builder(std::uint64_t const seed) : rng{seed * 0x2545f4914f6cdd1dULL + 17}
    {
        std::string const master = random_sequence(282, 0.53, rng);
        for (auto & a : alu_family)
            a = mutate(master, 0.04, 0.0, rng);
        l1 = random_sequence(6000, 0.42, rng);
        monomer = random_sequence(171, 0.38, rng);
    }

    /*! \brief Background of GC by isochore (100-300 kb blocks, GC 0.36-0.54), CpG depleted. */
    void add_background(std::size_t const len)
    {
        for (std::size_t i = 0; i < len; ++i)
        {
            if (g.size() >= isochore_end)
            {
                isochore_end = g.size() + 100000 + rng() % 200001;
                gc = between(rng, 0.36, 0.54);
            }
            std::uint64_t const r = rng();
            bool const strong = static_cast<double>(r >> 40) * 0x1.0p-24 < gc;
            char b = strong ? ((r & 1) ? 'C' : 'G') : ((r & 1) ? 'A' : 'T');
            if (b == 'G' && !g.empty() && g.back() == 'C' && (r >> 1 & 3) != 0)
                b = 'A'; // CpG -> CpA: three in four CpGs lost
            g.push_back(b);
        }
        bases[background] += len;
    }

    void append(element const e, std::string s)
    {
        if (rng() & 1)
            reverse_complement(s);
        bases[e] += s.size();
        g += s;
    }

    /*! \brief A poly-A tail of 8-40 bases, one in ten not A. */
    std::string poly_a()
    {
        std::string t(8 + rng() % 33, 'A');
        for (auto & b : t)
            if (rng() % 10 == 0)
                b = random_base(rng);
        return t;
    }

    /*! \brief An Alu copy: subfamily Y (2-8%), S (6-14%) or J (12-20%) divergence, poly-A tail. */
    void add_alu()
    {
        static constexpr std::array<double, 6> range{0.02, 0.08, 0.06, 0.14, 0.12, 0.20};
        std::size_t const family = rng() % 10 < 3 ? 0 : rng() % 10 < 7 ? 1 : 2;
        double const d = between(rng, range[2 * family], range[2 * family + 1]);
        append(alu, mutate(alu_family[family], d, 0.1, rng) + poly_a());
    }

    /*! \brief A 3' fragment of the 6 kb L1 element (mostly about 1 kb), 3-25% divergence. */
    void add_l1()
    {
        auto const len =
            static_cast<std::size_t>(std::min(6000.0, 150 - 950 * std::log(unit(rng))));
        double const d = between(rng, 0.03, 0.25);
        append(line1, mutate(l1.substr(l1.size() - len), d, 0.1, rng) + poly_a());
    }

    /*! \brief A copy of 10-100 kb of the genome so far at 1-4% divergence. */
    void add_duplication()
    {
        std::size_t const len = 10000 + rng() % 90001;
        if (g.size() < 4 * len)
            return add_background(len);
        std::size_t const from = rng() % (g.size() - len);
        append(duplication, mutate(g.substr(from, len), between(rng, 0.01, 0.04), 0.1, rng));
    }

    /*! \brief An alpha-satellite array of `len` bases: a higher-order repeat of 4-16 monomers
     * (each 15-30% from the consensus monomer), its copies 1-3% apart. */
    void add_satellite(std::size_t const len)
    {
        std::string hor;
        std::size_t const monomers = 4 + rng() % 13;
        for (std::size_t i = 0; i < monomers; ++i)
            hor += mutate(monomer, between(rng, 0.15, 0.30), 0.05, rng);
        std::string array;
        while (array.size() < len)
            array += mutate(hor, between(rng, 0.01, 0.03), 0.05, rng);
        array.resize(len);
        append(satellite, std::move(array));
    }

    void add_one()
    {
        double w[element_count - 1];
        double total = 0;
        for (std::size_t e = 0; e + 1 < element_count; ++e)
            total += w[e] = element_share[e] / element_mean[e];
        double u = unit(rng) * total;
        std::size_t e = 0;
        while (e + 2 < element_count && u > w[e])
            u -= w[e++];
        if (e == background)
            add_background(static_cast<std::size_t>(1 - element_mean[0] * std::log(unit(rng))));
        else if (e == alu)
            add_alu();
        else if (e == line1)
            add_l1();
        else if (e == microsatellite)
            append(microsatellite, make_microsatellite(rng));
        else
            add_duplication();
    }

    /*! \brief Appends a chromosome of exactly `size` bases. */
    void add_chromosome(std::size_t const size)
    {
        std::size_t const start = g.size();
        bool satellite_done = false;
        while (g.size() - start < size)
        {
            if (!satellite_done && g.size() - start >= size / 2)
            {
                add_satellite(static_cast<std::size_t>(size * element_share[satellite]));
                satellite_done = true;
            }
            else
                add_one();
        }
        g.resize(start + size);
    }
};

int run_host(arguments const & a)
{
    std::uint64_t const total = a.count("bases", 0);
    if (a.positional.size() != 1 || total < 100000)
        fail("host needs --bases N (>= 100000) and OUT.fa");
    constexpr std::uint64_t chromosome = 100000000;
    host_builder h(a.count("seed", 1));
    h.g.reserve(total + 200000);
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t done = 0; done < total; done += sizes.back())
        sizes.push_back(std::min(chromosome, total - done));
    for (auto const s : sizes)
        h.add_chromosome(s);
    output out(a.positional[0]);
    std::string_view const all = h.g;
    for (std::size_t c = 0, at = 0; c < sizes.size(); at += sizes[c++])
        write_fasta_record(out, "chr" + std::to_string(c + 1), all.substr(at, sizes[c]));
    std::uint64_t sum = 0;
    for (auto const b : h.bases)
        sum += b;
    std::fprintf(stderr, "element\tbases\tshare\n");
    for (std::size_t e = 0; e < element_count; ++e)
        std::fprintf(stderr, "%s\t%llu\t%.4f\n", element_names[e],
                     static_cast<unsigned long long>(h.bases[e]), double(h.bases[e]) / double(sum));
    return 0;
}

// ---- individual, microbe ----

/*! \brief One haplotype of seq: SNPs at `snp`, indels of 1-10 bases at `indel` per base. */
std::string haplotype(std::string const & seq, double const snp, double const indel,
                      splitmix64 & rng)
{
    std::string out;
    out.reserve(seq.size() + seq.size() / 1000);
    std::size_t i = 0;
    while (i < seq.size())
    {
        std::uint64_t const g = std::min<std::uint64_t>(gap(rng, snp + indel), seq.size() - i);
        out.append(seq, i, g);
        i += g;
        if (i >= seq.size())
            break;
        if (unit(rng) * (snp + indel) < snp)
        {
            out.push_back(other_base(seq[i++], rng));
            continue;
        }
        std::size_t const len = 1 + rng() % 10;
        if (rng() & 1)
            for (std::size_t j = 0; j < len; ++j)
                out.push_back(random_base(rng));
        else
            i += len;
    }
    return out;
}

int run_individual(arguments const & a)
{
    if (a.positional.size() != 2)
        fail("individual needs REF.fa and OUT.fa");
    genome const ref = read_fasta(a.positional[0]);
    std::uint64_t const seed = a.count("seed", 1);
    std::uint64_t const haplotypes = a.count("haplotypes", 1);
    double const snp = a.real("snp", 0.001);
    double const indel = a.real("indel", 0.0001);
    output out(a.positional[1]);
    for (std::uint64_t h = 1; h <= haplotypes; ++h)
    {
        splitmix64 rng{seed * 0x9e3779b97f4a7c15ULL + h * 0x632be59bd9b4e019ULL};
        for (std::size_t r = 0; r < ref.seqs.size(); ++r)
            write_fasta_record(out, ref.names[r] + "_h" + std::to_string(h),
                               haplotype(ref.seqs[r], snp, indel, rng));
    }
    return 0;
}

int run_microbe(arguments const & a)
{
    if (a.positional.size() != 2)
        fail("microbe needs IN.fa and OUT.fa");
    genome const in = read_fasta(a.positional[0]);
    double const fraction = a.real("fraction", 0.03);
    splitmix64 rng{a.count("seed", 1) * 0xd1b54a32d192ed03ULL + 5};
    output out(a.positional[1]);
    for (std::size_t r = 0; r < in.seqs.size(); ++r)
    {
        std::string const & s = in.seqs[r];
        std::string m;
        m.reserve(s.size() + s.size() / 20);
        std::size_t i = 0;
        while (i < s.size())
        {
            // one microsatellite (mean 56 bases) every 56 / fraction bases
            auto const g = std::min<std::uint64_t>(gap(rng, fraction / 56), s.size() - i);
            m.append(s, i, g);
            i += g;
            if (i < s.size())
                m += make_microsatellite(rng);
        }
        write_fasta_record(out, in.names[r] + "_microsat", m);
    }
    return 0;
}

// ---- reads ----

/*! \brief Genomes to draw reads from: a file chosen uniformly, then a record by its length. */
struct source
{
    std::vector<genome> files;

    /*! \brief A piece of up to `len` bases from a random place and strand; `where` names it. */
    std::string cut(std::size_t len, splitmix64 & rng, std::string & where) const
    {
        genome const & g = files[rng() % files.size()];
        std::size_t const r = g.pick(rng);
        std::string const & seq = g.seqs[r];
        len = std::min(len, seq.size());
        std::size_t const at = rng() % (seq.size() - len + 1);
        std::string s = seq.substr(at, len);
        bool const reverse = rng() & 1;
        if (reverse)
            reverse_complement(s);
        where = g.names[r] + "_" + std::to_string(at) + (reverse ? "-" : "+");
        return s;
    }
};

source load_source(std::vector<std::string> const & paths)
{
    source s;
    for (auto const & p : paths)
        s.files.push_back(read_fasta(p));
    if (s.files.empty())
        fail("reads needs at least one GENOME.fa");
    return s;
}

std::vector<std::string> split_commas(std::string const & text)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size())
    {
        std::size_t const end = std::min(text.find(',', start), text.size());
        if (end > start)
            out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

/*! \brief Illumina-like substitutions: rate `e` on average, 0.4 e at the 5' end to 1.6 e at 3'. */
void short_errors(std::string & read, double const e, splitmix64 & rng)
{
    double const n = static_cast<double>(read.size() > 1 ? read.size() - 1 : 1);
    for (std::size_t i = 0; i < read.size(); ++i)
        if (unit(rng) < e * (0.4 + 1.2 * static_cast<double>(i) / n))
            read[i] = other_base(read[i], rng);
}

/*! \brief Long-read errors at rate e: 40% substitutions, 30% insertions, 30% deletions. */
std::string long_errors(std::string const & s, double const e, splitmix64 & rng)
{
    std::string out;
    out.reserve(s.size() + s.size() / 8);
    auto const threshold = static_cast<std::uint64_t>(e * 4294967296.0);
    for (char const b : s)
    {
        std::uint64_t const r = rng();
        if ((r & 0xffffffffULL) >= threshold)
        {
            out.push_back(b);
            continue;
        }
        std::uint64_t const kind = (r >> 32) % 10;
        if (kind < 4)
            out.push_back(other_base(b, rng));
        else if (kind < 7)
        {
            out.push_back(random_base(rng));
            out.push_back(b);
        }
    }
    return out;
}

/*! \brief A long-read length: log-normal, mean 8 kb (sigma 0.7), at least 500. */
std::size_t long_length(splitmix64 & rng)
{
    double const mu = std::log(8000.0) - 0.7 * 0.7 / 2;
    for (;;)
    {
        double const l = std::exp(mu + 0.7 * normal(rng));
        if (l >= 500)
            return static_cast<std::size_t>(l);
    }
}

struct read_job
{
    std::string kind, prefix;
    std::uint64_t n;
    double error;
    splitmix64 rng;
    source host, foreign;
};

void write_short(read_job & j, output & out)
{
    std::string where;
    for (std::uint64_t i = 0; i < j.n; ++i)
    {
        std::string r = j.host.cut(150, j.rng, where);
        short_errors(r, j.error, j.rng);
        out.fastq(j.prefix + "_" + std::to_string(i) + "_" + where, r);
    }
}

void write_pairs(read_job & j, output & out1, output & out2)
{
    std::string where;
    for (std::uint64_t i = 0; i < j.n; ++i)
    {
        auto const f = static_cast<std::size_t>(std::max(160.0, 350 + 50 * normal(j.rng)));
        std::string const fragment = j.host.cut(f, j.rng, where);
        std::string r1 = fragment.substr(0, std::min<std::size_t>(150, fragment.size()));
        std::string r2 = fragment.substr(fragment.size() - r1.size());
        reverse_complement(r2);
        short_errors(r1, j.error, j.rng);
        short_errors(r2, j.error, j.rng);
        std::string const name = j.prefix + "_" + std::to_string(i) + "_" + where;
        out1.fastq(name, r1);
        out2.fastq(name, r2);
    }
}

void write_long(read_job & j, output & out)
{
    std::string where;
    for (std::uint64_t i = 0; i < j.n; ++i)
    {
        std::string const r = j.host.cut(long_length(j.rng), j.rng, where);
        out.fastq(j.prefix + "_" + std::to_string(i) + "_" + where, long_errors(r, j.error, j.rng));
    }
}

/*! \brief Chimeras: a host part of 5-50% of the read (3% errors) before or after a foreign part. */
void write_chimeras(read_job & j, output & out)
{
    std::string where, foreign_where;
    char buf[32];
    for (std::uint64_t i = 0; i < j.n; ++i)
    {
        std::size_t const len = long_length(j.rng);
        auto const host_len = static_cast<std::size_t>(between(j.rng, 0.05, 0.50) * len);
        std::string const h = long_errors(j.host.cut(host_len, j.rng, where), 0.03, j.rng);
        std::string const f =
            long_errors(j.foreign.cut(len - host_len, j.rng, foreign_where), 0.03, j.rng);
        double const share =
            static_cast<double>(h.size()) / static_cast<double>(h.size() + f.size());
        std::snprintf(buf, sizeof buf, "%.2f", share);
        bool const host_first = j.rng() & 1;
        out.fastq(j.prefix + "_" + std::to_string(i) + "_host" + buf + "_" + where + "_" +
                      foreign_where,
                  host_first ? h + f : f + h);
    }
}

int run_reads(arguments const & a)
{
    read_job j{a.text("kind"), a.text("prefix", "read"), a.count("n", 0), 0, {}, {}, {}};
    j.rng = splitmix64{a.count("seed", 1) * 0xbf58476d1ce4e5b9ULL + 3};
    j.error = a.real("error", j.kind == "short" || j.kind == "pairs" ? 0.003 : 0.04);
    std::size_t const outputs = j.kind == "pairs" ? 2 : 1;
    if (a.positional.size() <= outputs)
        fail("reads needs OUT.fq" + std::string(outputs == 2 ? " OUT2.fq" : "") + " and GENOME.fa");
    if (!(j.error >= 0 && j.error < 0.5))
        fail("--error must be in [0, 0.5)");
    j.host = load_source({a.positional.begin() + static_cast<long>(outputs), a.positional.end()});
    output out(a.positional[0]);
    if (j.kind == "short")
        write_short(j, out);
    else if (j.kind == "pairs")
    {
        output out2(a.positional[1]);
        write_pairs(j, out, out2);
    }
    else if (j.kind == "long")
        write_long(j, out);
    else if (j.kind == "chimera")
    {
        j.foreign = load_source(split_commas(a.text("foreign")));
        write_chimeras(j, out);
    }
    else
        fail("--kind must be short, pairs, long or chimera");
    return 0;
}

// ---- stats: repeated 31-mers ----

std::uint64_t mix(std::uint64_t x) noexcept
{
    x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdULL;
    x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/*! \brief Canonical 31-mers of seq whose hash is `part` modulo `parts`, appended to keys. */
void collect_kmers(std::string const & seq, std::uint64_t const parts, std::uint64_t const part,
                   std::vector<std::uint64_t> & keys)
{
    constexpr unsigned k = 31;
    constexpr std::uint64_t mask = (1ULL << (2 * k)) - 1;
    std::uint64_t fwd = 0, rev = 0;
    unsigned valid = 0;
    for (char const c : seq)
    {
        std::uint64_t const code = c == 'A' ? 0 : c == 'C' ? 1 : c == 'G' ? 2 : c == 'T' ? 3 : 4;
        if (code == 4)
        {
            valid = 0;
            continue;
        }
        fwd = ((fwd << 2) | code) & mask;
        rev = (rev >> 2) | ((3 - code) << (2 * (k - 1)));
        if (++valid < k)
            continue;
        std::uint64_t const canonical = std::min(fwd, rev);
        if (mix(canonical) % parts == part)
            keys.push_back(canonical);
    }
}

/*! \brief Adds to counts[0..2] the positions, distinct k-mers and repeated distinct k-mers of keys
 * and to counts[3] the positions whose k-mer occurs more than once. \pre keys sorted. */
void count_repeats(std::vector<std::uint64_t> const & keys, std::array<std::uint64_t, 4> & counts)
{
    counts[0] += keys.size();
    for (std::size_t i = 0; i < keys.size();)
    {
        std::size_t j = i;
        while (j < keys.size() && keys[j] == keys[i])
            ++j;
        ++counts[1];
        if (j - i > 1)
        {
            ++counts[2];
            counts[3] += j - i;
        }
        i = j;
    }
}

/*! \brief Exact by default: the k-mers are counted in partitions by hash (about 32 M positions
 * each), all of them, or the first --use of them (an estimate). */
int run_stats(arguments const & a)
{
    if (a.positional.size() != 1)
        fail("stats needs FASTA");
    genome const g = read_fasta(a.positional[0]);
    std::uint64_t const parts = std::max<std::uint64_t>(1, g.ends.back() >> 25);
    std::uint64_t const use = std::clamp<std::uint64_t>(a.count("use", parts), 1, parts);
    std::array<std::uint64_t, 4> counts{};
    std::vector<std::uint64_t> keys;
    for (std::uint64_t p = 0; p < use; ++p)
    {
        keys.clear();
        for (auto const & s : g.seqs)
            collect_kmers(s, parts, p, keys);
        std::sort(keys.begin(), keys.end());
        count_repeats(keys, counts);
    }
    auto const share = [](std::uint64_t const x, std::uint64_t const n)
    { return static_cast<double>(x) / static_cast<double>(std::max<std::uint64_t>(1, n)); };
    std::printf("file\tbases\tpartitions_used\tpositions\trepeated_position_share\tdistinct\t"
                "repeated_distinct_share\n%s\t%llu\t%llu/%llu\t%llu\t%.4f\t%llu\t%.4f\n",
                a.positional[0].c_str(), static_cast<unsigned long long>(g.ends.back()),
                static_cast<unsigned long long>(use), static_cast<unsigned long long>(parts),
                static_cast<unsigned long long>(counts[0]), share(counts[3], counts[0]),
                static_cast<unsigned long long>(counts[1]), share(counts[2], counts[1]));
    return 0;
}

} // namespace

int main(int argc, char ** argv)
{
    if (argc < 2)
    {
        std::fputs(usage_text, stderr);
        return 2;
    }
    std::string const command = argv[1];
    arguments const a = parse_arguments(argc, argv);
    if (command == "host")
        return run_host(a);
    if (command == "individual")
        return run_individual(a);
    if (command == "microbe")
        return run_microbe(a);
    if (command == "reads")
        return run_reads(a);
    if (command == "stats")
        return run_stats(a);
    std::fputs(usage_text, stderr);
    return 2;
}
