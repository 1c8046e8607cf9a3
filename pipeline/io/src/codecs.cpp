// zstd, xz and bzip2 input (decoders as byte sources), compression suffixes of output names, and
// the parallel block compressor of compressed outputs (BGZF, zstd, xz, bzip2).
#include "codecs.hpp"

#include <ksieve/io/io.hpp>

#include <ksieve/filters/support/error.hpp>

#include <bzlib.h>
#include <libdeflate.h>
#include <lzma.h>
#include <zstd.h>

#include <omp.h>

#ifdef KSIEVE_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <utility>

namespace ksieve::io
{

bool names_compression(std::string_view const path) noexcept
{
    return detail::codec_from_extension(path) != detail::codec::none ||
           !detail::unwritable_extension(path).empty();
}

void check_writable_compression(std::string const & path)
{
    if (std::string_view const e = detail::unwritable_extension(path); !e.empty() && path != "-")
        throw io_error{"'" + path + "': cannot write " + std::string{e} +
                       " compression (outputs can be plain, .gz, .zst, .xz or .bz2)"};
}

} // namespace ksieve::io

namespace ksieve::io::detail
{

std::string lower_case(std::string_view const s)
{
    std::string out(s);
    for (auto & c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

codec codec_from_extension(std::string_view const path) noexcept
{
    static constexpr std::pair<std::string_view, codec> suffixes[] = {
        {".gz", codec::gzip},   {".bgz", codec::gzip}, {".zst", codec::zstd},
        {".zstd", codec::zstd}, {".xz", codec::xz},    {".bz2", codec::bzip2}};
    std::string const name = lower_case(path);
    for (auto const & [suffix, c] : suffixes)
        if (std::string_view{name}.ends_with(suffix))
            return c;
    return codec::none;
}

std::string_view unwritable_extension(std::string_view const path) noexcept
{
    static constexpr std::array<std::string_view, 9> others{".lz4", ".lzma", ".z",  ".zip", ".br",
                                                            ".lz",  ".sz",   ".7z", ".lzo"};
    std::string const name = lower_case(path);
    for (std::string_view const e : others)
        if (std::string_view{name}.ends_with(e))
            return e;
    return {};
}

codec codec_from_magic(std::string_view const head) noexcept
{
    if (head.starts_with("\x28\xB5\x2F\xFD"))
        return codec::zstd;
    if (head.starts_with(std::string_view{"\xFD\x37zXZ\0", 6}))
        return codec::xz;
    if (head.size() >= 4 && head.starts_with("BZh") && head[3] >= '1' && head[3] <= '9')
        return codec::bzip2;
    return codec::none;
}

char const * codec_name(codec const c) noexcept
{
    static constexpr std::array<char const *, 5> names{"plain", "gzip", "zstd", "xz", "bzip2"};
    return names[static_cast<std::size_t>(c)];
}

int codec_level(codec const c, int const level) noexcept
{
    if (level >= 0)
        return c == codec::bzip2 ? std::clamp(level, 1, 9) : level;
    static constexpr std::array<int, 5> defaults{0, 1, 3, 3, 9}; // none, gzip, zstd, xz, bzip2
    return defaults[static_cast<std::size_t>(c)];
}

// -------------------------------------------------------------------------------------------------
// Decoders

namespace
{

// One decoder step: consume from [in, in + in_n), produce into [out, out + out_n); `ended` is set
// when a frame / stream ends exactly at the consumed position. \throws source_error on corrupt data
class decoder
{
public:
    virtual ~decoder() = default;
    virtual void step(char const * in, std::size_t in_n, std::size_t & used, char * out,
                      std::size_t out_n, std::size_t & made, bool & ended) = 0;
};

class zstd_decoder final : public decoder
{
public:
    zstd_decoder() : ds_{ZSTD_createDStream()} {}
    ~zstd_decoder() override { ZSTD_freeDStream(ds_); }
    void step(char const * in, std::size_t in_n, std::size_t & used, char * out, std::size_t out_n,
              std::size_t & made, bool & ended) override
    {
        ZSTD_inBuffer ib{in, in_n, 0};
        ZSTD_outBuffer ob{out, out_n, 0};
        std::size_t const ret = ZSTD_decompressStream(ds_, &ob, &ib);
        if (ZSTD_isError(ret))
            throw source_error{std::string{"corrupt zstd data ("} + ZSTD_getErrorName(ret) + ")"};
        used = ib.pos;
        made = ob.pos;
        ended = ret == 0;
    }

private:
    ZSTD_DStream * ds_;
};

class xz_decoder final : public decoder
{
public:
    xz_decoder()
    {
        if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
            throw source_error{"cannot start the xz decoder"};
    }
    ~xz_decoder() override { lzma_end(&s_); }
    void step(char const * in, std::size_t in_n, std::size_t & used, char * out, std::size_t out_n,
              std::size_t & made, bool & ended) override
    {
        s_.next_in = reinterpret_cast<std::uint8_t const *>(in);
        s_.avail_in = in_n;
        s_.next_out = reinterpret_cast<std::uint8_t *>(out);
        s_.avail_out = out_n;
        // LZMA_CONCATENATED: the end of the input (in_n == 0) is told by LZMA_FINISH
        lzma_ret const ret = lzma_code(&s_, in_n == 0 ? LZMA_FINISH : LZMA_RUN);
        used = in_n - s_.avail_in;
        made = out_n - s_.avail_out;
        ended = ret == LZMA_STREAM_END;
        if (ret != LZMA_OK && ret != LZMA_STREAM_END && !(ret == LZMA_BUF_ERROR && in_n != 0))
            throw source_error{ret == LZMA_BUF_ERROR
                                   ? "truncated xz data"
                                   : "corrupt xz data (error " + std::to_string(ret) + ")"};
    }

private:
    lzma_stream s_ = LZMA_STREAM_INIT;
};

class bzip2_decoder final : public decoder
{
public:
    bzip2_decoder() { init(); }
    ~bzip2_decoder() override { BZ2_bzDecompressEnd(&s_); }
    void step(char const * in, std::size_t in_n, std::size_t & used, char * out, std::size_t out_n,
              std::size_t & made, bool & ended) override
    {
        if (finished_) // a further stream of a concatenation
        {
            BZ2_bzDecompressEnd(&s_);
            init();
        }
        s_.next_in = const_cast<char *>(in);
        s_.avail_in = static_cast<unsigned>(std::min<std::size_t>(in_n, 1u << 30));
        s_.next_out = out;
        s_.avail_out = static_cast<unsigned>(std::min<std::size_t>(out_n, 1u << 30));
        unsigned const in0 = s_.avail_in, out0 = s_.avail_out;
        int const ret = BZ2_bzDecompress(&s_);
        used = in0 - s_.avail_in;
        made = out0 - s_.avail_out;
        if (ret != BZ_OK && ret != BZ_STREAM_END)
            throw source_error{"corrupt bzip2 data (error " + std::to_string(ret) + ")"};
        finished_ = ended = ret == BZ_STREAM_END;
    }

private:
    void init()
    {
        s_ = bz_stream{};
        finished_ = false;
        if (BZ2_bzDecompressInit(&s_, 0, 0) != BZ_OK)
            throw source_error{"cannot start the bzip2 decoder"};
    }
    bz_stream s_{};
    bool finished_{false};
};

std::unique_ptr<decoder> make_decoder(codec const c)
{
    switch (c)
    {
    case codec::zstd:
        return std::make_unique<zstd_decoder>();
    case codec::xz:
        return std::make_unique<xz_decoder>();
    case codec::bzip2:
        return std::make_unique<bzip2_decoder>();
    default:
        break;
    }
    throw source_error{"internal: no decoder for this codec"};
}

class codec_source final : public byte_source
{
public:
    codec_source(codec const c, std::unique_ptr<byte_source> inner)
        : codec_{c}, inner_{std::move(inner)}, dec_{make_decoder(c)}, buf_(std::size_t{256} << 10)
    {
    }

    std::size_t read(char * const dst, std::size_t const n) override
    {
        while (!done_)
        {
            if (pos_ == len_ && !input_ended_)
            {
                len_ = inner_->read(buf_.data(), buf_.size());
                pos_ = 0;
                input_ended_ = len_ == 0;
            }
            std::size_t used = 0, made = 0;
            bool ended = false;
            dec_->step(buf_.data() + pos_, len_ - pos_, used, dst, n, made, ended);
            pos_ += used;
            if (ended)
                in_frame_ = false;
            else if (used > 0 || made > 0)
                in_frame_ = true;
            if (made > 0)
                return made;
            if (input_ended_ && pos_ == len_)
            {
                done_ = true;
                // xz reports the end of its last stream only when told that the input ended
                if (codec_ == codec::xz ? !ended : in_frame_)
                    throw source_error{std::string{"truncated "} + codec_name(codec_) + " data"};
            }
            else if (used == 0 && pos_ < len_)
                throw source_error{std::string{"corrupt "} + codec_name(codec_) + " data"};
        }
        return 0;
    }

private:
    codec codec_;
    std::unique_ptr<byte_source> inner_;
    std::unique_ptr<decoder> dec_;
    std::vector<char> buf_;
    std::size_t pos_{0}, len_{0};
    bool input_ended_{false}, done_{false}, in_frame_{false};
};

// The bytes of a string as a source (for decompress_prefix).
class string_source final : public byte_source
{
public:
    explicit string_source(std::string_view const s) : s_{s} {}
    std::size_t read(char * const dst, std::size_t const n) override
    {
        std::size_t const k = std::min(n, s_.size());
        std::memcpy(dst, s_.data(), k);
        s_.remove_prefix(k);
        return k;
    }

private:
    std::string_view s_;
};

} // namespace

std::unique_ptr<byte_source> make_codec_source(codec const c, std::unique_ptr<byte_source> inner)
{
    return std::make_unique<codec_source>(c, std::move(inner));
}

std::string decompress_prefix(codec const c, std::string_view const compressed,
                              std::size_t const max_out)
{
    std::string out(max_out, '\0');
    std::size_t got = 0;
    try
    {
        codec_source src{c, std::make_unique<string_source>(compressed)};
        while (got < max_out)
        {
            std::size_t const k = src.read(out.data() + got, max_out - got);
            if (k == 0)
                break;
            got += k;
        }
    }
    catch (source_error const &) // a prefix ends mid-frame: what was decoded is enough
    {
    }
    out.resize(got);
    return out;
}

// -------------------------------------------------------------------------------------------------
// Parallel block compressor

namespace
{

// The empty BGZF block that ends a BGZF file (SAM specification 4.1.2).
constexpr std::array<unsigned char, 28> bgzf_eof{0x1f, 0x8b, 0x08, 0x04, 0,    0, 0,    0, 0, 0xff,
                                                 0x06, 0,    0x42, 0x43, 0x02, 0, 0x1b, 0, 3, 0,
                                                 0,    0,    0,    0,    0,    0, 0,    0};
// as htslib: a block of this much always fits in 64 KiB
constexpr std::size_t bgzf_input_bytes = 0xff00;

[[noreturn]] void compression_failed(codec const c)
{
    throw io_error{std::string{codec_name(c)} + " compression failed"};
}

void put_le(std::string & out, std::size_t const at, std::uint32_t v, int const bytes)
{
    for (int i = 0; i < bytes; ++i, v >>= 8)
        out[at + static_cast<std::size_t>(i)] = static_cast<char>(v & 0xff);
}

} // namespace

struct block_compressor::contexts
{
    std::vector<libdeflate_compressor *> deflate;
    std::vector<ZSTD_CCtx *> zstd;
#ifdef KSIEVE_HAVE_ISAL
    std::unique_ptr<isal_hufftables> codes; // gzip level 1: the Huffman codes of the current piece
    bool fitted{false}; // codes hold codes fitted to the piece (else igzip's defaults)
#endif
};

std::uint32_t block_compressor::crc32_of(std::string_view const in) const noexcept
{
#ifdef KSIEVE_HAVE_ISAL
    return crc32_gzip_refl(0, reinterpret_cast<unsigned char const *>(in.data()), in.size());
#else
    return libdeflate_crc32(0, in.data(), in.size());
#endif
}

// gzip level 1 (the default) goes through ISA-L's igzip at its level 0 (one hash probe, no lazy
// matching) with Huffman codes fitted to the first 512 KiB of each piece given to compress(): about
// 410 MB/s a thread on FASTQ, files about 1% larger than igzip's level 2 and 3% than libdeflate's
// level 1 (240 MB/s). The other levels go through libdeflate. igzip's levels 1-3 are not used:
// their output is not a function of the input alone (on a 2-core x86-64-v4 machine, in about one
// process in a hundred, a block deflated on another thread than the first came out a byte apart),
// while its level 0 and libdeflate gave the same bytes on every thread in the same test.
bool block_compressor::use_isal() const noexcept
{
#ifdef KSIEVE_HAVE_ISAL
    return codec_ == codec::gzip && level_ == 1;
#else
    return false;
#endif
}

void block_compressor::fit_codes(std::string_view const piece) noexcept
{
#ifdef KSIEVE_HAVE_ISAL
    constexpr std::size_t sample_bytes = std::size_t{512} << 10;
    if (!ctx_->codes)
        ctx_->codes = std::make_unique<isal_hufftables>();
    isal_huff_histogram histogram{};
    isal_update_histogram(reinterpret_cast<std::uint8_t *>(const_cast<char *>(piece.data())),
                          static_cast<int>(std::min(piece.size(), sample_bytes)), &histogram);
    ctx_->fitted = isal_create_hufftables(ctx_->codes.get(), &histogram) == 0;
#else
    (void)piece;
#endif
}

std::size_t block_compressor::deflate_block(std::size_t const t, std::string_view const in,
                                            char * const out, std::size_t const cap)
{
#ifdef KSIEVE_HAVE_ISAL
    if (use_isal())
    {
        isal_zstream z{};
        isal_deflate_stateless_init(&z);
        z.level = 0;
        if (ctx_->fitted)
            z.hufftables = ctx_->codes.get();
        z.gzip_flag = IGZIP_DEFLATE;
        z.end_of_stream = 1;
        z.flush = NO_FLUSH;
        z.next_in = reinterpret_cast<std::uint8_t *>(const_cast<char *>(in.data()));
        z.avail_in = static_cast<std::uint32_t>(in.size());
        z.next_out = reinterpret_cast<std::uint8_t *>(out);
        z.avail_out = static_cast<std::uint32_t>(cap);
        if (isal_deflate_stateless(&z) != COMP_OK)
            return 0;
        return z.total_out;
    }
#endif
    return libdeflate_deflate_compress(ctx_->deflate[t], in.data(), in.size(), out, cap);
}

block_compressor::block_compressor(codec const c, int const level, unsigned const threads)
    : codec_{c}, level_{level}, threads_{std::max(1u, threads)}, ctx_{std::make_unique<contexts>()}
{
    for (unsigned t = 0; t < threads_; ++t)
    {
        if (c == codec::gzip && !use_isal())
        {
            ctx_->deflate.push_back(libdeflate_alloc_compressor(std::clamp(level, 0, 12)));
            if (ctx_->deflate.back() == nullptr)
                throw io_error{"cannot start gzip compression at level " + std::to_string(level)};
        }
        else if (c == codec::zstd)
        {
            ctx_->zstd.push_back(ZSTD_createCCtx());
            if (ctx_->zstd.back() == nullptr)
                throw io_error{"cannot start zstd compression"};
        }
    }
}

block_compressor::~block_compressor()
{
    for (auto * const d : ctx_->deflate)
        libdeflate_free_compressor(d);
    for (auto * const z : ctx_->zstd)
        ZSTD_freeCCtx(z);
}

std::size_t block_compressor::member_bytes() const noexcept
{
    // none, gzip, zstd, xz, bzip2
    static constexpr std::array<std::size_t, 5> bytes{
        std::size_t{1} << 20, bgzf_input_bytes, std::size_t{1} << 20, std::size_t{1} << 20, 900000};
    return bytes[static_cast<std::size_t>(codec_)];
}

std::string_view block_compressor::trailer() const noexcept
{
    if (codec_ != codec::gzip)
        return {};
    return {reinterpret_cast<char const *>(bgzf_eof.data()), bgzf_eof.size()};
}

bool block_compressor::compress_member(std::size_t const t, std::string_view const in,
                                       std::string & o)
{
    switch (codec_)
    {
    case codec::gzip:
    {
        o.resize(18 + in.size() + 1024 + 8);
        std::size_t const c = deflate_block(t, in, o.data() + 18, o.size() - 26);
        static constexpr unsigned char head[] = {0x1f, 0x8b, 0x08, 0x04, 0,    0,    0,    0,
                                                 0,    0xff, 0x06, 0,    0x42, 0x43, 0x02, 0};
        std::memcpy(o.data(), head, sizeof head);
        put_le(o, 16, static_cast<std::uint32_t>(18 + c + 8 - 1), 2);
        put_le(o, 18 + c, crc32_of(in), 4);
        put_le(o, 22 + c, static_cast<std::uint32_t>(in.size()), 4);
        o.resize(26 + c);
        return c != 0;
    }
    case codec::zstd:
    {
        if (ctx_->zstd[t] == nullptr)
            return false;
        o.resize(ZSTD_compressBound(in.size()));
        std::size_t const c =
            ZSTD_compressCCtx(ctx_->zstd[t], o.data(), o.size(), in.data(), in.size(), level_);
        o.resize(ZSTD_isError(c) ? 0 : c);
        return !ZSTD_isError(c);
    }
    case codec::xz:
    {
        o.resize(lzma_stream_buffer_bound(in.size()));
        std::size_t pos = 0;
        lzma_ret const r = lzma_easy_buffer_encode(
            static_cast<std::uint32_t>(std::clamp(level_, 0, 9)), LZMA_CHECK_CRC64, nullptr,
            reinterpret_cast<std::uint8_t const *>(in.data()), in.size(),
            reinterpret_cast<std::uint8_t *>(o.data()), &pos, o.size());
        o.resize(pos);
        return r == LZMA_OK;
    }
    case codec::bzip2:
    {
        o.resize(in.size() + in.size() / 100 + 601);
        unsigned len = static_cast<unsigned>(o.size());
        int const r = BZ2_bzBuffToBuffCompress(o.data(), &len, const_cast<char *>(in.data()),
                                               static_cast<unsigned>(in.size()), level_, 0, 0);
        o.resize(len);
        return r == BZ_OK;
    }
    case codec::none:
        o.assign(in);
        return true;
    }
    return false;
}

void block_compressor::compress(std::string_view const data, std::string & out)
{
    std::size_t const member = member_bytes();
    std::size_t const n = (data.size() + member - 1) / member;
    if (use_isal())
        fit_codes(data);
    if (threads_ == 1) // member by member through one piece of scratch: the same bytes
    {
        for (std::size_t i = 0; i < n; ++i)
            append_member(data.substr(i * member, member), out);
        return;
    }
    if (parts_.size() < n)
        parts_.resize(n);
    std::vector<char> failed(n, 0);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
    for (std::size_t i = 0; i < n; ++i)
        failed[i] = !compress_member(static_cast<std::size_t>(omp_get_thread_num()),
                                     data.substr(i * member, member), parts_[i]);
    for (std::size_t i = 0; i < n; ++i)
    {
        if (failed[i])
            compression_failed(codec_);
        out.append(parts_[i]);
    }
}

void block_compressor::release_memory() noexcept
{
    std::vector<std::string>{}.swap(parts_);
    for (auto *& z : ctx_->zstd)
    {
        ZSTD_freeCCtx(z);
        z = ZSTD_createCCtx(); // (small until it compresses; null: compress() fails and says so)
    }
}

void block_compressor::compress_empty(std::string & out)
{
    if (codec_ != codec::gzip && codec_ != codec::none) // gzip: the trailer is an empty member
        append_member(std::string_view{"", 0}, out);    // a pointer, not null: bzip2 refuses null
}

void block_compressor::append_member(std::string_view const in, std::string & out)
{
    if (parts_.empty())
        parts_.resize(1);
    if (!compress_member(0, in, parts_[0]))
        compression_failed(codec_);
    out.append(parts_[0]);
}

} // namespace ksieve::io::detail
