#pragma once
/*! \file
 * \brief The memory budget of the filters: every filter table of the process is charged against one
 * limit (by default the machine's or the container's cgroup memory), so that a filter too large is
 * refused before it is allocated, not paged in until the machine runs out. Views are not charged.
 *
 * Thread safety: every function may be called from any thread.
 */
#include <ksieve/filters/support/error.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace ksieve
{

/*! \brief A table would bring the filters' memory over the limit. The message says how much was
 * asked, how much is in use and the limit; callers that know which option caused it rethrow with
 * its name. */
class memory_limit_error : public error
{
public:
    using error::error;
};

/*! \brief Set the limit of the whole process in bytes (--max-memory): filter tables may take bytes
 * less `kept` (reads in flight, buffers), at least a quarter of bytes. 0 restores the default
 * (physical_memory() less memory_reserve()). */
void set_memory_limit(std::uint64_t bytes, std::uint64_t kept = 0) noexcept;

/*! \brief Plan within the default limit (physical_memory()) as set_memory_limit() does within
 * --max-memory; memory_limit_is_explicit() stays false and messages name the cgroup or the
 * machine. No effect where the machine's memory is unknown. */
void plan_default_memory_limit(std::uint64_t kept) noexcept;

/*! \brief Keep `bytes` of the default limit (the machine's or the cgroup's memory) for what is not
 * a filter table: reads in flight, buffers, the program itself (default 64 MiB). A limit set by
 * set_memory_limit() is not reduced. */
void set_memory_reserve(std::uint64_t bytes) noexcept;

/*! \brief The bytes set_memory_reserve() keeps. */
[[nodiscard]] std::uint64_t memory_reserve() noexcept;

/*! \brief Whether the default limit is a cgroup's (container, batch job), not the machine's. */
[[nodiscard]] bool memory_limit_from_cgroup() noexcept;

/*! \brief The limit in bytes now in force: set_memory_limit()'s, or physical_memory() less
 * memory_reserve() (a quarter of it where the reserve is not smaller). */
[[nodiscard]] std::uint64_t memory_limit() noexcept;

/*! \brief The limit of the whole process in bytes: set_memory_limit()'s, or physical_memory() (0 if
 * unknown); memory_limit() is the part of it that filter tables may take. */
[[nodiscard]] std::uint64_t process_memory_limit() noexcept;

/*! \brief Whether set_memory_limit() set the limit (--max-memory). */
[[nodiscard]] bool memory_limit_is_explicit() noexcept;

/*! \brief Whether set_memory_limit() or plan_default_memory_limit() planned the limit in force:
 * batches and buffers are then sized from it, dedup's budget the same for any thread count. */
[[nodiscard]] bool memory_limit_is_planned() noexcept;

/*! \brief The machine's memory, or the cgroup's limit if smaller (the smallest of v2 memory.max,
 * memory.high, v1 memory.limit_in_bytes, memory.soft_limit_in_bytes, from this process's cgroup up
 * to the root); 0 if unknown. */
[[nodiscard]] std::uint64_t physical_memory() noexcept;

/*! \brief Where the limit in force comes from, for messages: "--max-memory", or "the memory limit
 * of this process's cgroup, 2.0 GiB, less 96 MiB kept for reads and buffers" (or the machine's
 * memory). */
[[nodiscard]] std::string memory_limit_origin();

/*! \brief Bytes charged now. */
[[nodiscard]] std::uint64_t charged_memory() noexcept;

/*! \brief "1.5 GiB", "800 MiB", "12 KiB" or "100 bytes", for messages. */
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

/*! \brief Parse a size such as `8G`, `512M`, `2.5GB`, `100k` or `4096` (binary units,
 * case-insensitive, optional trailing B or iB). \throws usage_error naming `option` for anything
 * else or zero. */
[[nodiscard]] std::uint64_t parse_size(std::string const & text, std::string const & option);

/*! \brief A charge of bytes against the budget for the lifetime of the object (move-only).
 * \throws memory_limit_error if the charge would exceed memory_limit(). */
class memory_charge
{
public:
    memory_charge() noexcept = default;
    explicit memory_charge(std::uint64_t bytes);
    ~memory_charge();
    memory_charge(memory_charge && other) noexcept : bytes_{std::exchange(other.bytes_, 0)} {}
    memory_charge & operator=(memory_charge && other) noexcept;
    memory_charge(memory_charge const &) = delete;
    memory_charge & operator=(memory_charge const &) = delete;
    [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }

private:
    std::uint64_t bytes_{0};
};

} // namespace ksieve
