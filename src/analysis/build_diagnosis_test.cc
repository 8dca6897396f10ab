#include "analysis/build_diagnosis.h"

#include <gtest/gtest.h>

#include "analysis/synthetic_run.h"

namespace stepscope::analysis {
namespace {

// One replica count (4, rank 1 slow) with the three ablations: what `analyze` of one trace set
// looks like, plus ablations so that every kind of sentence is present.
std::vector<RunSet> OneCount() {
  SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.buckets = 2;
  spec.input_wait = 0.002;
  spec.rank_compute_factor = {{1, 1.4}};
  return {SynthesizeRunSet(spec)};
}

TEST(BuildDiagnosis, StepRatesSayStepsInEverySentence) {
  DiagnoseOptions options;
  options.source.throughput_unit = ThroughputUnit::kSteps;
  options.cost.device_cost_per_hour = 2.0;
  Result<Diagnosis> d = BuildDiagnosis(OneCount(), options);
  ASSERT_TRUE(d.ok()) << d.status().message();
  const std::string text = DiagnosisToString(*d);
  EXPECT_EQ(text.find("samples/s"), std::string::npos) << text;
  EXPECT_EQ(text.find("per sample"), std::string::npos) << text;
  EXPECT_NE(text.find("\"throughput_unit\": \"steps/s\""), std::string::npos);

  Result<Diagnosis> back = DiagnosisFromString(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->source.throughput_unit, ThroughputUnit::kSteps);
}

TEST(BuildDiagnosis, SampleRatesKeepTheirWords) {
  Result<Diagnosis> d = BuildDiagnosis(OneCount(), DiagnoseOptions{});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->source.throughput_unit, ThroughputUnit::kSamples);
  EXPECT_NE(DiagnosisToString(*d).find("samples/s"), std::string::npos);
}

TEST(BuildDiagnosis, OneReplicaCountHasNoMarginalAndDoesNotDecide) {
  Result<Diagnosis> d = BuildDiagnosis(OneCount(), DiagnoseOptions{});
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->points.size(), 1u);
  EXPECT_FALSE(d->points[0].scaling.has_marginal);
  EXPECT_TRUE(ToJson(*d)["points"][0]["marginal_device_value"].is_null());
  EXPECT_EQ(d->verdict.decision, Decision::kPullLevers) << d->verdict.decision_reason;
  EXPECT_NE(d->verdict.decision_reason.find("one replica count"), std::string::npos);
}

TEST(BuildDiagnosis, OlderFilesWithoutAUnitReadAsSamples) {
  Result<Diagnosis> d = BuildDiagnosis(OneCount(), DiagnoseOptions{});
  ASSERT_TRUE(d.ok()) << d.status().message();
  nlohmann::json j = ToJson(*d);
  j["source"].erase("throughput_unit");
  Result<Diagnosis> back = DiagnosisFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->source.throughput_unit, ThroughputUnit::kSamples);
  j["source"]["throughput_unit"] = "furlongs";
  EXPECT_FALSE(DiagnosisFromJson(j).ok());
}

// Repeats widen a point's interval to the run-to-run spread: a repeat 20 % slower than the
// first run lies inside it, and its throughput is listed.
TEST(BuildDiagnosis, RepeatsWidenThePointsInterval) {
  SyntheticRunSpec spec;
  spec.replicas = 2;
  spec.jitter = 0.01;
  RunSet set = SynthesizeRunSet(spec);
  SyntheticRunSpec slower = spec;
  slower.compute *= 1.2;
  slower.seed = 9;
  set.repeats.push_back(SynthesizeRun(slower));
  Result<Diagnosis> d = BuildDiagnosis({set}, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const Decomposition& p = d->points[0].decomposition;
  ASSERT_EQ(p.repeat_samples_per_s.size(), 1u);
  EXPECT_LT(p.repeat_samples_per_s[0], 0.9 * p.samples_per_s);
  EXPECT_LE(p.throughput.low, p.repeat_samples_per_s[0]);
  EXPECT_GE(p.throughput.high, p.samples_per_s);
  Result<Diagnosis> back = DiagnosisFromString(DiagnosisToString(*d));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->points[0].decomposition.repeat_samples_per_s, p.repeat_samples_per_s);
}

}  // namespace
}  // namespace stepscope::analysis
