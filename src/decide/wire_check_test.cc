#include "decide/wire_check.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stepscope::decide {
namespace {

// Two ranks, `steps` steps, loss decaying to `final` (rank 1 a little above rank 0).
std::vector<StepRecord> LossRun(int64_t steps, double final) {
  std::vector<StepRecord> out;
  for (int64_t s = 0; s < steps; ++s) {
    for (int rank = 0; rank < 2; ++rank) {
      StepRecord r;
      r.rank = rank;
      r.step = s;
      r.loss = final + std::exp(-0.05 * static_cast<double>(s)) + 0.01 * rank;
      out.push_back(r);
    }
  }
  return out;
}

TEST(WireCheck, KeptWithinTheSeedSpreadDroppedBeyondIt) {
  const auto fp32 = LossRun(200, 0.50), reseeded = LossRun(200, 0.52);
  Result<WireCheck> close = CompareWire(fp32, LossRun(200, 0.51), reseeded, "bf16");
  ASSERT_TRUE(close.ok()) << close.status().message();
  EXPECT_EQ(close->steps, 200);
  EXPECT_EQ(close->replicas, 2);
  EXPECT_EQ(close->tail_steps, 40);
  EXPECT_NEAR(close->difference, 0.01, 1e-9);
  EXPECT_NEAR(close->spread, 0.02, 1e-9);
  EXPECT_TRUE(close->kept) << close->sentence;
  EXPECT_NE(close->sentence.find("kept"), std::string::npos);

  Result<WireCheck> far = CompareWire(fp32, LossRun(200, 0.60), reseeded, "fp16");
  ASSERT_TRUE(far.ok());
  EXPECT_FALSE(far->kept) << far->sentence;
  EXPECT_NE(far->sentence.find("dropped"), std::string::npos);
  EXPECT_NE(far->sentence.find("fp16"), std::string::npos);
}

TEST(WireCheck, FinalLossIsTheMeanOfTheLastStepsOverRanks) {
  const auto run = LossRun(100, 1.0);
  Result<double> last = FinalLoss(run, 1);
  ASSERT_TRUE(last.ok());
  EXPECT_NEAR(*last, 1.0 + std::exp(-0.05 * 99) + 0.005, 1e-12);
  EXPECT_FALSE(FinalLoss({}, 5).ok());
  auto broken = run;
  broken.back().loss = std::nan("");
  Result<WireCheck> c = CompareWire(run, broken, run, "bf16");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("reduced-wire run"), std::string::npos)
      << c.status().message();
}

TEST(WireCheck, AStepWithoutALossOrARunThatDidNotDriftIsNotJudged) {
  // A script's step whose loss the helper did not see: the error names the step and rank.
  auto unseen = LossRun(50, 1.0);
  unseen[2 * 45 + 1].loss.reset();
  Result<double> loss = FinalLoss(unseen, 10);
  ASSERT_FALSE(loss.ok());
  EXPECT_NE(loss.status().message().find("step 45: rank 1 recorded no training loss"),
            std::string::npos)
      << loss.status().message();
  EXPECT_TRUE(FinalLoss(unseen, 4).ok());  // steps 46 to 49 all have theirs
  // A reseeded run that ended at exactly the fp32 run's loss: the seed reached nothing.
  const auto fp32 = LossRun(100, 0.5);
  Result<WireCheck> c = CompareWire(fp32, LossRun(100, 0.6), fp32, "bf16");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("no drift to judge bf16 against"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace stepscope::decide
