#include "io_detail.hpp"

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <zlib.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

namespace ksieve::io::detail
{

bool is_gzip(std::string_view const bytes) noexcept
{
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
           static_cast<unsigned char>(bytes[1]) == 0x8b;
}

bool is_bgzf(std::string_view const bytes) noexcept
{
    // gzip, deflate, FEXTRA, XLEN 6 with the 'BC' subfield (SAM spec 4.1)
    return bytes.size() >= 18 && is_gzip(bytes) && bytes[2] == 8 && (bytes[3] & 4) != 0 && bytes[10] == 6 &&
           bytes[11] == 0 && bytes[12] == 'B' && bytes[13] == 'C';
}

std::string inflate_prefix(std::string_view const compressed, std::size_t const max_out)
{
    std::string out(max_out, '\0');
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK)
        return {};
    zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(compressed.data()));
    zs.avail_in = static_cast<uInt>(compressed.size());
    zs.next_out = reinterpret_cast<Bytef *>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    while (zs.avail_out > 0 && zs.avail_in > 0)
    {
        int const ret = inflate(&zs, Z_NO_FLUSH);
        if (ret == Z_STREAM_END)
        {
            if (zs.avail_in < 2 || zs.next_in[0] != 0x1f || zs.next_in[1] != 0x8b)
                break;
            inflateReset(&zs);
        }
        else if (ret != Z_OK)
            break;
    }
    out.resize(out.size() - zs.avail_out);
    inflateEnd(&zs);
    return out;
}

namespace
{

std::string errno_text(int const e)
{
    return std::strerror(e != 0 ? e : EIO);
}

class hfile_source final : public byte_source
{
public:
    explicit hfile_source(hFILE * const hf) : hf_{hf} {}
    ~hfile_source() override
    {
        if (hf_ != nullptr && hclose(hf_) != 0)
        {
            // nothing to report on close of an input
        }
    }
    hfile_source(hfile_source const &) = delete;
    hfile_source & operator=(hfile_source const &) = delete;

    std::size_t read(char * const dst, std::size_t const n) override
    {
        errno = 0;
        ssize_t const got = hread(hf_, dst, n);
        if (got < 0)
            throw source_error{"read failed: " + errno_text(errno)};
        return static_cast<std::size_t>(got);
    }

private:
    hFILE * hf_;
};

class bgzf_source final : public byte_source
{
public:
    bgzf_source(BGZF * const fp) : fp_{fp} {}
    ~bgzf_source() override { bgzf_close(fp_); }
    bgzf_source(bgzf_source const &) = delete;
    bgzf_source & operator=(bgzf_source const &) = delete;

    std::size_t read(char * const dst, std::size_t const n) override
    {
        ssize_t const got = bgzf_read(fp_, dst, n);
        // with threads, a block cut short ends the data early and only sets errcode
        if (got < 0 || (got == 0 && fp_->errcode != 0))
            throw source_error{"corrupted or truncated BGZF data"};
        return static_cast<std::size_t>(got);
    }

private:
    BGZF * fp_;
};

// zlib inflate on a worker thread that fills a ring of output chunks; the consumer copies out of them.
class gzip_source final : public byte_source
{
public:
    explicit gzip_source(std::unique_ptr<byte_source> inner) : inner_{std::move(inner)}
    {
        for (std::size_t i = 0; i < chunk_count; ++i)
        {
            chunks_[i].data.resize(chunk_bytes);
            free_.push_back(i);
        }
        worker_ = std::thread{[this] { run(); }};
    }

    ~gzip_source() override
    {
        stop_requested_.store(true, std::memory_order_relaxed);
        {
            std::lock_guard lock{mutex_};
            stop_ = true;
        }
        cv_.notify_all();
        worker_.join();
    }
    gzip_source(gzip_source const &) = delete;
    gzip_source & operator=(gzip_source const &) = delete;

    std::size_t read(char * const dst, std::size_t const n) override
    {
        for (;;)
        {
            if (current_ != none)
            {
                chunk & c = chunks_[current_];
                if (pos_ < c.size)
                {
                    std::size_t const k = std::min(n, c.size - pos_);
                    std::memcpy(dst, c.data.data() + pos_, k);
                    pos_ += k;
                    return k;
                }
                if (c.last)
                {
                    if (!c.error.empty())
                        throw source_error{c.error};
                    return 0;
                }
                {
                    std::lock_guard lock{mutex_};
                    free_.push_back(current_);
                }
                cv_.notify_all();
                current_ = none;
            }
            std::unique_lock lock{mutex_};
            cv_.wait(lock, [&] { return !ready_.empty(); });
            current_ = ready_.front();
            ready_.pop_front();
            pos_ = 0;
        }
    }

private:
    static constexpr std::size_t chunk_count = 4;
    static constexpr std::size_t chunk_bytes = std::size_t{1} << 20;
    static constexpr std::size_t input_bytes = std::size_t{256} << 10;
    static constexpr std::size_t none = ~std::size_t{0};

    struct chunk
    {
        std::vector<char> data;
        std::size_t size{0};
        bool last{false};
        std::string error;
    };

    // false when stopped
    bool take_free(std::size_t & index)
    {
        std::unique_lock lock{mutex_};
        cv_.wait(lock, [&] { return stop_ || !free_.empty(); });
        if (stop_)
            return false;
        index = free_.front();
        free_.pop_front();
        return true;
    }

    void publish(std::size_t const index)
    {
        {
            std::lock_guard lock{mutex_};
            ready_.push_back(index);
        }
        cv_.notify_all();
    }

    void run()
    {
        z_stream zs{};
        std::vector<char> in(input_bytes);
        bool input_eof = false;
        bool in_member = false;
        bool first_member = true;
        std::string error;
        bool done = false;
        if (inflateInit2(&zs, 15 + 16) != Z_OK)
        {
            error = "cannot initialise zlib";
            done = true;
        }
        while (true)
        {
            std::size_t index = 0;
            if (!take_free(index))
                break;
            chunk & c = chunks_[index];
            c.size = 0;
            zs.next_out = reinterpret_cast<Bytef *>(c.data.data());
            zs.avail_out = static_cast<uInt>(c.data.size());
            while (!done && zs.avail_out > 0)
            {
                if (zs.avail_in == 0 && !input_eof)
                {
                    try
                    {
                        std::size_t const got = inner_->read(in.data(), in.size());
                        if (stop_requested_.load(std::memory_order_relaxed))
                        {
                            done = true;
                            break;
                        }
                        input_eof = got == 0;
                        zs.next_in = reinterpret_cast<Bytef *>(in.data());
                        zs.avail_in = static_cast<uInt>(got);
                    }
                    catch (source_error const & e)
                    {
                        error = e.what();
                        done = true;
                        break;
                    }
                }
                if (!in_member)
                {
                    // between members: skip zero padding; anything else must be the next member
                    while (zs.avail_in > 0 && *zs.next_in == 0)
                    {
                        ++zs.next_in;
                        --zs.avail_in;
                    }
                    if (zs.avail_in == 0)
                    {
                        done = input_eof; // clean end (or empty input)
                        continue;
                    }
                    in_member = true;
                    if (!first_member)
                        inflateReset(&zs);
                }
                if (zs.avail_in == 0 && input_eof)
                {
                    error = "unexpected end of gzip data (truncated file)";
                    done = true;
                    break;
                }
                int const ret = inflate(&zs, Z_NO_FLUSH);
                if (ret == Z_STREAM_END)
                {
                    in_member = false;
                    first_member = false;
                }
                else if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT)
                {
                    error = !first_member && zs.total_out == 0 && zs.total_in <= 10
                                ? std::string{"trailing garbage after gzip data"}
                                : std::string{"corrupted gzip data ("} +
                                      (zs.msg != nullptr ? zs.msg : "bad data") + ")";
                    done = true;
                }
                else if (ret == Z_MEM_ERROR)
                {
                    error = "out of memory while decompressing";
                    done = true;
                }
                // Z_OK, Z_BUF_ERROR: more input or output space needed
            }
            c.size = c.data.size() - zs.avail_out;
            c.last = done;
            c.error = error;
            publish(index);
            if (done)
                break;
        }
        inflateEnd(&zs);
    }

    std::unique_ptr<byte_source> inner_;
    std::array<chunk, chunk_count> chunks_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::size_t> free_, ready_;
    bool stop_{false};
    std::atomic<bool> stop_requested_{false}; // read without the lock between input reads
    std::size_t current_{none};
    std::size_t pos_{0};
    std::thread worker_;
};

} // namespace

std::unique_ptr<byte_source> make_hfile_source(hFILE * const hf)
{
    return std::make_unique<hfile_source>(hf);
}

std::unique_ptr<byte_source> make_bgzf_source(hFILE * const hf, unsigned const threads)
{
    BGZF * const fp = bgzf_hopen(hf, "r");
    if (fp == nullptr)
    {
        hclose_abruptly(hf);
        throw source_error{"cannot open BGZF stream"};
    }
    if (bgzf_mt(fp, static_cast<int>(std::max(1u, threads)), 256) != 0)
    {
        bgzf_close(fp);
        throw source_error{"cannot start BGZF decompression threads"};
    }
    return std::make_unique<bgzf_source>(fp);
}

std::unique_ptr<byte_source> make_gzip_source(std::unique_ptr<byte_source> inner)
{
    return std::make_unique<gzip_source>(std::move(inner));
}

} // namespace ksieve::io::detail
