#include "analysis/diagnosis.h"

#include <gtest/gtest.h>

#include "analysis/build_diagnosis.h"
#include "analysis/synthetic_run.h"

namespace stepscope::analysis {
namespace {

Diagnosis Sample() {
  std::vector<RunSet> runs;
  for (int n : {1, 2, 4}) {
    SyntheticRunSpec spec;
    spec.replicas = n;
    spec.buckets = 2;
    spec.bucket_time = 0.003;
    spec.jitter = 0.05;
    spec.grad_sq = 1;
    spec.trace_sigma = 64;
    RunSet set;
    set.baseline = SynthesizeRun(spec);
    SyntheticRunSpec nr = spec;
    nr.reduce = false;
    set.no_reduce = SynthesizeRun(nr);
    runs.push_back(std::move(set));
  }
  DiagnoseOptions options;
  options.source = {"diagnose", "mlp, micro-batch 32", "0.1.0"};
  options.emulation.emulated = true;
  options.emulation.parameters["device_speed"] = "0.25";
  options.cost.device_cost_per_hour = 3.0;
  Result<Diagnosis> d = BuildDiagnosis(runs, options);
  EXPECT_TRUE(d.ok()) << d.status().message();
  Diagnosis out = std::move(d).value();
  Status st = AddAfterLevers({runs.back()}, {"bigger_micro_batch"}, options, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

TEST(Diagnosis, JsonRoundTrip) {
  const Diagnosis d = Sample();
  const std::string text = DiagnosisToString(d);
  Result<Diagnosis> back = DiagnosisFromString(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(DiagnosisToString(*back), text);
  EXPECT_EQ(back->points.size(), 3u);
  EXPECT_FALSE(back->points[0].scaling.has_marginal);
  EXPECT_TRUE(back->points[1].scaling.has_marginal);
  EXPECT_TRUE(back->emulation.emulated);
  EXPECT_EQ(back->emulation.parameters.at("device_speed"), "0.25");
  ASSERT_TRUE(back->after.has_value());
  EXPECT_EQ(back->after->levers_applied, std::vector<std::string>{"bigger_micro_batch"});
  EXPECT_EQ(back->verdict.binding, d.verdict.binding);
  ASSERT_TRUE(back->attribution.has_value());
  EXPECT_DOUBLE_EQ(back->attribution->lost_devices, d.attribution->lost_devices);
}

TEST(Diagnosis, DocumentedFieldNames) {
  const nlohmann::json j = ToJson(Sample());
  const nlohmann::json& p = j.at("points").at(1);
  for (const char* key : {"replicas", "samples_per_s", "efficiency", "marginal_device_value",
                          "speedup", "step_time", "components", "ranks", "skew", "ablations"}) {
    EXPECT_TRUE(p.contains(key)) << key;
  }
  for (const char* key :
       {"compute", "input_wait", "exposed_comm", "sync_wait", "transfer", "overhead"}) {
    EXPECT_TRUE(p.at("components").contains(key)) << key;
  }
  for (const char* key :
       {"binding", "straggler_ranks", "levers", "buy_more_devices", "explanation", "evidence"}) {
    EXPECT_TRUE(j.at("verdict").contains(key)) << key;
  }
  EXPECT_TRUE(j.at("emulation").at("emulated").get<bool>());
}

TEST(Diagnosis, MissingFieldIsNamed) {
  nlohmann::json j = ToJson(Sample());
  j["points"][1]["components"].erase("sync_wait");
  Result<Diagnosis> r = DiagnosisFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'points[1].components.sync_wait'"), std::string::npos)
      << r.status().message();

  j = ToJson(Sample());
  j["verdict"]["binding"] = 3;
  r = DiagnosisFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'verdict.binding'"), std::string::npos);

  EXPECT_FALSE(DiagnosisFromString("{\"schema_version\": 1, ").ok());
  j = ToJson(Sample());
  j["schema_version"] = 99;
  EXPECT_FALSE(DiagnosisFromJson(j).ok());
}

}  // namespace
}  // namespace stepscope::analysis
