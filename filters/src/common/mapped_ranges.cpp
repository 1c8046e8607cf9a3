// The mapping of filter files: mapped from the page cache, read into huge pages or from a stream,
// then checked by mapped_filter_file::parse (filter_file.cpp); pages given back; and the registry
// of mapped ranges and names in fixed slots published by atomics, so that a SIGBUS handler can
// name the filter file that changed under a mapping.
#include "../support/platform.hpp"
#include "file_sink.hpp"

#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/support/error.hpp>
#include <ksieve/filters/support/memory_budget.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ksieve
{

namespace
{

constexpr std::size_t mapping_slots = 256;

struct mapping_slot
{
    std::atomic<int> state{0}; // 0 free, 1 being written, 2 holds a mapping
    std::atomic<std::uintptr_t> begin{0};
    std::atomic<std::uintptr_t> end{0};
    char name[PATH_MAX]{};
};

mapping_slot mapping_registry[mapping_slots];

static_assert(std::atomic<int>::is_always_lock_free &&
                  std::atomic<std::uintptr_t>::is_always_lock_free,
              "the mapping registry is read from a signal handler");

// Records [begin, begin + bytes) as the mapping of the filter file `name`: its slot for
// forget_mapping(), -1 if the registry is full or the name too long (a fault there is then not
// named). Lock-free.
int remember_mapping(void const * const begin, std::uint64_t const bytes,
                     std::string const & name) noexcept
{
    if (name.size() >= PATH_MAX || bytes == 0)
        return -1;
    for (std::size_t i = 0; i < mapping_slots; ++i)
    {
        mapping_slot & slot = mapping_registry[i];
        int expected = 0;
        if (!slot.state.compare_exchange_strong(expected, 1, std::memory_order_acquire))
            continue;
        std::memcpy(slot.name, name.c_str(), name.size() + 1);
        auto const b = reinterpret_cast<std::uintptr_t>(begin);
        slot.begin.store(b, std::memory_order_relaxed);
        slot.end.store(b + bytes, std::memory_order_relaxed);
        slot.state.store(2, std::memory_order_release);
        return static_cast<int>(i);
    }
    return -1;
}

// Drops the slot of remember_mapping() (before the range is unmapped); -1 is ignored.
void forget_mapping(int const slot) noexcept
{
    if (slot >= 0 && static_cast<std::size_t>(slot) < mapping_slots)
        mapping_registry[slot].state.store(0, std::memory_order_release);
}

using detail::errno_text;
using detail::file_magic;
using detail::huge_mapping_bytes;

// With KSIEVE_HUGEPAGE_FILTERS in the environment, filters of at least this size are read into
// anonymous huge-page memory, not mapped from the page cache: no TLB miss per lookup, but zeroing
// the fresh pages cost more than the page walks saved on the machines measured (docs/design.md).
constexpr std::uint64_t anonymous_load_bytes = std::uint64_t{64} << 20;

// Advice for the mapping of a filter file (hints only): huge pages (2 MiB folios: no page walk per
// lookup), and one sequential pass that reads it in before its payload is checked on several
// threads, whose interleaved first touches share one readahead state and would leave parts of an
// uncached file in small pages (13% of a 390 MB filter, +50% a lookup there; docs/design.md).
void advise_file_mapping(void * const m, std::uint64_t const size, bool const huge,
                         bool const populate) noexcept
{
    if (huge)
        detail::platform::advise_huge_pages(m, size);
    if (populate)
        detail::platform::populate_read(m, size);
}

// The file read into a fresh anonymous mapping (huge pages advised); MAP_FAILED with errno set on
// failure.
void * load_anonymous(int const fd, std::uint64_t const size, std::string const & name)
{
    void * const m =
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return m;
    detail::platform::advise_huge_pages(m, size);
    auto * const p = static_cast<unsigned char *>(m);
    std::uint64_t done = 0;
    while (done < size)
    {
        std::size_t const chunk =
            static_cast<std::size_t>(std::min<std::uint64_t>(size - done, std::uint64_t{1} << 30));
        ssize_t const n = ::pread(fd, p + done, chunk, static_cast<off_t>(done));
        if (n <= 0)
        {
            int const saved = n == 0 ? EIO : errno;
            ::munmap(m, size);
            if (n == 0)
                throw format_error{"'" + name + "': the file shrank while it was read"};
            errno = saved;
            return MAP_FAILED;
        }
        done += static_cast<std::uint64_t>(n);
    }
    return m;
}

// Pipes and devices cannot be mapped: their bytes are read into memory, after the magic is checked
// (so that `/dev/zero` is refused at once) and never more than the memory budget allows.
std::vector<std::byte> read_stream(int const fd, std::string const & name)
{
    std::vector<std::byte> bytes;
    std::uint64_t const limit = memory_limit() / 2;
    std::byte buf[1 << 16];
    for (;;)
    {
        ssize_t const n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw io_error{"cannot read filter file '" + name + "': " + errno_text()};
        if (n == 0)
            return bytes;
        bytes.insert(bytes.end(), buf, buf + n);
        if (bytes.size() >= 8 && std::memcmp(bytes.data(), file_magic, 8) != 0)
            throw format_error{"'" + name + "' is not a ksieve filter file (bad magic)"};
        if (bytes.size() > limit)
            throw format_error{"'" + name + "': more than " + format_bytes(limit) +
                               " read from a stream without reaching the end of a filter file (" +
                               (memory_limit_is_explicit() ? "half of --max-memory"
                                                           : "half of the machine's memory") +
                               ")"};
    }
}

} // namespace

char const * mapped_filter_name(void const * const address) noexcept
{
    auto const a = reinterpret_cast<std::uintptr_t>(address);
    for (auto const & slot : mapping_registry)
        if (slot.state.load(std::memory_order_acquire) == 2 &&
            a >= slot.begin.load(std::memory_order_relaxed) &&
            a < slot.end.load(std::memory_order_relaxed))
            return slot.name;
    return nullptr;
}

void mapped_filter_file::release(std::span<std::uint64_t const> const words) const noexcept
{
    if (!file_backed_ || words.empty())
        return;
    long const page_size = ::sysconf(_SC_PAGESIZE);
    auto const page = static_cast<std::uintptr_t>(page_size > 0 ? page_size : 4096);
    auto const begin = reinterpret_cast<std::uintptr_t>(words.data());
    auto const end = begin + words.size_bytes();
    std::uintptr_t const first =
        (begin + page - 1) / page * page; // whole pages inside the payload only
    std::uintptr_t const last = end / page * page;
    if (last > first)
        detail::platform::release_pages(reinterpret_cast<void *>(first), last - first);
}

mapped_filter_file::~mapped_filter_file()
{
    forget_mapping(mapping_slot_);
    if (map_ != nullptr)
        ::munmap(map_, size_);
}

std::shared_ptr<mapped_filter_file const>
mapped_filter_file::open(std::filesystem::path const & path, load_options const & options)
{
    bool const verify_payload = options.verify_payload;
    std::shared_ptr<mapped_filter_file> f{new mapped_filter_file{}};
    f->name_ = path.string();
    int const fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw io_error{"cannot open filter file '" + f->name_ + "': " + errno_text()};
    void * m = MAP_FAILED;
    {
        struct fd_closer
        {
            int fd;
            ~fd_closer() { ::close(fd); }
        } const closer{fd};
        struct stat st
        {
        };
        if (::fstat(fd, &st) != 0)
            throw io_error{"cannot stat filter file '" + f->name_ + "': " + errno_text()};
        if (!S_ISREG(st.st_mode))
            return from_bytes(read_stream(fd, f->name_), f->name_, verify_payload);
        f->size_ = static_cast<std::uint64_t>(st.st_size);
        if (f->size_ == 0)
            throw format_error{"'" + f->name_ + "' is empty, not a ksieve filter file"};
        f->file_backed_ = !(f->size_ >= anonymous_load_bytes &&
                            std::getenv("KSIEVE_HUGEPAGE_FILTERS") != nullptr);
        m = f->file_backed_ ? ::mmap(nullptr, f->size_, PROT_READ, MAP_SHARED, fd, 0)
                            : load_anonymous(fd, f->size_, f->name_);
    }
    if (m == MAP_FAILED)
        throw io_error{"cannot map filter file '" + f->name_ + "': " + errno_text()};
    f->map_ = m;
    // (a fault there, the file truncated while mapped, is named by mapped_filter_name())
    if (f->file_backed_)
        f->mapping_slot_ = remember_mapping(m, f->size_, f->name_);
    // A filter larger than the memory left to it cannot stay in the page cache: every lookup may
    // read its page again, so each reads the 4 KiB it needs (no huge page, no readahead), and each
    // shard's pages are given back once checked.
    bool const exceeds_memory = f->file_backed_ && f->size_ > memory_limit();
    bool const large = f->file_backed_ && f->size_ >= huge_mapping_bytes && !exceeds_memory;
    advise_file_mapping(m, f->size_, large, large && verify_payload && !options.release_verified);
    f->bytes_ = static_cast<unsigned char const *>(m);
    f->parse(false);
    if (verify_payload)
        f->verify_payload(options.threads, options.release_verified || exceeds_memory);
    if (exceeds_memory)
        detail::platform::advise_random(m, f->size_);
    return f;
}

std::shared_ptr<mapped_filter_file const>
mapped_filter_file::from_bytes(std::span<std::byte const> const bytes, std::string name,
                               bool const verify_payload)
{
    std::shared_ptr<mapped_filter_file> f{new mapped_filter_file{}};
    f->name_ = std::move(name);
    f->size_ = bytes.size();
    f->owned_ = std::make_unique<std::uint64_t[]>((bytes.size() + 7) / 8 + 1);
    if (!bytes.empty())
        std::memcpy(f->owned_.get(), bytes.data(), bytes.size());
    f->bytes_ = reinterpret_cast<unsigned char const *>(f->owned_.get());
    f->parse(verify_payload);
    return f;
}

} // namespace ksieve
