#pragma once
// Internal: how filter files reach the disk (file_sink: every write checked, O_DIRECT staging,
// writeback started as the file grows), the names that its errors give the files it writes, and
// what the writers and the mapping of filter files share.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ksieve::detail
{

/*! \brief The first 8 bytes of every filter file. */
inline constexpr char file_magic[8] = {'K', 'S', 'I', 'E', 'V', 'E', 'f', 'l'};

/*! \brief Mapped filter files of at least this size are advised to use huge pages; written ones of
 * at least this size are flushed and dropped from the page cache at close (so that a reader maps
 * them in huge pages). */
inline constexpr std::uint64_t huge_mapping_bytes = std::uint64_t{32} << 20;

/*! \brief Appends the low `width` bytes of v to out, little-endian (the files' byte order). */
inline void put_little_endian(std::vector<unsigned char> & out, std::uint64_t const v,
                              unsigned const width)
{
    for (unsigned i = 0; i < width; ++i)
        out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

/*! \brief The little-endian unsigned integer of the `width` <= 8 bytes at p. */
[[nodiscard]] inline std::uint64_t load_little_endian(unsigned char const * const p,
                                                      unsigned const width) noexcept
{
    std::uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i)
        v |= std::uint64_t{p[i]} << (8 * i);
    return v;
}

/*! \brief strerror(errno). */
[[nodiscard]] std::string errno_text();

/*! \brief The name under which errors about writing `path` name it: the name given to
 * name_written_file() for it, else the path itself. Thread-safe. */
[[nodiscard]] std::string written_file_name(std::filesystem::path const & path);

/*! \brief The destination of a filter file: the path opened as it is ("-" is stdout), every write
 * checked. direct: a regular file is written past the page cache (O_DIRECT) through an aligned
 * staging buffer, where the file system allows it: a filter of gigabytes is not copied into
 * page-cache pages first (which cost more CPU time than the build's last seconds of work), and it
 * is dropped from the page cache at close anyway. Bytes of a last partial block, and any write the
 * file system refuses directly, go through the page cache. Errors name the file as
 * written_file_name() does. \throws io_error. Thread safety: one thread at a time. */
class file_sink
{
public:
    explicit file_sink(std::filesystem::path const & path, bool direct = false);
    ~file_sink();
    file_sink(file_sink const &) = delete;
    file_sink & operator=(file_sink const &) = delete;

    /*! \brief Overwrite bytes already written (a regular file's). \pre offset + size <= bytes
     * written. */
    void write_at(std::uint64_t offset, void const * data, std::uint64_t size);
    /*! \brief Append `size` bytes. */
    void write(void const * data, std::uint64_t size);
    /*! \brief Everything written and the file closed. A large filter file is flushed to the disk
     * and dropped from the page cache, whose pages written with write() are small: a later reader
     * maps it afresh in 2 MiB folios (huge pages, see mapped_filter_file::open), which makes its
     * lookups cheaper than the re-read costs. */
    void close();

private:
    static constexpr std::size_t stage_bytes = std::size_t{4} << 20;
    static constexpr std::size_t direct_align =
        4096; // covers the logical block size of common devices
    static constexpr std::uint64_t writeback_step = std::uint64_t{16} << 20;

    void start_direct() noexcept;
    void stage(unsigned char const * p, std::uint64_t size);
    void flush_stage(std::size_t bytes);
    void drop_direct_flag() noexcept;
    void end_direct();
    template <typename Put> void all(void const * data, std::uint64_t size, Put && put);

    std::string name_;
    int fd_{-1};
    bool own_{false};
    bool regular_{false};
    bool direct_{true};              // O_DIRECT still set while stage_ is
    unsigned char * stage_{nullptr}; // the staging buffer of direct writes (nullptr: plain writes)
    std::size_t staged_{0};          // bytes in it
    std::uint64_t written_{0};
    std::uint64_t writeback_{0}; // bytes whose disk write has been started
};

} // namespace ksieve::detail
