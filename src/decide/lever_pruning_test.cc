#include "decide/lever_pruning.h"

#include <gtest/gtest.h>

namespace stepscope::decide {
namespace {

LeverAdvice Advice(Lever lever, const std::string& action, double gain, double x) {
  LeverAdvice l;
  l.lever = lever;
  l.action = action;
  l.expected_gain_samples_per_s = gain;
  l.expected_samples_per_s = x + gain;
  return l;
}

// A verdict at 100 samples/s recommending overlap (the model: -10), bf16 (+20) and a bigger
// micro-batch (+1), its situation naming the most promising lever.
Verdict ThreeLevers() {
  Verdict v;
  v.levers = {Advice(Lever::kOverlapBucketing, "overlap the reduction", -10, 100),
              Advice(Lever::kLowPrecisionReduction, "reduce in bf16", 20, 100),
              Advice(Lever::kBiggerMicroBatch, "double the micro-batch", 1, 100)};
  v.situation = "4 replicas deliver 2.00 times one device. " + BestLeverWords(v.levers, 100);
  return v;
}

TEST(DropLeversThatDoNotPay, TheModelRulesOutLeversWhoseWholeBandIsBelowTheFloor) {
  Verdict v = ThreeLevers();
  const std::vector<LeverGainEvidence> evidence = {
      {Lever::kOverlapBucketing, {-10, -14, -6}, std::nullopt},
      {Lever::kLowPrecisionReduction, {20, 15, 25}, std::nullopt},
      {Lever::kBiggerMicroBatch, {1, 0.5, 1.5}, std::nullopt}};
  const std::vector<Lever> dropped = DropLeversThatDoNotPay(evidence, 100, &v);
  EXPECT_EQ(dropped, (std::vector<Lever>{Lever::kOverlapBucketing, Lever::kBiggerMicroBatch}));
  ASSERT_EQ(v.levers.size(), 1u);
  EXPECT_EQ(v.levers[0].lever, Lever::kLowPrecisionReduction);
  ASSERT_EQ(v.levers_dropped.size(), 2u);
  EXPECT_EQ(v.levers_dropped[0].lever, Lever::kOverlapBucketing);
  EXPECT_DOUBLE_EQ(v.levers_dropped[0].expected_gain_samples_per_s, -10);
  EXPECT_NE(v.levers_dropped[0].reason.find("-10.0 samples/s"), std::string::npos)
      << v.levers_dropped[0].reason;
  EXPECT_NE(v.levers_dropped[1].reason.find("no run of its own"), std::string::npos);
  EXPECT_NE(v.explanation.find("reduce in bf16"), std::string::npos) << v.explanation;
}

TEST(DropLeversThatDoNotPay, ABandThatReachesTheFloorOrAMeasuredGainKeepsTheLever) {
  Verdict v = ThreeLevers();
  const std::vector<LeverGainEvidence> evidence = {
      // The model doubts it, but its own run measured +5 (over 2 % of 100): kept.
      {Lever::kOverlapBucketing, {-10, -14, -6}, 5.0},
      // The band's high end reaches 2 %: the model cannot rule it out.
      {Lever::kBiggerMicroBatch, {1, -1, 2}, std::nullopt}};
  const Verdict before = v;
  EXPECT_TRUE(DropLeversThatDoNotPay(evidence, 100, &v).empty());
  ASSERT_EQ(v.levers.size(), 3u);  // bf16 has no evidence: kept
  EXPECT_TRUE(v.levers_dropped.empty());
  for (size_t i = 0; i < v.levers.size(); ++i) {  // kept as they were, words and all
    EXPECT_EQ(v.levers[i].action, before.levers[i].action);
  }
  EXPECT_EQ(v.situation, before.situation);
}

TEST(DropLeversThatDoNotPay, AMeasuredLossConfirmsTheModel) {
  Verdict v = ThreeLevers();
  const std::vector<LeverGainEvidence> evidence = {
      {Lever::kOverlapBucketing, {-10, -14, -6}, -8.0}};
  ASSERT_EQ(DropLeversThatDoNotPay(evidence, 100, &v).size(), 1u);
  EXPECT_NE(v.levers_dropped[0].reason.find("its own run measured -8.0"), std::string::npos)
      << v.levers_dropped[0].reason;
}

TEST(DropLeversThatDoNotPay, WhenEveryLeverIsDroppedTheSituationSaysNoneGainsMuch) {
  Verdict v = ThreeLevers();
  const std::vector<LeverGainEvidence> evidence = {
      {Lever::kOverlapBucketing, {-10, -14, -6}, std::nullopt},
      {Lever::kLowPrecisionReduction, {0, 0, 0}, std::nullopt},
      {Lever::kBiggerMicroBatch, {1, 0.5, 1.5}, std::nullopt}};
  EXPECT_EQ(DropLeversThatDoNotPay(evidence, 100, &v).size(), 3u);
  EXPECT_TRUE(v.levers.empty());
  EXPECT_NE(v.situation.find("No free lever is expected to gain much."), std::string::npos)
      << v.situation;
}

TEST(BestLeverWords, WithGoodputKnownTheLeverThatGainsMostProgressIsNamed) {
  // The bigger batch gains the most samples/s but loses goodput near the noise scale.
  std::vector<LeverAdvice> levers = {
      Advice(Lever::kBiggerMicroBatch, "double the micro-batch", 30, 100),
      Advice(Lever::kLowPrecisionReduction, "reduce in bf16", 10, 100)};
  EXPECT_NE(BestLeverWords(levers, 100).find("double the micro-batch"), std::string::npos);
  levers[0].expected_gain_goodput = -2.0;
  EXPECT_NE(BestLeverWords(levers, 100).find("double the micro-batch"), std::string::npos)
      << "goodput is used only when every lever has it";
  levers[1].expected_gain_goodput = 9.5;
  const std::string words = BestLeverWords(levers, 100);
  EXPECT_NE(words.find("reduce in bf16"), std::string::npos) << words;
  EXPECT_NE(words.find("+9.5 samples/s of goodput"), std::string::npos) << words;
}

}  // namespace
}  // namespace stepscope::decide
