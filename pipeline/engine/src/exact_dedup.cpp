// Exact duplicates (dedup --exact): the hash of a sequence's upper-case form or of its reverse
// complement, read and pair keys, and the in-order decision of a batch against a filter of keys.
#include <ksieve/engine/exact_dedup.hpp>
#include <ksieve/engine/resources.hpp>

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

#include <omp.h>

namespace ksieve
{

namespace
{

// Byte -> its upper-case form (ASCII letters; other bytes unchanged).
constexpr std::array<std::uint8_t, 256> upper_table = []
{
    std::array<std::uint8_t, 256> t{};
    for (unsigned c = 0; c < 256; ++c)
        t[c] = static_cast<std::uint8_t>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    return t;
}();

// Byte -> the complement of its upper-case form (see exact_dedup.hpp; an involution on them).
constexpr std::array<std::uint8_t, 256> complement_table = []
{
    std::array<std::uint8_t, 256> t = upper_table;
    constexpr std::array<std::pair<char, char>, 6> pairs{
        {{'A', 'T'}, {'C', 'G'}, {'R', 'Y'}, {'K', 'M'}, {'B', 'V'}, {'D', 'H'}}};
    for (auto const & [a, b] : pairs)
    {
        auto const ua = static_cast<unsigned char>(a);
        auto const ub = static_cast<unsigned char>(b);
        for (unsigned const c : {ua + 0u, ua + 32u, ub + 0u, ub + 32u}) // upper and lower case
            t[c] = static_cast<std::uint8_t>(upper_table[c] == ua ? ub : ua);
    }
    return t;
}();

// Odd constants with bytes outside printable text, so that no block of sequence cancels them.
constexpr std::uint64_t length_mul = 0x9E3779B97F4A7C15ULL;
constexpr std::uint64_t block_salt = 0xE7037ED1A0B428DBULL;
constexpr std::uint64_t final_salt = 0x8EBC6AF09C88C6E3ULL;
constexpr std::uint64_t pair_salt = 0x589965CC75374CC3ULL;

// The 128-bit product of a and b, its halves folded together.
[[nodiscard]] inline std::uint64_t fold_multiply(std::uint64_t const a,
                                                 std::uint64_t const b) noexcept
{
    __extension__ using u128 = unsigned __int128; // GCC/Clang extension, silences -Wpedantic
    u128 const p = static_cast<u128>(a) * b;
    return static_cast<std::uint64_t>(p) ^ static_cast<std::uint64_t>(p >> 64);
}

// sequence_hash(seq, seed, Reverse), 16 bytes of the form at a time: state = fold_multiply(first 8
// ^ salt, next 8 ^ state), the last block zero-padded (the length is in the initial state), then a
// final mix. Byte i of the form is table[seq[i]] (forward) or table[seq[n - 1 - i]] (reverse).
template <bool Reverse>
[[nodiscard]] std::uint64_t hash_form(std::string_view const seq, std::uint64_t const seed) noexcept
{
    std::array<std::uint8_t, 256> const & table = Reverse ? complement_table : upper_table;
    std::size_t const n = seq.size();
    auto const byte = [&](std::size_t const i) noexcept -> std::uint64_t
    { return table[static_cast<unsigned char>(seq[Reverse ? n - 1 - i : i])]; };
    auto const word = [&](std::size_t const i, std::size_t const len) noexcept
    {
        std::uint64_t w = 0;
        for (std::size_t b = 0; b < len; ++b)
            w |= byte(i + b) << (8 * b);
        return w;
    };
    std::uint64_t h = mix64(seed ^ (static_cast<std::uint64_t>(n) * length_mul));
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16)
        h = fold_multiply(word(i, 8) ^ block_salt, word(i + 8, 8) ^ h);
    if (i < n)
    {
        std::size_t const rest = n - i;
        std::uint64_t const a = word(i, rest < 8 ? rest : 8);
        std::uint64_t const b = rest > 8 ? word(i + 8, rest - 8) : 0;
        h = fold_multiply(a ^ block_salt, b ^ h);
    }
    return mix64(h ^ final_salt);
}

} // namespace

std::uint64_t sequence_hash(std::string_view const seq, std::uint64_t const seed,
                            bool const reverse) noexcept
{
    return reverse ? hash_form<true>(seq, seed) : hash_form<false>(seq, seed);
}

std::uint64_t read_key(std::string_view const seq, sequence_key_options const & options) noexcept
{
    std::uint64_t const forward = hash_form<false>(seq, options.seed);
    return options.both_strands ? std::min(hash_form<true>(seq, options.seed), forward) : forward;
}

std::uint64_t pair_key(std::string_view const mate1, std::string_view const mate2,
                       sequence_key_options const & options) noexcept
{
    std::uint64_t a = hash_form<false>(mate1, options.seed);
    std::uint64_t b = hash_form<false>(mate2, options.seed);
    if (options.both_strands && b < a)
        std::swap(a, b);
    return mix64(a ^ mix64(b ^ pair_salt));
}

kmer_params sequence_key_params(sequence_key_options const & options) noexcept
{
    return kmer_params{max_k, options.both_strands, hash_id::mix2k_v1, options.seed, 1, 0};
}

exact_deduplicator::exact_deduplicator(sequence_key_options const & options, unsigned const threads,
                                       any_filter & filter, std::string filter_name,
                                       dedup_budget * const budget)
    : options_{options}, filter_{filter}, filter_name_{std::move(filter_name)}, budget_{budget},
      engine_{sequence_key_params(options), threads}, resolver_{threads}
{
}

void exact_deduplicator::hash_units(io::record_batch const & r1, io::record_batch const & r2)
{
    std::size_t const n = r1.size();
    bool const pairs = !r2.empty();
    keys_.keys.resize(n);
    keys_.offset.resize(n + 1);
    std::iota(keys_.offset.begin(), keys_.offset.end(), std::uint64_t{0});
    keys_.count.assign(n, 1);
    std::uint64_t * const keys = keys_.keys.data();
    sequence_key_options const options = options_;
#pragma omp parallel for num_threads(engine_.threads()) schedule(static)
    for (std::size_t u = 0; u < n; ++u)
        keys[u] = pairs ? pair_key(r1[u].seq, r2[u].seq, options) : read_key(r1[u].seq, options);
}

void exact_deduplicator::decide(work_item & item)
{
    reserve_openmp_threads(engine_.threads()); // (before the first region: hash_units)
    hash_units(item.r1, item.r2);
    if (budget_ != nullptr)
        (void)budget_->make_room(filter_, keys_);
    // One key per unit: known iff its one key is a hit (count >= 1), i.e. hits / kmers >= 1.
    decision_rule const rule{1, 1.0, 0};
    std::array<any_filter const *, 1> const filters{&filter_};
    engine_.query(filters, keys_);
    resolver_.resolve(filter_, keys_, rule, true, item.results);
    engine_.insert(filter_, keys_, &item.results, filter_name_);
}

} // namespace ksieve
