// libFuzzer target: any bytes as a sequence input (format and compression detected from the
// content, as for a file on the command line). Every record batch is read to the end; errors are
// ksieve::error exceptions, anything else (a crash, a sanitizer report, another exception) is a
// finding.
#include <ksieve/filters/support/error.hpp>
#include <ksieve/io/io.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const * const data, std::size_t const size)
{
    int const fd = ::memfd_create("ksieve-fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    std::size_t done = 0;
    while (done < size)
    {
        ssize_t const n = ::write(fd, data + done, size - done);
        if (n <= 0)
        {
            ::close(fd);
            return 0;
        }
        done += static_cast<std::size_t>(n);
    }
    std::string const path = "/proc/self/fd/" + std::to_string(fd);
    for (unsigned const threads : {1u, 2u})
    {
        try
        {
            ksieve::io::reader_options options;
            options.threads = threads;
            options.batch_records = 7; // several batches from small inputs
            auto reader = ksieve::io::reader::open(path, options);
            ksieve::io::record_batch batch;
            std::size_t bases = 0;
            while (reader->next(batch))
                for (std::size_t i = 0; i < batch.size(); ++i)
                    bases += batch[i].seq.size();
            (void)bases;
        }
        catch (ksieve::error const &)
        {
        }
    }
    ::close(fd);
    return 0;
}
