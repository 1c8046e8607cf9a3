// Tests of the one filter file format (filter_file.hpp): round trip through save / mmap / view, and
// refusal of corrupted, truncated, extended, foreign, newer-version, crafted (hostile headers and
// label tables with valid checksums) and missing files, each with a message naming the file.
// Filters are sharded cuckoo filters; hand-made shard blobs exercise odd layouts (empty payloads,
// parameters of several lengths).
#include <ksieve/filters/common/filter_file.hpp>
#include <ksieve/filters/common/labels.hpp>
#include <ksieve/filters/common/sharded_filter.hpp>
#include <ksieve/filters/cuckoo/cuckoo.hpp>
#include <ksieve/filters/quotient/quotient_filter.hpp>
#include <ksieve/filters/support/checksum.hpp>
#include <ksieve/filters/support/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace
{

namespace fs = std::filesystem;
using ksieve::cuckoo_filter;
using ksieve::format_error;
using ksieve::mapped_filter_file;
using bytes_t = std::vector<unsigned char>;

#ifdef KSIEVE_SANITIZED
constexpr std::size_t exhaustive_stride = 7; // corrupt every 7th value at each sampled position
#else
constexpr std::size_t exhaustive_stride = 1; // all 255 wrong values at each sampled position
#endif

bytes_t read_bytes(fs::path const & p)
{
    std::ifstream in{p, std::ios::binary};
    return bytes_t{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

void write_bytes(fs::path const & p, bytes_t const & b)
{
    std::ofstream out{p, std::ios::binary | std::ios::trunc};
    out.write(reinterpret_cast<char const *>(b.data()), static_cast<std::streamsize>(b.size()));
    ASSERT_TRUE(out.good()) << p;
}

std::uint64_t get_u64(bytes_t const & b, std::size_t const at)
{
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
        v |= std::uint64_t{b[at + i]} << (8 * i);
    return v;
}

std::uint32_t get_u32(bytes_t const & b, std::size_t const at)
{
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
        v |= std::uint32_t{b[at + i]} << (8 * i);
    return v;
}

void put_u32(bytes_t & b, std::size_t const at, std::uint32_t const v)
{
    for (int i = 0; i < 4; ++i)
        b[at + i] = static_cast<unsigned char>(v >> (8 * i));
}

void put_u64(bytes_t & b, std::size_t const at, std::uint64_t const v)
{
    for (int i = 0; i < 8; ++i)
        b[at + i] = static_cast<unsigned char>(v >> (8 * i));
}

//! Recompute the header checksum after an intended header change (a well-formed file of another
//! kind).
void reseal_header(bytes_t & b)
{
    std::uint32_t const h = get_u32(b, 12);
    put_u64(b, h - 8, ksieve::checksum64(b.data(), h - 8));
}

std::span<std::byte const> as_bytes(bytes_t const & b)
{
    return {reinterpret_cast<std::byte const *>(b.data()), b.size()};
}

//! Where things are in a file, read from its (trusted, uncorrupted) shard table.
struct file_layout
{
    std::uint64_t header_size{0};
    std::vector<std::pair<std::uint64_t, std::uint64_t>> payloads; // [begin, end) bytes
    std::vector<std::pair<std::uint64_t, std::uint64_t>> padding;  // [begin, end) bytes, zero
    std::uint64_t end_marker{0};
};

file_layout layout_of(bytes_t const & b)
{
    file_layout l;
    l.header_size = get_u32(b, 12);
    std::uint64_t const nparams = get_u32(b, 60);
    std::uint64_t const nshards = std::uint64_t{1} << get_u32(b, 56);
    std::uint64_t pos = 64 + 8 * nparams;
    if (get_u32(b, 8) >= 2) // key split S, then ceil(S / 64) bitmap words
        pos += 8 + 8 * ((get_u64(b, pos) + 63) / 64);
    if (get_u32(b, 8) >= 3) // sampling scheme and window
        pos += 8;
    std::uint64_t prev_end = l.header_size;
    for (std::uint64_t s = 0; s < nshards; ++s)
    {
        std::uint64_t const offset = get_u64(b, pos);
        std::uint64_t const words = get_u64(b, pos + 8);
        std::uint64_t const np = get_u32(b, pos + 24);
        pos += 32 + 8 * np;
        if (offset > prev_end)
            l.padding.emplace_back(prev_end, offset);
        l.payloads.emplace_back(offset, offset + 8 * words);
        prev_end = offset + 8 * words;
    }
    l.end_marker = b.size() - 24;
    if (l.end_marker > prev_end)
        l.padding.emplace_back(prev_end, l.end_marker);
    return l;
}

class filter_file_test : public ::testing::Test
{
protected:
    void SetUp() override
    {
        dir_ = fs::temp_directory_path() /
               ("ksieve-test-filter-file-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    fs::path dir_;
};

ksieve::filter_config cuckoo_config()
{
    ksieve::filter_config cfg;
    cfg.type = ksieve::filter_type::cuckoo;
    cfg.kmer.k = 21;
    cfg.kmer.canonical = false;
    cfg.kmer.seed = 0x0123456789ABCDEFULL;
    cfg.fpr = 0.01;
    cfg.expected = 20000;
    cfg.shard_bits = 2;
    return cfg;
}

struct built
{
    ksieve::sharded_filter<cuckoo_filter> filter;
    std::vector<std::uint64_t> present;
    std::vector<std::uint64_t> absent;
};

built build_cuckoo(std::size_t const n = 20000)
{
    built b{ksieve::sharded_filter<cuckoo_filter>{cuckoo_config()}, {}, {}};
    std::mt19937_64 rng{31337};
    std::uint64_t const mask = ksieve::kmer_mask(21);
    std::unordered_set<std::uint64_t> oracle;
    while (b.present.size() < n)
    {
        std::uint64_t const k = rng() & mask;
        if (oracle.insert(k).second)
        {
            b.present.push_back(k);
            EXPECT_EQ(b.filter.insert(k), ksieve::insert_status::ok);
        }
    }
    while (b.absent.size() < 4 * n)
    {
        std::uint64_t const k = rng() & mask;
        if (!oracle.contains(k))
            b.absent.push_back(k);
    }
    return b;
}

//! The file is refused (format_error naming `name`), both by the parser and (should it ever pass)
//! the view.
::testing::AssertionResult refused(bytes_t const & b, std::string const & name,
                                   bool const verify_payload = true)
{
    try
    {
        auto const f = mapped_filter_file::from_bytes(as_bytes(b), name, verify_payload);
        if (f->header().type == ksieve::filter_type::cuckoo)
            ksieve::sharded_filter<cuckoo_filter> const view{f};
        return ::testing::AssertionFailure() << "accepted";
    }
    catch (format_error const & e)
    {
        if (std::string{e.what()}.find(name) == std::string::npos)
            return ::testing::AssertionFailure() << "message does not name the file: " << e.what();
        return ::testing::AssertionSuccess();
    }
    catch (std::exception const & e)
    {
        return ::testing::AssertionFailure() << "wrong exception type: " << e.what();
    }
}

//! Same through a real file and mmap.
::testing::AssertionResult refused_on_open(fs::path const & p)
{
    try
    {
        auto const f = mapped_filter_file::open(p);
        if (f->header().type == ksieve::filter_type::cuckoo)
            ksieve::sharded_filter<cuckoo_filter> const view{f};
        return ::testing::AssertionFailure() << "accepted";
    }
    catch (format_error const & e)
    {
        if (std::string{e.what()}.find(p.string()) == std::string::npos)
            return ::testing::AssertionFailure() << "message does not name the file: " << e.what();
        return ::testing::AssertionSuccess();
    }
    catch (std::exception const & e)
    {
        return ::testing::AssertionFailure() << "wrong exception type: " << e.what();
    }
}

TEST_F(filter_file_test, round_trip_keeps_header_and_answers)
{
    auto const b = build_cuckoo();
    fs::path const path = dir_ / "reads.ksf";
    b.filter.save(path);
    auto const file = mapped_filter_file::open(path);
    auto const & h = file->header();
    EXPECT_EQ(h.type, ksieve::filter_type::cuckoo);
    EXPECT_EQ(h.kmer.k, 21u);
    EXPECT_FALSE(h.kmer.canonical);
    EXPECT_EQ(h.kmer.seed, 0x0123456789ABCDEFULL);
    EXPECT_EQ(h.kmer.hash, ksieve::hash_id::mix2k_v1);
    EXPECT_EQ(h.fpr, 0.01);
    EXPECT_EQ(h.expected, 20000u);
    EXPECT_EQ(h.shard_bits, 2u);
    EXPECT_EQ(file->file_size(), fs::file_size(path));
    ASSERT_EQ(file->shards().size(), 4u);
    for (std::size_t i = 0; i < 4; ++i)
    {
        auto const & s = file->shards()[i];
        EXPECT_EQ(s.params, b.filter.shard(i).params());
        ASSERT_EQ(s.words.size(), b.filter.shard(i).words().size());
        EXPECT_TRUE(std::equal(s.words.begin(), s.words.end(), b.filter.shard(i).words().begin()));
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s.words.data()) % 64, 0u)
            << "payloads are 64-byte aligned";
    }

    ksieve::sharded_filter<cuckoo_filter> const view{file};
    EXPECT_EQ(view.kmer(), b.filter.kmer());
    EXPECT_EQ(view.shard_bits(), 2u);
    EXPECT_EQ(view.target_fpr(), 0.01);
    EXPECT_EQ(view.expected(), 20000u);
    EXPECT_TRUE(view.shard(0).is_view());
    for (auto const k : b.present)
        ASSERT_EQ(view.count(k), 1u);
    std::uint64_t fp = 0;
    for (auto const k : b.absent)
    {
        ASSERT_EQ(view.count(k), b.filter.count(k));
        fp += view.count(k);
    }
    EXPECT_LE(static_cast<double>(fp) / static_cast<double>(b.absent.size()), 1.5 * 0.01);
    EXPECT_EQ(view.stats().used, b.filter.stats().used);
    // Batch lookups through the view per shard agree too.
    for (std::size_t s = 0; s < 4; ++s)
    {
        std::vector<std::uint64_t> local;
        for (auto const k : b.present)
            if (view.shard_of(k) == s)
                local.push_back(view.local_key(k));
        std::vector<std::uint64_t> out(local.size(), 0);
        view.count_batch(s, local, out.data());
        EXPECT_TRUE(
            std::all_of(out.begin(), out.end(), [](std::uint64_t const c) { return c == 1; }));
    }

    // The header alone, and an in-memory image, read the same.
    auto const h2 = ksieve::read_filter_header(path);
    EXPECT_EQ(h2.kmer, h.kmer);
    EXPECT_EQ(h2.shard_bits, h.shard_bits);
    auto const bytes = read_bytes(path);
    auto const mem = mapped_filter_file::from_bytes(as_bytes(bytes), "in-memory");
    EXPECT_EQ(mem->shards()[3].params, file->shards()[3].params);

    // A mutable copy of the loaded filter continues like the original.
    auto copy = view.clone();
    auto original = b.filter.clone();
    for (std::size_t i = 0; i < 1000; ++i)
    {
        EXPECT_EQ(copy->insert(b.absent[i]), ksieve::insert_status::ok);
        original->insert(b.absent[i]);
    }
    fs::path const p1 = dir_ / "copy.ksf", p2 = dir_ / "original.ksf";
    copy->save(p1);
    original->save(p2);
    EXPECT_EQ(read_bytes(p1), read_bytes(p2));
}

TEST_F(filter_file_test, same_inserts_give_byte_identical_files)
{
    fs::path const p1 = dir_ / "a.ksf", p2 = dir_ / "b.ksf";
    build_cuckoo().filter.save(p1);
    build_cuckoo().filter.save(p2);
    EXPECT_EQ(read_bytes(p1), read_bytes(p2));
    // Saving over an existing file replaces it and leaves no temporary file behind.
    build_cuckoo(100).filter.save(p1);
    EXPECT_NE(read_bytes(p1), read_bytes(p2));
    std::size_t files = 0;
    for ([[maybe_unused]] auto const & e : fs::directory_iterator{dir_})
        ++files;
    EXPECT_EQ(files, 2u);
}

// Payload checks spread over threads report the lowest corrupted shard whatever the thread count,
// and giving back each checked shard's pages loses nothing: the words read afterwards are the
// file's.
TEST_F(filter_file_test, threaded_payload_checks_report_the_lowest_bad_shard_and_keep_the_words)
{
    auto const b = build_cuckoo();
    fs::path const good = dir_ / "good.ksf", bad = dir_ / "bad.ksf";
    b.filter.save(good);
    bytes_t bytes = read_bytes(good);
    file_layout const l = layout_of(bytes);
    ASSERT_EQ(l.payloads.size(), 4u);
    for (std::size_t const s : {3u, 1u})
    {
        ASSERT_LT(l.payloads[s].first, l.payloads[s].second);
        bytes[(l.payloads[s].first + l.payloads[s].second) / 2] ^= 0x10;
    }
    write_bytes(bad, bytes);
    for (unsigned const threads : {1u, 2u, 3u, 8u})
        for (bool const release : {false, true})
        {
            ksieve::load_options const opts{.threads = threads, .release_verified = release};
            try
            {
                (void)mapped_filter_file::open(bad, opts);
                ADD_FAILURE() << "accepted with " << threads << " threads";
            }
            catch (format_error const & e)
            {
                std::string const what = e.what();
                EXPECT_NE(what.find(bad.string()), std::string::npos) << what;
                EXPECT_NE(what.find("checksum mismatch in shard 1"), std::string::npos)
                    << threads << ": " << what;
            }
            auto const f = mapped_filter_file::open(good, opts);
            ASSERT_EQ(f->shards().size(), 4u);
            for (std::size_t s = 0; s < 4; ++s)
            {
                auto const words = b.filter.shard(s).words();
                ASSERT_TRUE(std::equal(words.begin(), words.end(), f->shards()[s].words.begin(),
                                       f->shards()[s].words.end()))
                    << "shard " << s << ", " << threads << " threads";
            }
        }
}

// Every single-byte corruption at >= 300 sampled positions (the whole header and shard table, the
// start, end and random interior bytes of each payload, all padding bytes, the whole end marker),
// each with all 255 wrong byte values, is refused with a format_error naming the file.
TEST_F(filter_file_test, every_sampled_single_byte_corruption_is_refused)
{
    auto const b = build_cuckoo();
    fs::path const path = dir_ / "good.ksf";
    b.filter.save(path);
    bytes_t const good = read_bytes(path);
    ASSERT_FALSE(good.empty());
    file_layout const l = layout_of(good);
    ASSERT_EQ(l.payloads.size(), 4u);
    ASSERT_FALSE(l.padding.empty()) << "the sample must contain padding";

    std::set<std::uint64_t> positions;
    std::set<std::string> regions_hit;
    for (std::uint64_t i = 0; i < l.header_size; ++i)
        positions.insert(i);
    regions_hit.insert("header");
    std::mt19937_64 rng{4};
    for (auto const & [begin, end] : l.payloads)
    {
        ASSERT_GE(end - begin, 64u);
        for (std::uint64_t i = 0; i < 16; ++i)
        {
            positions.insert(begin + i);
            positions.insert(end - 1 - i);
        }
        for (int i = 0; i < 40; ++i)
            positions.insert(begin + rng() % (end - begin));
        regions_hit.insert("payload " + std::to_string(begin));
    }
    std::size_t padding_bytes = 0;
    for (auto const & [begin, end] : l.padding)
        for (std::uint64_t i = begin; i < end; ++i, ++padding_bytes)
            positions.insert(i);
    for (std::uint64_t i = l.end_marker; i < good.size(); ++i)
        positions.insert(i);
    EXPECT_GT(padding_bytes, 0u);
    ASSERT_GE(positions.size(), 300u);

    std::string const name = path.string();
    std::size_t checked = 0;
    for (auto const pos : positions)
    {
        bytes_t bad = good;
        for (unsigned v = 1; v < 256; v += static_cast<unsigned>(exhaustive_stride))
        {
            bad[pos] = static_cast<unsigned char>(good[pos] ^ v);
            ASSERT_TRUE(refused(bad, name))
                << "byte " << pos << " xor " << v << " of " << good.size();
            ++checked;
        }
    }
    EXPECT_GE(checked, positions.size() * (255 / exhaustive_stride));
    RecordProperty("positions", static_cast<int>(positions.size()));
    RecordProperty("corruptions", static_cast<int>(checked));

    // The same through real files and mmap, one corruption per position.
    fs::path const bad_path = dir_ / "bad.ksf";
    for (auto const pos : positions)
    {
        bytes_t bad = good;
        bad[pos] ^= static_cast<unsigned char>(1u << (pos % 8));
        write_bytes(bad_path, bad);
        ASSERT_TRUE(refused_on_open(bad_path)) << "byte " << pos;
    }
    // The good file still opens (the loop above did not test a vacuous refusal).
    EXPECT_NO_THROW((void)mapped_filter_file::open(path));
}

TEST_F(filter_file_test, truncated_files_are_refused)
{
    auto const b = build_cuckoo(5000);
    fs::path const path = dir_ / "full.ksf";
    b.filter.save(path);
    bytes_t const good = read_bytes(path);
    file_layout const l = layout_of(good);
    std::set<std::uint64_t> lengths = {0,
                                       1,
                                       7,
                                       8,
                                       12,
                                       16,
                                       63,
                                       64,
                                       l.header_size - 8,
                                       l.header_size - 1,
                                       l.header_size,
                                       l.header_size + 1};
    for (std::uint64_t len = 0; len < good.size(); len += 97)
        lengths.insert(len);
    for (auto const & [begin, end] : l.payloads)
    {
        lengths.insert(begin);
        lengths.insert(end);
        lengths.insert(end - 8);
    }
    for (std::uint64_t i = 1; i <= 25; ++i)
        lengths.insert(good.size() - i);
    fs::path const cut = dir_ / "cut.ksf";
    for (auto const len : lengths)
    {
        bytes_t const t(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len));
        write_bytes(cut, t);
        ASSERT_TRUE(refused_on_open(cut)) << "length " << len << " of " << good.size();
        ASSERT_TRUE(refused(t, "truncated-image")) << "length " << len;
    }
}

TEST_F(filter_file_test, appended_bytes_are_refused)
{
    auto const b = build_cuckoo(5000);
    fs::path const path = dir_ / "full.ksf";
    b.filter.save(path);
    bytes_t const good = read_bytes(path);
    bytes_t const end_marker(good.end() - 24, good.end());
    std::vector<bytes_t> tails = {{0},        {0xFF}, bytes_t(8, 0), bytes_t(24, 0), bytes_t(64, 0),
                                  end_marker, good};
    fs::path const longer = dir_ / "longer.ksf";
    for (auto const & tail : tails)
    {
        bytes_t t = good;
        t.insert(t.end(), tail.begin(), tail.end());
        write_bytes(longer, t);
        EXPECT_TRUE(refused_on_open(longer)) << tail.size() << " bytes appended";
    }
    // Even with the size field in the end marker adjusted, a misplaced end marker is refused.
    bytes_t t = good;
    t.insert(t.end() - 24, 64, 0);
    put_u64(t, t.size() - 16, t.size());
    write_bytes(longer, t);
    EXPECT_TRUE(refused_on_open(longer));
}

TEST_F(filter_file_test, newer_format_version_is_refused_with_a_clear_message)
{
    auto const b = build_cuckoo(1000);
    fs::path const path = dir_ / "new.ksf";
    b.filter.save(path);
    bytes_t good = read_bytes(path);
    ASSERT_EQ(get_u32(good, 8), ksieve::unmasked_format_version);
    for (std::uint32_t const v : {ksieve::filter_format_version + 1, 9u, 0xFFFFFFFFu})
    {
        bytes_t newer = good;
        put_u32(newer, 8, v);
        reseal_header(newer); // a well-formed file of that version
        write_bytes(path, newer);
        try
        {
            (void)mapped_filter_file::open(path);
            ADD_FAILURE() << "version " << v << " accepted";
        }
        catch (format_error const & e)
        {
            std::string const what = e.what();
            EXPECT_NE(what.find(path.string()), std::string::npos) << what;
            EXPECT_NE(what.find("newer ksieve"), std::string::npos) << what;
            EXPECT_NE(what.find(std::to_string(v)), std::string::npos) << what;
        }
    }
    // Version 0 never existed: corrupted.
    bytes_t zero = good;
    put_u32(zero, 8, 0);
    reseal_header(zero);
    EXPECT_TRUE(refused(zero, "v0.ksf"));
}

TEST_F(filter_file_test, foreign_files_are_refused)
{
    std::mt19937_64 rng{1};
    std::vector<std::pair<std::string, bytes_t>> foreign;
    bytes_t random(4096);
    for (auto & x : random)
        x = static_cast<unsigned char>(rng());
    foreign.emplace_back("random.bin", random);
    std::string const fasta =
        ">read1 sample\nACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT\n>read2\nNNNNACGT\n";
    foreign.emplace_back("reads.fa", bytes_t(fasta.begin(), fasta.end()));
    foreign.emplace_back("empty.ksf", bytes_t{});
    foreign.emplace_back("gzip.gz", bytes_t{0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03,
                                            0x03, 0,    0,    0,    0, 0, 0, 0, 0, 0});
    std::string const magic_only = "KSIEVEfl";
    foreign.emplace_back("magic-only.ksf", bytes_t(magic_only.begin(), magic_only.end()));
    bytes_t magic_then_random = random;
    std::copy(magic_only.begin(), magic_only.end(), magic_then_random.begin());
    foreign.emplace_back("magic-then-random.ksf", magic_then_random);
    for (auto const & [name, content] : foreign)
    {
        fs::path const p = dir_ / name;
        write_bytes(p, content);
        EXPECT_TRUE(refused_on_open(p)) << name;
        try
        {
            (void)mapped_filter_file::open(p);
        }
        catch (format_error const & e)
        {
            if (name == "random.bin" || name == "reads.fa" || name == "gzip.gz")
            {
                EXPECT_NE(std::string{e.what()}.find("not a ksieve filter file"), std::string::npos)
                    << e.what();
            }
        }
    }
}

TEST_F(filter_file_test, missing_file_is_an_io_error_naming_the_path)
{
    fs::path const p = dir_ / "does-not-exist.ksf";
    try
    {
        (void)mapped_filter_file::open(p);
        FAIL() << "opened a missing file";
    }
    catch (ksieve::io_error const & e)
    {
        EXPECT_NE(std::string{e.what()}.find(p.string()), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)ksieve::read_filter_header(p), ksieve::io_error);
    // A directory is not a filter file either.
    try
    {
        (void)mapped_filter_file::open(dir_);
        FAIL() << "opened a directory";
    }
    catch (ksieve::error const & e)
    {
        EXPECT_NE(std::string{e.what()}.find(dir_.string()), std::string::npos) << e.what();
    }
    // Writing into a missing directory: io_error naming the file, nothing created.
    auto const b = build_cuckoo(100);
    fs::path const nowhere = dir_ / "no-such-dir" / "f.ksf";
    try
    {
        b.filter.save(nowhere);
        FAIL() << "saved into a missing directory";
    }
    catch (ksieve::io_error const & e)
    {
        EXPECT_NE(std::string{e.what()}.find("no-such-dir"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir_ / "no-such-dir"));
}

// Hand-made shards: empty payloads, payloads not a multiple of 64 bytes, parameters of several
// lengths.
struct hand_made
{
    ksieve::filter_file_header header;
    std::vector<std::vector<std::uint64_t>> words;
    std::vector<std::vector<std::uint64_t>> params;
};

hand_made make_hand_made()
{
    hand_made h;
    h.header.type = ksieve::filter_type::bloom;
    h.header.kmer = ksieve::kmer_params{5, true, ksieve::hash_id::mix2k_v1, 99};
    h.header.fpr = 0.25;
    h.header.expected = 12345;
    h.header.shard_bits = 2;
    h.header.params = {7, ~std::uint64_t{0}};
    h.words = {{},
               {0xDEADBEEF},
               std::vector<std::uint64_t>(8, 0x0101010101010101ULL),
               {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}};
    h.params = {{}, {1, 2, 3}, {42}, {}};
    return h;
}

void write_hand_made(fs::path const & p, hand_made const & h)
{
    std::vector<ksieve::shard_blob> blobs;
    for (std::size_t i = 0; i < h.words.size(); ++i)
        blobs.push_back(ksieve::shard_blob{h.params[i], h.words[i]});
    ksieve::write_filter_file(p, h.header, blobs);
}

TEST_F(filter_file_test, hand_made_shards_round_trip)
{
    hand_made const h = make_hand_made();
    fs::path const p = dir_ / "hand.ksf";
    write_hand_made(p, h);
    auto const f = mapped_filter_file::open(p);
    EXPECT_EQ(f->header().type, ksieve::filter_type::bloom);
    EXPECT_EQ(f->header().kmer, h.header.kmer);
    EXPECT_EQ(f->header().fpr, 0.25);
    EXPECT_EQ(f->header().expected, 12345u);
    EXPECT_EQ(f->header().shard_bits, 2u);
    EXPECT_EQ(f->header().params, h.header.params);
    ASSERT_EQ(f->shards().size(), 4u);
    for (std::size_t i = 0; i < 4; ++i)
    {
        EXPECT_EQ(f->shards()[i].params, h.params[i]);
        EXPECT_EQ(
            std::vector<std::uint64_t>(f->shards()[i].words.begin(), f->shards()[i].words.end()),
            h.words[i]);
    }
    EXPECT_EQ(fs::file_size(p) % 64, 24u) << "64-byte aligned blocks, then the 24-byte end marker";

    std::vector<ksieve::shard_blob> three(3);
    EXPECT_THROW(ksieve::write_filter_file(dir_ / "x.ksf", h.header, three), ksieve::error);
    EXPECT_FALSE(fs::exists(dir_ / "x.ksf"));
}

// Shards of megabytes at offsets that are not multiples of the disk block: a regular file (written
// past the page cache where the file system allows it, through an aligned staging buffer) holds the
// same bytes as the same file written into a pipe, and reads back shard for shard.
TEST_F(filter_file_test, large_files_hold_the_bytes_written_into_a_pipe)
{
    hand_made h = make_hand_made();
    std::mt19937_64 rng{7};
    std::size_t const sizes[] = {393219, 0, 655363,
                                 1179655}; // words: 3, 0, 5 and 9 MiB and a few bytes
    for (std::size_t s = 0; s < 4; ++s)
    {
        h.words[s].resize(sizes[s]);
        for (auto & w : h.words[s])
            w = rng();
    }
    fs::path const file = dir_ / "large.ksf";
    write_hand_made(file, h);
    fs::path const fifo = dir_ / "large.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    bytes_t piped;
    std::thread reader{[&] { piped = read_bytes(fifo); }};
    write_hand_made(fifo, h);
    reader.join();
    bytes_t const stored = read_bytes(file);
    ASSERT_GT(stored.size(), std::size_t{17} << 20);
    EXPECT_TRUE(stored == piped) << stored.size() << " bytes in the file, " << piped.size()
                                 << " through the pipe";
    auto const f = mapped_filter_file::open(file);
    ASSERT_EQ(f->shards().size(), 4u);
    for (std::size_t s = 0; s < 4; ++s)
        EXPECT_TRUE(std::equal(f->shards()[s].words.begin(), f->shards()[s].words.end(),
                               h.words[s].begin(), h.words[s].end()))
            << "shard " << s;
}

// Small enough to corrupt every byte with every wrong value.
TEST_F(filter_file_test, hand_made_every_single_byte_corruption_is_refused)
{
    hand_made const h = make_hand_made();
    fs::path const p = dir_ / "hand.ksf";
    write_hand_made(p, h);
    bytes_t const good = read_bytes(p);
    file_layout const l = layout_of(good);
    EXPECT_EQ(l.payloads[0].first, l.payloads[0].second) << "shard 0 is empty";
    std::string const name = p.string();
    for (std::size_t pos = 0; pos < good.size(); ++pos)
    {
        bytes_t bad = good;
        for (unsigned v = 1; v < 256; ++v)
        {
            bad[pos] = static_cast<unsigned char>(good[pos] ^ v);
            ASSERT_TRUE(refused(bad, name))
                << "byte " << pos << " xor " << v << " of " << good.size();
        }
    }
    EXPECT_NO_THROW((void)mapped_filter_file::from_bytes(as_bytes(good), name));
}

// The documented trade-off of verify_payload = false (used when a caller verifies lazily): header,
// table, padding and end marker are still checked, payload words are not.
TEST_F(filter_file_test, without_payload_verification_only_the_payload_is_unchecked)
{
    hand_made const h = make_hand_made();
    fs::path const p = dir_ / "hand.ksf";
    write_hand_made(p, h);
    bytes_t const good = read_bytes(p);
    file_layout const l = layout_of(good);
    std::string const name = p.string();
    for (std::size_t pos = 0; pos < good.size(); ++pos)
    {
        bool const in_payload =
            std::any_of(l.payloads.begin(), l.payloads.end(),
                        [&](auto const & r) { return pos >= r.first && pos < r.second; });
        bytes_t bad = good;
        bad[pos] ^= 0x10;
        if (in_payload)
        {
            EXPECT_NO_THROW((void)mapped_filter_file::from_bytes(as_bytes(bad), name, false))
                << pos;
            EXPECT_TRUE(refused(bad, name, true)) << pos;
        }
        else
        {
            EXPECT_TRUE(refused(bad, name, false)) << pos;
        }
    }
}

} // namespace

// Format version 2 records the key parts a filter holds (build --part I/S); bitmaps of several
// words.
TEST_F(filter_file_test, key_parts_round_trip_and_are_validated)
{
    hand_made h = make_hand_made();
    for (std::uint64_t const split : {3u, 64u, 70u, 200u})
    {
        SCOPED_TRACE(split);
        ksieve::key_parts parts = ksieve::key_parts::one(1, split);
        parts.add(ksieve::key_parts::one(split - 1, split));
        h.header.parts = parts;
        fs::path const p = dir_ / "parts.ksf";
        write_hand_made(p, h);
        auto const f = mapped_filter_file::open(p);
        EXPECT_EQ(f->header().version, ksieve::unmasked_format_version);
        EXPECT_EQ(f->header().parts, parts);
        EXPECT_EQ(f->header().parts.list(), (std::vector<std::uint64_t>{1, split - 1}));

        // Well-formed headers (resealed) with an invalid split or bitmap are refused as corrupted.
        bytes_t const good = read_bytes(p);
        std::size_t const at = 64 + 8 * h.header.params.size(); // the split field
        ASSERT_EQ(get_u64(good, at), split);
        auto refused_with = [&](bytes_t bad, std::string const & what)
        {
            reseal_header(bad);
            try
            {
                (void)mapped_filter_file::from_bytes(as_bytes(bad), p.string());
                return ::testing::AssertionFailure() << what << " accepted";
            }
            catch (format_error const & e)
            {
                if (std::string{e.what()}.find(p.string()) == std::string::npos)
                    return ::testing::AssertionFailure() << e.what();
                return ::testing::AssertionSuccess();
            }
        };
        bytes_t bad = good;
        put_u64(bad, at, 0);
        EXPECT_TRUE(refused_with(bad, "split 0"));
        bad = good;
        put_u64(bad, at, ksieve::key_parts::max_split + 1);
        EXPECT_TRUE(refused_with(bad, "split too large"));
        bad = good;
        for (std::size_t w = 0; w < (split + 63) / 64; ++w)
            put_u64(bad, at + 8 + 8 * w, 0);
        EXPECT_TRUE(refused_with(bad, "no part held"));
        if (split % 64 != 0)
        {
            bad = good;
            std::size_t const last = at + 8 + 8 * (split / 64);
            put_u64(bad, last, get_u64(bad, last) | (std::uint64_t{1} << (split % 64)));
            EXPECT_TRUE(refused_with(bad, "a part beyond the split"));
        }
    }
    // Every part held is stored as the whole key space.
    ksieve::key_parts all = ksieve::key_parts::one(0, 2);
    all.add(ksieve::key_parts::one(1, 2));
    EXPECT_EQ(all, ksieve::key_parts::whole());
    h.header.parts = all;
    write_hand_made(dir_ / "all.ksf", h);
    EXPECT_EQ(mapped_filter_file::open(dir_ / "all.ksf")->header().parts,
              ksieve::key_parts::whole());
}

// Older versions are still read: version 2 (no sampling fields) holds every k-mer, version 1 (no
// key split fields either) the whole key space.
TEST_F(filter_file_test, version_1_and_2_files_are_read_as_every_kmer_of_the_whole_key_space)
{
    hand_made h = make_hand_made();
    h.header.parts = ksieve::key_parts::one(2, 5);
    h.header.kmer.window = 15;
    fs::path const p = dir_ / "v3.ksf";
    write_hand_made(p, h);
    bytes_t const v3 = read_bytes(p);
    {
        auto const f = mapped_filter_file::from_bytes(as_bytes(v3), "v3.ksf");
        EXPECT_EQ(f->header().kmer.window, 15u);
        EXPECT_EQ(f->header().parts, h.header.parts);
    }
    // Drop `dropped` header bytes at `at`, keep every payload where it is (their offsets are in the
    // shard table) by adding as many zero bytes of padding after the header.
    std::uint32_t const header_size = get_u32(v3, 12);
    std::size_t const split_at = 64 + 8 * h.header.params.size();
    auto older = [&](std::uint32_t const version, std::size_t const at, std::size_t const dropped)
    {
        bytes_t b(v3.begin(), v3.begin() + static_cast<std::ptrdiff_t>(at));
        b.insert(b.end(), v3.begin() + static_cast<std::ptrdiff_t>(at + dropped),
                 v3.begin() + header_size);
        b.insert(b.end(), dropped, 0);
        b.insert(b.end(), v3.begin() + header_size, v3.end());
        put_u32(b, 8, version);
        put_u32(b, 12, header_size - static_cast<std::uint32_t>(dropped));
        reseal_header(b);
        return b;
    };
    bytes_t const v2 = older(2, split_at + 16, 8);
    bytes_t const v1 = older(1, split_at, 24);
    for (auto const & [bytes, version] : {std::pair{v1, 1u}, std::pair{v2, 2u}})
    {
        ASSERT_EQ(bytes.size(), v3.size());
        auto const f = mapped_filter_file::from_bytes(as_bytes(bytes), "old.ksf");
        EXPECT_EQ(f->header().version, version);
        EXPECT_EQ(f->header().kmer.window, 1u);
        EXPECT_EQ(f->header().parts, version == 1 ? ksieve::key_parts::whole() : h.header.parts);
        EXPECT_EQ(f->header().params, h.header.params);
        ASSERT_EQ(f->shards().size(), 4u);
        for (std::size_t i = 0; i < 4; ++i)
        {
            EXPECT_EQ(f->shards()[i].params, h.params[i]);
            EXPECT_EQ(std::vector<std::uint64_t>(f->shards()[i].words.begin(),
                                                 f->shards()[i].words.end()),
                      h.words[i]);
        }
    }
    // The same bytes labelled with a newer version are refused (the header lacks what that version
    // needs).
    bytes_t mislabelled = v1;
    put_u32(mislabelled, 8, 2);
    reseal_header(mislabelled);
    EXPECT_TRUE(refused(mislabelled, "v1-as-v2.ksf"));
    // A sampling window out of range, or disagreeing with its scheme, is refused.
    std::size_t const sampling_at = split_at + 16;
    for (auto const & [scheme, window] : std::vector<std::pair<std::uint32_t, std::uint32_t>>{
             {0, 15}, {1, 1}, {1, 0}, {1, 5000}, {2, 15}})
    {
        bytes_t bad = v3;
        put_u32(bad, sampling_at, scheme);
        put_u32(bad, sampling_at + 4, window);
        reseal_header(bad);
        EXPECT_TRUE(refused(bad, "bad-sampling.ksf")) << scheme << " " << window;
    }
}

// key_parts against a std::set oracle: unions, completeness, descriptions, first_incomplete_split.
TEST(key_parts, unions_and_descriptions_match_a_set_oracle)
{
    using ksieve::key_parts;
    std::mt19937_64 rng{7};
    for (int trial = 0; trial < 300; ++trial)
    {
        std::uint64_t const split = 1 + rng() % 150;
        std::set<std::uint64_t> oracle;
        key_parts p = key_parts::one(rng() % split, split);
        std::vector<std::uint64_t> const first = p.list();
        oracle.insert(first.begin(), first.end());
        int const adds = static_cast<int>(rng() % 8);
        for (int a = 0; a < adds && !p.complete(); ++a)
        {
            std::uint64_t const i = rng() % split;
            p.add(key_parts::one(i, split));
            oracle.insert(i);
        }
        bool const full = oracle.size() == split;
        EXPECT_EQ(p.complete(), full);
        if (full)
        {
            EXPECT_EQ(p, key_parts::whole());
            EXPECT_EQ(p.describe(), "all");
            continue;
        }
        EXPECT_EQ(p.list(), std::vector<std::uint64_t>(oracle.begin(), oracle.end()));
        for (std::uint64_t i = 0; i < split; ++i)
            EXPECT_EQ(p.has(i), oracle.contains(i));
        // every part named in describe() is held, every one in describe_missing() is not
        std::string const d = p.describe(), m = p.describe_missing();
        EXPECT_NE(d.find(" of " + std::to_string(split)), std::string::npos) << d;
        EXPECT_EQ(d.rfind(oracle.size() == 1 ? "part " : "parts ", 0), 0u) << d;
        EXPECT_NE(d.find(std::to_string(*oracle.begin())), std::string::npos) << d;
        EXPECT_NE(d.find(std::to_string(*oracle.rbegin())), std::string::npos) << d;
        std::uint64_t first_missing = 0;
        while (oracle.contains(first_missing))
            ++first_missing;
        EXPECT_EQ(m.find(std::to_string(first_missing)), m.find_first_of("0123456789")) << m;
    }
    EXPECT_EQ(key_parts::one(2, 4).describe(), "part 2 of 4");
    key_parts p = key_parts::one(0, 10);
    for (std::uint64_t const i : {1u, 2u, 3u, 5u, 7u, 8u})
        p.add(key_parts::one(i, 10));
    EXPECT_EQ(p.describe(), "parts 0-3, 5, 7, 8 of 10");
    EXPECT_EQ(p.describe_missing(), "parts 4, 6, 9 of 10");

    // first_incomplete_split: splits are completed separately; whole filters complete nothing.
    std::vector<key_parts> v{key_parts::whole(), key_parts::one(0, 2), key_parts::one(1, 3),
                             key_parts::one(1, 2)};
    EXPECT_EQ(ksieve::first_incomplete_split(v), 2u) << "split 3 lacks parts 0 and 2";
    v.push_back(key_parts::one(0, 3));
    v.push_back(key_parts::one(2, 3));
    EXPECT_EQ(ksieve::first_incomplete_split(v), v.size());
    v.push_back(key_parts::one(3, 5));
    EXPECT_EQ(ksieve::first_incomplete_split(v), v.size() - 1);
    EXPECT_EQ(ksieve::first_incomplete_split(std::vector<key_parts>{}), 0u);
}

// part_of must not depend on the top bits that pick shards and quotients (a part of a filter with
// few shards would crowd the slots of the shards a plain key range cuts through): for keys of every
// top-bits slice, each part gets its share. Also: every key in exactly one part, the same part
// every time.
TEST(key_parts, parts_spread_over_every_slice_of_the_key_space)
{
    std::mt19937_64 rng{3};
    for (unsigned const key_bits : {30u, 50u, 64u})
        for (std::uint64_t const split : {2u, 3u, 7u, 64u})
        {
            SCOPED_TRACE(std::to_string(key_bits) + " bits, split " + std::to_string(split));
            constexpr std::size_t slices = 16, per_slice = 20000;
            for (std::size_t slice = 0; slice < slices; ++slice)
            {
                std::vector<std::size_t> in_part(split, 0);
                for (std::size_t j = 0; j < per_slice; ++j)
                {
                    std::uint64_t const low =
                        key_bits == 64 ? rng() >> 4
                                       : rng() & ((std::uint64_t{1} << (key_bits - 4)) - 1);
                    std::uint64_t const key = (std::uint64_t{slice} << (key_bits - 4)) | low;
                    std::uint64_t const p = ksieve::key_parts::part_of(key, split);
                    ASSERT_LT(p, split);
                    ASSERT_EQ(ksieve::key_parts::part_of(key, split), p);
                    ++in_part[p];
                }
                double const share = static_cast<double>(per_slice) / static_cast<double>(split);
                for (std::uint64_t p = 0; p < split; ++p)
                    EXPECT_NEAR(static_cast<double>(in_part[p]), share, 0.2 * share + 30)
                        << "slice " << slice << " part " << p;
            }
        }
}

// A masked filter is written as version 4 with its mask after the sampling fields, read back equal;
// resealed headers with a mask the format does not allow are refused as corrupted, naming the file.
TEST_F(filter_file_test, masks_round_trip_and_are_validated)
{
    hand_made h = make_hand_made();
    h.header.kmer = ksieve::kmer_params{31, true, ksieve::hash_id::mix2k_v1, 99, 11, 150};
    fs::path const p = dir_ / "mask.ksf";
    write_hand_made(p, h);
    auto const f = mapped_filter_file::open(p);
    EXPECT_EQ(f->header().version, ksieve::masked_format_version);
    EXPECT_EQ(f->header().kmer, h.header.kmer);
    bytes_t const good = read_bytes(p);
    ASSERT_EQ(get_u32(good, 8), 4u);
    std::size_t const at = 64 + 8 * h.header.params.size() + 16 + 8; // after the sampling fields
    ASSERT_EQ(get_u32(good, at - 4), 11u);
    ASSERT_EQ(get_u32(good, at), ksieve::mask_dust);
    ASSERT_EQ(get_u32(good, at + 4), 150u);
    auto refused_with =
        [&](std::uint32_t const scheme, std::uint32_t const threshold, std::uint32_t const window)
    {
        bytes_t bad = good;
        put_u32(bad, at - 8, window > 1 ? ksieve::sampling_minimizer : ksieve::sampling_none);
        put_u32(bad, at - 4, window);
        put_u32(bad, at, scheme);
        put_u32(bad, at + 4, threshold);
        reseal_header(bad);
        try
        {
            (void)mapped_filter_file::from_bytes(as_bytes(bad), p.string());
            return ::testing::AssertionFailure()
                   << scheme << " " << threshold << " " << window << " accepted";
        }
        catch (format_error const & e)
        {
            if (std::string{e.what()}.find(p.string()) == std::string::npos)
                return ::testing::AssertionFailure() << e.what();
            return ::testing::AssertionSuccess();
        }
    };
    EXPECT_TRUE(refused_with(2, 150, 11));                   // unknown scheme
    EXPECT_TRUE(refused_with(ksieve::mask_dust, 0, 11));     // no threshold
    EXPECT_TRUE(refused_with(ksieve::mask_dust, 1501, 11));  // above 15
    EXPECT_TRUE(refused_with(ksieve::mask_none, 150, 11));   // none with a threshold
    EXPECT_TRUE(refused_with(ksieve::mask_dust, 150, 1));    // no sampling
    EXPECT_FALSE(refused_with(ksieve::mask_dust, 1500, 11)); // the largest
    EXPECT_FALSE(refused_with(ksieve::mask_none, 0, 11));    // none, written as 4
}

// A filter of spaced k-mers is written as version 6 with its pattern and a label flag after the
// mask fields, read back equal; patterns the format does not allow are refused as corrupted.
TEST_F(filter_file_test, spaced_patterns_round_trip_and_are_validated)
{
    hand_made h = make_hand_made();
    std::uint32_t const pattern = 0x7def7bdf; // 31 positions, 5, 10, 15, 20, 25 ignored
    h.header.kmer = ksieve::kmer_params{31, true, ksieve::hash_id::mix2k_v1, 99, 8, 0, pattern};
    ASSERT_TRUE(ksieve::valid_spaced(31, true, pattern));
    fs::path const p = dir_ / "spaced.ksf";
    write_hand_made(p, h);
    auto const f = mapped_filter_file::open(p);
    EXPECT_EQ(f->header().version, ksieve::filter_format_version);
    EXPECT_EQ(f->header().kmer, h.header.kmer);
    EXPECT_EQ(ksieve::spaced_name(f->header().kmer), "1111101111011110111101111011111");
    EXPECT_EQ(f->header().labels, nullptr);
    bytes_t const good = read_bytes(p);
    ASSERT_EQ(get_u32(good, 8), 6u);
    std::size_t const at = 64 + 8 * h.header.params.size() + 16 + 8 + 8; // after the mask fields
    ASSERT_EQ(get_u32(good, at), pattern);
    ASSERT_EQ(get_u32(good, at + 4), 0u); // no label table
    auto refused_with = [&](std::uint32_t const pat, std::uint32_t const labels)
    {
        bytes_t bad = good;
        put_u32(bad, at, pat);
        put_u32(bad, at + 4, labels);
        reseal_header(bad);
        try
        {
            (void)mapped_filter_file::from_bytes(as_bytes(bad), p.string());
            return ::testing::AssertionFailure() << pat << " " << labels << " accepted";
        }
        catch (format_error const & e)
        {
            if (std::string{e.what()}.find(p.string()) == std::string::npos)
                return ::testing::AssertionFailure() << e.what();
            return ::testing::AssertionSuccess();
        }
    };
    EXPECT_TRUE(refused_with(0, 0));             // version 6 without a pattern
    EXPECT_TRUE(refused_with(pattern & ~1u, 0)); // first position ignored
    EXPECT_TRUE(refused_with(pattern & ~2u, 0)); // not symmetric
    EXPECT_TRUE(refused_with(0xffffffffu, 0));   // beyond k positions
    EXPECT_TRUE(refused_with(0x40000001u, 0));   // most positions ignored
    EXPECT_TRUE(refused_with(pattern, 2));       // a label flag other than 0 or 1
    EXPECT_FALSE(refused_with(0x7fffffffu, 0));  // every position: valid
    // the flag says a label table follows: there is none, so the header's size disagrees
    EXPECT_TRUE(refused_with(pattern, 1));
}

// Crafted files: every field the loader reads is checked against the file before it is used, so
// that a hostile header (resealed: its checksum matches) is refused with an error naming the file,
// never read out of bounds and never sized by a count the file's bytes cannot hold.
namespace
{

//! A resealed `b` is refused by the loader and the view (a ksieve error naming `name`).
::testing::AssertionResult crafted_refused(bytes_t b, std::string const & name)
{
    if (b.size() >= 16 && get_u32(b, 12) >= 72 && std::uint64_t{get_u32(b, 12)} + 24 <= b.size())
        reseal_header(b);
    try
    {
        auto const f = mapped_filter_file::from_bytes(as_bytes(b), name);
        (void)ksieve::view_filter(f);
        return ::testing::AssertionFailure() << "accepted";
    }
    catch (ksieve::error const & e)
    {
        if (std::string{e.what()}.find("'" + name + "'") == std::string::npos)
            return ::testing::AssertionFailure() << "message does not name the file: " << e.what();
        return ::testing::AssertionSuccess() << e.what();
    }
    catch (std::exception const & e)
    {
        return ::testing::AssertionFailure() << "not a ksieve error: " << e.what();
    }
}

//! A blocked Bloom filter (k = 5, 4 shards of 3 parameters each, version 3 unless labeled) as
//! file bytes.
bytes_t bloom_file(fs::path const & p, std::shared_ptr<ksieve::label_table const> labels = nullptr)
{
    ksieve::filter_config cfg;
    cfg.type = ksieve::filter_type::bloom;
    cfg.kmer = ksieve::kmer_params{5, true, ksieve::hash_id::mix2k_v1, 99};
    cfg.fpr = 0.01;
    cfg.expected = 300;
    cfg.shard_bits = 2;
    auto const f = ksieve::make_filter(cfg);
    for (std::uint64_t key = 0; key < 200; ++key)
        EXPECT_EQ(f->insert(key * 5 & ksieve::kmer_mask(5)), ksieve::insert_status::ok);
    f->set_labels(std::move(labels));
    f->save(p);
    return read_bytes(p);
}

// The shard table of bloom_file(): after the fixed header, key split, bitmap and sampling fields;
// entries of 32 bytes and 3 parameters.
constexpr std::size_t bloom_shard_table = 64 + 8 + 8 + 8;
constexpr std::size_t bloom_shard_entry = 32 + 3 * 8;

//! A labeled quotient filter (labels a and b, classes {a}, {b}, {a, b}) as file bytes.
bytes_t labeled_file(fs::path const & p)
{
    ksieve::filter_config cfg;
    cfg.type = ksieve::filter_type::quotient;
    cfg.kmer = ksieve::kmer_params{11, true, ksieve::hash_id::mix2k_v1, 7};
    cfg.fpr = 0;
    cfg.expected = 1000;
    cfg.shard_bits = 1;
    ksieve::sharded_filter<ksieve::quotient_filter> f{cfg};
    std::mt19937_64 rng{5};
    for (int i = 0; i < 600; ++i)
        EXPECT_EQ(f.insert(rng() & ksieve::kmer_mask(11), 1 + i % 3), ksieve::insert_status::ok);
    auto table = std::make_shared<ksieve::label_table>();
    table->names = {"a", "b"};
    table->classes = {{0}, {1}, {0, 1}};
    table->class_kmers = {200, 200, 200};
    f.set_labels(table);
    f.save(p);
    return read_bytes(p);
}

// The label table of a labeled file: its size field, then (at label_table_at + 8) the table.
constexpr std::size_t label_table_at = 64 + 16 + 8 + 8;

} // namespace

// Declared counts (type-level parameters, shards, shard parameters) larger than the header can hold
// are refused before anything is allocated for them.
TEST_F(filter_file_test, crafted_counts_are_refused_before_allocation)
{
    fs::path const p = dir_ / "counts.ksf";
    bytes_t const good = bloom_file(p);
    ASSERT_NO_THROW((void)ksieve::view_filter(mapped_filter_file::from_bytes(as_bytes(good), "x")));
    std::string const name = p.string();
    for (std::uint32_t const nparams : {65536u, 65537u, 1000u, 0xFFFFFFFFu})
    {
        bytes_t bad = good;
        put_u32(bad, 60, nparams);
        EXPECT_TRUE(crafted_refused(bad, name)) << nparams << " parameters";
    }
    for (std::uint32_t const bits : {9u, 24u, 25u, 64u, 0xFFFFFFFFu})
    {
        bytes_t bad = good;
        put_u32(bad, 56, bits);
        EXPECT_TRUE(crafted_refused(bad, name)) << "shard bits " << bits;
    }
    std::size_t const entry = bloom_shard_table;
    for (std::uint32_t const np : {0u, 4u, 65536u, 65537u, 0x7FFFFFFFu, 0xFFFFFFFFu})
    {
        bytes_t bad = good;
        put_u32(bad, entry + 24, np);
        EXPECT_TRUE(crafted_refused(bad, name)) << np << " shard parameters";
    }
    for (std::uint32_t const hs : {0u, 71u, static_cast<std::uint32_t>(good.size()), 0xFFFFFFFFu})
    {
        bytes_t bad = good;
        put_u32(bad, 12, hs);
        EXPECT_TRUE(crafted_refused(bad, name)) << "header size " << hs;
    }
}

// Payload offsets and lengths past the end of the file, or whose sum overflows, are refused.
TEST_F(filter_file_test, crafted_payload_extents_are_refused)
{
    fs::path const p = dir_ / "extents.ksf";
    bytes_t const good = bloom_file(p);
    ASSERT_NO_THROW((void)ksieve::view_filter(mapped_filter_file::from_bytes(as_bytes(good), "x")));
    std::string const name = p.string();
    std::size_t const last = bloom_shard_table + 3 * bloom_shard_entry; // shard 3
    std::uint64_t const offset = get_u64(good, last);
    std::uint64_t const words = get_u64(good, last + 8);
    ASSERT_EQ(offset + 8 * words + 24, good.size());
    std::uint64_t const max = ~std::uint64_t{0};
    for (auto const & [off, n] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
             {max & ~std::uint64_t{63}, 1},         // offset past the end
             {good.size() & ~std::uint64_t{63}, 1}, // into the end marker
             {offset, std::uint64_t{1} << 61},      // 8 x words wraps to 0
             {offset, (std::uint64_t{1} << 61) + 1},
             {offset, max},
             {offset, (good.size() - offset) / 8}, // over the end marker
             {offset - 64, words},                 // before the previous payload's end
             {offset + 64, words},                 // over the end marker
             {offset + 8, words},                  // not aligned
             {offset, words - 1}})                 // not where the end marker is
    {
        bytes_t bad = good;
        put_u64(bad, last, off);
        put_u64(bad, last + 8, n);
        EXPECT_TRUE(crafted_refused(bad, name)) << off << " " << n;
    }
}

// Header parameters outside the ranges the filters are built for: k, shard bits against k, the
// false-positive rate, the filter type, the version.
TEST_F(filter_file_test, crafted_header_parameters_are_refused)
{
    fs::path const p = dir_ / "params.ksf";
    bytes_t const good = bloom_file(p); // k = 5, 4 shards
    ASSERT_NO_THROW((void)ksieve::view_filter(mapped_filter_file::from_bytes(as_bytes(good), "x")));
    std::string const name = p.string();
    // (k = 1: 2^2 shards of 2-bit keys would leave no bit of a key to a shard)
    for (std::uint32_t const k : {0u, 1u, 33u, 64u, 0xFFFFFFFFu})
    {
        bytes_t bad = good;
        put_u32(bad, 20, k);
        EXPECT_TRUE(crafted_refused(bad, name)) << "k = " << k;
    }
    bytes_t bad;
    double const nan = std::numeric_limits<double>::quiet_NaN();
    double const inf = std::numeric_limits<double>::infinity();
    for (double const fpr : {0.5, 0.9999, 1.0, -0.0001, nan, inf, -inf})
    {
        bad = good;
        put_u64(bad, 40, std::bit_cast<std::uint64_t>(fpr));
        EXPECT_TRUE(crafted_refused(bad, name)) << "fpr " << fpr;
    }
    for (std::uint32_t const type : {0u, 6u, 0xFFFFFFFFu})
    {
        bad = good;
        put_u32(bad, 16, type);
        EXPECT_TRUE(crafted_refused(bad, name)) << "type " << type;
    }
    for (std::uint32_t const hash : {0u, 2u})
    {
        bad = good;
        put_u32(bad, 28, hash);
        EXPECT_TRUE(crafted_refused(bad, name)) << "hash " << hash;
    }
    for (std::uint32_t const version : {0u, 6u, 0xFFFFFFFFu})
    {
        bad = good;
        put_u32(bad, 8, version);
        EXPECT_TRUE(crafted_refused(bad, name)) << "version " << version;
    }
}

// A labeled file reads back its labels; a label table whose length, counts or entries lie is
// refused (counts that would wrap when multiplied by an entry's size included), and so is a label
// table in a filter that is not a quotient filter.
TEST_F(filter_file_test, crafted_label_tables_are_refused)
{
    fs::path const p = dir_ / "labeled.ksf";
    bytes_t const good = labeled_file(p);
    std::string const name = p.string();
    {
        auto const f = ksieve::view_filter(mapped_filter_file::from_bytes(as_bytes(good), name));
        ASSERT_TRUE(f->labeled());
        EXPECT_EQ(f->labels()->names, (std::vector<std::string>{"a", "b"}));
        EXPECT_EQ(f->labels()->classes.size(), 3u);
    }
    ASSERT_EQ(get_u32(good, 8), ksieve::labeled_format_version);
    std::uint64_t const size = get_u64(good, label_table_at);
    std::size_t const table = label_table_at + 8;
    ASSERT_EQ(get_u32(good, table), 2u) << "two labels";
    std::size_t const classes = table + 4 + 2 * (4 + 1); // the class count
    ASSERT_EQ(get_u64(good, classes), 3u);
    std::uint64_t const max = ~std::uint64_t{0};
    auto patched = [&](std::size_t const at, std::uint64_t const v, unsigned const width)
    {
        bytes_t bad = good;
        if (width == 4)
            put_u32(bad, at, static_cast<std::uint32_t>(v));
        else
            put_u64(bad, at, v);
        return bad;
    };
    for (std::uint64_t const l : {std::uint64_t{0}, size - 1, size + 8, std::uint64_t{1} << 32,
                                  std::uint64_t{1} << 63, max - 6, max})
        EXPECT_TRUE(crafted_refused(patched(label_table_at, l, 8), name)) << "table of " << l;
    for (std::uint64_t const n : {0u, 3u, 1000u, 0x33333334u, 0xFFFFFFFFu})
        EXPECT_TRUE(crafted_refused(patched(table, n, 4), name)) << n << " labels";
    for (std::uint64_t const len : {0u, 2u, 1000u, 0xFFFFFFFFu})
        EXPECT_TRUE(crafted_refused(patched(table + 4, len, 4), name)) << "name of " << len;
    for (std::uint64_t const c :
         {std::uint64_t{0}, std::uint64_t{4}, std::uint64_t{1} << 32, (std::uint64_t{1} << 60) + 1,
          (std::uint64_t{1} << 60) + 2, max / 16 + 1, max})
        EXPECT_TRUE(crafted_refused(patched(classes, c, 8), name)) << c << " classes";
    std::size_t const first_class = classes + 8;
    for (std::uint64_t const m : {0u, 3u, 0x40000000u, 0xFFFFFFFFu})
        EXPECT_TRUE(crafted_refused(patched(first_class, m, 4), name)) << "class of " << m;
    EXPECT_TRUE(crafted_refused(patched(first_class + 4, 2, 4), name)) << "label out of range";
    EXPECT_TRUE(crafted_refused(patched(first_class + 4, 1, 4), name)) << "class repeated";
    auto const one = std::make_shared<ksieve::label_table>();
    one->names = {"a"};
    one->classes = {{0}};
    one->class_kmers = {200};
    fs::path const bloom = dir_ / "labeled-bloom.ksf";
    EXPECT_TRUE(crafted_refused(bloom_file(bloom, one), bloom.string()))
        << "labels in a Bloom filter";
    EXPECT_NO_THROW((void)mapped_filter_file::from_bytes(as_bytes(good), name));
}
