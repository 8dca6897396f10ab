#include "plan/train_args.h"

#include <gtest/gtest.h>

namespace stepscope::plan {
namespace {

using Words = std::vector<std::string>;

TEST(TrainArgs, FlattenKeepsPairsAndBareFlags) {
  const TrainArgs args = {{"--batch", "4"}, {"--no-overlap", std::nullopt}, {"--seed", "2"}};
  EXPECT_EQ(Flatten(args), (Words{"--batch", "4", "--no-overlap", "--seed", "2"}));
}

TEST(TrainArgs, ReplaceRemovesEveryOccurrenceAndAppendsOne) {
  TrainArgs args = {{"--batch", "4"}, {"--seed", "2"}, {"--batch", "8"}};
  Replace(&args, "--batch", "16");
  EXPECT_EQ(Flatten(args), (Words{"--seed", "2", "--batch", "16"}));
}

TEST(TrainArgs, RemovingABareFlagLeavesTheNextOptionAlone) {
  // A bare flag followed by an option whose value looks like a flag's value.
  TrainArgs args = {{"--no-overlap", std::nullopt}, {"--batch", "4"}};
  Remove(&args, "--no-overlap");
  EXPECT_EQ(Flatten(args), (Words{"--batch", "4"}));
  EXPECT_FALSE(Has(args, "--no-overlap"));
  EXPECT_TRUE(Has(args, "--batch"));
}

TEST(TrainArgs, AddMissingKeepsTheWorkloadsOwnValues) {
  TrainArgs args = {{"--steps", "10"}};
  AddMissing(&args, {{"--steps", "30"}, {"--warmup-steps", "5"}, {"--no-eval", std::nullopt}});
  EXPECT_EQ(Flatten(args), (Words{"--steps", "10", "--warmup-steps", "5", "--no-eval"}));
}

}  // namespace
}  // namespace stepscope::plan
