// The cuckoo filter: buckets of fingerprints, construction and view, insert with kick-out, remove,
// count, batches, merge and stats.
#include <ksieve/filters/cuckoo/cuckoo.hpp>
#include <ksieve/filters/support/error.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

namespace ksieve
{

namespace
{

constexpr std::uint64_t params_version = 1;
constexpr std::size_t params_size = 10;
constexpr std::uint64_t rng_seed = 0x2545F4914F6CDD1DULL;
constexpr unsigned max_kicks_limit = 1u << 20;
constexpr std::size_t batch_block = 16;

std::string fmt_double(double const x)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
}

} // namespace

unsigned cuckoo_filter::fingerprint_bits_for(double const eps)
{
    if (!(eps >= 0.0) || eps >= 0.5)
        throw usage_error{"--fpr " + fmt_double(eps) + " is out of range (valid: 0 <= EPS < 0.5)"};
    if (eps == 0.0)
        throw usage_error{
            "--fpr 0 asks for an exact filter, which a cuckoo filter cannot be: exact mode needs "
            "--type qf"};
    if (eps < min_fpr)
        throw usage_error{"--fpr " + fmt_double(eps) +
                          " is below what a cuckoo filter can honour with 16-bit fingerprints (" +
                          fmt_double(min_fpr) + "): use a larger --fpr or --type qf"};
    for (unsigned f = min_fingerprint_bits; f < max_fingerprint_bits; ++f)
        if (std::ldexp(eps, static_cast<int>(f)) >= 2.0 * bucket_size)
            return f;
    return max_fingerprint_bits;
}

unsigned cuckoo_filter::bucket_bits_for(std::uint64_t const expected)
{
    if (expected == 0)
        throw usage_error{
            "a cuckoo filter cannot grow: give the expected number of distinct k-mers with "
            "--expected N"};
    // buckets >= expected / (4 * 0.95) = 5 * expected / 19, at least 2
    unsigned const bits =
        expected > (std::uint64_t{1} << 40)
            ? max_bucket_bits + 1
            : std::max(1u, static_cast<unsigned>(std::bit_width((5 * expected + 18) / 19 - 1)));
    if (bits > max_bucket_bits)
        throw usage_error{"--expected " + std::to_string(expected) +
                          " is too large for one cuckoo filter shard: use more --shards"};
    return bits;
}

std::uint64_t cuckoo_filter::words_for(unsigned const fp_bits, unsigned const bucket_bits) noexcept
{
    std::uint64_t const bits = (std::uint64_t{bucket_size} * fp_bits) << bucket_bits;
    return (bits + 63) / 64 + 1; // + 1: every bucket can be read with one unaligned 8-byte load
}

void cuckoo_filter::init_geometry(unsigned const fp_bits, unsigned const bucket_bits,
                                  unsigned const key_bits, unsigned const max_kicks) noexcept
{
    fp_bits_ = fp_bits;
    bucket_bits_ = bucket_bits;
    key_bits_ = key_bits;
    max_kicks_ = max_kicks;
    index_mask_ = (std::uint64_t{1} << bucket_bits) - 1;
    fp_mask_ = (std::uint64_t{1} << fp_bits) - 1;
    bucket_mask_ = 4 * fp_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (4 * fp_bits)) - 1;
    lanes_lo_ = 0;
    for (unsigned s = 0; s < bucket_size; ++s)
        lanes_lo_ |= std::uint64_t{1} << (s * fp_bits);
    lanes_hi_ = lanes_lo_ << (fp_bits - 1);
}

cuckoo_filter cuckoo_filter::with_geometry(unsigned const fp_bits, unsigned const bucket_bits,
                                           unsigned const key_bits)
{
    if (fp_bits < min_fingerprint_bits || fp_bits > max_fingerprint_bits ||
        bucket_bits > max_bucket_bits || key_bits < 1 || key_bits > 64)
        throw usage_error{"invalid cuckoo filter geometry: fingerprint bits " +
                          std::to_string(fp_bits) + ", bucket bits " + std::to_string(bucket_bits) +
                          ", max kicks " + std::to_string(default_max_kicks)};
    cuckoo_filter f;
    f.init_geometry(fp_bits, bucket_bits, key_bits, default_max_kicks);
    f.charge_ = memory_charge{8 * words_for(fp_bits, bucket_bits)};
    f.owned_.assign(words_for(fp_bits, bucket_bits), 0);
    f.data_ = f.owned_;
    f.mut_ = f.owned_.data();
    f.rng_ = rng_seed;
    return f;
}

cuckoo_filter cuckoo_filter::create(filter_config const & cfg, unsigned const key_bits,
                                    std::uint64_t const expected)
{
    unsigned const f = fingerprint_bits_for(cfg.fpr);
    unsigned const b = bucket_bits_for(expected);
    return with_geometry(f, b, key_bits);
}

cuckoo_filter cuckoo_filter::view(std::span<std::uint64_t const> const params,
                                  std::span<std::uint64_t const> const words,
                                  unsigned const key_bits)
{
    auto bad = [](std::string const & what) { return format_error{"cuckoo filter: " + what}; };
    if (params.size() != params_size)
        throw bad(std::to_string(params.size()) + " parameters, expected " +
                  std::to_string(params_size));
    if (params[0] != params_version)
        throw bad("unknown parameter layout " + std::to_string(params[0]));
    std::uint64_t const f = params[1], bb = params[2], kicks = params[3], entries = params[4];
    std::uint64_t const vused = params[5], vfp = params[6], vidx = params[7], rng = params[8],
                        kb = params[9];
    if (f < min_fingerprint_bits || f > max_fingerprint_bits)
        throw bad("fingerprint bits " + std::to_string(f) + " out of range");
    if (bb > max_bucket_bits)
        throw bad("bucket bits " + std::to_string(bb) + " out of range");
    if (kicks < 1 || kicks > max_kicks_limit)
        throw bad("max kicks " + std::to_string(kicks) + " out of range");
    if (kb != key_bits)
        throw bad("key bits " + std::to_string(kb) + " disagree with the file header (" +
                  std::to_string(key_bits) + ")");
    std::uint64_t const nwords = words_for(static_cast<unsigned>(f), static_cast<unsigned>(bb));
    if (words.size() != nwords)
        throw bad(std::to_string(words.size()) + " payload words, expected " +
                  std::to_string(nwords));
    std::uint64_t const buckets = std::uint64_t{1} << bb;
    if (entries > bucket_size * buckets + 1)
        throw bad("more entries than slots");
    if (vused > 1 ||
        (vused == 1 && (vfp == 0 || vfp >= (std::uint64_t{1} << f) || vidx >= buckets)) ||
        (vused == 0 && (vfp != 0 || vidx != 0)) || (vused == 1 && entries == 0))
        throw bad("inconsistent victim slot");
    if (rng == 0)
        throw bad("zero random state");
    // Bits after the last bucket are zero.
    std::uint64_t const used_bits = (bucket_size * f) << bb;
    std::uint64_t const w = used_bits / 64;
    if ((used_bits % 64 != 0 && (words[w] >> (used_bits % 64)) != 0) ||
        (used_bits % 64 == 0 && words[w] != 0))
        throw bad("non-zero bits after the last bucket");
    for (std::uint64_t i = w + 1; i < nwords; ++i)
        if (words[i] != 0)
            throw bad("non-zero bits after the last bucket");

    cuckoo_filter c;
    c.init_geometry(static_cast<unsigned>(f), static_cast<unsigned>(bb), key_bits,
                    static_cast<unsigned>(kicks));
    c.data_ = words;
    c.mut_ = nullptr;
    c.entries_ = entries;
    c.victim_used_ = vused == 1;
    c.victim_fp_ = vfp;
    c.victim_index_ = vidx;
    c.rng_ = rng;
    return c;
}

cuckoo_filter cuckoo_filter::clone() const
{
    cuckoo_filter c;
    c.init_geometry(fp_bits_, bucket_bits_, key_bits_, max_kicks_);
    c.charge_ = memory_charge{8 * data_.size()};
    c.owned_.assign(data_.begin(), data_.end());
    c.data_ = c.owned_;
    c.mut_ = c.owned_.data();
    c.entries_ = entries_;
    c.victim_used_ = victim_used_;
    c.victim_fp_ = victim_fp_;
    c.victim_index_ = victim_index_;
    c.rng_ = rng_;
    return c;
}

std::vector<std::uint64_t> cuckoo_filter::params() const
{
    return {params_version,         fp_bits_,   bucket_bits_,  max_kicks_, entries_,
            victim_used_ ? 1u : 0u, victim_fp_, victim_index_, rng_,       key_bits_};
}

filter_stats cuckoo_filter::stats() const noexcept
{
    filter_stats s{};
    s.bytes = data_.size_bytes();
    s.slots = capacity();
    s.used = entries_;
    s.distinct = entries_;
    s.total_count = entries_;
    s.load = static_cast<double>(entries_) / static_cast<double>(s.slots);
    // A lookup compares with the entries of two buckets (2b slots), each a false match with 1/(2^f
    // - 1).
    s.estimated_fpr =
        1.0 - std::pow(1.0 - 1.0 / static_cast<double>(fp_mask_), 2.0 * bucket_size * s.load);
    return s;
}

// ---- hot path
// -------------------------------------------------------------------------------------------

inline cuckoo_filter::hashed cuckoo_filter::hash(std::uint64_t const key) const noexcept
{
    std::uint64_t const h = mix64(key);
    // fingerprint uniform in [1, 2^f - 1] from the high half; bucket from the low half (bucket_bits
    // <= 32)
    return {h & index_mask_, (((h >> 32) * fp_mask_) >> 32) + 1};
}

inline std::uint64_t cuckoo_filter::alt_index(std::uint64_t const i,
                                              std::uint64_t const fp) const noexcept
{
    return (i ^ mix64(fp)) & index_mask_;
}

inline std::uint64_t cuckoo_filter::load_bucket(std::uint64_t const i) const noexcept
{
    std::uint64_t const bit = i * (bucket_size * fp_bits_);
    std::uint64_t raw;
    std::memcpy(&raw, reinterpret_cast<unsigned char const *>(data_.data()) + (bit >> 3), 8);
    return (raw >> (bit & 7)) & bucket_mask_;
}

inline void cuckoo_filter::store_bucket(std::uint64_t const i, std::uint64_t const bucket) noexcept
{
    std::uint64_t const bit = i * (bucket_size * fp_bits_);
    unsigned char * const p = reinterpret_cast<unsigned char *>(mut_) + (bit >> 3);
    unsigned const sh = static_cast<unsigned>(bit & 7);
    std::uint64_t raw;
    std::memcpy(&raw, p, 8);
    raw = (raw & ~(bucket_mask_ << sh)) | (bucket << sh);
    std::memcpy(p, &raw, 8);
}

inline std::uint64_t cuckoo_filter::bucket_match(std::uint64_t const bucket,
                                                 std::uint64_t const fp) const noexcept
{
    // SWAR "has a zero lane" on bucket xor (fp in every lane): exact for existence.
    std::uint64_t const x = bucket ^ (fp * lanes_lo_);
    return (x - lanes_lo_) & ~x & lanes_hi_;
}

inline void cuckoo_filter::prefetch(std::uint64_t const i) const noexcept
{
    __builtin_prefetch(reinterpret_cast<unsigned char const *>(data_.data()) +
                       ((i * (bucket_size * fp_bits_)) >> 3));
}

inline std::uint64_t cuckoo_filter::next_random() noexcept
{
    std::uint64_t x = rng_;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rng_ = x;
    return x;
}

inline bool cuckoo_filter::present(std::uint64_t const i1, std::uint64_t const i2,
                                   std::uint64_t const fp) const noexcept
{
    // Both buckets are tested without a branch between them: a hit is equally likely in either.
    bool const hit = (bucket_match(load_bucket(i1), fp) | bucket_match(load_bucket(i2), fp)) != 0;
    return hit ||
           (victim_used_ && victim_fp_ == fp && (victim_index_ == i1 || victim_index_ == i2));
}

inline bool cuckoo_filter::try_put(std::uint64_t const i, std::uint64_t const fp) noexcept
{
    std::uint64_t const b = load_bucket(i);
    for (unsigned s = 0; s < bucket_size; ++s)
    {
        if (((b >> (s * fp_bits_)) & fp_mask_) == 0)
        {
            store_bucket(i, b | (fp << (s * fp_bits_)));
            return true;
        }
    }
    return false;
}

insert_status cuckoo_filter::place(std::uint64_t const i1, std::uint64_t fp) noexcept
{
    std::uint64_t i = alt_index(i1, fp);
    if (try_put(i1, fp) || try_put(i, fp))
    {
        ++entries_;
        return insert_status::ok;
    }
    if ((next_random() >> 63) == 0)
        i = i1;
    // Bucket i is full. Each step looks one move ahead: if one of the 4 residents of i has a free
    // slot in its other bucket, it moves there and fp takes its place (the 4 other buckets are
    // fetched in parallel, so a step costs about one cache miss, not four). Otherwise a random
    // resident is evicted and the walk goes on from its other bucket, which the look-ahead already
    // found full.
    for (unsigned n = 0; n < max_kicks_; ++n)
    {
        std::uint64_t const b = load_bucket(i);
        std::uint64_t resident[bucket_size];
        std::uint64_t other[bucket_size];
        for (unsigned s = 0; s < bucket_size; ++s)
        {
            resident[s] = (b >> (s * fp_bits_)) & fp_mask_;
            other[s] = alt_index(i, resident[s]);
            prefetch(other[s]);
        }
        for (unsigned s = 0; s < bucket_size; ++s)
        {
            if (other[s] != i && try_put(other[s], resident[s]))
            {
                store_bucket(i, (b & ~(fp_mask_ << (s * fp_bits_))) | (fp << (s * fp_bits_)));
                ++entries_;
                return insert_status::ok;
            }
        }
        unsigned const s = static_cast<unsigned>(next_random() >> 62);
        store_bucket(i, (b & ~(fp_mask_ << (s * fp_bits_))) | (fp << (s * fp_bits_)));
        fp = resident[s];
        i = other[s];
    }
    // Nothing is lost: the fingerprint still homeless waits in the victim slot (one of its buckets
    // is i).
    victim_used_ = true;
    victim_fp_ = fp;
    victim_index_ = i;
    ++entries_;
    return insert_status::full;
}

insert_status cuckoo_filter::insert(std::uint64_t const key, std::uint64_t const count) noexcept
{
    if (count == 0)
        return insert_status::ok;
    if (mut_ == nullptr)
        return insert_status::full;
    hashed const h = hash(key);
    if (present(h.i1, alt_index(h.i1, h.fp), h.fp))
        return insert_status::ok;
    if (victim_used_)
        return insert_status::full;
    return place(h.i1, h.fp);
}

insert_status cuckoo_filter::insert_copy(std::uint64_t const key) noexcept
{
    if (mut_ == nullptr || victim_used_)
        return insert_status::full;
    hashed const h = hash(key);
    return place(h.i1, h.fp);
}

std::uint64_t cuckoo_filter::count(std::uint64_t const key) const noexcept
{
    hashed const h = hash(key);
    return present(h.i1, alt_index(h.i1, h.fp), h.fp) ? 1 : 0;
}

bool cuckoo_filter::remove(std::uint64_t const key) noexcept
{
    if (mut_ == nullptr)
        return false;
    hashed const h = hash(key);
    std::uint64_t const i2 = alt_index(h.i1, h.fp);
    for (std::uint64_t const i : {h.i1, i2})
    {
        std::uint64_t const b = load_bucket(i);
        for (unsigned s = 0; s < bucket_size; ++s)
        {
            if (((b >> (s * fp_bits_)) & fp_mask_) == h.fp)
            {
                store_bucket(i, b & ~(fp_mask_ << (s * fp_bits_)));
                --entries_;
                if (victim_used_)
                {
                    // A slot is free again: give the victim another chance (it may land in the
                    // victim slot again, with the same or another fingerprint; nothing is lost
                    // either way).
                    std::uint64_t const vfp = victim_fp_, vidx = victim_index_;
                    victim_used_ = false;
                    victim_fp_ = 0;
                    victim_index_ = 0;
                    --entries_;
                    place(vidx, vfp);
                }
                return true;
            }
        }
    }
    if (victim_used_ && victim_fp_ == h.fp && (victim_index_ == h.i1 || victim_index_ == i2))
    {
        victim_used_ = false;
        victim_fp_ = 0;
        victim_index_ = 0;
        --entries_;
        return true;
    }
    return false;
}

insert_status cuckoo_filter::insert_batch(std::span<std::uint64_t const> const keys) noexcept
{
    if (mut_ == nullptr)
        return keys.empty() ? insert_status::ok : insert_status::full;
    hashed h[batch_block];
    for (std::size_t start = 0; start < keys.size(); start += batch_block)
    {
        std::size_t const n = std::min(batch_block, keys.size() - start);
        for (std::size_t j = 0; j < n; ++j)
        {
            h[j] = hash(keys[start + j]);
            prefetch(h[j].i1);
            prefetch(alt_index(h[j].i1, h[j].fp));
        }
        for (std::size_t j = 0; j < n; ++j)
        {
            if (present(h[j].i1, alt_index(h[j].i1, h[j].fp), h[j].fp))
                continue;
            if (victim_used_ || place(h[j].i1, h[j].fp) == insert_status::full)
                return insert_status::full;
        }
    }
    return insert_status::ok;
}

void cuckoo_filter::count_batch(std::span<std::uint64_t const> const keys,
                                std::uint64_t * const out) const noexcept
{
    hashed h[batch_block];
    std::uint64_t alt[batch_block];
    for (std::size_t start = 0; start < keys.size(); start += batch_block)
    {
        std::size_t const n = std::min(batch_block, keys.size() - start);
        for (std::size_t j = 0; j < n; ++j)
        {
            h[j] = hash(keys[start + j]);
            alt[j] = alt_index(h[j].i1, h[j].fp);
            prefetch(h[j].i1);
            prefetch(alt[j]);
        }
        for (std::size_t j = 0; j < n; ++j)
            out[start + j] = present(h[j].i1, alt[j], h[j].fp) ? 1 : 0;
    }
}

} // namespace ksieve
