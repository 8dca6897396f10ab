#include "model/token_cost.h"

#include <gtest/gtest.h>

namespace stepscope::model {
namespace {

// Steady records whose forward + backward is `a + c tokens`, times `wobble` on odd records.
std::vector<StepRecord> Records(double a, double c, double wobble, int n = 40) {
  std::vector<StepRecord> out;
  for (int i = 0; i < n; ++i) {
    StepRecord r;
    r.step = i;
    r.tokens = 100 + 37 * (i % 9);
    const double x = (a + c * static_cast<double>(*r.tokens)) * (i % 2 ? wobble : 1.0);
    r.forward = x / 3, r.backward = 2 * x / 3;
    out.push_back(r);
  }
  StepRecord warm = out.front();
  warm.warmup = true, warm.forward = 100;  // warm-up steps do not count
  out.push_back(warm);
  return out;
}

TEST(FitTokenCost, RecoversTheShareThatScalesWithPositions) {
  const std::optional<TokenCost> t = FitTokenCost(Records(0.002, 0.0001, 1.0));
  ASSERT_TRUE(t.has_value());
  // Mean tokens 100 + 37 x 4 = 248 (nine values, 40 records: close to it): c w / (a + c w).
  EXPECT_NEAR(t->token_share, 0.0248 / (0.002 + 0.0248), 0.01);
  EXPECT_NEAR(t->positions, 100 + 37 * 3.75, 1e-9);  // i % 9 averages 3.75 over 40 records
  ASSERT_EQ(t->noise.size(), 21u);
  EXPECT_NEAR(t->noise.front(), 1.0, 1e-9);
  EXPECT_NEAR(t->noise.back(), 1.0, 1e-9);
}

TEST(FitTokenCost, KeepsWhatThePositionsDoNotExplain) {
  const std::optional<TokenCost> t = FitTokenCost(Records(0, 0.0001, 1.04));
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(std::is_sorted(t->noise.begin(), t->noise.end()));
  EXPECT_NEAR(t->noise.back() / t->noise.front(), 1.04, 0.01);
}

TEST(FitTokenCost, NothingToFitWithoutVaryingTokens) {
  EXPECT_FALSE(FitTokenCost({}).has_value());
  std::vector<StepRecord> same = Records(0.002, 0.0001, 1.0);
  for (StepRecord& r : same) r.tokens = 200;
  EXPECT_FALSE(FitTokenCost(same).has_value());
  std::vector<StepRecord> none = Records(0.002, 0.0001, 1.0);
  for (StepRecord& r : none) r.tokens.reset();
  EXPECT_FALSE(FitTokenCost(none).has_value());
}

TEST(TokenShareAt, MovesTheScalingPartWithThePositions) {
  // a = 1, c = 0.01: at 100 positions 1 + 1 (share 0.5); at 300, 1 + 3 (share 0.75).
  EXPECT_NEAR(TokenShareAt(0.5, 100, 300), 0.75, 1e-12);
  EXPECT_NEAR(TokenShareAt(0.75, 300, 100), 0.5, 1e-12);
  EXPECT_NEAR(TokenShareAt(1.0, 100, 37), 1.0, 1e-12);  // all of it scales: still all
  EXPECT_NEAR(WorkAt(0.5, 100, 300), 2.0, 1e-12);       // (1 + 3) / (1 + 1)
  EXPECT_NEAR(WorkAt(1.0, 200, 150), 0.75, 1e-12);
  EXPECT_EQ(WorkAt(0.5, 0, 300), 1.0);  // no reference: as measured
}

}  // namespace
}  // namespace stepscope::model
