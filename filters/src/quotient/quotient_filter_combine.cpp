// quotient_filter: the set operations (merge, combine): k-way fingerprint walks over the inputs and
// the count each operation gives a fingerprint.
#include "combine_layout.hpp"
#include "quotient_filter_appender.hpp"

#include <ksieve/filters/quotient/quotient_builder.hpp>
#include <ksieve/filters/support/cancel.hpp>

namespace ksieve
{

namespace
{

// What a k-way walk knows of one fingerprint: the inputs that hold it with a count of at least
// min_count, their summed and smallest count, and the first input's count (0 if it lacks it).
struct walk_entry
{
    std::uint64_t sum{0};
    std::uint64_t min{0};
    std::uint64_t first{0};
    std::size_t present{0};
};

// A filter's fingerprints cut to `p` bits (exactly those of a filter of that width), equal cut
// values joined, read a chunk at a time.
class fp_source
{
public:
    fp_source(quotient_filter const & f, unsigned const p, std::size_t const input,
              quotient_filter::consumed_fn const & consumed)
        : c_{f}, shift_{f.fingerprint_bits() - p}, words_{f.words()}, input_{input}, consumed_{
                                                                                         consumed}
    {
    }
    fp_source(fp_source const &) = delete;
    fp_source & operator=(fp_source const &) = delete;

    // The next fingerprint and its count; false at the end.
    [[gnu::always_inline]] bool next(std::uint64_t & fp, std::uint64_t & count)
    {
        if (i_ == n_ && !refill())
            return false;
        fp = fps_[i_] >> shift_;
        count = counts_[i_];
        ++i_;
        if (shift_ != 0)
            while ((i_ != n_ || refill()) && (fps_[i_] >> shift_) == fp)
                count = sat_add(count, counts_[i_++]);
        return true;
    }

    // Fingerprints not cut: fill() decodes the next chunk into fps() and counts() and returns its
    // size (0 at the end), for walks that keep their position in locals.
    [[nodiscard]] bool uncut() const noexcept { return shift_ == 0; }
    std::size_t fill()
    {
        refill();
        return n_;
    }
    [[nodiscard]] std::uint64_t const * fps() const noexcept { return fps_.data(); }
    [[nodiscard]] std::uint64_t const * counts() const noexcept { return counts_.data(); }

private:
    static constexpr std::size_t chunk = 256;
    bool refill() // (checks for a stop request: interrupted_error)
    {
        throw_if_stop_requested();
        i_ = 0;
        n_ = c_.read(fps_.data(), counts_.data(), chunk);
        if (consumed_)
        {
            // (the words passed, every 256 KiB)
            std::uint64_t const done = n_ == 0 ? words_.size() : c_.words_done();
            if (done >= released_ + (std::uint64_t{32} << 10) || (n_ == 0 && done > released_))
            {
                consumed_(input_, words_.subspan(released_, done - released_));
                released_ = done;
            }
        }
        return n_ != 0;
    }

    quotient_filter::cursor c_;
    unsigned shift_;
    std::span<std::uint64_t const> words_;
    std::size_t input_;
    quotient_filter::consumed_fn const & consumed_;
    std::uint64_t released_{0};
    std::size_t i_{0};
    std::size_t n_{0};
    std::array<std::uint64_t, chunk> fps_;
    std::array<std::uint64_t, chunk> counts_;
};

// An input's current fingerprint in a walk.
struct walk_head
{
    std::uint64_t fp{0};
    std::uint64_t count{0};
    std::size_t input{0};
};

// Adds input i's count c to e (counts below min_count are as absent).
[[gnu::always_inline]] inline void take(walk_entry & e, std::size_t const i, std::uint64_t const c,
                                        std::uint64_t const min_count) noexcept
{
    if (c < min_count)
        return;
    e.sum = sat_add(e.sum, c);
    e.min = e.present == 0 ? c : std::min(e.min, c);
    e.first = i == 0 ? c : e.first;
    ++e.present;
}

// walk_two for inputs whose fingerprints are not cut, positions in the chunks kept in locals.
template <typename Fn>
void walk_two_uncut(fp_source & a, fp_source & b, std::uint64_t const min_count, Fn & fn)
{
    std::uint64_t const * const fa = a.fps();
    std::uint64_t const * const ca = a.counts();
    std::uint64_t const * const fb = b.fps();
    std::uint64_t const * const cb = b.counts();
    std::size_t na = a.fill(), nb = b.fill();
    std::size_t ia = 0, ib = 0;
    while (na != 0 && nb != 0)
    {
        walk_entry e;
        std::uint64_t const x = fa[ia];
        std::uint64_t const y = fb[ib];
        std::uint64_t const fp = std::min(x, y);
        if (x == fp)
        {
            take(e, 0, ca[ia], min_count);
            if (++ia == na)
            {
                na = a.fill();
                ia = 0;
            }
        }
        if (y == fp)
        {
            take(e, 1, cb[ib], min_count);
            if (++ib == nb)
            {
                nb = b.fill();
                ib = 0;
            }
        }
        if (e.present != 0)
            fn(fp, e);
    }
    // (the rest of the input that is left: chunk `n` of it from entry i)
    auto drain = [&](fp_source & src, std::size_t n, std::size_t i, std::size_t const input)
    {
        for (; n != 0; n = src.fill(), i = 0)
            for (; i < n; ++i)
            {
                walk_entry e;
                take(e, input, src.counts()[i], min_count);
                if (e.present != 0)
                    fn(src.fps()[i], e);
            }
    };
    drain(a, na, ia, 0);
    drain(b, nb, ib, 1);
}

// Two inputs: a plain two-way merge. fn is copied in and back out: a local, its state (a sink's
// counters and pointers) kept in registers.
template <typename Fn>
void walk_two(fp_source & a, fp_source & b, std::uint64_t const min_count, Fn & fn_out)
{
    Fn fn = fn_out;
    if (a.uncut() && b.uncut())
    {
        walk_two_uncut(a, b, min_count, fn);
        fn_out = fn;
        return;
    }
    std::uint64_t fa, ca, fb, cb;
    bool ha = a.next(fa, ca);
    bool hb = b.next(fb, cb);
    while (ha && hb)
    {
        walk_entry e;
        std::uint64_t const fp = std::min(fa, fb);
        if (fa == fp)
        {
            take(e, 0, ca, min_count);
            ha = a.next(fa, ca);
        }
        if (fb == fp)
        {
            take(e, 1, cb, min_count);
            hb = b.next(fb, cb);
        }
        if (e.present != 0)
            fn(fp, e);
    }
    for (; ha; ha = a.next(fa, ca))
    {
        walk_entry e;
        take(e, 0, ca, min_count);
        if (e.present != 0)
            fn(fa, e);
    }
    for (; hb; hb = b.next(fb, cb))
    {
        walk_entry e;
        take(e, 1, cb, min_count);
        if (e.present != 0)
            fn(fb, e);
    }
    fn_out = fn;
}

// K-way walk in fingerprint order, fingerprints cut to p bits: fn(fingerprint, walk_entry) for
// every fingerprint some input holds (counts below min_count as absent).
template <typename Fn>
void merge_walk(std::span<quotient_filter const * const> const inputs, unsigned const p,
                std::uint64_t const min_count, quotient_filter::consumed_fn const & consumed,
                Fn & fn)
{
    std::vector<std::unique_ptr<fp_source>> cs;
    cs.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i)
        cs.push_back(std::make_unique<fp_source>(*inputs[i], p, i, consumed));
    if (cs.size() == 2)
        return walk_two(*cs[0], *cs[1], min_count, fn);
    std::vector<walk_head> heads;
    heads.reserve(cs.size());
    for (std::size_t i = 0; i < cs.size(); ++i)
        if (walk_head h{0, 0, i}; cs[i]->next(h.fp, h.count))
            heads.push_back(h);
    if (cs.size() <= 16)
    {
        // Few inputs: the smallest of their heads by a scan.
        while (!heads.empty())
        {
            std::uint64_t fp = none;
            for (auto const & h : heads)
                fp = std::min(fp, h.fp);
            walk_entry e;
            for (std::size_t a = 0; a < heads.size();)
            {
                auto & h = heads[a];
                if (h.fp == fp)
                {
                    take(e, h.input, h.count, min_count);
                    if (!cs[h.input]->next(h.fp, h.count))
                    {
                        h = heads.back();
                        heads.pop_back();
                        continue;
                    }
                }
                ++a;
            }
            if (e.present != 0)
                fn(fp, e);
        }
        return;
    }
    // Many inputs: a min-heap of heads.
    auto greater = [](walk_head const & a, walk_head const & b) { return a.fp > b.fp; };
    std::make_heap(heads.begin(), heads.end(), greater);
    while (!heads.empty())
    {
        std::uint64_t const fp = heads.front().fp;
        walk_entry e;
        while (!heads.empty() && heads.front().fp == fp)
        {
            std::pop_heap(heads.begin(), heads.end(), greater);
            walk_head & h = heads.back();
            take(e, h.input, h.count, min_count);
            if (cs[h.input]->next(h.fp, h.count))
                std::push_heap(heads.begin(), heads.end(), greater);
            else
                heads.pop_back();
        }
        if (e.present != 0)
            fn(fp, e);
    }
}

// A walk's (fingerprint, count) stream kept in a combine_scratch (see for_each_kept_chunk).
class result_buffer
{
public:
    explicit result_buffer(quotient_filter::combine_scratch & s) noexcept
        : s_{&s}, gaps_{s.gaps.get()}, counts_{s.counts.get()}, cap_{s.capacity}
    {
        s_->wide_gaps.clear();
        s_->wide_counts.clear();
    }
    // False (and the entry not kept) once the buffer would pass the scratch's max_bytes.
    [[gnu::always_inline]] bool push(std::uint64_t const fp, std::uint64_t const count)
    {
        if (n_ == cap_) [[unlikely]]
        {
            room const r = grow(*s_, n_);
            if (r.cap == 0)
                return false;
            gaps_ = r.gaps;
            counts_ = r.counts;
            cap_ = r.cap;
        }
        std::uint64_t const gap = fp - last_;
        last_ = fp;
        gaps_[n_] = static_cast<std::uint32_t>(std::min(gap, gap_escape));
        if (gap >= gap_escape) [[unlikely]]
            s_->wide_gaps.push_back(gap);
        counts_[n_] = static_cast<std::uint8_t>(std::min(count, count_escape));
        if (count >= count_escape) [[unlikely]]
            s_->wide_counts.push_back(count);
        ++n_;
        return true;
    }
    [[nodiscard]] std::size_t size() const noexcept { return n_; }
    template <typename Fn> void for_each_chunk(Fn && fn) const
    {
        for_each_kept_chunk(gaps_, counts_, n_, s_->wide_gaps, s_->wide_counts, fn);
    }

private:
    struct room
    {
        std::uint32_t * gaps;
        std::uint8_t * counts;
        std::size_t cap; // 0: no more room
    };
    // Room for twice the n entries of s, at most max_bytes / 5 (values in and out: the buffer's
    // state never has its address taken).
    [[gnu::noinline]] static room grow(quotient_filter::combine_scratch & s, std::size_t const n)
    {
        std::size_t const max_entries = s.max_bytes / 5;
        if (n >= max_entries)
            return {nullptr, nullptr, 0};
        std::size_t const cap = std::min(std::max<std::size_t>(2 * n, 4096), max_entries);
        // new T[cap]: uninitialized, as make_unique_for_overwrite (which libc++ before 16 lacks)
        std::unique_ptr<std::uint32_t[]> gaps{new std::uint32_t[cap]};
        std::unique_ptr<std::uint8_t[]> counts{new std::uint8_t[cap]};
        std::copy_n(s.gaps.get(), n, gaps.get());
        std::copy_n(s.counts.get(), n, counts.get());
        s.gaps = std::move(gaps);
        s.counts = std::move(counts);
        s.capacity = cap;
        return {s.gaps.get(), s.counts.get(), cap};
    }

    quotient_filter::combine_scratch * s_;
    std::uint32_t * gaps_;
    std::uint8_t * counts_;
    std::size_t cap_;
    std::size_t n_{0};
    std::uint64_t last_{0};
};

// The count a set operation gives a fingerprint (0: not in the result).
[[gnu::always_inline]] inline std::uint64_t
combined_count(set_operation const op, walk_entry const & e, std::size_t const inputs) noexcept
{
    switch (op)
    {
    case set_operation::unite:
        return e.sum;
    case set_operation::intersect:
        return e.present == inputs ? e.min : 0;
    case set_operation::subtract:
        return e.first != 0 && e.present == 1 ? e.first : 0;
    case set_operation::subtract_counts:
    {
        std::uint64_t const others = e.sum - e.first;
        return e.first > others ? e.first - others : 0;
    }
    }
    return 0;
}

// A walk's callback: the count the operation gives each fingerprint to `sink` where not 0 (held by
// value, as is the sink).
template <set_operation Op, typename Sink> struct counted
{
    Sink sink;
    std::size_t inputs;
    [[gnu::always_inline]] void operator()(std::uint64_t const fp, walk_entry const & e)
    {
        if (std::uint64_t const c = combined_count(Op, e, inputs); c != 0)
            sink(fp, c);
    }
};

// merge_walk with the callback counted<op, Sink>; the sink, as the walk left it, is returned.
template <typename Sink>
Sink walk_with(set_operation const op, std::span<quotient_filter const * const> const inputs,
               unsigned const p, std::uint64_t const min_count,
               quotient_filter::consumed_fn const & consumed, Sink sink)
{
    // (one walk per operation, its count rule inlined)
    auto with = [&](auto const op_c)
    {
        counted<op_c.value, Sink> fn{sink, inputs.size()};
        merge_walk(inputs, p, min_count, consumed, fn);
        sink = fn.sink;
    };
    switch (op)
    {
    case set_operation::unite:
        with(std::integral_constant<set_operation, set_operation::unite>{});
        break;
    case set_operation::intersect:
        with(std::integral_constant<set_operation, set_operation::intersect>{});
        break;
    case set_operation::subtract:
        with(std::integral_constant<set_operation, set_operation::subtract>{});
        break;
    case set_operation::subtract_counts:
        with(std::integral_constant<set_operation, set_operation::subtract_counts>{});
        break;
    }
    return sink;
}

// The fingerprint width the inputs combine at: the narrowest. \throws incompatible_error unless all
// inputs have the same key width.
unsigned narrowest_fingerprint(std::span<quotient_filter const * const> const inputs)
{
    quotient_filter const & first = *inputs[0];
    unsigned p_min = first.fingerprint_bits();
    for (std::size_t i = 1; i < inputs.size(); ++i)
    {
        quotient_filter const & f = *inputs[i];
        if (f.key_bits() != first.key_bits())
            throw incompatible_error{"cannot combine quotient filters of " +
                                     std::to_string(first.key_bits()) + "- and " +
                                     std::to_string(f.key_bits()) +
                                     "-bit keys (input 1 and input " + std::to_string(i + 1) + ")"};
        p_min = std::min(p_min, f.fingerprint_bits());
    }
    return p_min;
}

// Pass 1: the slots the result needs (counters measured at ref's remainder width), and its stream
// kept unless it outgrows the buffer (then walked again).
struct pass_one
{
    result_buffer result;
    quotient_filter const * ref;
    std::uint64_t mask;
    std::uint64_t need{0};
    bool keep{true};
    [[gnu::always_inline]] void operator()(std::uint64_t const fp, std::uint64_t const c)
    {
        need += c == 1 ? 1 : qf_appender::encoded_length(*ref, fp & mask, c);
        keep = keep && result.push(fp, c);
    }
};

// A walk's result handed to a builder 1024 entries at a time (pass 2 of a result not kept).
struct rewalk
{
    std::vector<quotient_builder::entry> * chunk;
    quotient_builder * into;
    void operator()(std::uint64_t const fp, std::uint64_t const c)
    {
        chunk->emplace_back(fp, c);
        if (chunk->size() == 1024)
        {
            (void)into->append(*chunk);
            chunk->clear();
        }
    }
};

// Pass 2: the result appended from pass 1's stream or walk_again(builder), in a larger table while
// it does not fit.
template <typename Walk>
quotient_filter append_result(quotient_builder & b, pass_one const & one,
                              quotient_filter::combine_scratch * const scratch, Walk && walk_again)
{
    for (;;)
    {
        b.start(scratch != nullptr ? &scratch->spare_table : nullptr);
        if (one.keep)
            one.result.for_each_chunk(
                [&](auto const chunk)
                {
                    throw_if_stop_requested();
                    return b.append(chunk);
                });
        else
            walk_again(b);
        if (b.finish())
            return b.take();
    }
}

} // namespace

unsigned detail::counter_remainder_bits(std::span<quotient_filter const * const> const inputs,
                                        unsigned const p)
{
    unsigned r_ref = quotient_filter::max_remainder_bits;
    for (auto const * f : inputs)
    {
        unsigned const q = f->quotient_bits();
        r_ref = std::min(r_ref, p > q + quotient_filter::min_remainder_bits
                                    ? p - q
                                    : quotient_filter::min_remainder_bits);
    }
    return r_ref;
}

quotient_filter quotient_filter::merge(std::span<quotient_filter const * const> const inputs)
{
    return combine(inputs, set_operation::unite, 1);
}

quotient_filter quotient_filter::combine(std::span<quotient_filter const * const> const inputs,
                                         set_operation const op, std::uint64_t const min_count,
                                         combine_scratch * const scratch,
                                         consumed_fn const & consumed)
{
    if (inputs.empty())
        throw usage_error{"quotient filter merge: no input"};
    quotient_filter const & first = *inputs[0];
    unsigned const p = narrowest_fingerprint(inputs);
    unsigned const r_ref = detail::counter_remainder_bits(inputs, p);
    quotient_filter::combine_scratch own;
    quotient_filter const ref =
        with_geometry(first.key_bits_, min_quotient_bits, r_ref, first.max_load_, false);
    pass_one const one = walk_with(
        op, inputs, p, min_count, consumed,
        pass_one{result_buffer{scratch != nullptr ? *scratch : own}, &ref, low_bits_mask(r_ref)});
    quotient_builder b{first.key_bits_, p, first.max_load_, first.auto_grow_, r_ref};
    b.add_slots(one.need);
    return append_result(b, one, scratch,
                         [&](quotient_builder & into)
                         {
                             std::vector<quotient_builder::entry> chunk;
                             chunk.reserve(1024);
                             walk_with(op, inputs, p, min_count, consumed, rewalk{&chunk, &into});
                             (void)into.append(chunk);
                         });
}

} // namespace ksieve
