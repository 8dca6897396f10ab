#include "decide/choose.h"

#include <gtest/gtest.h>

#include "model/synthetic_testing.h"

namespace stepscope::decide {
namespace {

// Compute-bound: a small gradient on a fast link, so the curve stays near-linear, and little
// fixed work per step, so accumulating micro-batches saves little.
model::testing::Truth Linear() {
  model::testing::Truth t;
  t.forward_fixed = 0.0002, t.backward_fixed = 0.0004, t.optimizer = 0.0003, t.overhead = 0.0001;
  t.gradient_bytes = 64 << 10;
  t.alpha = 5e-6;
  t.seconds_per_byte = 1.0 / 20e9;
  return t;
}

// Communication-bound: a large gradient on a slow link (efficiency well under half at 8).
model::testing::Truth CommBound() {
  model::testing::Truth t;
  t.gradient_bytes = 64 << 20;
  t.seconds_per_byte = 1.0 / 1e9;
  return t;
}

PricedDecision Decide(const model::StepModel& m, const DecisionInputs& in,
                      StatisticalScale scale = {false, 0, 8, "unknown"},
                      std::vector<PricedOption>* out = nullptr) {
  OptionsRequest r;
  r.largest_measured = 8;
  r.measured_replicas = {1, 2, 4, 8};
  r.scale = scale;
  r.inputs = in;
  Result<std::vector<PricedOption>> options = PriceOptions(m, r);
  EXPECT_TRUE(options.ok()) << options.status().message();
  if (out != nullptr) *out = *options;
  return Choose(*options, in);
}

DecisionInputs Priced() {
  DecisionInputs in;
  in.device_cost_per_hour = 2.0;
  return in;
}

TEST(Choose, NearLinearCurveBuysDevices) {
  const PricedDecision d = Decide(model::testing::FitSynthetic(Linear()), Priced());
  EXPECT_EQ(d.action, Decision::kBuyDevices) << d.reason;
  EXPECT_EQ(d.replicas, 64) << d.reason;  // the cost barely moves, the time falls 8x
  EXPECT_NE(d.reason.find("faster"), std::string::npos) << d.reason;
}

TEST(Choose, InefficientScalingDoesNotBuyDevicesOnCost) {
  const PricedDecision d = Decide(model::testing::FitSynthetic(CommBound()), Priced());
  EXPECT_NE(d.action, Decision::kBuyDevices) << d.reason;
  EXPECT_LT(d.replicas, 8) << d.reason;  // fewer devices deliver cheaper samples
  EXPECT_EQ(d.action, Decision::kReduceDevices) << d.reason;
}

TEST(Choose, ADeadlineMakesTheInefficientScalingTheRightCall) {
  const model::StepModel m = model::testing::FitSynthetic(CommBound());
  std::vector<PricedOption> options;
  DecisionInputs in = Priced();
  in.samples_to_target = 1e6;
  Decide(m, in, {false, 0, 8, "unknown"}, &options);
  double stay_hours = 0, fastest = 1e9;
  for (const PricedOption& o : options) {
    if (o.kind == OptionKind::kStay) stay_hours = *o.time_to_target_hours;
    fastest = std::min(fastest, *o.time_to_target_hours);
  }
  ASSERT_LT(fastest, 0.8 * stay_hours);
  in.deadline_hours = 1.2 * fastest;  // only the most devices meet it
  const PricedDecision d = Decide(m, in);
  EXPECT_EQ(d.action, Decision::kBuyDevices) << d.reason;
  EXPECT_NE(d.reason.find("deadline"), std::string::npos) << d.reason;
}

TEST(Choose, ACheapFasterLinkWinsAnExpensiveOneDoesNot) {
  // The measured gradient goes out as one bucket after backward, so on cost alone one replica
  // (no communication at all) is cheapest; a deadline that staying at 8 misses makes elapsed
  // time matter, and the cheapest way to meet it is the faster link, unless it is priced high.
  const model::StepModel m = model::testing::FitSynthetic(CommBound());
  DecisionInputs in = Priced();
  in.samples_to_target = 1e6;
  std::vector<PricedOption> options;
  Decide(m, in, {false, 0, 8, "unknown"}, &options);
  double stay_hours = 0;
  for (const PricedOption& o : options) {
    if (o.kind == OptionKind::kStay) stay_hours = *o.time_to_target_hours;
  }
  in.deadline_hours = 0.9 * stay_hours;
  in.link_upgrades = {{50, 1, 0.1}};
  EXPECT_EQ(Decide(m, in).action, Decision::kUpgradeInterconnect) << Decide(m, in).reason;
  in.link_upgrades = {{50, 1, 40.0}};
  EXPECT_NE(Decide(m, in).action, Decision::kUpgradeInterconnect) << Decide(m, in).reason;
}

TEST(Choose, FasterDevicesWinWhenPricedBelowTheirSpeed) {
  const model::StepModel m = model::testing::FitSynthetic(Linear());
  DecisionInputs in = Priced();
  in.device_upgrades = {{4, 0.5}};  // 4x the speed for 1.25x the price
  const PricedDecision d = Decide(m, in);
  EXPECT_EQ(d.action, Decision::kUpgradeDevices) << d.reason;
  EXPECT_DOUBLE_EQ(d.device_speed, 4);
}

TEST(Choose, TimeWithinABudget) {
  const model::StepModel m = model::testing::FitSynthetic(CommBound());
  DecisionInputs in = Priced();
  in.currency = Currency::kTime;
  in.samples_to_target = 1e6;
  const PricedDecision fastest = Decide(m, in);
  EXPECT_EQ(fastest.action, Decision::kBuyDevices) << fastest.reason;
  std::vector<PricedOption> options;
  Decide(m, in, {false, 0, 8, "unknown"}, &options);
  double stay_cost = 0;
  for (const PricedOption& o : options) {
    if (o.kind == OptionKind::kStay) stay_cost = *o.cost_to_target;
  }
  in.budget = stay_cost * 1.01;  // more devices would overspend
  const PricedDecision d = Decide(m, in);
  EXPECT_NE(d.action, Decision::kBuyDevices) << d.reason;
  EXPECT_NE(d.reason.find("budget"), std::string::npos) << d.reason;
}

TEST(Choose, ASmallNoiseScaleStopsBuyingEvenOnALinearCurve) {
  const model::StepModel m = model::testing::FitSynthetic(Linear());
  const PricedDecision d = Decide(m, Priced(), {true, 16, 8, "test"});
  EXPECT_NE(d.action, Decision::kBuyDevices) << d.reason;
  EXPECT_FALSE(d.runner_up.empty());
}

// One option priced by hand: its cost per million samples and its hours per million.
PricedOption HandPriced(OptionKind kind, Decision action, const std::string& label, double cost,
                        double hours) {
  PricedOption o;
  o.kind = kind;
  o.action = action;
  o.label = label;
  o.replicas = 4;
  o.cost_per_million = cost;
  o.hours_per_million = hours;
  return o;
}

TEST(Choose, StaysWhenNoOptionBeatsTheMeasuredConfigurationBeyondTheTie) {
  // A lever 5 % cheaper and 5 % faster, fewer devices 8 % cheaper and twice as slow: inside the
  // model's error, so no change is worth making.
  const std::vector<PricedOption> options = {
      HandPriced(OptionKind::kStay, Decision::kStay, "stay", 100, 10),
      HandPriced(OptionKind::kLever, Decision::kPullLevers, "lever", 95, 9.5),
      HandPriced(OptionKind::kFewerDevices, Decision::kReduceDevices, "fewer", 92, 20),
      HandPriced(OptionKind::kMoreDevices, Decision::kBuyDevices, "more", 180, 5)};
  const PricedDecision d = Choose(options, Priced());
  EXPECT_EQ(d.action, Decision::kStay) << d.reason;
  EXPECT_NE(d.reason.find("pays for itself"), std::string::npos) << d.reason;
  EXPECT_EQ(d.runner_up, "fewer") << d.reason;
}

TEST(Choose, AChangeBeyondTheTieInEitherCurrencyBeatsStaying) {
  // The lever saves a fifth of the cost: pulled.
  std::vector<PricedOption> options = {
      HandPriced(OptionKind::kStay, Decision::kStay, "stay", 100, 10),
      HandPriced(OptionKind::kLever, Decision::kPullLevers, "lever", 80, 8)};
  EXPECT_EQ(Choose(options, Priced()).action, Decision::kPullLevers);
  // More devices at nearly the same cost and half the time: bought (the tie buys the time).
  options = {HandPriced(OptionKind::kStay, Decision::kStay, "stay", 100, 10),
             HandPriced(OptionKind::kMoreDevices, Decision::kBuyDevices, "more", 103, 5)};
  const PricedDecision d = Choose(options, Priced());
  EXPECT_EQ(d.action, Decision::kBuyDevices) << d.reason;
  // The same in time: 5 % faster is a tie and stays; a third faster changes.
  DecisionInputs in = Priced();
  in.currency = Currency::kTime;
  options = {HandPriced(OptionKind::kStay, Decision::kStay, "stay", 100, 10),
             HandPriced(OptionKind::kMoreDevices, Decision::kBuyDevices, "more", 110, 9.5)};
  EXPECT_EQ(Choose(options, in).action, Decision::kStay);
  options[1].hours_per_million = 6.5;
  EXPECT_EQ(Choose(options, in).action, Decision::kBuyDevices);
}

TEST(Choose, StayingThatMissesTheDeadlineIsNotChosen) {
  std::vector<PricedOption> options = {
      HandPriced(OptionKind::kStay, Decision::kStay, "stay", 100, 10),
      HandPriced(OptionKind::kLever, Decision::kPullLevers, "lever", 97, 9.6)};
  DecisionInputs in = Priced();
  in.deadline_hours = 9.8;
  options[0].meets_deadline = false;
  EXPECT_EQ(Choose(options, in).action, Decision::kPullLevers);
}

}  // namespace
}  // namespace stepscope::decide
