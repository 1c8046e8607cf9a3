// The label table of a labeled filter: per-label and pairwise k-mer counts, the file encoding and
// its checks, and label names taken from file names.
#include "file_sink.hpp"

#include <ksieve/filters/common/labels.hpp>
#include <ksieve/filters/support/error.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string_view>

namespace ksieve
{

namespace
{

// The encoding's little-endian appends and reads (fixed widths, field by field).
using detail::put_little_endian;

class label_reader
{
public:
    label_reader(std::span<unsigned char const> const bytes, std::string const & file)
        : bytes_{bytes}, file_{file}
    {
    }
    std::uint64_t uint(unsigned const width)
    {
        need(width);
        std::uint64_t const v = detail::load_little_endian(bytes_.data() + pos_, width);
        pos_ += width;
        return v;
    }
    std::string text(std::size_t const n)
    {
        need(n);
        std::string s{reinterpret_cast<char const *>(bytes_.data() + pos_), n};
        pos_ += n;
        return s;
    }
    [[noreturn]] void fail(std::string const & why) const
    {
        throw format_error{"'" + file_ + "': corrupted filter file (label table: " + why + ")"};
    }
    void need(std::uint64_t const n) const
    {
        if (n > bytes_.size() - pos_)
            fail("truncated");
    }
    // `n` items of at least `size` bytes each (no product that could wrap)
    void need_items(std::uint64_t const n, std::uint64_t const size) const
    {
        if (n > (bytes_.size() - pos_) / size)
            fail("truncated");
    }
    [[nodiscard]] bool at_end() const noexcept { return pos_ == bytes_.size(); }

private:
    std::span<unsigned char const> bytes_;
    std::string const & file_;
    std::size_t pos_{0};
};

} // namespace

std::vector<std::uint64_t> label_table::label_kmers() const
{
    std::vector<std::uint64_t> n(names.size(), 0);
    for (std::size_t c = 0; c < classes.size(); ++c)
        for (auto const l : classes[c])
            n[l] += class_kmers[c];
    return n;
}

std::vector<std::uint64_t> label_table::shared_kmers() const
{
    std::size_t const l = names.size();
    std::vector<std::uint64_t> m(l * l, 0);
    for (std::size_t c = 0; c < classes.size(); ++c)
        for (auto const a : classes[c])
            for (auto const b : classes[c])
                m[a * l + b] += class_kmers[c];
    return m;
}

std::vector<unsigned char> label_table::encode() const
{
    std::vector<unsigned char> out;
    put_little_endian(out, names.size(), 4);
    for (auto const & n : names)
    {
        put_little_endian(out, n.size(), 4);
        out.insert(out.end(), n.begin(), n.end());
    }
    put_little_endian(out, classes.size(), 8);
    for (std::size_t c = 0; c < classes.size(); ++c)
    {
        put_little_endian(out, classes[c].size(), 4);
        for (auto const l : classes[c])
            put_little_endian(out, l, 4);
        put_little_endian(out, class_kmers[c], 8);
    }
    return out;
}

label_table label_table::decode(std::span<unsigned char const> const bytes,
                                std::string const & file)
{
    label_reader r{bytes, file};
    label_table t;
    auto const nlabels = static_cast<std::uint32_t>(r.uint(4));
    if (nlabels == 0)
        r.fail("no label");
    r.need_items(nlabels, 5);
    std::set<std::string, std::less<>> seen;
    t.names.reserve(nlabels);
    for (std::uint32_t i = 0; i < nlabels; ++i)
    {
        auto const len = static_cast<std::size_t>(r.uint(4));
        if (len == 0)
            r.fail("an empty label name");
        t.names.push_back(r.text(len));
        if (!is_label_name(t.names.back()))
            r.fail("label '" + printable_label(t.names.back()) +
                   "' is not a label name: " + label_name_rule());
        if (!seen.insert(t.names.back()).second)
            r.fail("label '" + printable_label(t.names.back()) + "' twice");
    }
    std::uint64_t const nclasses = r.uint(8);
    r.need_items(nclasses, 16); // (at least a size, one label and a count each)
    t.classes.reserve(nclasses);
    t.class_kmers.reserve(nclasses);
    std::set<std::vector<std::uint32_t>> sets;
    for (std::uint64_t c = 0; c < nclasses; ++c)
    {
        auto const size = static_cast<std::uint32_t>(r.uint(4));
        if (size == 0 || size > nlabels)
            r.fail("class " + std::to_string(c) + " of " + std::to_string(size) + " labels");
        r.need(std::uint64_t{size} * 4);
        std::vector<std::uint32_t> set(size);
        for (auto & l : set)
            l = static_cast<std::uint32_t>(r.uint(4));
        for (std::size_t i = 0; i < size; ++i)
            if (set[i] >= nlabels || (i > 0 && set[i] <= set[i - 1]))
                r.fail("class " + std::to_string(c) + " names labels out of order or range");
        if (!sets.insert(set).second)
            r.fail("class " + std::to_string(c) + " repeats an earlier one");
        t.classes.push_back(std::move(set));
        t.class_kmers.push_back(r.uint(8));
    }
    if (!r.at_end())
        r.fail("bytes after the table");
    return t;
}

bool is_label_name(std::string_view const name) noexcept
{
    if (name.empty() || name.size() > max_label_name_bytes || name.front() == '.' ||
        name.front() == '-' || name == "ambiguous")
        return false;
    return std::all_of(name.begin(), name.end(),
                       [](char const c)
                       {
                           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
                                  c == '+';
                       });
}

std::string printable_label(std::string_view const name)
{
    constexpr std::size_t shown = 80;
    std::string out;
    for (std::size_t i = 0; i < name.size() && i < shown; ++i)
    {
        auto const c = static_cast<unsigned char>(name[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out.push_back(static_cast<char>(c));
        else
        {
            static char const hex[] = "0123456789abcdef";
            out += "\\x";
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 15]);
        }
    }
    if (name.size() > shown)
        out += "... (" + std::to_string(name.size()) + " bytes)";
    return out;
}

std::string const & label_name_rule()
{
    static std::string const rule =
        "a label name is 1 to " + std::to_string(max_label_name_bytes) +
        " letters, digits and '_', '-', '.', '+', starts with neither '.' nor '-', and is not "
        "'ambiguous'";
    return rule;
}

void check_label_name(std::string const & name)
{
    if (!is_label_name(name))
        throw usage_error{"label '" + printable_label(name) + "': " + label_name_rule()};
}

std::string label_of_path(std::string const & path)
{
    std::string const name = std::filesystem::path{path}.filename().string();
    std::size_t const dot = name.find('.');
    return dot == 0 || dot == std::string::npos ? name : name.substr(0, dot);
}

} // namespace ksieve
