// Option parsers (--part, --expected, --sampling) and the checks of each command's options.
#include "app_detail.hpp"

#include <ksieve/filters/kmers/low_complexity.hpp>
#include <ksieve/filters/support/error.hpp>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

namespace ksieve
{

key_part_range parse_part(std::string const & text)
{
    auto const slash = text.find('/');
    auto bad = [&]
    { return usage_error{"--part expects I/S with 0 <= I < S (e.g. 0/4), got '" + text + "'"}; };
    if (slash == std::string::npos || slash == 0 || slash + 1 >= text.size())
        throw bad();
    auto parse = [&](std::string const & s)
    {
        if (s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9)
            throw bad();
        return std::stoull(s);
    };
    key_part_range r{parse(text.substr(0, slash)), parse(text.substr(slash + 1))};
    if (r.count == 0 || r.index >= r.count)
        throw bad();
    if (r.count > key_parts::max_split)
        throw usage_error{"--part I/S: S is at most " + std::to_string(key_parts::max_split) +
                          ", got '" + text + "'"};
    return r;
}

void parse_expected(std::string const & text, filter_args & f)
{
    f.expected = 0;
    f.expected_auto = false;
    if (text.empty())
        return;
    if (text == "auto")
    {
        f.expected_auto = true;
        return;
    }
    auto const bad = [&]
    {
        return usage_error{"--expected expects a positive number of distinct k-mers (such as "
                           "3000000000 or 3e9) or "
                           "'auto', got '" +
                           text + "'"};
    };
    if (text.find_first_not_of("0123456789") == std::string::npos)
    {
        if (text.size() > 19 || text.find_first_not_of('0') == std::string::npos)
            throw bad();
        f.expected = std::stoull(text);
        return;
    }
    // scientific notation for an integer: 3e9, 3.1e9
    std::size_t const e = text.find_first_of("eE");
    if (e == std::string::npos || e == 0 || text.find_first_not_of("0123456789.", 0) != e ||
        text.find_first_not_of("0123456789", e + 1) != std::string::npos || e + 1 == text.size() ||
        text.size() - e > 3)
        throw bad();
    double const v = std::strtod(text.c_str(), nullptr);
    if (!(v >= 1 && v < 1e19) || v != std::floor(v))
        throw bad();
    f.expected = static_cast<std::uint64_t>(v);
}

void parse_sampling(std::string const & text, filter_args & f)
{
    f.window = 1;
    if (text.empty() || text == "all")
        return;
    std::string const prefix = "minimizer:";
    std::string const w =
        text.compare(0, prefix.size(), prefix) == 0 ? text.substr(prefix.size()) : std::string{};
    if (w.empty() || w.size() > 4 || w.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(w) < 1 || std::stoul(w) > max_sampling_window)
        throw usage_error{"--sampling expects 'all' or 'minimizer:W' with 1 <= W <= " +
                          std::to_string(max_sampling_window) + ", got '" + text + "'"};
    f.window = static_cast<std::uint32_t>(std::stoul(w));
}

void parse_mask(std::string const & text, filter_args & f)
{
    f.dust_threshold = 0;
    if (text.empty() || text == "none")
        return;
    auto bad = [&]
    {
        return usage_error{
            "--mask expects 'none', 'dust' or 'dust:T' with 0 < T <= 15 (at most two "
            "decimals), got '" +
            text + "'"};
    };
    if (text == "dust")
        f.dust_threshold = default_dust_threshold;
    else if (text.rfind("dust:", 0) == 0)
    {
        std::string const t = text.substr(5);
        std::size_t const dot = t.find('.');
        std::string const whole = t.substr(0, dot);
        std::string frac = dot == std::string::npos ? "" : t.substr(dot + 1);
        if (whole.empty() || whole.size() > 2 || frac.size() > 2 ||
            (whole + frac).find_first_not_of("0123456789") != std::string::npos)
            throw bad();
        frac.resize(2, '0');
        f.dust_threshold = static_cast<std::uint32_t>(std::stoul(whole) * 100 + std::stoul(frac));
        if (f.dust_threshold == 0 || f.dust_threshold > max_dust_threshold)
            throw bad();
    }
    else
        throw bad();
    if (f.window < 2)
        throw usage_error{"--mask needs --sampling minimizer:W with W >= 2 (it masks minimizers)"};
    if (f.k < min_masked_k)
        throw usage_error{"--mask needs k >= " + std::to_string(min_masked_k)};
}

void parse_spaced(std::string const & text, filter_args & f)
{
    f.spaced = 0;
    if (text == "none")
        return;
    if (text == "auto" || text.empty())
    {
        if (f.k == 31 && f.window > 1)
            parse_spaced(build_spaced_pattern, f);
        return;
    }
    std::uint32_t pattern = 0;
    bool ok = text.size() == f.k && text.find_first_not_of("01") == std::string::npos;
    for (std::size_t j = 0; ok && j < text.size(); ++j)
        pattern |= text[j] == '1' ? std::uint32_t{1} << j : 0u;
    if (!ok || !valid_spaced(f.k, f.canonical, pattern) || pattern == 0)
        throw usage_error{"--spaced expects 'none', 'auto' or " + std::to_string(f.k) +
                          " characters of 1 (compared) and 0 (ignored), starting and ending with "
                          "1, at least half of them 1" +
                          (f.canonical ? ", the same read backwards" : "") + "; got '" + text +
                          "'"};
    if (f.window < 2)
        throw usage_error{"--spaced needs --sampling minimizer:W with W >= 2"};
    f.spaced = pattern == (f.k >= 32 ? ~0u : (1u << f.k) - 1) ? 0 : pattern;
}

namespace detail
{

namespace
{

void check_rule_options(classify_output_args const & out)
{
    if (!(out.min_hit_fraction > 0.0 && out.min_hit_fraction <= 1.0))
        throw usage_error{"--min-hit-fraction must be in (0, 1], got " +
                          std::to_string(out.min_hit_fraction)};
    if (out.min_count < 1)
        throw usage_error{"--min-count must be at least 1"};
}

void check_filter_options(filter_args const & f)
{
    if (f.k < 1 || f.k > max_k)
        throw usage_error{"-k/--kmer must be in [1, 32], got " + std::to_string(f.k)};
    if (!(f.fpr >= 0.0 && f.fpr < 0.5))
        throw usage_error{"--fpr must be in [0, 0.5), got " + std::to_string(f.fpr)};
    if (f.fpr == 0.0 && f.type != filter_type::quotient)
        throw usage_error{"--fpr 0 (exact mode) needs --type qf"};
    if (f.shards != 0 && !std::has_single_bit(f.shards))
        throw usage_error{"--shards must be a power of two, got " + std::to_string(f.shards)};
    if (f.shards != 0 && std::bit_width(f.shards) - 1 >= 2 * f.k)
        throw usage_error{"--shards " + std::to_string(f.shards) +
                          " is too many for k = " + std::to_string(f.k)};
    if (!(f.max_load > 0.1 && f.max_load < 1.0))
        throw usage_error{"--max-load must be in (0.1, 1)"};
}

// The places an output path names, as keys: two outputs name one file when they share a key.
// Standard output by any name; an existing file by its identity (links, `./`, `//`, absolute or
// relative), and a file still to be made by its place once the links to it and the directories
// above it are resolved. A character device (/dev/null) takes any number of outputs: no key.
std::vector<std::string> output_keys(std::string const & p)
{
    std::vector<std::string> keys;
    if (is_stdout(p))
        keys.emplace_back("stdout");
    struct stat st
    {
    };
    bool const exists = p == "-" ? ::fstat(STDOUT_FILENO, &st) == 0 : ::stat(p.c_str(), &st) == 0;
    if (exists && S_ISCHR(st.st_mode))
        return keys;
    if (exists)
        keys.push_back("id:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino));
    if (p == "-")
        return keys;
    namespace fs = std::filesystem;
    std::error_code e;
    fs::path const t = fs::weakly_canonical(fs::absolute(io::final_target(p), e), e);
    keys.push_back("at:" + (e ? fs::absolute(fs::path{p}, e).lexically_normal() : t).string());
    keys.push_back("name:" + p);
    return keys;
}

} // namespace

decision_rule classify_rule(classify_output_args const & out) noexcept
{
    return decision_rule{out.min_count, out.min_hit_fraction, out.min_hits};
}

decision_rule dedup_rule(classify_output_args const & out) noexcept
{
    return decision_rule{out.min_count, out.min_hit_fraction, 0};
}

void check_build_options(build_args const & args)
{
    check_filter_options(args.filter);
    if (args.output.empty())
        throw usage_error{"build needs -o/--output"};
    if (args.input.inputs.empty() && args.labels.empty())
        throw usage_error{"build needs inputs (or --label NAME=FILE)"};
}

void check_classify_options(classify_args const & args)
{
    check_rule_options(args.out);
    if (args.filters.empty())
        throw usage_error{"classify needs at least one -f/--filter"};
    for (auto const & [option, pattern] :
         {std::pair{"--split-by-label", &args.out.split_by_label},
          std::pair{"--split-by-label2", &args.out.split_by_label2}})
        if (!pattern->empty())
            check_split_pattern(option, *pattern);
    if (!args.out.split_by_label2.empty() && args.out.split_by_label.empty())
        throw usage_error{"--split-by-label2 needs --split-by-label"};
    if (!args.out.split_by_label2.empty() && !args.input.paired && !args.input.interleaved)
        throw usage_error{"--split-by-label2 needs --paired or --interleaved input"};
}

void check_dedup_options(dedup_args const & args)
{
    check_rule_options(args.out);
    check_filter_options(args.filter);
    if (args.out.min_count > 1 && args.filter.type != filter_type::quotient)
        throw usage_error{"--min-count above 1 needs --type qf"};
    if (args.filter.expected_auto)
        throw usage_error{"dedup cannot use --expected auto (it reads its input once): give a "
                          "number, or leave it out "
                          "for a quotient filter, which grows"};
}

void check_output_paths(std::vector<std::pair<std::string, std::string>> const & outputs)
{
    std::unordered_map<std::string, std::size_t> seen; // key of output_keys() -> first output
    for (std::size_t i = 0; i < outputs.size(); ++i)
    {
        auto const & [opt, path] = outputs[i];
        if (path.empty())
            continue;
        try
        {
            io::check_writable_compression(path);
        }
        catch (io_error const & e) // a name ksieve cannot write: a usage error
        {
            throw usage_error{opt + " " + e.what()};
        }
        io::check_output_name(path);
        for (std::string & key : output_keys(path))
        {
            auto const [at, fresh] = seen.try_emplace(std::move(key), i);
            if (!fresh)
                throw usage_error{outputs[at->second].first + " and " + opt + " both write to '" +
                                  path + "'"};
        }
        if (path == "-" || path.starts_with("/dev/"))
            continue;
        std::error_code ec;
        if (std::filesystem::is_directory(path, ec)) // (follows symbolic links)
            throw io_error{opt + " '" + path + "': is a directory"};
        std::filesystem::path const dir = std::filesystem::path{path}.parent_path();
        if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
            throw io_error{"cannot write '" + path + "': directory '" + dir.string() +
                           "' does not exist"};
        if (::access(dir.empty() ? "." : dir.c_str(), W_OK) != 0)
            throw io_error{"cannot write '" + path + "': directory '" +
                           (dir.empty() ? std::string{"."} : dir.string()) + "' is not writable"};
    }
}

void check_filter_output_name(std::string const & option, std::string const & path)
{
    if (!path.empty() && !is_stdout(path) && io::names_compression(path))
        throw usage_error{option + " '" + path +
                          "': filter files are not compressed (they are used in place, "
                          "mapped from disk): name it without the compression suffix"};
    if (!path.empty() && !is_stdout(path))
        io::check_output_name(path);
}

void check_outputs_are_not_inputs(std::vector<std::string> const & outputs,
                                  std::vector<std::string> const & inputs)
{
    for (auto const & out : outputs)
    {
        std::error_code ec;
        if (out.empty() || out == "-" || !std::filesystem::is_regular_file(out, ec))
            continue;
        for (auto const & in : inputs)
            if (in != "-" && std::filesystem::equivalent(out, in, ec))
                throw usage_error{
                    "'" + out +
                    "' is both an input and an output of this run; it would be replaced"};
    }
}

filter_config make_config(filter_args const & f)
{
    filter_config cfg;
    cfg.type = f.type;
    cfg.kmer = kmer_params{f.k,      f.canonical,      hash_id::mix2k_v1, f.seed,
                           f.window, f.dust_threshold, f.spaced};
    cfg.fpr = f.fpr;
    cfg.expected = f.expected;
    // Default (0): 64 shards, fewer for tiny k so that every shard keeps at least 8 key bits.
    cfg.shard_bits = f.shards != 0 ? static_cast<unsigned>(std::bit_width(f.shards) - 1)
                                   : std::min(6u, 2 * f.k > 8 ? 2 * f.k - 8 : 0u);
    cfg.max_load = f.max_load;
    return cfg;
}

io::reader_options reader_opts(unsigned const threads, bool const keep_raw)
{
    io::reader_options o;
    o.threads = threads;
    o.keep_raw = keep_raw;
    o.batch_records = 16384;
    o.batch_bases = current_memory_plan().batch_bases; // 2 MiB, less under a small --max-memory
    return o;
}

} // namespace detail

} // namespace ksieve
