#include "decide/priced_options.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "model/synthetic_testing.h"

namespace stepscope::decide {
namespace {

const PricedOption& Find(const std::vector<PricedOption>& options, OptionKind kind, int replicas) {
  auto it = std::find_if(options.begin(), options.end(), [&](const PricedOption& o) {
    return o.kind == kind && o.replicas == replicas;
  });
  EXPECT_NE(it, options.end()) << ToString(kind) << " at " << replicas;
  return it != options.end() ? *it : options.front();
}

OptionsRequest Request() {
  OptionsRequest r;
  r.largest_measured = 8;
  r.measured_replicas = {1, 2, 4, 8};
  r.scale = {false, 0, 8, "unknown"};
  r.inputs.device_cost_per_hour = 2.0;
  return r;
}

TEST(PriceOptions, EveryKindIsPricedOnTheModel) {
  const model::StepModel m = model::testing::FitSynthetic({});
  OptionsRequest r = Request();
  r.levers.push_back({Lever::kLowPrecisionReduction, "fp32 -> bf16", {}});
  r.levers.back().change.dtype = "bf16";
  r.inputs.link_upgrades = {{100, 1, 0.5}};
  r.inputs.device_upgrades = {{2, 3.0}};
  Result<std::vector<PricedOption>> options = PriceOptions(m, r);
  ASSERT_TRUE(options.ok()) << options.status().message();
  const PricedOption& stay = Find(*options, OptionKind::kStay, 8);
  EXPECT_EQ(stay.action, Decision::kStay);
  EXPECT_EQ(stay.global_batch, 64);
  EXPECT_GT(stay.samples_per_s.value, 0);
  EXPECT_DOUBLE_EQ(stay.price_per_hour, 16.0);
  // Per million samples: hours = 1e6 / goodput / 3600, cost = price x hours.
  EXPECT_NEAR(stay.cost_per_million, 16.0 * 1e6 / stay.goodput / 3600, 1e-9);
  EXPECT_FALSE(stay.cost_to_target);  // no target given
  // More devices at the default candidates (16, 32, 64), fewer at the measured counts.
  for (int n : {16, 32, 64})
    EXPECT_EQ(Find(*options, OptionKind::kMoreDevices, n).action, Decision::kBuyDevices);
  for (int n : {1, 2, 4})
    EXPECT_EQ(Find(*options, OptionKind::kFewerDevices, n).action, Decision::kReduceDevices);
  // A faster link and faster devices cost their price on top of the device's.
  const PricedOption& link = Find(*options, OptionKind::kFasterLink, 8);
  EXPECT_DOUBLE_EQ(link.price_per_hour, 8 * 2.5);
  EXPECT_GE(link.samples_per_s.value, stay.samples_per_s.value);
  const PricedOption& fast = Find(*options, OptionKind::kFasterDevices, 8);
  EXPECT_GT(fast.samples_per_s.value, 1.3 * stay.samples_per_s.value);
  // Accumulation reaches the global batch of 16 replicas on 8.
  const PricedOption& acc = Find(*options, OptionKind::kAccumulation, 8);
  EXPECT_EQ(acc.global_batch, 128);
  EXPECT_EQ(Find(*options, OptionKind::kLever, 8).levers,
            (std::vector<Lever>{Lever::kLowPrecisionReduction}));
}

TEST(PriceOptions, ADoubledMicroBatchThatDoesNotFitTheDeviceIsAccumulated) {
  model::StepModel m = model::testing::FitSynthetic({});
  // Room for the measured micro-batch of 8 but not for 16.
  m.device_memory_gb =
      (static_cast<double>(m.memory_fixed) + 8.5 * static_cast<double>(m.memory_per_sample)) /
      (1024.0 * 1024 * 1024);
  OptionsRequest r = Request();
  r.levers.push_back({Lever::kBiggerMicroBatch, "micro-batch 8 -> 16", {}});
  r.levers.back().change.batch = 16;
  Result<std::vector<PricedOption>> options = PriceOptions(m, r);
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_TRUE(Find(*options, OptionKind::kStay, 8).note.empty());
  const PricedOption& lever = Find(*options, OptionKind::kLever, 8);
  EXPECT_EQ(lever.global_batch, 8 * 16);  // the same samples per step, accumulated
  EXPECT_NE(lever.note.find("micro-batch 16 does not fit"), std::string::npos) << lever.note;
  EXPECT_NE(lever.note.find("8 x 2 accumulated"), std::string::npos) << lever.note;
}

TEST(PriceOptions, ANoiseScaleMakesBigBatchesWorthLessPerSample) {
  const model::StepModel m = model::testing::FitSynthetic({});
  OptionsRequest r = Request();
  r.scale = {true, 32, 8, "test"};  // B_noise of 32 samples against batches of 64 and more
  r.inputs.samples_to_target = 1e6;
  Result<std::vector<PricedOption>> options = PriceOptions(m, r);
  ASSERT_TRUE(options.ok()) << options.status().message();
  const PricedOption& stay = Find(*options, OptionKind::kStay, 8);
  const PricedOption& big = Find(*options, OptionKind::kMoreDevices, 64);
  EXPECT_NEAR(stay.statistical_efficiency, (1 + 8.0 / 32) / (1 + 64.0 / 32), 1e-12);
  EXPECT_LT(big.statistical_efficiency, stay.statistical_efficiency);
  EXPECT_NEAR(*stay.time_to_target_hours, 1e6 / stay.goodput / 3600, 1e-9);
  EXPECT_NEAR(*stay.cost_to_target, stay.price_per_hour * *stay.time_to_target_hours, 1e-9);
}

}  // namespace
}  // namespace stepscope::decide
