#include "model/gradient_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stepscope::model {
namespace {

// A steady step of rank 0 whose backward starts at 10 s and lasts 1 s, with one collective per
// (bytes, share of backward elapsed when it was ready).
StepRecord Step(int64_t step, const std::vector<std::pair<Bytes, double>>& buckets) {
  StepRecord r;
  r.step = step;
  r.backward_start = 10.0;
  r.backward = 1.0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    const Seconds ready = 10.0 + buckets[i].second;
    r.collectives.push_back({static_cast<int>(i), buckets[i].first, ready, ready, ready + 0.1, 0});
  }
  return r;
}

TEST(GradientLayout, BucketReadinessIsEachBucketsMedianShareOfBackwardAgainstItsBytes) {
  RunObservation run;
  run.records = {Step(0, {{1 << 20, 0.4}, {3 << 20, 1.0}}),
                 Step(1, {{1 << 20, 0.9}, {3 << 20, 1.0}}),
                 Step(2, {{1 << 20, 0.5}, {3 << 20, 1.0}})};
  StepRecord warmup = Step(3, {{1 << 20, 0.0}, {3 << 20, 0.0}});
  warmup.warmup = true;  // not steady: left out
  run.records.push_back(warmup);
  int buckets = 0;
  const std::vector<ReadinessPoint> p = BucketReadiness({&run}, &buckets);
  EXPECT_EQ(buckets, 2);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_DOUBLE_EQ(p[0].backward_share, 0.0);
  EXPECT_DOUBLE_EQ(p[1].backward_share, 0.5);
  EXPECT_DOUBLE_EQ(p[1].bytes_share, 0.25);
  EXPECT_DOUBLE_EQ(p[2].backward_share, 1.0);
  EXPECT_DOUBLE_EQ(p[2].bytes_share, 1.0);
}

TEST(GradientLayout, BucketSharesComeFromTheMostCommonBucketCount) {
  RunObservation run;
  run.records = {Step(0, {{1 << 20, 0.5}, {3 << 20, 1.0}}), Step(1, {{4 << 20, 1.0}}),
                 Step(2, {{1 << 20, 0.5}, {3 << 20, 1.0}})};
  const std::vector<double> shares = BucketShares({&run});
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(shares[0], 0.25);
  EXPECT_DOUBLE_EQ(shares[1], 0.75);
  RunObservation silent;  // no reducing step
  EXPECT_TRUE(BucketShares({&silent}).empty());
}

TEST(GradientLayout, SlicesFromTheRunsThatRecordedTheFirstsLayout) {
  RunObservation none, first, other, same;
  first.ready_slice_bytes = {1 << 20, 3 << 20}, first.ready_slice_share = {0.2, 1.0};
  other.ready_slice_bytes = {2 << 20, 2 << 20}, other.ready_slice_share = {0.9, 1.0};
  same.ready_slice_bytes = first.ready_slice_bytes, same.ready_slice_share = {0.4, 1.0};
  EXPECT_TRUE(SliceShares({&none}).empty());
  EXPECT_TRUE(SliceReadiness({&none}).empty());
  const std::vector<double> shares = SliceShares({&none, &first, &other});
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(shares[0], 0.25);
  // `other` recorded another layout: its shares are not pooled with the first's.
  const std::vector<ReadinessPoint> p = SliceReadiness({&none, &first, &other, &same});
  ASSERT_EQ(p.size(), 3u);
  EXPECT_DOUBLE_EQ(p[1].backward_share, 0.3);  // the median of 0.2 and 0.4
  EXPECT_DOUBLE_EQ(p[1].bytes_share, 0.25);
  EXPECT_DOUBLE_EQ(p[2].backward_share, 1.0);
}

TEST(GradientLayout, OneBucketAStepAndNoSlicesIsAssumedUniformAndSaysSo) {
  RunObservation run;
  run.records = {Step(0, {{4 << 20, 1.0}}), Step(1, {{4 << 20, 1.0}})};
  StepModel m;
  FitGradientLayout({&run}, {&run}, &m);
  EXPECT_TRUE(m.readiness_assumed);
  ASSERT_EQ(m.readiness.size(), 2u);
  EXPECT_DOUBLE_EQ(m.readiness[1].backward_share, 1.0);
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("assumed uniform"), std::string::npos);

  run.ready_slice_bytes = {1 << 20, 3 << 20}, run.ready_slice_share = {0.3, 1.0};
  StepModel sliced;
  FitGradientLayout({&run}, {&run}, &sliced);
  EXPECT_FALSE(sliced.readiness_assumed);
  EXPECT_TRUE(sliced.notes.empty());
  EXPECT_NE(sliced.readiness_how.find("slice"), std::string::npos);
  EXPECT_DOUBLE_EQ(sliced.readiness[1].backward_share, 0.3);
}

}  // namespace
}  // namespace stepscope::model
