#include "decide/build_diagnosis.h"

#include <gtest/gtest.h>

#include "decide/synthetic_run_set.h"

namespace stepscope::decide {
namespace {

// One replica count (4, rank 1 slow) with the three ablations: what `analyze` of one trace set
// looks like, plus ablations so that every kind of sentence is present.
std::vector<RunSet> OneCount() {
  analysis::SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.buckets = 2;
  spec.input_wait = 0.002;
  spec.rank_compute_factor = {{1, 1.4}};
  return {SynthesizeRunSet(spec)};
}

TEST(BuildDiagnosis, StepRatesSayStepsInEverySentence) {
  DiagnoseOptions options;
  options.source.throughput_unit = analysis::ThroughputUnit::kSteps;
  options.cost.device_cost_per_hour = 2.0;
  Result<Diagnosis> d = BuildDiagnosis(OneCount(), options);
  ASSERT_TRUE(d.ok()) << d.status().message();
  const std::string text = DiagnosisToString(*d);
  EXPECT_EQ(text.find("samples/s"), std::string::npos) << text;
  EXPECT_EQ(text.find("per sample"), std::string::npos) << text;
  EXPECT_NE(text.find("\"throughput_unit\": \"steps/s\""), std::string::npos);

  Result<Diagnosis> back = DiagnosisFromString(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->source.throughput_unit, analysis::ThroughputUnit::kSteps);
}

TEST(BuildDiagnosis, SampleRatesKeepTheirWords) {
  Result<Diagnosis> d = BuildDiagnosis(OneCount(), DiagnoseOptions{});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->source.throughput_unit, analysis::ThroughputUnit::kSamples);
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
  EXPECT_EQ(back->source.throughput_unit, analysis::ThroughputUnit::kSamples);
  j["source"]["throughput_unit"] = "furlongs";
  EXPECT_FALSE(DiagnosisFromJson(j).ok());
}

// Repeats widen a point's interval to the run-to-run spread: a repeat 20 % slower than the
// first run lies inside it, and its throughput is listed.
TEST(BuildDiagnosis, RepeatsWidenThePointsInterval) {
  analysis::SyntheticRunSpec spec;
  spec.replicas = 2;
  spec.jitter = 0.01;
  RunSet set = SynthesizeRunSet(spec);
  analysis::SyntheticRunSpec slower = spec;
  slower.compute *= 1.2;
  slower.seed = 9;
  set.repeats.push_back(analysis::SynthesizeRun(slower));
  Result<Diagnosis> d = BuildDiagnosis({set}, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const analysis::Decomposition& p = d->points[0].decomposition;
  ASSERT_EQ(p.repeat_samples_per_s.size(), 1u);
  EXPECT_LT(p.repeat_samples_per_s[0], 0.9 * p.samples_per_s);
  EXPECT_LE(p.throughput.low, p.repeat_samples_per_s[0]);
  EXPECT_GE(p.throughput.high, p.samples_per_s);
  Result<Diagnosis> back = DiagnosisFromString(DiagnosisToString(*d));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->points[0].decomposition.repeat_samples_per_s, p.repeat_samples_per_s);
}

// A rank slow in the first run only (its repeats have none) is a disturbance of that run: the
// verdict names no straggler, and the evidence says why; slow in every run, it is named.
TEST(BuildDiagnosis, AStragglerMustBeTheSameRankInMostRepeats) {
  auto point = [](bool slow_in_repeats) {
    analysis::SyntheticRunSpec spec;
    spec.replicas = 4;
    spec.buckets = 2;
    spec.jitter = 0.02;
    spec.rank_compute_factor = {{1, 1.4}};
    RunSet set = SynthesizeRunSet(spec);
    for (uint64_t seed : {5, 6}) {
      analysis::SyntheticRunSpec again = spec;
      again.seed = seed;
      if (!slow_in_repeats) again.rank_compute_factor.clear();
      set.repeats.push_back(analysis::SynthesizeRun(again));
    }
    return std::vector<RunSet>{set};
  };
  Result<Diagnosis> once = BuildDiagnosis(point(false), {});
  ASSERT_TRUE(once.ok()) << once.status().message();
  EXPECT_TRUE(once->verdict.straggler_ranks.empty());
  EXPECT_NE(once->verdict.binding, Binding::kStragglers);
  bool said = false;
  for (const std::string& e : once->points[0].skew.evidence) {
    said |= e.find("rank 1 is a straggler in 1 of the point's 3 runs, not in most") !=
            std::string::npos;
  }
  EXPECT_TRUE(said);
  Result<Diagnosis> always = BuildDiagnosis(point(true), {});
  ASSERT_TRUE(always.ok()) << always.status().message();
  EXPECT_EQ(always->verdict.straggler_ranks, std::vector<int>{1});
}

// A communication-bound curve whose levers (a bigger micro-batch, reductions hidden) make it
// near-linear: the re-measured curve gets its own verdict, and its efficiency is read against
// both one-device throughputs.
TEST(BuildDiagnosis, AfterTheLeversTheCurveGetsItsOwnVerdict) {
  auto runs = [](Seconds compute, int64_t samples, Seconds bucket_time) {
    std::vector<RunSet> out;
    for (int n : {1, 4}) {
      analysis::SyntheticRunSpec spec;
      spec.replicas = n;
      spec.compute = compute;
      spec.samples_per_rank = samples;
      spec.bucket_time = bucket_time;
      spec.jitter = 0.02;
      RunSet set;
      set.baseline = analysis::SynthesizeRun(spec);
      out.push_back(std::move(set));
    }
    return out;
  };
  const DiagnoseOptions options;
  Result<Diagnosis> d = BuildDiagnosis(runs(0.010, 32, 0.008), options);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->verdict.binding, Binding::kCommunication) << d->verdict.explanation;
  ASSERT_TRUE(AddAfterLevers(runs(0.020, 64, 0.0002),
                             {{Lever::kBiggerMicroBatch, "--batch 64 (was 32)"}}, options, &*d)
                  .ok());
  ASSERT_TRUE(d->after && d->after->verdict);
  EXPECT_EQ(d->after->verdict->binding, Binding::kNone) << d->after->verdict->explanation;
  const double x1 = d->points.front().scaling.samples_per_s;
  EXPECT_DOUBLE_EQ(d->after->original_x1, x1);
  const DiagnosisPoint& at4 = d->after->points.back();
  EXPECT_DOUBLE_EQ(d->after->EfficiencyAgainstOriginal(at4), at4.scaling.samples_per_s / (4 * x1));
  // The levered device does the same work per sample as the original one (twice the samples
  // in twice the compute), so both efficiencies agree here; the levered one is near 1.
  EXPECT_GT(at4.scaling.efficiency, 0.9);
  const nlohmann::json j = ToJson(*d);
  EXPECT_EQ(j["after"]["verdict"]["binding"], "none");
  EXPECT_EQ(j["after"]["efficiency"][1]["replicas"], 4);
  EXPECT_DOUBLE_EQ(j["after"]["efficiency"][1]["against_original_x1"].get<double>(),
                   d->after->EfficiencyAgainstOriginal(at4));
}

}  // namespace
}  // namespace stepscope::decide
