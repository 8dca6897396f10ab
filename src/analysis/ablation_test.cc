#include "analysis/ablation.h"

#include <gtest/gtest.h>

#include "analysis/synthetic_testing.h"

namespace stepscope::analysis {
namespace {

SyntheticRunSpec Baseline() {
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.compute = 0.010;
  spec.input_wait = 0.004;
  spec.bucket_time = 0.006;
  return spec;
}

TEST(Ablation, AgreesWhenAblationsMatchTheDecomposition) {
  const SyntheticAblationSpecs ablations = AblationSpecsOf(Baseline());
  AblationRuns runs;
  runs.no_reduce = DecomposeSpec(ablations.no_reduce);
  runs.synthetic_input = DecomposeSpec(ablations.synthetic_input);
  runs.double_batch = DecomposeSpec(ablations.double_batch);
  const AblationReport r = CompareAblations(DecomposeSpec(Baseline()), runs, nullptr);
  ASSERT_EQ(r.checks.size(), 3u);
  EXPECT_NEAR(r.checks[0].measured, 0.006, 1e-9);
  EXPECT_NEAR(r.checks[0].predicted, 0.006, 1e-9);
  EXPECT_NEAR(r.checks[1].measured, 0.004, 1e-9);
  EXPECT_NEAR(r.checks[2].measured, r.checks[2].predicted, 1e-6);
  EXPECT_EQ(r.agree, true);
  EXPECT_EQ(r.sentence, "decomposition and ablations agree");
}

// A measured gain outside the predicted range widened by the runs' noise disagrees, and the
// sentence states the range that was accepted.
TEST(Ablation, DoubleBatchOutsideItsRangeDisagrees) {
  SyntheticRunSpec base = Baseline();
  base.jitter = 0.02;
  AblationRuns runs;
  SyntheticRunSpec db = base;
  db.compute *= 1.2;  // the doubled batch computes far faster than twice the work predicts
  db.input_wait *= 2;
  db.samples_per_rank *= 2;
  runs.double_batch = DecomposeSpec(db);
  const Decomposition baseline = DecomposeSpec(base);
  const AblationReport r = CompareAblations(baseline, runs, nullptr);
  ASSERT_EQ(r.checks.size(), 1u);
  const AblationCheck& c = r.checks[0];
  EXPECT_GT(c.measured, c.Accepted().high);
  EXPECT_FALSE(c.agrees);
  EXPECT_EQ(r.agree, false);
  EXPECT_NEAR(c.noise, baseline.throughput.Width() / 2 + runs.double_batch->throughput.Width() / 2,
              1e-9);
  EXPECT_NE(c.sentence.find("accepted"), std::string::npos) << c.sentence;
}

// Nothing was compared: the report must not claim agreement (it neither agrees nor disagrees).
TEST(Ablation, EmptyReportDoesNotAgree) {
  const AblationReport r = CompareAblations(DecomposeSpec(Baseline()), AblationRuns{}, nullptr);
  EXPECT_TRUE(r.checks.empty());
  EXPECT_FALSE(r.agree.has_value());
  EXPECT_EQ(r.sentence, "no ablation runs to compare with the decomposition");
}

// A check agrees exactly when the measurement lies in its accepted range.
TEST(Ablation, AgreementIsTheAcceptedRange) {
  AblationCheck c;
  c.predicted = 0.010;
  c.predicted_high = 0.012;
  c.tolerance = 0.001;
  const Estimate e = c.Accepted();
  EXPECT_DOUBLE_EQ(e.value, 0.010);
  EXPECT_DOUBLE_EQ(e.low, 0.009);
  EXPECT_DOUBLE_EQ(e.high, 0.013);
  EXPECT_TRUE(e.Contains(0.0125));
  EXPECT_FALSE(e.Contains(0.0135));
}

TEST(Ablation, DisagreesWithASentence) {
  const SyntheticRunSpec base = Baseline();
  AblationRuns runs;
  // The synthetic-input run is no faster: the input wait the decomposition shows is not real.
  runs.synthetic_input = DecomposeSpec(base);
  const AblationReport r = CompareAblations(DecomposeSpec(base), runs, nullptr);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_FALSE(r.checks[0].agrees);
  EXPECT_EQ(r.agree, false);
  EXPECT_NE(r.sentence.find("disagree: synthetic_input"), std::string::npos) << r.sentence;
}

TEST(Ablation, RankSpreadMatchesSyncWait) {
  SyntheticRunSpec base = Baseline();
  base.rank_compute_factor[3] = 1.5;
  const std::vector<StepRecord> records = SynthesizeRun(base);
  Result<SkewReport> skew = AnalyzeSkew(records);
  ASSERT_TRUE(skew.ok());
  Result<Decomposition> d = Decompose(records);
  ASSERT_TRUE(d.ok());
  const AblationReport r = CompareAblations(*d, {}, &*skew);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].check, AblationCheckKind::kRankSpread);
  EXPECT_NEAR(r.checks[0].measured, 0.005, 1e-9);
  EXPECT_NEAR(r.checks[0].predicted, 0.005, 1e-9);
  EXPECT_EQ(r.agree, true);
}

TEST(Ablation, NoisyRunsWidenTheTolerance) {
  // The synthetic-input run is 1 ms faster where the decomposition predicts 4 ms of input
  // wait: quiet runs disagree; runs whose mean steps are uncertain by more than the 3 ms
  // shortfall (few steps, compute scattered by +-90%) do not.
  SyntheticRunSpec base = Baseline();
  SyntheticRunSpec si = base;
  si.input_wait = 0.003;  // only 1 ms saved
  for (double jitter : {0.0, 0.9}) {
    SyntheticRunSpec b = base, a = si;
    b.jitter = a.jitter = jitter;
    b.steps = a.steps = 12;
    a.seed = 2;
    AblationRuns runs;
    runs.synthetic_input = DecomposeSpec(a);
    const Decomposition baseline = DecomposeSpec(b);
    const AblationReport r = CompareAblations(baseline, runs, nullptr);
    ASSERT_EQ(r.checks.size(), 1u);
    const AblationCheck& c = r.checks[0];
    const double noise =
        baseline.step_estimate.Width() / 2 + runs.synthetic_input->step_estimate.Width() / 2;
    EXPECT_NEAR(c.noise, noise, 1e-12);
    EXPECT_NEAR(c.tolerance, 0.2 * std::abs(c.predicted) + noise, 1e-12);
    EXPECT_EQ(c.agrees, jitter > 0) << "jitter " << jitter << " measured " << c.measured
                                    << " predicted " << c.predicted << " noise " << noise;
  }
}

}  // namespace
}  // namespace stepscope::analysis
