// Byte sources of input: plain hFILE bytes, BGZF through htslib, and gzip inflated on a worker
// thread by zlib or ISA-L (every member checked).
#include "detail.hpp"
#include "gzip.hpp"

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>
#include <zlib.h>

#ifdef KSIEVE_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
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
    return bytes.size() >= 18 && is_gzip(bytes) && bytes[2] == 8 && (bytes[3] & 4) != 0 &&
           bytes[10] == 6 && bytes[11] == 0 && bytes[12] == 'B' && bytes[13] == 'C';
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

class hfile_source final : public byte_source
{
public:
    explicit hfile_source(hFILE * const hf) : hf_{hf} {}
    ~hfile_source() override
    {
        if (hf_ != nullptr && hclose(hf_) != 0)
            return; // nothing to report on close of an input
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
    bgzf_source(BGZF * const fp, bool const allow_missing_eof)
        : fp_{fp}, allow_missing_eof_{allow_missing_eof}
    {
    }
    ~bgzf_source() override { bgzf_close(fp_); }
    bgzf_source(bgzf_source const &) = delete;
    bgzf_source & operator=(bgzf_source const &) = delete;

    std::size_t read(char * const dst, std::size_t const n) override
    {
        ssize_t const got = bgzf_read(fp_, dst, n);
        // with threads, a block cut short ends the data early and only sets errcode
        if (got < 0 || (got == 0 && fp_->errcode != 0))
            throw source_error{"corrupted or truncated BGZF data"};
        // A BGZF file cut at a block boundary is a valid series of blocks: only its missing
        // end-of-file marker (an empty last block) shows the truncation, as `samtools quickcheck`
        // checks.
        if (got == 0 && n > 0 && !allow_missing_eof_ && fp_->no_eof_block != 0)
            throw source_error{missing_eof_message};
        return static_cast<std::size_t>(got);
    }

private:
    BGZF * fp_;
    bool allow_missing_eof_;
};

// Compressed bytes of a gzip worker: a buffer refilled from the inner source.
class gzip_input
{
public:
    gzip_input(byte_source & src, std::atomic<bool> const & stop)
        : src_{&src}, stop_{&stop}, buf_(input_bytes)
    {
        next = buf_.data();
    }

    // Move the unread bytes to the front and read more after them. false: stopped, or a read error
    // (in `error`); at the end of the input eof is set.
    bool more(std::string & error)
    {
        if (avail > 0 && next != buf_.data())
            std::memmove(buf_.data(), next, avail);
        next = buf_.data();
        try
        {
            std::size_t const got =
                src_->read(reinterpret_cast<char *>(buf_.data() + avail), buf_.size() - avail);
            if (stop_->load(std::memory_order_relaxed))
                return false;
            eof = got == 0;
            avail += got;
            return true;
        }
        catch (source_error const & e)
        {
            error = e.what();
            return false;
        }
    }

    unsigned char * next{nullptr};
    std::size_t avail{0};
    bool eof{false};

private:
    static constexpr std::size_t input_bytes = std::size_t{256} << 10;
    byte_source * src_;
    std::atomic<bool> const * stop_;
    std::vector<unsigned char> buf_;
};

inline constexpr char const * truncated_message = "unexpected end of gzip data (truncated file)";
inline constexpr char const * garbage_message = "trailing garbage after gzip data";

// A decoder turns the compressed input into output, one chunk at a time: fill(out, cap) writes up
// to cap bytes and returns how many; done() once the stream has ended, cleanly or with error()
// non-empty. This is the state both decoders keep.
class gzip_decoder
{
public:
    gzip_decoder(byte_source & src, std::atomic<bool> const & stop) : in_{src, stop} {}
    gzip_decoder(gzip_decoder const &) = delete;
    gzip_decoder & operator=(gzip_decoder const &) = delete;

    [[nodiscard]] bool done() const noexcept { return done_; }
    [[nodiscard]] std::string const & error() const noexcept { return error_; }

protected:
    gzip_input in_;
    bool in_member_{false};
    bool first_member_{true};
    bool done_{false};
    std::string error_;
};

class zlib_decoder final : public gzip_decoder
{
public:
    zlib_decoder(byte_source & src, std::atomic<bool> const & stop) : gzip_decoder{src, stop}
    {
        if (inflateInit2(&zs_, 15 + 16) != Z_OK)
        {
            error_ = "cannot initialise zlib";
            done_ = true;
        }
        else
            initialised_ = true;
    }
    ~zlib_decoder()
    {
        if (initialised_)
            inflateEnd(&zs_);
    }

    std::size_t fill(char * const out, std::size_t const cap)
    {
        zs_.next_out = reinterpret_cast<Bytef *>(out);
        zs_.avail_out = static_cast<uInt>(cap);
        while (!done_ && zs_.avail_out > 0)
        {
            if (zs_.avail_in == 0 && !in_.eof)
            {
                in_.avail = 0;
                if (!in_.more(error_))
                {
                    done_ = true;
                    break;
                }
                zs_.next_in = in_.next;
                zs_.avail_in = static_cast<uInt>(in_.avail);
            }
            if (!in_member_)
            {
                // between members: skip zero padding; anything else must be the next member
                while (zs_.avail_in > 0 && *zs_.next_in == 0)
                {
                    ++zs_.next_in;
                    --zs_.avail_in;
                }
                if (zs_.avail_in == 0)
                {
                    done_ = in_.eof; // clean end (or empty input)
                    continue;
                }
                in_member_ = true;
                if (!first_member_)
                    inflateReset(&zs_);
            }
            if (zs_.avail_in == 0 && in_.eof)
            {
                error_ = truncated_message;
                done_ = true;
                break;
            }
            int const ret = inflate(&zs_, Z_NO_FLUSH);
            if (ret == Z_STREAM_END)
            {
                in_member_ = false;
                first_member_ = false;
            }
            else if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT)
            {
                error_ = !first_member_ && zs_.total_out == 0 && zs_.total_in <= 10
                             ? std::string{garbage_message}
                             : std::string{"corrupted gzip data ("} +
                                   (zs_.msg != nullptr ? zs_.msg : "bad data") + ")";
                done_ = true;
            }
            else if (ret == Z_MEM_ERROR)
            {
                error_ = "out of memory while decompressing";
                done_ = true;
            }
            // Z_OK, Z_BUF_ERROR: more input or output space needed
        }
        return cap - zs_.avail_out;
    }

private:
    z_stream zs_{};
    bool initialised_{false};
};

#ifdef KSIEVE_HAVE_ISAL
// ISA-L igzip: isal_inflate with crc_flag ISAL_GZIP parses each member's header and checks its
// trailer (CRC32 and ISIZE); the member boundaries, the zero padding and the header bytes zlib
// checks before any output (magic, method, reserved flags) are handled here, so that both decoders
// report the same errors.
class isal_decoder final : public gzip_decoder
{
public:
    isal_decoder(byte_source & src, std::atomic<bool> const & stop)
        : gzip_decoder{src, stop}, st_{std::make_unique<inflate_state>()}
    {
        isal_inflate_init(st_.get());
        st_->crc_flag = ISAL_GZIP;
    }

    std::size_t fill(char * const out, std::size_t const cap)
    {
        inflate_state & st = *st_;
        st.next_out = reinterpret_cast<std::uint8_t *>(out);
        st.avail_out = static_cast<std::uint32_t>(cap);
        while (!done_ && st.avail_out > 0)
        {
            if (in_.avail == 0 && !in_.eof && !in_.more(error_))
            {
                done_ = true;
                break;
            }
            if (!in_member_)
            {
                while (in_.avail > 0 && *in_.next == 0)
                {
                    ++in_.next;
                    --in_.avail;
                }
                if (in_.avail == 0)
                {
                    done_ = in_.eof;
                    continue;
                }
                if (!start_member())
                    break;
            }
            st.next_in = in_.next;
            st.avail_in = static_cast<std::uint32_t>(in_.avail);
            std::uint32_t const out_before = st.avail_out;
            int const ret = isal_inflate(&st);
            std::size_t const used = in_.avail - st.avail_in;
            in_.next = st.next_in;
            in_.avail = st.avail_in;
            member_in_ += used;
            if (ret < 0)
            {
                fail(ret);
                break;
            }
            if (st.block_state == ISAL_BLOCK_FINISH)
            {
                in_member_ = false;
                first_member_ = false;
            }
            else if (used == 0 && st.avail_out == out_before)
            {
                // no progress: the member needs input that is not there
                if (in_.avail == 0 && in_.eof)
                    error_ = truncated_message;
                else if (in_.avail > 0)
                    error_ = "corrupted gzip data (decoder stalled)";
                done_ = !error_.empty();
            }
        }
        return cap - st.avail_out;
    }

private:
    // Check the start of a member as zlib does before its first output; false: done_ is set.
    bool start_member()
    {
        while (in_.avail < 4 && !in_.eof)
            if (!in_.more(error_))
            {
                done_ = true;
                return false;
            }
        unsigned char const * const p = in_.next;
        char const * bad = nullptr;
        if (in_.avail >= 2 && (p[0] != 0x1f || p[1] != 0x8b))
            bad = "incorrect header check";
        else if (in_.avail >= 3 && p[2] != 8)
            bad = "unknown compression method";
        else if (in_.avail >= 4 && (p[3] & 0xe0) != 0)
            bad = "unknown header flags set";
        if (bad != nullptr)
            error_ = first_member_ ? std::string{"corrupted gzip data ("} + bad + ")"
                                   : std::string{garbage_message};
        else if (in_.avail < 4)
            error_ = truncated_message;
        if (!error_.empty())
        {
            done_ = true;
            return false;
        }
        isal_inflate_reset(st_.get());
        st_->crc_flag = ISAL_GZIP;
        member_in_ = 0;
        in_member_ = true;
        return true;
    }

    void fail(int const ret)
    {
        struct code_text
        {
            int code;
            char const * text;
        };
        static constexpr std::array<code_text, 6> texts{
            {{ISAL_INVALID_BLOCK, "invalid block"},
             {ISAL_INVALID_SYMBOL, "invalid code"},
             {ISAL_INVALID_LOOKBACK, "invalid distance too far back"},
             {ISAL_INVALID_WRAPPER, "incorrect header check"},
             {ISAL_UNSUPPORTED_METHOD, "unknown compression method"},
             {ISAL_INCORRECT_CHECKSUM, "incorrect data check"}}};
        char const * what = "bad data";
        for (code_text const & t : texts)
            if (t.code == ret)
                what = t.text;
        error_ = !first_member_ && st_->total_out == 0 && member_in_ <= 10
                     ? std::string{garbage_message}
                     : std::string{"corrupted gzip data ("} + what + ")";
        done_ = true;
    }

    std::unique_ptr<inflate_state> st_;
    std::uint64_t member_in_{0}; // compressed bytes of the current member consumed so far
};
#endif

// A decoder on a worker thread that fills a ring of output chunks; the consumer copies out of them.
template <class Decoder> class gzip_source final : public byte_source
{
public:
    explicit gzip_source(std::unique_ptr<byte_source> inner)
        : inner_{std::move(inner)}, decoder_{*inner_, stop_requested_}
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
        return take(n, [dst](char const * const from, std::size_t const k)
                    { std::memcpy(dst, from, k); });
    }

    std::size_t append_to(std::string & s, std::size_t const n) override
    {
        return take(n, [&s](char const * const from, std::size_t const k) { s.append(from, k); });
    }

private:
    // Up to n bytes of the current chunk handed to put(from, k) (the next chunk waited for when it
    // is used up); their number, 0 at the end.
    template <typename Put> std::size_t take(std::size_t const n, Put && put)
    {
        for (;;)
        {
            if (current_ != none)
            {
                chunk & c = chunks_[current_];
                if (pos_ < c.size)
                {
                    std::size_t const k = std::min(n, c.size - pos_);
                    put(c.data.data() + pos_, k);
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

    static constexpr std::size_t chunk_count = 4;
    static constexpr std::size_t chunk_bytes = std::size_t{1} << 20;
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
        std::size_t index = 0;
        while (take_free(index))
        {
            chunk & c = chunks_[index];
            c.size = decoder_.done() ? 0 : decoder_.fill(c.data.data(), c.data.size());
            c.last = decoder_.done();
            if (c.last)
                c.error = decoder_.error();
            publish(index);
            if (c.last)
                break;
        }
    }

    std::unique_ptr<byte_source> inner_;
    std::atomic<bool> stop_requested_{false}; // read without the lock between input reads
    Decoder decoder_;
    std::array<chunk, chunk_count> chunks_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::size_t> free_, ready_;
    bool stop_{false};
    std::size_t current_{none};
    std::size_t pos_{0};
    std::thread worker_;
};

} // namespace

std::unique_ptr<byte_source> make_hfile_source(hFILE * const hf)
{
    return std::make_unique<hfile_source>(hf);
}

std::unique_ptr<byte_source> make_bgzf_source(hFILE * const hf, unsigned const threads,
                                              bool const allow_missing_eof)
{
    BGZF * const fp = bgzf_hopen(hf, "r");
    if (fp == nullptr)
    {
        hclose_abruptly(hf);
        throw source_error{"cannot open BGZF stream"};
    }
    htsThreadPool * const pool = hts_thread_pool(threads);
    if (pool == nullptr || bgzf_thread_pool(fp, pool->pool, pool->qsize) != 0)
    {
        bgzf_close(fp);
        throw source_error{"cannot start BGZF decompression threads"};
    }
    return std::make_unique<bgzf_source>(fp, allow_missing_eof);
}

bool have_isal() noexcept
{
#ifdef KSIEVE_HAVE_ISAL
    return true;
#else
    return false;
#endif
}

gzip_backend gzip_backend_from_env(char const * const value) noexcept
{
    bool const force_zlib = value != nullptr && *value != '\0' && std::string_view{value} != "0";
    return force_zlib || !have_isal() ? gzip_backend::zlib : gzip_backend::isal;
}

gzip_backend default_gzip_backend() noexcept
{
    static gzip_backend const backend = gzip_backend_from_env(std::getenv("KSIEVE_ZLIB"));
    return backend;
}

std::unique_ptr<byte_source> make_gzip_source(std::unique_ptr<byte_source> inner,
                                              gzip_backend const backend)
{
#ifdef KSIEVE_HAVE_ISAL
    if (backend == gzip_backend::isal)
        return std::make_unique<gzip_source<isal_decoder>>(std::move(inner));
#else
    (void)backend;
#endif
    return std::make_unique<gzip_source<zlib_decoder>>(std::move(inner));
}

} // namespace ksieve::io::detail
