#include "plan/lever_change.h"

#include <gtest/gtest.h>

namespace stepscope::plan {
namespace {

LeverBasis Basis() {
  LeverBasis b;
  b.micro_batch = 8;
  b.accumulation = 1;
  b.bucket_mib = 25;
  b.loader_workers = 1;
  b.prefetch = 4;
  b.gradient_mib = 4;
  return b;
}

LeverChange Only(Lever lever, const LeverBasis& basis) {
  LeverPlan plan = PlanLevers({lever}, basis);
  EXPECT_EQ(plan.planned.size(), 1u);
  return plan.planned.empty() ? LeverChange{} : plan.planned[0].change;
}

TEST(PlanLevers, LoaderWorkersAndPrefetchDoubleWithAFloor) {
  LeverBasis b = Basis();
  LeverChange c = Only(Lever::kLoaderWorkersPrefetch, b);
  EXPECT_EQ(c.loader_workers, 2);  // max(2, 2*1)
  EXPECT_EQ(c.prefetch, 8);        // max(8, 2*4)
  b.loader_workers = 3;
  b.prefetch = 6;
  c = Only(Lever::kLoaderWorkersPrefetch, b);
  EXPECT_EQ(c.loader_workers, 6);
  EXPECT_EQ(c.prefetch, 12);
  EXPECT_FALSE(c.micro_batch);
}

TEST(PlanLevers, BiggerMicroBatchAndAccumulationDouble) {
  LeverBasis b = Basis();
  b.accumulation = 3;
  EXPECT_EQ(Only(Lever::kBiggerMicroBatch, b).micro_batch, 16);
  EXPECT_EQ(Only(Lever::kGradientAccumulation, b).accumulation, 6);
}

TEST(PlanLevers, OverlapBucketingTurnsOverlapOnWithSeveralBuckets) {
  LeverChange c = Only(Lever::kOverlapBucketing, Basis());
  EXPECT_EQ(c.overlap, true);
  EXPECT_EQ(c.bucket_mib, 1.0);  // 4 MiB of gradient / 4
  EXPECT_EQ(PlanLevers({Lever::kOverlapBucketing}, Basis()).planned[0].words, "bucket 25 -> 1 MiB");
  LeverBasis off = Basis();
  off.overlap = false;
  EXPECT_EQ(PlanLevers({Lever::kOverlapBucketing}, off).planned[0].words,
            "overlap off -> on, bucket 25 -> 1 MiB");
}

TEST(PlanLevers, LowPrecisionReductionIsBf16AndBalanceLengthsIsTyped) {
  EXPECT_EQ(Only(Lever::kLowPrecisionReduction, Basis()).wire, comm::WireDtype::kBf16);
  EXPECT_EQ(Only(Lever::kBalanceLengths, Basis()).balance_lengths, true);
  // A job whose all-reduce has no bf16 (a script on gloo): fp16, the same bytes.
  LeverBasis gloo = Basis();
  gloo.reduced_wire = comm::WireDtype::kFp16;
  const LeverPlan plan = PlanLevers({Lever::kLowPrecisionReduction}, gloo);
  ASSERT_EQ(plan.planned.size(), 1u);
  EXPECT_EQ(plan.planned[0].change.wire, comm::WireDtype::kFp16);
  EXPECT_EQ(plan.planned[0].words, "wire precision fp32 -> fp16");
}

TEST(PlanLevers, RemovingAStragglerIsSkipped) {
  LeverPlan plan = PlanLevers({Lever::kRemoveStraggler, Lever::kBiggerMicroBatch}, Basis());
  ASSERT_EQ(plan.planned.size(), 1u);
  EXPECT_EQ(plan.planned[0].lever, Lever::kBiggerMicroBatch);
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(plan.skipped[0].lever, Lever::kRemoveStraggler);
  EXPECT_NE(plan.skipped[0].reason.find("skipped"), std::string::npos);
}

TEST(PlanLevers, ALeverThatChangesNothingIsSkipped) {
  LeverBasis b = Basis();
  b.wire = comm::WireDtype::kBf16;
  b.bucket_mib = 0.1;  // overlap on, and the cap is already below the 0.25 MiB floor
  LeverPlan plan = PlanLevers({Lever::kLowPrecisionReduction, Lever::kOverlapBucketing}, b);
  EXPECT_TRUE(plan.planned.empty());
  ASSERT_EQ(plan.skipped.size(), 2u);
  EXPECT_NE(plan.skipped[0].reason.find("already"), std::string::npos);
  b.overlap = false;  // the same bucket, but overlap turned on
  EXPECT_EQ(PlanLevers({Lever::kOverlapBucketing}, b).planned.size(), 1u);
}

TEST(PlanLevers, ThePrecisionOfTheScriptsOwnHookIsNotALever) {
  LeverBasis b = Basis();
  b.comm_hook = "powerSGD_hook";
  LeverPlan plan = PlanLevers({Lever::kLowPrecisionReduction, Lever::kOverlapBucketing}, b);
  ASSERT_EQ(plan.planned.size(), 1u);  // the bucket cap still reaches the script's DDP
  EXPECT_EQ(plan.planned[0].lever, Lever::kOverlapBucketing);
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(plan.skipped[0].lever, Lever::kLowPrecisionReduction);
  EXPECT_NE(plan.skipped[0].reason.find("its own communication hook (powerSGD_hook)"),
            std::string::npos)
      << plan.skipped[0].reason;
}

TEST(PlanLevers, KeepsTheRecommendedOrderAndPlansEachLeverOnce) {
  LeverPlan plan = PlanLevers(
      {Lever::kLowPrecisionReduction, Lever::kLoaderWorkersPrefetch, Lever::kLowPrecisionReduction},
      Basis());
  ASSERT_EQ(plan.planned.size(), 2u);
  EXPECT_EQ(plan.planned[0].lever, Lever::kLowPrecisionReduction);
  EXPECT_EQ(plan.planned[1].lever, Lever::kLoaderWorkersPrefetch);
  EXPECT_FALSE(plan.planned[1].words.empty());
}

TEST(LeverChange, MergeTakesEverySetField) {
  LeverChange a;
  a.micro_batch = 4;
  a.prefetch = 8;
  LeverChange b;
  b.prefetch = 16;
  b.wire = comm::WireDtype::kBf16;
  a.Merge(b);
  EXPECT_EQ(a.micro_batch, 4);
  EXPECT_EQ(a.prefetch, 16);
  EXPECT_EQ(a.wire, comm::WireDtype::kBf16);
  EXPECT_FALSE(a.empty());
  EXPECT_TRUE(LeverChange{}.empty());
}

TEST(LeverChange, AfterChangeIsTheBasisTheNextLeversStartFrom) {
  LeverChange c = Only(Lever::kBiggerMicroBatch, Basis());
  c.Merge(Only(Lever::kLoaderWorkersPrefetch, Basis()));
  c.Merge(Only(Lever::kLowPrecisionReduction, Basis()));
  const LeverBasis after = AfterChange(Basis(), c);
  EXPECT_EQ(after.micro_batch, 16);
  EXPECT_EQ(after.loader_workers, 2);
  EXPECT_EQ(after.prefetch, 8);
  EXPECT_EQ(after.wire, comm::WireDtype::kBf16);
  EXPECT_EQ(after.accumulation, 1);
  EXPECT_EQ(after.bucket_mib, 25);
  EXPECT_EQ(after.gradient_mib, 4);
  // A second doubling starts from the levered micro-batch.
  EXPECT_EQ(Only(Lever::kBiggerMicroBatch, after).micro_batch, 32);
}

TEST(BucketForOverlap, AQuarterOfTheGradientWithinBounds) {
  LeverBasis b = Basis();
  b.gradient_mib = 10;
  EXPECT_DOUBLE_EQ(BucketForOverlap(b), 2.5);
  b.gradient_mib = 0.4;  // a quarter is 0.1: raised to the 0.25 floor
  EXPECT_DOUBLE_EQ(BucketForOverlap(b), 0.25);
  b.gradient_mib = 400;  // a quarter is 100: held to the job's cap
  EXPECT_DOUBLE_EQ(BucketForOverlap(b), 25);
  b.gradient_mib = 1.234;  // rounded to 0.01 MiB
  EXPECT_DOUBLE_EQ(BucketForOverlap(b), 0.31);
  b.gradient_mib = 0;  // unknown: the job's cap
  EXPECT_DOUBLE_EQ(BucketForOverlap(b), 25);
}

TEST(BucketForOverlap, ACapBelowTheFloorIsKept) {
  // --bucket-mb 0.1: the 0.25 MiB floor would exceed the cap (std::clamp's low > high).
  LeverBasis b = Basis();
  b.bucket_mib = 0.1;
  b.gradient_mib = 4;
  EXPECT_DOUBLE_EQ(BucketForOverlap(b), 0.1);
  b.gradient_mib = 0.1;
  EXPECT_DOUBLE_EQ(BucketForOverlap(b), 0.1);
  b.bucket_mib = 0.004;  // rounding to 0.01 would give 0: the cap itself
  EXPECT_DOUBLE_EQ(BucketForOverlap(b), 0.004);
  b.bucket_mib = 0.105;  // rounding up would exceed the cap
  EXPECT_DOUBLE_EQ(BucketForOverlap(b), 0.105);
}

}  // namespace
}  // namespace stepscope::plan
