// Labeled filters: the label table's file encoding, and labeled set operations (combine_labeled)
// against an exact oracle of key -> label set, for several layouts and thread counts.
#include <ksieve/filters/common/any_filter.hpp>
#include <ksieve/filters/common/labels.hpp>
#include <ksieve/filters/support/error.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

namespace
{

using namespace ksieve;
using label_names = std::set<std::string>;

std::unique_ptr<any_filter> exact_filter(unsigned const shard_bits)
{
    filter_config cfg;
    cfg.type = filter_type::quotient;
    cfg.fpr = 0;
    cfg.kmer.k = 15;
    cfg.shard_bits = shard_bits;
    return make_filter(cfg);
}

// The labels a labeled filter gives a key (empty: absent).
label_names labels_of(any_filter const & f, std::uint64_t const key)
{
    label_names out;
    std::uint64_t const c = f.count(key);
    if (c == 0)
        return out;
    EXPECT_LE(c, f.labels()->classes.size());
    for (auto const l : f.labels()->classes.at(c - 1))
        out.insert(f.labels()->names.at(l));
    return out;
}

std::string bytes_of(any_filter const & f)
{
    auto const path = std::filesystem::temp_directory_path() /
                      ("ksieve-labels-" + std::to_string(std::random_device{}()) + ".ksf");
    f.save(path);
    std::ifstream in{path, std::ios::binary};
    std::stringstream s;
    s << in.rdbuf();
    std::filesystem::remove(path);
    return s.str();
}

// Three inputs of random 30-bit keys with overlaps, and the oracle of each key's labels.
struct fixture
{
    std::vector<std::unique_ptr<any_filter>> owned;
    std::vector<any_filter const *> inputs;
    std::vector<std::string> names{"a.ksf", "dir/b.ksf", "c.ksf"};
    std::vector<std::string> labels{"a", "b", "c"};
    std::map<std::uint64_t, label_names> oracle;

    explicit fixture(std::vector<unsigned> const & shard_bits)
    {
        std::mt19937_64 rng{7};
        std::vector<std::uint64_t> pool(3000);
        for (auto & k : pool)
            k = rng() & ((std::uint64_t{1} << 30) - 1);
        for (std::size_t i = 0; i < 3; ++i)
        {
            owned.push_back(exact_filter(shard_bits[i]));
            for (std::size_t j = 0; j < pool.size(); ++j)
                if ((rng() % 3) == i || j % 7 == 0) // some keys everywhere
                {
                    EXPECT_EQ(owned.back()->insert(pool[j], 1 + (j % 3)), insert_status::ok);
                    oracle[pool[j]].insert(labels[i]);
                }
            inputs.push_back(owned.back().get());
        }
    }
};

TEST(label_table, encoding_round_trips_and_counts_labels)
{
    label_table t;
    t.names = {"human", "phix", "ecoli"};
    t.classes = {{0}, {1}, {0, 2}, {0, 1, 2}};
    t.class_kmers = {100, 7, 5, 2};
    auto const bytes = t.encode();
    EXPECT_EQ(label_table::decode(bytes, "f.ksf"), t);
    EXPECT_EQ(t.label_kmers(), (std::vector<std::uint64_t>{107, 9, 7}));
    auto const m = t.shared_kmers();
    EXPECT_EQ(m[0 * 3 + 2], 7u); // human and ecoli: classes {0,2} and {0,1,2}
    EXPECT_EQ(m[0 * 3 + 1], 2u);
    EXPECT_EQ(m[1 * 3 + 1], 9u);
}

TEST(label_table, damaged_tables_are_refused_naming_the_file)
{
    label_table t;
    t.names = {"a", "b"};
    t.classes = {{0}, {0, 1}};
    t.class_kmers = {3, 4};
    auto good = t.encode();
    auto bad = good;
    bad.pop_back(); // truncated
    EXPECT_THROW((void)label_table::decode(bad, "f.ksf"), format_error);
    label_table dup = t;
    dup.names = {"a", "a"};
    EXPECT_THROW((void)label_table::decode(dup.encode(), "f.ksf"), format_error);
    label_table order = t;
    order.classes = {{1, 0}, {0}};
    try
    {
        (void)label_table::decode(order.encode(), "f.ksf");
        FAIL() << "unordered class accepted";
    }
    catch (format_error const & e)
    {
        EXPECT_NE(std::string{e.what()}.find("f.ksf"), std::string::npos);
    }
}

TEST(label_table, labels_of_paths_drop_directory_and_extensions)
{
    EXPECT_EQ(label_of_path("dir/s1.ksf"), "s1");
    EXPECT_EQ(label_of_path("/x/mouse.fa.gz"), "mouse");
    EXPECT_EQ(label_of_path("plain"), "plain");
    EXPECT_EQ(label_of_path(".hidden"), ".hidden");
}

TEST(label_names, follow_one_rule_that_never_makes_a_path)
{
    for (std::string const & ok :
         std::vector<std::string>{"human", "E.coli_K-12", "s1", "a+b", "x.fa", "A9", "_x",
                                  std::string(max_label_name_bytes, 'n')})
        EXPECT_TRUE(is_label_name(ok)) << ok;
    for (std::string const & bad : std::vector<std::string>{
             "",     ".",           "..",   "../x", "/abs/x",
             "a/b",  ".hidden",     "-",    "-x",   "ambiguous",
             "a b",  "a\tb",        "a\nb", "a\rb", std::string{"a\0b", 3},
             "a\\b", "caf\xc3\xa9", "a:b",  "a*b",  std::string(max_label_name_bytes + 1, 'n')})
    {
        EXPECT_FALSE(is_label_name(bad)) << printable_label(bad);
        EXPECT_THROW(check_label_name(bad), usage_error) << printable_label(bad);
    }
    // a name shown in a message keeps no control byte, and a long one is cut
    EXPECT_EQ(printable_label("a\nb/\x01"), "a\\x0ab/\\x01");
    EXPECT_LT(printable_label(std::string(10000, 'x')).size(), 120u);
}

// A table whose names break the rule, written byte by byte as a file from elsewhere holds it.
std::vector<unsigned char> table_bytes(std::string const & name)
{
    std::vector<unsigned char> b;
    auto put = [&](std::uint64_t const v, unsigned const width)
    {
        for (unsigned i = 0; i < width; ++i)
            b.push_back(static_cast<unsigned char>(v >> (8 * i)));
    };
    put(2, 4);
    for (std::string const & n : {std::string{"ok"}, name})
    {
        put(n.size(), 4);
        b.insert(b.end(), n.begin(), n.end());
    }
    put(1, 8); // one class
    put(2, 4); // of two labels
    put(0, 4);
    put(1, 4);
    put(7, 8); // with 7 k-mers
    return b;
}

TEST(label_names, a_table_naming_a_path_is_refused_naming_the_file_and_the_label)
{
    ASSERT_NO_THROW((void)label_table::decode(table_bytes("fine"), "from_elsewhere.ksf"));
    for (std::string const & bad :
         std::vector<std::string>{"../x", "/abs/x", "a/b", ".", "..", "", "line\nbreak",
                                  "ambiguous", std::string(300, 'n')})
    {
        try
        {
            (void)label_table::decode(table_bytes(bad), "from_elsewhere.ksf");
            FAIL() << "accepted " << printable_label(bad);
        }
        catch (format_error const & e)
        {
            std::string const what = e.what();
            EXPECT_NE(what.find("from_elsewhere.ksf"), std::string::npos) << what;
            if (!bad.empty())
            {
                EXPECT_NE(what.find(printable_label(bad).substr(0, 40)), std::string::npos) << what;
            }
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
    }
}

TEST(combine_labeled, union_gives_every_key_its_label_set_for_any_thread_count)
{
    for (auto const & layout : std::vector<std::vector<unsigned>>{{2, 2, 2}, {1, 3, 2}})
    {
        fixture f{layout};
        auto const one = combine_labeled(f.inputs, f.names, f.labels, set_operation::unite, 1);
        auto const three = combine_labeled(f.inputs, f.names, f.labels, set_operation::unite, 3);
        EXPECT_EQ(bytes_of(*one), bytes_of(*three));
        EXPECT_EQ(one->labels()->names, f.labels);
        for (auto const & [key, want] : f.oracle)
            ASSERT_EQ(labels_of(*one, key), want) << key;
        EXPECT_EQ(one->stats().distinct, f.oracle.size());
        // classes numbered by decreasing k-mers
        auto const & kmers = one->labels()->class_kmers;
        EXPECT_TRUE(std::is_sorted(kmers.rbegin(), kmers.rend()));
        // label k-mer totals agree with the oracle
        auto const per_label = one->labels()->label_kmers();
        for (std::size_t l = 0; l < 3; ++l)
        {
            std::uint64_t n = 0;
            for (auto const & [key, set] : f.oracle)
                n += set.count(f.labels[l]);
            EXPECT_EQ(per_label[l], n);
        }
    }
}

TEST(combine_labeled, a_thousand_labels_keep_their_sets)
{
    std::mt19937_64 rng{5};
    std::vector<std::uint64_t> pool(2000);
    for (auto & k : pool)
        k = rng() & ((std::uint64_t{1} << 30) - 1);
    std::vector<std::unique_ptr<any_filter>> owned;
    std::vector<any_filter const *> inputs;
    std::vector<std::string> names, labels;
    std::map<std::uint64_t, label_names> oracle;
    for (std::size_t i = 0; i < 1000; ++i)
    {
        owned.push_back(exact_filter(0));
        labels.push_back("sample" + std::to_string(i));
        names.push_back(labels.back() + ".ksf");
        for (int j = 0; j < 20; ++j)
        {
            std::uint64_t const key = pool[rng() % pool.size()];
            EXPECT_EQ(owned.back()->insert(key), insert_status::ok);
            oracle[key].insert(labels.back());
        }
        inputs.push_back(owned.back().get());
    }
    auto const merged = combine_labeled(inputs, names, labels, set_operation::unite, 2);
    EXPECT_EQ(merged->labels()->names.size(), 1000u);
    for (auto const & [key, want] : oracle)
        ASSERT_EQ(labels_of(*merged, key), want) << key;
    EXPECT_EQ(merged->stats().distinct, oracle.size());
}

TEST(combine_labeled, merges_of_labeled_filters_equal_one_labeled_union)
{
    fixture f{{2, 2, 2}};
    std::vector<any_filter const *> ab{f.inputs[0], f.inputs[1]};
    auto const first = combine_labeled(ab, std::vector<std::string>{"a", "b"},
                                       std::vector<std::string>{"a", "b"}, set_operation::unite, 2);
    std::vector<any_filter const *> then{first.get(), f.inputs[2]};
    auto const two_steps =
        combine_labeled(then, std::vector<std::string>{"ab.ksf", "c.ksf"},
                        std::vector<std::string>{"", "c"}, set_operation::unite, 2);
    auto const at_once = combine_labeled(f.inputs, f.names, f.labels, set_operation::unite, 2);
    EXPECT_EQ(bytes_of(*two_steps), bytes_of(*at_once));
}

TEST(combine_labeled, intersect_and_subtract_keep_labels)
{
    fixture f{{2, 2, 2}};
    auto const both = combine_labeled(f.inputs, f.names, f.labels, set_operation::intersect, 2);
    auto const only_a = combine_labeled(f.inputs, f.names, f.labels, set_operation::subtract, 2);
    for (auto const & [key, want] : f.oracle)
    {
        EXPECT_EQ(labels_of(*both, key), want.size() == 3 ? want : label_names{}) << key;
        EXPECT_EQ(labels_of(*only_a, key),
                  want == label_names{"a"} ? label_names{"a"} : label_names{})
            << key;
    }
}

TEST(combine_labeled, unlabeled_inputs_need_names)
{
    fixture f{{2, 2, 2}};
    try
    {
        (void)combine_labeled(f.inputs, f.names, std::vector<std::string>{"a", "", "c"},
                              set_operation::unite, 1);
        FAIL() << "an unlabeled input without a name was accepted";
    }
    catch (incompatible_error const & e)
    {
        EXPECT_NE(std::string{e.what()}.find("dir/b.ksf"), std::string::npos) << e.what();
    }
    // and labeled filters are refused by the unlabeled set operations
    auto const labeled = combine_labeled(f.inputs, f.names, f.labels, set_operation::unite, 1);
    std::vector<any_filter const *> in{labeled.get(), f.inputs[0]};
    EXPECT_THROW(
        (void)combine_filters(in, std::vector<std::string>{"l.ksf", "a.ksf"}, set_operation::unite),
        incompatible_error);
}

} // namespace
