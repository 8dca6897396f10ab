#include "analysis/diagnosis.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "analysis/build_diagnosis.h"
#include "analysis/summary.h"
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
  Status st = AddAfterLevers({runs.back()}, {{Lever::kBiggerMicroBatch, "--batch 64 (was 32)"}},
                             options, &out);
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
  ASSERT_EQ(back->after->levers_applied.size(), 1u);
  EXPECT_EQ(back->after->levers_applied[0].lever, Lever::kBiggerMicroBatch);
  EXPECT_EQ(back->after->levers_applied[0].change, "--batch 64 (was 32)");
  EXPECT_EQ(back->verdict.decision, d.verdict.decision);
  EXPECT_EQ(back->verdict.currency, d.verdict.currency);
  EXPECT_DOUBLE_EQ(back->points[2].decomposition.throughput.low,
                   d.points[2].decomposition.throughput.low);
  EXPECT_EQ(back->verdict.binding, d.verdict.binding);
  ASSERT_TRUE(back->attribution.has_value());
  EXPECT_DOUBLE_EQ(back->attribution->lost_devices, d.attribution->lost_devices);
}

TEST(Diagnosis, DocumentedFieldNames) {
  const nlohmann::json j = ToJson(Sample());
  const nlohmann::json& p = j.at("points").at(1);
  for (const char* key :
       {"replicas", "samples_per_s", "efficiency", "marginal_device_value", "speedup", "step_time",
        "components", "ranks", "skew", "ablations", "throughput"}) {
    EXPECT_TRUE(p.contains(key)) << key;
  }
  for (const char* key :
       {"compute", "input_wait", "exposed_comm", "sync_wait", "transfer", "overhead"}) {
    EXPECT_TRUE(p.at("components").contains(key)) << key;
  }
  for (const char* key : {"binding", "straggler_ranks", "levers", "decision", "decision_reason",
                          "currency", "explanation", "evidence"}) {
    EXPECT_TRUE(j.at("verdict").contains(key)) << key;
  }
  EXPECT_EQ(j.at("schema_version"), 2);
  // Enums are written as their fixed words.
  EXPECT_TRUE(Parse<Binding>(j.at("verdict").at("binding").get<std::string>()).has_value());
  EXPECT_TRUE(Parse<Decision>(j.at("verdict").at("decision").get<std::string>()).has_value());
  EXPECT_EQ(j.at("verdict").at("currency"), "cost");
  EXPECT_EQ(j.at("after").at("levers_applied").at(0).at("lever"), "bigger_micro_batch");
  // An estimate is {value, low, high} with the value inside.
  const nlohmann::json& t = p.at("throughput");
  EXPECT_LE(t.at("low").get<double>(), t.at("value").get<double>());
  EXPECT_LE(t.at("value").get<double>(), t.at("high").get<double>());
  EXPECT_LT(t.at("low").get<double>(), t.at("high").get<double>());  // jittered steps
  // Ablation checks carry their accepted range as an estimate.
  const nlohmann::json& check = p.at("ablations").at("checks").at(0);
  EXPECT_EQ(check.at("check"), "no_reduce");
  EXPECT_TRUE(check.at("predicted").contains("low"));
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

  j = ToJson(Sample());
  j["verdict"]["decision"] = "buy_lots";
  r = DiagnosisFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'verdict.decision' is 'buy_lots', expected one of: "
                                      "buy_devices, upgrade_interconnect"),
            std::string::npos)
      << r.status().message();

  EXPECT_FALSE(DiagnosisFromString("{\"schema_version\": 1, ").ok());
  j = ToJson(Sample());
  j["schema_version"] = 99;
  EXPECT_FALSE(DiagnosisFromJson(j).ok());
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A diagnosis.json written by the version-1 code (tests/data/diagnosis/README.md) still reads,
// its words mapped onto the version-2 enums, and is written back as version 2.
TEST(Diagnosis, ReadsVersion1) {
  const std::string path =
      std::string(STEPSCOPE_TEST_DATA_DIR) + "/diagnosis/v1-after-emulated.json";
  Result<Diagnosis> d = DiagnosisFromString(ReadText(path));
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->schema_version, 1);
  EXPECT_EQ(d->verdict.decision, Decision::kPullLevers);  // "not yet"
  EXPECT_EQ(d->verdict.currency, Currency::kCost);        // "cost per sample"
  EXPECT_FALSE(d->verdict.decision_reason.empty());
  ASSERT_TRUE(d->after.has_value());
  ASSERT_EQ(d->after->levers_applied.size(), 2u);
  EXPECT_EQ(d->after->levers_applied[0].lever, Lever::kLoaderWorkersPrefetch);
  EXPECT_EQ(d->after->levers_applied[1].lever, Lever::kRemoveStraggler);
  const AblationReport& a = d->points.back().ablations;
  ASSERT_FALSE(a.checks.empty());
  EXPECT_EQ(a.checks[0].check, AblationCheckKind::kNoReduce);
  for (const AblationCheck& c : a.checks) {
    EXPECT_EQ(c.agrees, c.Accepted().Contains(c.measured)) << ToString(c.check);
  }
  EXPECT_DOUBLE_EQ(d->points[0].decomposition.throughput.value, d->points[0].scaling.samples_per_s);
  // Written back, it is a version-2 document that reads to the same diagnosis.
  const nlohmann::json j = ToJson(*d);
  EXPECT_EQ(j.at("schema_version"), 2);
  Result<Diagnosis> again = DiagnosisFromJson(j);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(DiagnosisToString(*again), DiagnosisToString(*d));

  // Version 1 wrote applied levers from diagnose as "name (what changed)"; an unknown word is
  // refused with the field and the accepted words.
  nlohmann::json v1 = nlohmann::json::parse(ReadText(path));
  v1["after"]["levers_applied"] = {"overlap_bucketing (overlap on, --bucket-mb 0.5)"};
  Result<Diagnosis> words = DiagnosisFromJson(v1);
  ASSERT_TRUE(words.ok()) << words.status().message();
  EXPECT_EQ(words->after->levers_applied[0].lever, Lever::kOverlapBucketing);
  EXPECT_EQ(words->after->levers_applied[0].change, "overlap on, --bucket-mb 0.5");
  v1["verdict"]["buy_more_devices"] = "maybe";
  Result<Diagnosis> bad = DiagnosisFromJson(v1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'verdict.buy_more_devices'"), std::string::npos)
      << bad.status().message();
}

TEST(Summary, TableWaterfallAndVerdict) {
  const Diagnosis d = Sample();
  const std::string s = SummaryText(d);
  EXPECT_NE(s.find("samples/s"), std::string::npos);
  EXPECT_NE(s.find("EMULATED"), std::string::npos);
  EXPECT_NE(s.find("measured speed-up"), std::string::npos);
  EXPECT_NE(s.find("binding constraint: " + std::string(ToString(d.verdict.binding))),
            std::string::npos);
  EXPECT_NE(s.find("decision: "), std::string::npos);
  EXPECT_NE(s.find("after applying bigger_micro_batch"), std::string::npos);
  EXPECT_NE(s.find("N=4: "), std::string::npos);  // before -> after at the same N
  // One table row per replica count, all of the same width.
  const std::string table = CurveTable(d.points);
  size_t lines = 0, width = 0;
  size_t start = 0;
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i] != '\n') continue;
    if (lines == 0) width = i - start;
    EXPECT_EQ(i - start, width);
    start = i + 1;
    ++lines;
  }
  EXPECT_EQ(lines, 1 + d.points.size());
}

}  // namespace
}  // namespace stepscope::analysis
