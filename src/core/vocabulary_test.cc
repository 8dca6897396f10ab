#include "core/vocabulary.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace stepscope {
namespace {

template <typename Enum>
void ExpectRoundTrip(const std::set<std::string>& expected) {
  std::set<std::string> seen;
  for (Enum v : AllValues<Enum>()) {
    const std::string text(ToString(v));
    EXPECT_TRUE(seen.insert(text).second) << "duplicate text " << text;
    auto back = Parse<Enum>(text);
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_EQ(*back, v) << text;
  }
  EXPECT_EQ(seen, expected);
  EXPECT_FALSE(Parse<Enum>("").has_value());
  EXPECT_FALSE(Parse<Enum>("not-a-value").has_value());
}

// The value sets are the published ones (docs/diagnosis.md): renaming one breaks readers.
TEST(Vocabulary, BindingValues) {
  ExpectRoundTrip<Binding>({"communication", "input", "stragglers", "imbalance", "compute",
                            "overhead", "none", "inconclusive"});
}

TEST(Vocabulary, DecisionValues) {
  ExpectRoundTrip<Decision>({"buy_devices", "upgrade_interconnect", "upgrade_devices",
                             "pull_levers", "stay", "reduce_devices"});
}

TEST(Vocabulary, CurrencyValues) { ExpectRoundTrip<Currency>({"cost", "time"}); }

TEST(Vocabulary, LeverValues) {
  ExpectRoundTrip<Lever>({"loader_workers_prefetch", "bigger_micro_batch", "gradient_accumulation",
                          "overlap_bucketing", "low_precision_reduction", "balance_lengths",
                          "remove_straggler"});
}

TEST(Vocabulary, AblationAndComponentValues) {
  ExpectRoundTrip<AblationCheckKind>(
      {"no_reduce", "synthetic_input", "double_batch", "rank_spread"});
  ExpectRoundTrip<Component>(
      {"compute", "input_wait", "sync_wait", "transfer", "overhead", "residual"});
}

TEST(Vocabulary, ValueListNamesEveryValue) { EXPECT_EQ(ValueList<Currency>(), "cost, time"); }

}  // namespace
}  // namespace stepscope
