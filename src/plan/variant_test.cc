#include "plan/variant.h"

#include <gtest/gtest.h>

namespace stepscope::plan {
namespace {

TEST(Variant, NamesOfEveryKind) {
  EXPECT_EQ(VariantName(Variant::Of(VariantKind::kBaseline)), "baseline");
  EXPECT_EQ(VariantName(Variant::Of(VariantKind::kNoReduce)), "no_reduce");
  EXPECT_EQ(VariantName(Variant::Of(VariantKind::kSyntheticInput)), "synthetic_input");
  EXPECT_EQ(VariantName(Variant::Of(VariantKind::kDoubleBatch)), "double_batch");
  EXPECT_EQ(VariantName(Variant::Of(VariantKind::kAllLevers)), "levers");
  EXPECT_EQ(VariantName(Variant::OneLever(Lever::kOverlapBucketing)), "lever_overlap_bucketing");
}

TEST(Variant, RunNamesCarryTheRepeatFromTheSecondOn) {
  EXPECT_EQ(RunName({Variant::Of(VariantKind::kBaseline), 4}), "baseline-n4");
  EXPECT_EQ(RunName({Variant::Of(VariantKind::kBaseline), 4, 1}), "baseline-n4");
  EXPECT_EQ(RunName({Variant::Of(VariantKind::kBaseline), 4, 2}), "baseline-n4-r2");
  EXPECT_EQ(RunName({Variant::Of(VariantKind::kNoReduce), 16}), "no_reduce-n16");
  EXPECT_EQ(RunName({Variant::OneLever(Lever::kBiggerMicroBatch), 8}),
            "lever_bigger_micro_batch-n8");
}

TEST(Variant, IdentityIgnoresTheLeverOutsideOneLever) {
  EXPECT_EQ(Variant::Of(VariantKind::kBaseline),
            (Variant{VariantKind::kBaseline, Lever::kRemoveStraggler}));
  EXPECT_NE(Variant::OneLever(Lever::kBiggerMicroBatch),
            Variant::OneLever(Lever::kOverlapBucketing));
  EXPECT_TRUE(IsAblation(VariantKind::kDoubleBatch));
  EXPECT_FALSE(IsAblation(VariantKind::kAllLevers));
}

TEST(Variant, NumericsRunsAreTheWireCheckAndTheNoiseScale) {
  for (const char* name :
       {"wire_fp32-n2", "wire_reduced-n2", "wire_fp32_seed2-n2", "noise_scale-n2"}) {
    EXPECT_TRUE(IsNumericsRun(name)) << name;
  }
  for (const char* name : {"baseline-n2", "baseline-n4-r2", "levers-n16",
                           "lever_low_precision_reduction-n16", "double_batch-n4"}) {
    EXPECT_FALSE(IsNumericsRun(name)) << name;
  }
}

}  // namespace
}  // namespace stepscope::plan
