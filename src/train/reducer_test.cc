// The reducer's communication thread against an in-process all-reduce: buckets are cut from the
// gradient buffer as backward reports it, reduced on the other thread while "backward" goes on,
// and every element is reduced exactly once per step. Run under ThreadSanitizer by
// scripts/sanitize.sh.
#include "train/reducer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/wire_dtype.h"
#include "train/fake_allreducer_testing.h"

namespace stepscope::train {
namespace {

// One step of "backward": layers report their gradients from the last to the first, with the
// gradient values written just before each report, as a model does.
void Backward(Reducer& reducer, std::vector<float>& grads, size_t layers, float value) {
  const size_t per_layer = grads.size() / layers;
  for (size_t l = layers; l-- > 0;) {
    for (size_t i = l * per_layer; i < (l + 1) * per_layer; ++i) grads[i] = value;
    reducer.OnGradReady(l * per_layer, per_layer);
  }
}

ReducerOptions SmallBuckets(bool overlap) {
  ReducerOptions o;
  o.bucket_mb = 4.0 * 1024 / kMiB;  // 1024 floats per bucket
  o.overlap = overlap;
  return o;
}

TEST(Reducer, OverlappedBucketsReduceEveryElementOncePerStep) {
  std::vector<float> grads(16 * 1024);
  FakeAllreducer fake(2);
  fake.delay_ms_ = 1;  // buckets are still in flight while later layers report
  Reducer reducer(grads, SmallBuckets(true), {}, &fake, 2, SteadySeconds);
  for (int step = 0; step < 5; ++step) {
    reducer.BeginStep(/*measure_norms=*/true);
    Backward(reducer, grads, 16, 1.0f + static_cast<float>(step));
    Result<Seconds> exposed = reducer.FinishStep();
    ASSERT_TRUE(exposed.ok()) << exposed.status().message();
    EXPECT_GE(*exposed, 0);
    const ReduceStats stats = reducer.TakeStats();
    EXPECT_EQ(stats.collectives.size(), 16u);
    // A mean over identical replicas keeps every value.
    for (float g : grads) ASSERT_EQ(g, 1.0f + static_cast<float>(step));
    EXPECT_GT(stats.local_grad_sq, 0);
  }
  EXPECT_EQ(fake.elements(), 5 * grads.size());
  EXPECT_EQ(reducer.buckets_per_step(), 16);
}

// --measure-wire-error: at a norm-sampled step an fp32 copy of each bucket is reduced too, and
// the bf16 result's relative error against it is what rounding to bf16 does to the values.
TEST(Reducer, MeasuresTheReducedWiresRelativeErrorAgainstFp32) {
  std::vector<float> grads(8 * 1024);
  FakeAllreducer fake(2);
  ReducerOptions o = SmallBuckets(true);
  o.dtype = comm::WireDtype::kBf16;
  o.measure_wire_error = true;
  Reducer reducer(grads, o, {}, &fake, 2, SteadySeconds);
  const float value = 1.3f;
  const double rounded = comm::Bf16ToFloat(comm::FloatToBf16(value));
  ASSERT_NE(rounded, value);
  reducer.BeginStep(/*measure_norms=*/true);
  Backward(reducer, grads, 8, value);
  ASSERT_TRUE(reducer.FinishStep().ok());
  ReduceStats stats = reducer.TakeStats();
  ASSERT_GT(stats.wire_exact_sq, 0);
  EXPECT_NEAR(std::sqrt(stats.wire_error_sq / stats.wire_exact_sq),
              std::abs(rounded - value) / value, 1e-6);
  EXPECT_EQ(fake.calls(), 16);  // each bucket twice: the wire's reduction and fp32's
  for (float g : grads) ASSERT_EQ(g, static_cast<float>(rounded));  // the wire's result stays
  // Steps that do not sample the norms measure nothing (and reduce once).
  reducer.BeginStep(/*measure_norms=*/false);
  Backward(reducer, grads, 8, value);
  ASSERT_TRUE(reducer.FinishStep().ok());
  stats = reducer.TakeStats();
  EXPECT_LT(stats.wire_error_sq, 0);
  EXPECT_EQ(fake.calls(), 24);
}

// Emulated link: each bucket's quickest real reduction is kept per bucket, and the value the
// ranks agree on replaces it (the next reductions pace from it and only lower it).
TEST(Reducer, QuickestReductionsArePerBucketAndCanBeAgreed) {
  std::vector<float> grads(4 * 1024);
  FakeAllreducer fake(2);
  EmulationOptions link;
  link.link_gbps = 1000;  // far faster than the fake: nothing to sleep
  Reducer reducer(grads, SmallBuckets(true), link, &fake, 2, SteadySeconds);
  reducer.BeginStep(false);
  Backward(reducer, grads, 4, 1.0f);
  ASSERT_TRUE(reducer.FinishStep().ok());
  std::vector<Seconds> quickest = reducer.QuickestReductions();
  ASSERT_EQ(quickest.size(), 4u);
  for (Seconds q : quickest) EXPECT_GE(q, 0);
  reducer.SetQuickestReductions({-1, -1, -1, -1});  // below any real time: stays
  reducer.BeginStep(false);
  Backward(reducer, grads, 4, 1.0f);
  ASSERT_TRUE(reducer.FinishStep().ok());
  EXPECT_EQ(reducer.QuickestReductions(), (std::vector<Seconds>{-1, -1, -1, -1}));
}

// A link the reductions cannot keep up with (a clock that moves 1 ms per read, a link of no
// cost) is unhonoured in every bucket of a counted step, and in none of a warm-up step's.
TEST(Reducer, UnhonouredLinksAreCountedOverTheCountedStepsOnly) {
  std::vector<float> grads(4 * 1024);
  FakeAllreducer fake(2);
  EmulationOptions link;
  link.link_gbps = 1e9;
  auto ticks = std::make_shared<std::atomic<int64_t>>(0);
  Reducer reducer(grads, SmallBuckets(true), link, &fake, 2,
                  [ticks] { return 1e-3 * static_cast<double>(++*ticks); });
  reducer.BeginStep(false, /*counted=*/false);
  Backward(reducer, grads, 4, 1.0f);
  ASSERT_TRUE(reducer.FinishStep().ok());
  EXPECT_EQ(reducer.unhonoured_links(), 0);
  reducer.BeginStep(false, /*counted=*/true);
  Backward(reducer, grads, 4, 1.0f);
  ASSERT_TRUE(reducer.FinishStep().ok());
  EXPECT_EQ(reducer.unhonoured_links(), 4);
}

TEST(Reducer, WithoutOverlapEverythingLaunchesAfterBackward) {
  std::vector<float> grads(8 * 1024);
  FakeAllreducer fake(4);
  Reducer reducer(grads, SmallBuckets(false), {}, &fake, 4, SteadySeconds);
  reducer.BeginStep(false);
  Backward(reducer, grads, 8, 3.0f);
  EXPECT_EQ(fake.calls(), 0);  // nothing travels before backward ends
  ASSERT_TRUE(reducer.FinishStep().ok());
  EXPECT_EQ(fake.elements(), grads.size());
  for (float g : grads) ASSERT_EQ(g, 3.0f);
}

TEST(Reducer, AFailedReductionFailsTheStepAndTheNextStepRuns) {
  std::vector<float> grads(4 * 1024);
  FakeAllreducer fake(2);
  fake.fail_ = true;
  Reducer reducer(grads, SmallBuckets(true), {}, &fake, 2, SteadySeconds);
  reducer.BeginStep(false);
  Backward(reducer, grads, 4, 1.0f);
  Result<Seconds> r = reducer.FinishStep();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("link down"), std::string::npos) << r.status().message();
}

// Destroying a reducer whose thread waits for work must not hang or race.
TEST(Reducer, DestructionStopsTheCommunicationThread) {
  std::vector<float> grads(1024);
  FakeAllreducer fake(2);
  for (int i = 0; i < 20; ++i) {
    Reducer reducer(grads, SmallBuckets(true), {}, &fake, 2, SteadySeconds);
    if (i % 2) {
      reducer.BeginStep(false);
      Backward(reducer, grads, 1, 1.0f);
      ASSERT_TRUE(reducer.FinishStep().ok());
    }
  }
}

}  // namespace
}  // namespace stepscope::train
