#include "model/link_scaling.h"

#include <gtest/gtest.h>

#include "model/simulate.h"
#include "model/synthetic_testing.h"

namespace stepscope::model {
namespace {

TEST(ScaleMeasuredLink, TheDeliveredShareOfTheNominalRateCarriesOver) {
  // Fitted at 1 GB/s delivered on a link of nominal 1.25 GB/s: 80 % of the nominal rate.
  const testing::Truth t;
  const StepModel m = testing::FitSynthetic(t);
  Result<AlphaBeta> twice = ScaleMeasuredLink(m, 1.25, 2.5, std::nullopt);
  ASSERT_TRUE(twice.ok()) << twice.status().message();
  // Twice the nominal rate: twice the delivered bandwidth (2 GB/s), not the nominal 2.5.
  EXPECT_NEAR(twice->seconds_per_byte.value, t.seconds_per_byte / 2, 1e-3 * t.seconds_per_byte);
  EXPECT_NEAR(twice->alpha_s.value, t.alpha, 1e-3 * t.alpha);  // latency as fitted
  EXPECT_NE(twice->how.find("scaled"), std::string::npos) << twice->how;
  Result<AlphaBeta> slower = ScaleMeasuredLink(m, 1.25, 0.625, 20e-6);
  ASSERT_TRUE(slower.ok());
  EXPECT_NEAR(slower->seconds_per_byte.value, 2 * t.seconds_per_byte, 1e-3 * t.seconds_per_byte);
  EXPECT_DOUBLE_EQ(slower->alpha_s.value, 20e-6);
  // Against the nominal rate taken at face value, the scaled link predicts more exposed
  // communication (it delivers what this kind of link delivers).
  Scenario nominal, scaled;
  nominal.replicas = scaled.replicas = 8;
  nominal.link = LinkAlphaBeta(2.5, t.alpha);
  scaled.link = *twice;
  Result<StepParts> a = SimulateStep(m, nominal), b = SimulateStep(m, scaled);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(b->exposed_comm, 1.1 * a->exposed_comm);
}

TEST(ScaleMeasuredLink, BadInputIsRefusedWithTheReason) {
  const StepModel m = testing::FitSynthetic({});
  EXPECT_FALSE(ScaleMeasuredLink(m, 0, 1, std::nullopt).ok());
  EXPECT_FALSE(ScaleMeasuredLink(m, 1, -2, std::nullopt).ok());
  StepModel none = m;
  none.collectives.clear();
  Result<AlphaBeta> r = ScaleMeasuredLink(none, 1, 2, std::nullopt);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("2 or more replicas"), std::string::npos);
}

TEST(ScaleCrowdedResidual, OverABindingLinkTheResidualScalesWithIt) {
  // Crowding's overhead 10 + 40 c ms, of which the residual is 0 + 32 c ms.
  StepModel m = testing::FitSynthetic({});
  HostCrowding h;
  h.cores_per_host = 2;
  h.overhead_a = {"crowding_overhead_a", Estimate{0.010, 0.009, 0.011}, "s per step", "fit"};
  h.overhead_b = {"crowding_overhead_b", Estimate{0.040, 0.030, 0.050}, "s per step", "fit"};
  h.residual_a = Constant{"crowding_residual_a", Estimate::Exact(0), "s per step", "fit"};
  h.residual_b = Constant{"crowding_residual_b", Estimate::Exact(0.032), "s per step", "fit"};
  m.crowding = h;
  // No judged link, or one that did not bind: nothing changes.
  EXPECT_FALSE(ScaleCrowdedResidual(1.0, 4.0, &m).has_value());
  m.measured_link = MeasuredLink{1.0, 2.0, false};
  EXPECT_FALSE(ScaleCrowdedResidual(1.0, 4.0, &m).has_value());
  EXPECT_DOUBLE_EQ(m.crowding->overhead_b.estimate.value, 0.040);
  // A binding link four times faster: a quarter of the residual stays, 40 - 24 = 16 ms.
  m.measured_link = MeasuredLink{1.0, 0.9, true};
  std::optional<std::string> note = ScaleCrowdedResidual(1.0, 4.0, &m);
  ASSERT_TRUE(note.has_value());
  EXPECT_NE(note->find("scaled by 0.250"), std::string::npos) << *note;
  EXPECT_NEAR(m.crowding->overhead_b.estimate.value, 0.016, 1e-12);
  EXPECT_NEAR(m.crowding->overhead_b.estimate.low, 0.006, 1e-12);
  EXPECT_NEAR(m.crowding->overhead_b.estimate.high, 0.026, 1e-12);
  EXPECT_NEAR(m.crowding->overhead_a.estimate.value, 0.010, 1e-12);
  // A slower link: the residual grows with it.
  StepModel slower = m;
  slower.crowding->overhead_b.estimate.value = 0.040;
  ASSERT_TRUE(ScaleCrowdedResidual(1.0, 0.5, &slower).has_value());
  EXPECT_NEAR(slower.crowding->overhead_b.estimate.value, 0.072, 1e-12);
  // Without a residual line: nothing.
  m.crowding->residual_b.reset();
  EXPECT_FALSE(ScaleCrowdedResidual(1.0, 4.0, &m).has_value());
}

TEST(MeasuredLinkCaveat, AFitFasterThanItsLinkIsFlagged) {
  // The synthetic fit delivers 1 GB/s (1e-9 s per byte).
  const testing::Truth t;
  const StepModel m = testing::FitSynthetic(t);
  ASSERT_NEAR(1e-9 / m.collectives.at(m.reference.dtype).seconds_per_byte.value, 1.0, 0.01);
  EXPECT_FALSE(MeasuredLinkCaveat(m, 1.25).has_value());      // 80 % of its link: plausible
  EXPECT_FALSE(MeasuredLinkCaveat(m, 1.0).has_value());       // the whole of it
  std::optional<std::string> c = MeasuredLinkCaveat(m, 0.5);  // twice its link: not the link
  ASSERT_TRUE(c.has_value());
  EXPECT_NE(c->find("more than the 0.500 GB/s link"), std::string::npos) << *c;
  StepModel none = m;
  none.collectives.clear();
  EXPECT_FALSE(MeasuredLinkCaveat(none, 0.5).has_value());
}

TEST(FasterLinkCaveat, AWhatIfBeyondABindingLinkSaysTheTransportMustKeepUp) {
  const testing::Truth t;
  const StepModel m = testing::FitSynthetic(t);  // delivers 1 GB/s
  std::optional<std::string> c =
      FasterLinkCaveat(JudgeMeasuredLink(m, 1.25), 2.5);  // the link bound; twice it
  ASSERT_TRUE(c.has_value());
  EXPECT_NE(c->find("--link 2.500 GB/s is 2.0 times the 1.250 GB/s link"), std::string::npos) << *c;
  EXPECT_NE(c->find("keeps up"), std::string::npos) << *c;
  EXPECT_FALSE(FasterLinkCaveat(JudgeMeasuredLink(m, 1.25), 1.25).has_value());  // the same link
  EXPECT_FALSE(FasterLinkCaveat(JudgeMeasuredLink(m, 1.25), 1.3).has_value());  // within the margin
  EXPECT_FALSE(FasterLinkCaveat(JudgeMeasuredLink(m, 1.25), 0.5).has_value());  // a slower link
  // Where the measured link did not bind, MeasuredLinkCaveat speaks instead.
  EXPECT_FALSE(FasterLinkCaveat(JudgeMeasuredLink(m, 0.5), 2.0).has_value());
  StepModel none = m;
  none.collectives.clear();
  EXPECT_FALSE(FasterLinkCaveat(JudgeMeasuredLink(none, 1.25), 2.5).has_value());  // nothing fitted
}

TEST(JudgeMeasuredLink, SaysWhatTheFitDeliversAndWhetherTheLinkBinds) {
  const testing::Truth t;
  const StepModel m = testing::FitSynthetic(t);  // delivers 1 GB/s
  std::optional<MeasuredLink> slower = JudgeMeasuredLink(m, 1.25);
  ASSERT_TRUE(slower.has_value());
  EXPECT_DOUBLE_EQ(slower->nominal_gbps, 1.25);
  EXPECT_NEAR(slower->delivered_gbps, 1.0, 0.01);
  EXPECT_TRUE(slower->link_binds);
  EXPECT_TRUE(JudgeMeasuredLink(m, 0.97)->link_binds);  // within the margin
  EXPECT_FALSE(JudgeMeasuredLink(m, 0.9)->link_binds);  // 11 % faster than its link
  EXPECT_FALSE(JudgeMeasuredLink(m, 0).has_value());    // no rate
  StepModel none = m;
  none.collectives.clear();
  EXPECT_FALSE(JudgeMeasuredLink(none, 1).has_value());  // nothing fitted
}

}  // namespace
}  // namespace stepscope::model
