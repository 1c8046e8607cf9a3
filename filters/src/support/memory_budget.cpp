// The memory budget of the filters: the process-wide limit that every filter table is charged
// against, its default (machine or container memory) and the parsing of sizes such as 8G.
#include <ksieve/filters/support/memory_budget.hpp>

#include "platform.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace ksieve
{

namespace
{
std::atomic<std::uint64_t> explicit_limit{0};
std::atomic<std::uint64_t> explicit_kept{0}; // of explicit_limit, for what is not a filter table
std::atomic<bool> limit_from_option{true}; // explicit_limit is --max-memory's (else the default's)
std::atomic<std::uint64_t> reserve{std::uint64_t{64} << 20};
std::atomic<std::uint64_t> charged{0};

// The machine's memory and the cgroup limit, read once.
struct default_limit
{
    std::uint64_t bytes{0};
    bool from_cgroup{false};
};

default_limit const & machine_limit() noexcept
{
    static default_limit const d = []
    {
        default_limit l;
        l.bytes = detail::platform::physical_memory_bytes();
        std::uint64_t const group = detail::platform::cgroup_memory_limit();
        if (group != 0 && (l.bytes == 0 || group < l.bytes))
        {
            l.bytes = group;
            l.from_cgroup = true;
        }
        return l;
    }();
    return d;
}
} // namespace

std::uint64_t physical_memory() noexcept
{
    return machine_limit().bytes;
}

std::string memory_limit_origin()
{
    default_limit const & d = machine_limit();
    std::string const what =
        d.from_cgroup ? "the memory limit of this process's cgroup, " : "the machine's memory, ";
    if (memory_limit_is_planned())
    {
        std::uint64_t const e = explicit_limit.load();
        std::uint64_t const k = explicit_kept.load();
        std::string const kept =
            format_bytes(e - std::max(e > k ? e - k : 0, e / 4)) + " kept for reads and buffers";
        if (!limit_from_option.load())
            return what + format_bytes(e) + ", less " + kept;
        return k == 0 ? std::string{"--max-memory"}
                      : "--max-memory " + format_bytes(e) + ", less " + kept;
    }
    return what + format_bytes(d.bytes) + ", less " +
           format_bytes(d.bytes > reserve.load() ? reserve.load() : d.bytes - d.bytes / 4) +
           " kept for reads and buffers";
}

void set_memory_limit(std::uint64_t const bytes, std::uint64_t const kept) noexcept
{
    limit_from_option.store(true);
    explicit_kept.store(bytes == 0 ? 0 : kept);
    explicit_limit.store(bytes);
}

void plan_default_memory_limit(std::uint64_t const kept) noexcept
{
    std::uint64_t const machine = physical_memory();
    if (machine == 0)
        return;
    limit_from_option.store(false);
    explicit_kept.store(kept);
    explicit_limit.store(machine);
}

void set_memory_reserve(std::uint64_t const bytes) noexcept
{
    reserve.store(bytes);
}

std::uint64_t memory_reserve() noexcept
{
    return reserve.load();
}

bool memory_limit_from_cgroup() noexcept
{
    return machine_limit().from_cgroup;
}

bool memory_limit_is_explicit() noexcept
{
    return explicit_limit.load() != 0 && limit_from_option.load();
}

bool memory_limit_is_planned() noexcept
{
    return explicit_limit.load() != 0;
}

std::uint64_t memory_limit() noexcept
{
    std::uint64_t const e = explicit_limit.load();
    if (e != 0)
    {
        std::uint64_t const k = explicit_kept.load();
        return k == 0 ? e : std::max(e > k ? e - k : 0, e / 4);
    }
    std::uint64_t const machine = physical_memory();
    if (machine == 0)
        return UINT64_MAX;
    std::uint64_t const kept = reserve.load();
    return machine > kept ? machine - kept : machine / 4;
}

std::uint64_t process_memory_limit() noexcept
{
    std::uint64_t const e = explicit_limit.load();
    return e != 0 ? e : physical_memory();
}

std::uint64_t charged_memory() noexcept
{
    return charged.load();
}

std::string format_bytes(std::uint64_t const bytes)
{
    static char const * const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " bytes";
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 6)
    {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

std::uint64_t parse_size(std::string const & text, std::string const & option)
{
    auto bad = [&] {
        return usage_error{option + " expects a size such as 8G, 512M or 100000, got '" + text +
                           "'"};
    };
    std::size_t pos = 0;
    double v = 0;
    try
    {
        v = std::stod(text, &pos);
    }
    catch (std::exception const &)
    {
        throw bad();
    }
    std::string unit = text.substr(pos);
    for (auto & c : unit)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB")
        unit.resize(unit.size() - 2);
    else if (unit.size() >= 2 && unit.back() == 'B')
        unit.pop_back();
    // B (or none), K, M, G, T: 1024 to the power of its position
    std::size_t const power = std::string_view{"BKMGT"}.find(unit.empty() ? 'B' : unit[0]);
    if (unit.size() > 1 || power == std::string_view::npos)
        throw bad();
    double const bytes = std::ldexp(v, 10 * static_cast<int>(power));
    if (!std::isfinite(bytes) || bytes < 1 || bytes > 1.8e19)
        throw bad();
    return static_cast<std::uint64_t>(bytes);
}

memory_charge::memory_charge(std::uint64_t const bytes)
{
    std::uint64_t const limit = memory_limit();
    std::uint64_t const before = charged.fetch_add(bytes);
    if (bytes > limit || before > limit - bytes)
    {
        charged.fetch_sub(bytes);
        throw memory_limit_error{"a filter table of " + format_bytes(bytes) +
                                 " would bring the filters' memory to " +
                                 format_bytes(before + bytes) + ", over the limit of " +
                                 format_bytes(limit) + " (" + memory_limit_origin() + ")"};
    }
    bytes_ = bytes;
}

memory_charge::~memory_charge()
{
    if (bytes_ != 0)
        charged.fetch_sub(bytes_);
}

memory_charge & memory_charge::operator=(memory_charge && other) noexcept
{
    if (this != &other)
    {
        if (bytes_ != 0)
            charged.fetch_sub(bytes_);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

} // namespace ksieve
