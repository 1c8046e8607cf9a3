// anchor_rescue: the screen of short units without a hit, every k-mer of the units that their
// minimizers left one hit short, then single-base substitutions at their low-quality bases.
#include "engine_detail.hpp"
#include <ksieve/engine/anchor_rescue.hpp>
#include <ksieve/filters/kmers/low_complexity.hpp>

#include <algorithm>

namespace ksieve
{

namespace
{
constexpr char bases[4] = {'A', 'C', 'G', 'T'};

bool is_base(char const c) noexcept
{
    return c == 'A' || c == 'C' || c == 'G' || c == 'T';
}
} // namespace

std::uint32_t anchor_rescue::dust_threshold() const noexcept
{
    // low-complexity k-mers (poly-A tails, microsatellites) do not count in the second look: a
    // foreign read with a homopolymer run would find them in any large host
    kmer_params const & kmer = engine_.kmer();
    return kmer.k < min_masked_k      ? 0
           : kmer.dust_threshold != 0 ? kmer.dust_threshold
                                      : default_dust_threshold;
}

std::size_t anchor_rescue::run(io::record_batch const & r1, io::record_batch const * const r2,
                               std::span<any_filter const * const> const filters,
                               decision_rule const & rule, std::vector<unit_result> & results,
                               label_vote * const vote)
{
    bool const pairs = r2 != nullptr && !r2->empty();
    kmer_params const & kmer = engine_.kmer();
    std::uint32_t const dust = dust_threshold();
    screen(r1, pairs ? r2 : nullptr, filters, rule, results);
    units_.clear();
    offset_.assign(1, 0);
    keys_.clear();
    for (std::size_t u = 0; u < results.size(); ++u)
    {
        if (!eligible(results[u]) && anchored_[u] == 0)
            continue;
        auto const add = [&](std::size_t, std::uint64_t const code)
        {
            if (!low_complexity(code, kmer.k, dust))
                keys_.push_back(engine_.hasher()(code));
        };
        engine_.scanner().for_each(r1[u].seq, add);
        if (pairs)
            engine_.scanner().for_each((*r2)[u].seq, add);
        units_.push_back(static_cast<std::uint32_t>(u));
        offset_.push_back(static_cast<std::uint32_t>(keys_.size()));
    }
    if (units_.empty())
        return 0;
    values_.resize(keys_.size());
    detail::query_keys(filters, keys_.data(), keys_.size(), values_.data(), q_);
    hits_.assign(units_.size(), 0);
    for (std::size_t i = 0; i < units_.size(); ++i)
        for (std::uint32_t j = offset_[i]; j < offset_[i + 1]; ++j)
            hits_[i] += rule.hit(values_[j]) ? 1u : 0u;
    substitute(r1, pairs ? r2 : nullptr, filters, rule);
    rescued_.clear(); // indices into units_ of the rescued units, increasing
    for (std::size_t i = 0; i < units_.size(); ++i)
    {
        std::uint32_t const kmers = offset_[i + 1] - offset_[i];
        std::uint32_t const hits = hits_[i] + substituted_hits_[i];
        if (!rule.known(hits, kmers))
            continue;
        unit_result & r = results[units_[i]];
        r = unit_result{kmers, hits, true};
        r.rescued = true;
        rescued_.push_back(static_cast<std::uint32_t>(i));
    }
    if (vote != nullptr && !rescued_.empty())
        revote(*vote, rule);
    return rescued_.size();
}

void anchor_rescue::add_screen_keys(std::string_view const seq, std::string_view const qual)
{
    collect_positions(seq, qual);
    if (positions_.empty() || seq.size() < engine_.kmer().k)
        return;
    if (!std::all_of(seq.begin(), seq.end(), is_base))
    {
        add_screen_keys_with_gaps(seq);
        return;
    }
    // the read's valid k-mers are those at every start: both strands' codes, order values and the
    // minimizers once, then per substitution only the k-mers over the base (a change of one base
    // in each strand's code) and the windows that hold one of them
    index_read(seq);
    for (auto const & [q, p] : positions_)
    {
        screen_site const t = site_of(p);
        for (char const b : bases)
            if (b != seq[p])
                add_screen_substitution(seq, p, b, t);
    }
}

// The k-mers of a read of A, C, G, T only (at least k bases), as kmer_scanner::for_each gives them,
// with each strand's code kept, and the read's minimizers (selected_, codes_ sorted).
void anchor_rescue::index_read(std::string_view const seq)
{
    kmer_params const & kmer = engine_.kmer();
    kmer_scanner const & scanner = engine_.scanner();
    std::size_t const k = kmer.k, n = seq.size() - k + 1;
    std::uint64_t const mask = scanner.code_mask();
    forward_.resize(n);
    reverse_.resize(n);
    kmer_codes_.resize(n);
    kmer_orders_.resize(n);
    std::uint64_t fw = 0, rc = 0;
    for (std::size_t i = 0; i < seq.size(); ++i)
    {
        std::uint64_t const c = dna_code_table[static_cast<unsigned char>(seq[i])];
        fw = (fw << 2) | c;
        rc = (rc >> 2) | ((3 - c) << (2 * (k - 1)));
        if (i + 1 < k)
            continue;
        std::size_t const s = i + 1 - k;
        forward_[s] = fw & mask;
        reverse_[s] = rc & mask;
        kmer_codes_[s] = scanner.canonical() ? std::min(forward_[s], reverse_[s]) : forward_[s];
        kmer_orders_[s] = minimizer_order(kmer_codes_[s], kmer.seed);
    }
    if (block_of_.size() != k)
    {
        block_of_.resize(k); // (at most k k-mers lie over a base)
        for (std::size_t i = 0; i < k; ++i)
            block_of_[i] = static_cast<std::uint32_t>(i / kmer.window);
    }
    selected_.assign(n, 0);
    codes_.clear();
    for_each_minimizer(kmer_orders_.data(), n, kmer.window, 0, n,
                       [&](std::size_t const i)
                       {
                           selected_[i] = 1;
                           codes_.push_back(kmer_codes_[i]);
                       });
    std::sort(codes_.begin(), codes_.end());
}

// The windows around base p of a read that index_read() took: the k-mers over p (changed by a
// substitution), the windows that hold one of them, and per window its least unchanged entry (the
// same for every substitution of p; none where every entry changes).
anchor_rescue::screen_site anchor_rescue::site_of(std::size_t const p)
{
    std::size_t const k = engine_.kmer().k, w = engine_.kmer().window, n = kmer_codes_.size();
    screen_site t{};
    t.s_lo = p + 1 >= k ? p + 1 - k : 0;
    t.s_hi = std::min(p, n - 1);
    t.e_lo = n < w ? 0 : (t.s_lo + 1 >= w ? t.s_lo + 1 - w : 0);
    t.windows = n < w ? 1 : std::min(t.s_hi, n - w) - t.e_lo + 1;
    std::size_t const none = n;
    unchanged_.assign(t.windows, none);
    auto const least = [&](std::size_t const x, std::size_t const y)
    { return y == none || (x != none && kmer_orders_[x] <= kmer_orders_[y]) ? x : y; };
    // windows that start before s_lo: [start, s_lo) unchanged, the least from the right
    std::size_t best = none;
    for (std::size_t e = t.s_lo; e-- > t.e_lo;)
    {
        best = least(e, best);
        if (e - t.e_lo < t.windows) // (a window starts at e)
            unchanged_[e - t.e_lo] = best;
    }
    // windows that end after s_hi: (s_hi, end] unchanged, the least from the left
    best = none;
    for (std::size_t i = 0, e = t.s_hi + 1; i < t.windows; ++i)
    {
        std::size_t const end = std::min(t.e_lo + i + w, n); // one past the window
        for (; e < end; ++e)
            best = best == none || kmer_orders_[e] < kmer_orders_[best] ? e : best;
        unchanged_[i] = least(unchanged_[i], best);
    }
    return t;
}

// The minimizers of seq with base p changed to b that seq lacks, into screen_codes_: per window
// the least of its unchanged entries (site_of) and of its changed ones, these by the minima of
// blocks of w changed entries from s_lo (each window's changed entries lie in at most two blocks).
// \pre index_read(seq); t == site_of(p).
void anchor_rescue::add_screen_substitution(std::string_view const seq, std::size_t const p,
                                            char const b, screen_site const & t)
{
    kmer_params const & kmer = engine_.kmer();
    std::size_t const k = kmer.k, w = kmer.window, n = kmer_codes_.size();
    std::uint64_t const mask = engine_.scanner().code_mask();
    std::size_t const m = t.s_hi - t.s_lo + 1;
    changed_codes_.resize(m);
    changed_orders_.resize(m);
    prefix_.resize(m);
    suffix_.resize(m);
    // the base at offset j of a k-mer: bits 2 (k - 1 - j) of the forward code, 2 j of the reverse
    std::uint64_t const d = dna_code_table[static_cast<unsigned char>(seq[p])] ^
                            dna_code_table[static_cast<unsigned char>(b)];
    for (std::size_t i = 0; i < m; ++i)
    {
        std::size_t const j = p - (t.s_lo + i);
        std::uint64_t const fw = forward_[t.s_lo + i] ^ ((d << (2 * (k - 1 - j))) & mask);
        std::uint64_t const rc = reverse_[t.s_lo + i] ^ ((d << (2 * j)) & mask);
        changed_codes_[i] = engine_.scanner().canonical() ? std::min(fw, rc) : fw;
        changed_orders_[i] = minimizer_order(changed_codes_[i], kmer.seed);
    }
    auto const lower = [&](std::size_t const x, std::size_t const y)
    { return changed_orders_[y] < changed_orders_[x] ? y : x; };
    std::uint32_t const * const block = block_of_.data(); // i / w, without a division
    auto const first_of_block = [&](std::size_t const i)
    { return i == 0 || block[i - 1] != block[i]; };
    for (std::size_t i = 0; i < m; ++i)
        prefix_[i] = first_of_block(i) ? i : lower(prefix_[i - 1], i);
    for (std::size_t i = m; i-- > 0;)
        suffix_[i] = i + 1 == m || first_of_block(i + 1) ? i : lower(i, suffix_[i + 1]);
    // the last window's choice (an index: < n unchanged, else changed)
    std::size_t previous = n + m;
    for (std::size_t i = 0; i < t.windows; ++i)
    {
        std::size_t const start = t.e_lo + i, end = std::min(start + w, n); // one past the window
        std::size_t const a = std::max(start, t.s_lo) - t.s_lo,
                          z = std::min(end - 1, t.s_hi) - t.s_lo;
        std::size_t const c = block[a] == block[z] ? (first_of_block(a) ? prefix_[z] : suffix_[a])
                                                   : lower(suffix_[a], prefix_[z]);
        std::size_t const u = unchanged_[i];
        bool const changed = u == n || changed_orders_[c] < kmer_orders_[u];
        std::size_t const choice = changed ? n + c : u;
        if (choice == previous)
            continue;
        previous = choice;
        std::uint64_t const code = changed ? changed_codes_[c] : kmer_codes_[u];
        // an unchanged entry that the read selected is not new (the common case)
        if ((!changed && selected_[u] != 0) ||
            std::binary_search(codes_.begin(), codes_.end(), code))
            continue;
        screen_codes_.push_back(code);
    }
}

// add_screen_keys for a read with a base other than A, C, G, T: every substituted read's
// minimizers, whole.
void anchor_rescue::add_screen_keys_with_gaps(std::string_view const seq)
{
    kmer_params const & kmer = engine_.kmer();
    if (!minimizers_)
        minimizers_ = std::make_unique<minimizer_scratch>();
    auto const minimizers = [&](std::string_view const s, auto && fn)
    {
        for_each_record_minimizer(engine_.scanner(), s, kmer.window, kmer.seed, *minimizers_,
                                  [&](std::uint64_t const code) noexcept { fn(code); });
    };
    codes_.clear();
    minimizers(seq, [&](std::uint64_t const code) { codes_.push_back(code); });
    std::sort(codes_.begin(), codes_.end());
    for (auto const & [q, p] : positions_)
    {
        for (char const b : bases)
        {
            if (b == seq[p])
                continue;
            buffer_.assign(seq);
            buffer_[p] = b;
            minimizers(buffer_,
                       [&](std::uint64_t const code)
                       {
                           if (!std::binary_search(codes_.begin(), codes_.end(), code))
                           {
                               screen_codes_.push_back(code);
                           }
                       });
        }
    }
}

// The short units without a hit: the minimizers of their substitutions at low-quality bases that
// the read lacks. anchored_[u] is set where one of them is a hit.
void anchor_rescue::screen(io::record_batch const & r1, io::record_batch const * const r2,
                           std::span<any_filter const * const> const filters,
                           decision_rule const & rule, std::vector<unit_result> const & results)
{
    anchored_.assign(results.size(), 0);
    screen_units_.clear();
    screen_offset_.assign(1, 0);
    sub_keys_.clear();
    screen_codes_.clear();
    for (std::size_t u = 0; u < results.size(); ++u)
    {
        std::size_t const bases = r1[u].seq.size() + (r2 != nullptr ? (*r2)[u].seq.size() : 0);
        if (!screened(results[u], bases))
            continue;
        add_screen_keys(r1[u].seq, r1[u].qual);
        if (r2 != nullptr)
            add_screen_keys((*r2)[u].seq, (*r2)[u].qual);
        // each code once: the substitutions of one base often give the same new minimizer
        auto const first = screen_codes_.begin() + screen_offset_.back();
        std::sort(first, screen_codes_.end());
        screen_codes_.erase(std::unique(first, screen_codes_.end()), screen_codes_.end());
        if (screen_codes_.size() == screen_offset_.back())
            continue;
        screen_units_.push_back(static_cast<std::uint32_t>(u));
        screen_offset_.push_back(static_cast<std::uint32_t>(screen_codes_.size()));
    }
    if (screen_units_.empty())
        return;
    for (std::uint64_t const code : screen_codes_)
        sub_keys_.push_back(engine_.hasher()(code));
    sub_values_.resize(sub_keys_.size());
    detail::query_keys(filters, sub_keys_.data(), sub_keys_.size(), sub_values_.data(), q_);
    // low-complexity k-mers do not count (tested on hits only: they are few)
    std::uint32_t const dust = dust_threshold();
    unsigned const k = engine_.kmer().k;
    for (std::size_t i = 0; i < screen_units_.size(); ++i)
        for (std::uint32_t j = screen_offset_[i]; j < screen_offset_[i + 1]; ++j)
            if (rule.hit(sub_values_[j]) && !low_complexity(screen_codes_[j], k, dust))
            {
                anchored_[screen_units_[i]] = 1;
                break;
            }
}

void anchor_rescue::revote(label_vote & vote, decision_rule const & rule)
{
    rescued_units_.clear();
    for (std::uint32_t const i : rescued_)
        rescued_units_.push_back(units_[i]);
    vote.drop(rescued_units_);
    for (std::uint32_t const i : rescued_)
        for (std::uint32_t j = offset_[i]; j < offset_[i + 1]; ++j)
            vote.add(units_[i], values_[j]);
    // the hits of the chosen substitutions vote too
    std::size_t g = 0;
    for (std::uint32_t const i : rescued_)
    {
        while (g < groups_.size() && groups_[g].unit < i)
            ++g;
        for (; g < groups_.size() && groups_[g].unit == i; ++g)
            if (groups_[g].chosen)
                for (std::uint32_t j = groups_[g].begin; j < groups_[g].end; ++j)
                    if (rule.hit(sub_values_[j]))
                        vote.add(units_[i], sub_values_[j]);
    }
}

void anchor_rescue::collect_positions(std::string_view const seq, std::string_view const qual)
{
    positions_.clear();
    if (qual.size() != seq.size())
        return;
    for (std::size_t p = 0; p < seq.size(); ++p)
    {
        int const q = static_cast<unsigned char>(qual[p]) - 33;
        if (q <= max_substituted_quality && is_base(seq[p]))
            positions_.emplace_back(q, static_cast<std::uint32_t>(p));
    }
    // the lowest qualities first (then the first position): the bases most likely wrong
    std::sort(positions_.begin(), positions_.end());
    if (positions_.size() > max_substituted_bases)
        positions_.resize(max_substituted_bases);
}

void anchor_rescue::add_substitutions(std::uint32_t const unit, std::string_view const seq)
{
    kmer_scanner const & scanner = engine_.scanner();
    unsigned const k = scanner.k();
    std::uint32_t const dust = dust_threshold();
    for (auto const & [q, p] : positions_)
    {
        ++position_id_;
        // the k-mers over p: starts lo .. p, within [lo, hi) of the read
        std::size_t const lo = p + 1 >= k ? p + 1 - k : 0;
        std::size_t const hi = std::min<std::size_t>(seq.size(), std::size_t{p} + k);
        std::string_view const window = seq.substr(lo, hi - lo);
        original_.assign(window.size(), 0);
        scanner.for_each(window, [&](std::size_t const s, std::uint64_t const code)
                         { original_[s] = code + 1; }); // 0: no valid k-mer at s
        for (char const b : bases)
        {
            if (b == seq[p])
                continue;
            buffer_.assign(window);
            buffer_[p - lo] = b;
            group g{unit, position_id_, static_cast<std::uint32_t>(sub_keys_.size()), 0, false};
            scanner.for_each(buffer_,
                             [&](std::size_t const s, std::uint64_t const code)
                             {
                                 if (code + 1 != original_[s] && !low_complexity(code, k, dust))
                                     sub_keys_.push_back(engine_.hasher()(code));
                             });
            g.end = static_cast<std::uint32_t>(sub_keys_.size());
            if (g.end != g.begin)
                groups_.push_back(g);
        }
    }
}

void anchor_rescue::substitute(io::record_batch const & r1, io::record_batch const * const r2,
                               std::span<any_filter const * const> const filters,
                               decision_rule const & rule)
{
    substituted_hits_.assign(units_.size(), 0);
    groups_.clear();
    sub_keys_.clear();
    position_id_ = 0;
    for (std::size_t i = 0; i < units_.size(); ++i)
    {
        std::uint32_t const kmers = offset_[i + 1] - offset_[i];
        if (rule.known(hits_[i], kmers))
            continue; // rescued by every k-mer already
        auto const unit = static_cast<std::uint32_t>(i);
        collect_positions(r1[units_[i]].seq, r1[units_[i]].qual);
        add_substitutions(unit, r1[units_[i]].seq);
        if (r2 != nullptr)
        {
            collect_positions((*r2)[units_[i]].seq, (*r2)[units_[i]].qual);
            add_substitutions(unit, (*r2)[units_[i]].seq);
        }
    }
    if (sub_keys_.empty())
        return;
    sub_values_.resize(sub_keys_.size());
    detail::query_keys(filters, sub_keys_.data(), sub_keys_.size(), sub_values_.data(), q_);
    // per substituted position, the alternative base with the most hits (the first of a tie) counts
    for (std::size_t g = 0; g < groups_.size();)
    {
        std::size_t best = g;
        std::uint32_t best_hits = 0;
        std::size_t e = g;
        for (; e < groups_.size() && groups_[e].position == groups_[g].position; ++e)
        {
            std::uint32_t h = 0;
            for (std::uint32_t j = groups_[e].begin; j < groups_[e].end; ++j)
                h += rule.hit(sub_values_[j]) ? 1u : 0u;
            if (h > best_hits)
                best = e, best_hits = h;
        }
        if (best_hits > 0)
        {
            groups_[best].chosen = true;
            substituted_hits_[groups_[best].unit] += best_hits;
        }
        g = e;
    }
}

} // namespace ksieve
