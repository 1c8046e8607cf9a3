// ksieve_reader_bench: times ksieve::io readers alone (no k-mers, no filters), for bench_reader.sh.
//
//   ksieve_reader_bench [-t THREADS] [--batch N] FILE            read FILE, print one result line
//   ksieve_reader_bench [-t THREADS] --paired R1 R2               read a pair in lock step
//   ksieve_reader_bench [-t THREADS] --copy OUT FILE              read FILE and write it to OUT
//   (ksieve::io::writer) ksieve_reader_bench --seqan3 FILE seqan3::sequence_file_input, for
//   comparison
//
// Output (tab separated): mode, records, bases, bytes (raw record bytes), seconds, MB/s of raw
// bytes.
#include <ksieve/filters/support/error.hpp>
#include <ksieve/io/io.hpp>

#ifdef KSIEVE_HAVE_SEQAN3
#include <seqan3/io/sequence_file/input.hpp>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace
{

struct totals
{
    std::uint64_t records{0}, bases{0}, bytes{0};
};

void add(totals & t, ksieve::io::record_batch const & b)
{
    t.records += b.size();
    t.bases += b.bases();
    for (std::size_t i = 0; i < b.size(); ++i)
        t.bytes += b[i].raw.size();
}

int usage()
{
    std::fputs("usage: ksieve_reader_bench [-t THREADS] [--batch N] [--copy OUT | --paired R1 R2 | "
               "--seqan3] FILE\n",
               stderr);
    return 2;
}

} // namespace

int main(int argc, char ** argv)
{
    ksieve::io::reader_options ro;
    std::string copy_to, mode = "read";
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i)
    {
        std::string const a = argv[i];
        if ((a == "-t" || a == "--threads") && i + 1 < argc)
            ro.threads = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
        else if (a == "--batch" && i + 1 < argc)
            ro.batch_records = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--copy" && i + 1 < argc)
        {
            copy_to = argv[++i];
            mode = "copy";
        }
        else if (a == "--paired")
            mode = "paired";
        else if (a == "--seqan3")
            mode = "seqan3";
        else if (!a.empty() && a[0] == '-' && a != "-")
            return usage();
        else
            files.push_back(a);
    }
    if (files.size() != (mode == "paired" ? 2u : 1u))
        return usage();
    totals t;
    auto const t0 = std::chrono::steady_clock::now();
    try
    {
        if (mode == "seqan3")
        {
#ifdef KSIEVE_HAVE_SEQAN3
            seqan3::sequence_file_input in{files[0]};
            for (auto & rec : in)
            {
                ++t.records;
                t.bases += rec.sequence().size();
                t.bytes += rec.id().size() + rec.sequence().size() + rec.base_qualities().size();
            }
#else
            std::fputs("ksieve_reader_bench: built without seqan3\n", stderr);
            return 1;
#endif
        }
        else if (mode == "paired")
        {
            auto p = ksieve::io::paired_reader::open_pair(files[0], files[1], ro);
            ksieve::io::record_batch r1, r2;
            while (p->next(r1, r2))
            {
                add(t, r1);
                add(t, r2);
            }
        }
        else
        {
            auto r = ksieve::io::reader::open(files[0], ro);
            std::unique_ptr<ksieve::io::writer> w;
            if (mode == "copy")
            {
                ksieve::io::writer_options wo;
                wo.threads = ro.threads;
                wo.sam_header = r->sam_header();
                w = ksieve::io::writer::open(copy_to, r->format(), wo);
            }
            ksieve::io::record_batch b;
            while (r->next(b))
            {
                add(t, b);
                if (w)
                    for (std::size_t i = 0; i < b.size(); ++i)
                        w->write(b[i]);
            }
            if (w)
                w->close();
        }
    }
    catch (std::exception const & e)
    {
        std::fprintf(stderr, "ksieve_reader_bench: error: %s\n", e.what());
        return 1;
    }
    double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s\t%llu\t%llu\t%llu\t%.3f\t%.1f\n", mode.c_str(),
                static_cast<unsigned long long>(t.records),
                static_cast<unsigned long long>(t.bases), static_cast<unsigned long long>(t.bytes),
                s, static_cast<double>(t.bytes) / 1e6 / s);
    return 0;
}
