// quotient_filter: storage, construction (create, view, clone), the table geometry, parameters and
// statistics.
#include "quotient_filter_impl.hpp"

namespace ksieve
{

// ---------------------------------------------------------------------------------------------------------
// Construction.

namespace
{
void check_key_bits(unsigned const key_bits)
{
    if (key_bits < 1 || key_bits > 64)
        throw usage_error{"quotient filter: key bits " + std::to_string(key_bits) +
                          " outside [1, 64]"};
}

// The geometry create() picks: p-bit fingerprints in nslots home slots.
struct qf_plan
{
    unsigned p;
    std::uint64_t nslots;
};

qf_plan plan_geometry(filter_config const & cfg, unsigned const key_bits,
                      std::uint64_t const expected)
{
    check_key_bits(key_bits);
    if (!(cfg.fpr >= 0.0 && cfg.fpr < 0.5))
        throw usage_error{"quotient filter: false-positive rate must be in [0, 0.5), got " +
                          std::to_string(cfg.fpr)};
    if (!(cfg.max_load > 0.0 && cfg.max_load <= 1.0))
        throw usage_error{"quotient filter: maximal load must be in (0, 1], got " +
                          std::to_string(cfg.max_load)};
    // Exact width: the key, padded when the key space could be filled (counters need several slots
    // per key).
    unsigned p_exact = key_bits;
    if (key_bits + cfg.shard_bits < quotient_filter::small_key_space_bits)
        p_exact += quotient_filter::exact_padding_bits;
    p_exact = std::min(64u, std::max(p_exact, quotient_filter::min_fingerprint_bits));
    // Initial table: the fewest home slots (a multiple of 64, at least 2^default_min_quotient_bits)
    // that hold the expected keys within max_load, with room for three standard deviations of their
    // spread among shards (a shard that overflows doubles).
    std::uint64_t nslots = std::uint64_t{1} << quotient_filter::default_min_quotient_bits;
    if (expected > 0)
    {
        double const e = static_cast<double>(expected);
        nslots = std::max(nslots, quotient_filter::slots_for(
                                      static_cast<std::uint64_t>(std::ceil(e + 3.0 * std::sqrt(e))),
                                      cfg.max_load));
    }
    unsigned q = top_bits_for(nslots);
    unsigned p = p_exact;
    if (cfg.fpr > 0.0)
    {
        std::uint64_t n_design = expected;
        if (n_design == 0)
            n_design = std::max<std::uint64_t>(1, quotient_filter::default_design_keys >>
                                                      std::min(cfg.shard_bits, 63u));
        // Smallest p with n_design / 2^p <= eps.
        unsigned bits = 1;
        while (bits < 64 &&
               std::ldexp(cfg.fpr, static_cast<int>(bits)) < static_cast<double>(n_design))
            ++bits;
        p = std::max(bits, q + quotient_filter::min_remainder_bits);
        if (p >= key_bits)
            p = p_exact; // the fingerprint holds the whole key: exact, with the same p as exact
                         // mode
    }
    if (geometry_ok(p, nslots))
        return {p, nslots};
    // Fingerprints too narrow or too wide for that table: the nearest power-of-two geometry.
    q = std::min(q, p - quotient_filter::min_remainder_bits);
    if (p - q > quotient_filter::max_remainder_bits)
        q = p - quotient_filter::max_remainder_bits;
    return {p, std::uint64_t{1} << q};
}

} // namespace

quotient_filter::quotient_filter() noexcept = default;
quotient_filter::quotient_filter(quotient_filter &&) noexcept = default;
quotient_filter & quotient_filter::operator=(quotient_filter &&) noexcept = default;
quotient_filter::~quotient_filter() = default;

zeroed_memory quotient_filter::release_table() noexcept
{
    zeroed_memory block = mem_ != nullptr ? std::move(mem_->block) : zeroed_memory{};
    *this = quotient_filter{};
    return block;
}

void quotient_filter::set_key(unsigned const key_bits, unsigned const p, double const max_load,
                              bool const auto_grow) noexcept
{
    key_bits_ = key_bits;
    p_ = p;
    shl_ = p >= key_bits ? p - key_bits : 0;
    shr_ = p < key_bits ? key_bits - p : 0;
    key_mask_ = low_bits_mask(key_bits);
    max_load_ = max_load;
    auto_grow_ = auto_grow;
}

void quotient_filter::set_geometry(std::uint64_t const nslots)
{
    unsigned const q = top_bits_for(nslots);
    unsigned const r = remainder_bits_for(p_, nslots);
    q_ = q;
    r_ = r;
    split_ = !std::has_single_bit(nslots);
    low_bits_ = p_ - q;
    low_mask_ = low_bits_mask(low_bits_);
    scaled_slots_ = split_ ? nslots << (64 - q) : 0;
    // (2^128 - 1) / scaled_slots_ lies in (2^64, 2^65): its low 64 bits
    top_recip_ = split_ ? static_cast<std::uint64_t>(~static_cast<wide>(0) / scaled_slots_) : 0;
    rmask_ = low_bits_mask(r);
    nslots_ = nslots;
    nblocks_ = blocks_for(nslots);
    phys_slots_ = nblocks_ * 64;
    block_bytes_ = header_bytes + 8 * std::uint64_t{r};
    nwords_ = words_for(nblocks_, r);
    grow_at_ = static_cast<std::uint64_t>(max_load_ * static_cast<double>(nslots_));
    stuck_at_ =
        std::max(grow_at_, static_cast<std::uint64_t>(stuck_load * static_cast<double>(nslots_)));
    swar_fields_ = 57 / r;
    swar_ones_ = 0;
    for (unsigned f = 0; f < swar_fields_; ++f)
        swar_ones_ |= std::uint64_t{1} << (f * r);
    swar_high_ = swar_ones_ << (r - 1);
    grown_slots_ = grown_slots_for(p_, nslots);
}

void quotient_filter::allocate_table(zeroed_memory * const spare)
{
    if (spare != nullptr && spare->size() >= std::max<std::uint64_t>(nwords_, 1) * 8)
        mem_ = std::make_unique<memory>(std::move(*spare), nwords_);
    else
        mem_ = std::make_unique<memory>(nwords_);
    table_ = mem_->ptr;
    ctable_ = table_;
    conc_ = std::make_unique<concurrency>(
        static_cast<std::size_t>((phys_slots_ >> region_slot_bits) + 1));
}

quotient_filter quotient_filter::with_geometry(unsigned const key_bits, unsigned const q,
                                               unsigned const r, double const max_load,
                                               bool const auto_grow)
{
    check_key_bits(key_bits);
    if (r < min_remainder_bits || r > max_remainder_bits || q < min_quotient_bits ||
        q > max_quotient_bits || q + r > 64)
        throw usage_error{"quotient filter: invalid geometry q = " + std::to_string(q) + ", r = " +
                          std::to_string(r) + " for " + std::to_string(key_bits) + "-bit keys"};
    return with_slots(key_bits, q + r, std::uint64_t{1} << q, max_load, auto_grow);
}

quotient_filter quotient_filter::with_slots(unsigned const key_bits, unsigned const p,
                                            std::uint64_t const nslots, double const max_load,
                                            bool const auto_grow)
{
    check_key_bits(key_bits);
    if (!geometry_ok(p, nslots))
        throw usage_error{"quotient filter: invalid geometry of " + std::to_string(nslots) +
                          " home slots for " + std::to_string(p) + "-bit fingerprints"};
    if (!(max_load > 0.0 && max_load <= 1.0))
        throw usage_error{"quotient filter: maximal load must be in (0, 1]"};
    return empty(key_bits, p, max_load, auto_grow, nslots);
}

quotient_filter quotient_filter::empty(unsigned const key_bits, unsigned const p,
                                       double const max_load, bool const auto_grow,
                                       std::uint64_t const nslots, zeroed_memory * const spare)
{
    quotient_filter f;
    f.set_key(key_bits, p, max_load, auto_grow);
    f.set_geometry(nslots);
    f.allocate_table(spare);
    return f;
}

std::uint64_t quotient_filter::slots_for(std::uint64_t const used, double const max_load) noexcept
{
    double const need = std::ceil(static_cast<double>(used) / max_load);
    auto const n = static_cast<std::uint64_t>(
        std::min(need, std::ldexp(1.0, static_cast<int>(max_quotient_bits))));
    return std::max<std::uint64_t>(64, (n + 63) / 64 * 64);
}

quotient_filter quotient_filter::create(filter_config const & cfg, unsigned const key_bits,
                                        std::uint64_t const expected)
{
    qf_plan const g = plan_geometry(cfg, key_bits, expected);
    return with_slots(key_bits, g.p, g.nslots, cfg.max_load, cfg.auto_grow);
}

std::uint64_t quotient_filter::planned_bytes(filter_config const & cfg, unsigned const key_bits,
                                             std::uint64_t const expected)
{
    qf_plan const g = plan_geometry(cfg, key_bits, expected);
    return 8 * words_for(blocks_for(g.nslots), remainder_bits_for(g.p, g.nslots));
}

quotient_filter quotient_filter::view(std::span<std::uint64_t const> const params,
                                      std::span<std::uint64_t const> const words,
                                      unsigned const key_bits)
{
    auto bad = [](std::string const & what) { return format_error{"quotient filter: " + what}; };
    if (params.empty() || (params[0] != 1 && params[0] != params_version))
        throw bad("unknown layout version " + std::to_string(params.empty() ? 0 : params[0]));
    std::size_t const expected_count = params[0] == 1 ? params_count - 1 : params_count;
    if (params.size() != expected_count)
        throw bad("expected " + std::to_string(expected_count) + " parameters, found " +
                  std::to_string(params.size()));
    if (key_bits < 1 || key_bits > 64 || params[4] != key_bits)
        throw bad("key bits " + std::to_string(params[4]) + " do not match the file (" +
                  std::to_string(key_bits) + ")");
    std::uint64_t const q = params[1];
    std::uint64_t const r = params[2];
    std::uint64_t const p = params[3];
    if (q < min_quotient_bits || q > max_quotient_bits || p > 64)
        throw bad("invalid geometry q = " + std::to_string(q) + ", p = " + std::to_string(p));
    // Layout 1: 2^q home slots; layout 2 records their number (any multiple of 64, see with_slots).
    std::uint64_t const nslots = params[0] == 1 ? std::uint64_t{1} << q : params[params_count - 1];
    if (!geometry_ok(static_cast<unsigned>(p), nslots) || top_bits_for(nslots) != q ||
        remainder_bits_for(static_cast<unsigned>(p), nslots) != r)
        throw bad("invalid geometry q = " + std::to_string(q) + ", r = " + std::to_string(r) +
                  ", p = " + std::to_string(p) + ", " + std::to_string(nslots) + " home slots");
    std::uint64_t const flags = params[9];
    if (flags > 3 || (((flags >> 1) & 1) != 0) != (p >= key_bits))
        throw bad("invalid flags");
    double const max_load = std::bit_cast<double>(params[8]);
    if (!(max_load > 0.0 && max_load <= 1.0))
        throw bad("invalid maximal load");
    quotient_filter f;
    f.set_key(key_bits, static_cast<unsigned>(p), max_load, (flags & 1) != 0);
    f.set_geometry(nslots);
    if (params[10] != f.nblocks_)
        throw bad("block count " + std::to_string(params[10]) +
                  " does not match q = " + std::to_string(q));
    if (words.size() != f.nwords_)
        throw bad("payload of " + std::to_string(words.size()) + " words, expected " +
                  std::to_string(f.nwords_));
    if (params[5] > f.phys_slots_ || params[6] > params[5])
        throw bad("inconsistent counts");
    f.used_ = params[5];
    f.distinct_ = params[6];
    f.total_ = params[7];
    f.ctable_ = words.data();
    return f;
}

quotient_filter quotient_filter::clone() const
{
    quotient_filter f = empty(key_bits_, p_, max_load_, auto_grow_, nslots_);
    std::memcpy(f.table_, ctable_, nwords_ * 8);
    f.used_ = used_slots();
    f.distinct_ = distinct();
    f.total_ = total_count();
    return f;
}

// ---------------------------------------------------------------------------------------------------------
// Parameters and statistics.

std::uint64_t quotient_filter::used_slots() const noexcept
{
    auto const v = static_cast<std::int64_t>(used_);
    return static_cast<std::uint64_t>(
        conc_ ? conc_->plus_pending(v, &concurrency::region::used, std::plus<>{}) : v);
}

std::uint64_t quotient_filter::distinct() const noexcept
{
    auto const v = static_cast<std::int64_t>(distinct_);
    return static_cast<std::uint64_t>(
        conc_ ? conc_->plus_pending(v, &concurrency::region::distinct, std::plus<>{}) : v);
}

std::uint64_t quotient_filter::total_count() const noexcept
{
    return conc_ ? conc_->plus_pending(total_, &concurrency::region::total,
                                       [](std::uint64_t const a, std::uint64_t const b)
                                       { return sat_add(a, b); })
                 : total_;
}

std::vector<std::uint64_t> quotient_filter::params() const
{
    std::uint64_t const flags = (auto_grow_ ? 1u : 0u) | (exact() ? 2u : 0u);
    // layout 1 (11 parameters) for 2^q home slots; layout 2 adds their number N
    std::vector<std::uint64_t> v{split_ ? params_version : 1,
                                 q_,
                                 r_,
                                 p_,
                                 key_bits_,
                                 used_slots(),
                                 distinct(),
                                 total_count(),
                                 std::bit_cast<std::uint64_t>(max_load_),
                                 flags,
                                 nblocks_};
    if (split_)
        v.push_back(nslots_);
    return v;
}

filter_stats quotient_filter::stats() const noexcept
{
    filter_stats s;
    s.bytes = nwords_ * 8;
    s.slots = nslots_;
    s.used = used_slots();
    s.distinct = distinct();
    s.total_count = total_count();
    s.load = nslots_ == 0 ? 0.0 : static_cast<double>(s.used) / static_cast<double>(nslots_);
    s.estimated_fpr =
        exact() ? 0.0
                : std::min(1.0, std::ldexp(static_cast<double>(s.distinct), -static_cast<int>(p_)));
    return s;
}

} // namespace ksieve
