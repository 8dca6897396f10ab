#include "decide/diagnosis.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "analysis/synthetic_run.h"
#include "decide/build_diagnosis.h"

namespace stepscope::decide {
namespace {

Diagnosis Sample() {
  std::vector<RunSet> runs;
  for (int n : {1, 2, 4}) {
    analysis::SyntheticRunSpec spec;
    spec.replicas = n;
    spec.buckets = 2;
    spec.bucket_time = 0.003;
    spec.jitter = 0.05;
    spec.grad_sq = 1;
    spec.trace_sigma = 64;
    RunSet set;
    set.baseline = analysis::SynthesizeRun(spec);
    analysis::SyntheticRunSpec nr = spec;
    nr.reduce = false;
    set.no_reduce = analysis::SynthesizeRun(nr);
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
  ASSERT_TRUE(back->after->verdict.has_value());
  EXPECT_EQ(back->after->verdict->binding, d.after->verdict->binding);
  EXPECT_GT(back->after->original_x1, 0);
  EXPECT_DOUBLE_EQ(back->after->original_x1, d.after->original_x1);
  EXPECT_EQ(back->verdict.decision, d.verdict.decision);
  EXPECT_EQ(back->verdict.currency, d.verdict.currency);
  EXPECT_DOUBLE_EQ(back->points[2].decomposition.throughput.low,
                   d.points[2].decomposition.throughput.low);
  // Two buckets: the 4-replica point splits its exposed communication per collective.
  ASSERT_EQ(back->points[2].decomposition.job_collectives.size(), 2u);
  EXPECT_EQ(back->points[2].decomposition.job_collectives[1].index, 1);
  EXPECT_DOUBLE_EQ(back->points[2].decomposition.job_collectives[1].transfer,
                   d.points[2].decomposition.job_collectives[1].transfer);
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
  for (const char* key : {"binding", "straggler_ranks", "levers", "decision", "options",
                          "time_to_quality", "currency", "explanation", "evidence"}) {
    EXPECT_TRUE(j.at("verdict").contains(key)) << key;
  }
  for (const char* key : {"action", "reason", "priced", "option", "replicas", "link",
                          "device_speed", "levers", "runner_up", "margin"}) {
    EXPECT_TRUE(j.at("verdict").at("decision").contains(key)) << key;
  }
  EXPECT_EQ(j.at("schema_version"), 3);
  // Enums are written as their fixed words.
  EXPECT_TRUE(Parse<Binding>(j.at("verdict").at("binding").get<std::string>()).has_value());
  EXPECT_TRUE(
      Parse<Decision>(j.at("verdict").at("decision").at("action").get<std::string>()).has_value());
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

// failed_runs[]: each run that did not finish, its cause and its log, round-trips; the field
// names written are those docs/diagnosis.md documents; a file without it (older) still reads.
TEST(Diagnosis, FailedRunsRoundTripAndAreDocumented) {
  Diagnosis d = Sample();
  d.failed_runs.push_back({"baseline-n4", 4, "rank 1 on host vm died of signal 9 (Killed)", 137,
                           "/tmp/d/runs/baseline-n4/log.txt"});
  nlohmann::json j = ToJson(d);
  Result<Diagnosis> back = DiagnosisFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->failed_runs.size(), 1u);
  EXPECT_EQ(back->failed_runs[0].run, "baseline-n4");
  EXPECT_EQ(back->failed_runs[0].replicas, 4);
  EXPECT_EQ(back->failed_runs[0].cause, d.failed_runs[0].cause);
  EXPECT_EQ(back->failed_runs[0].exit_code, 137);
  EXPECT_EQ(back->failed_runs[0].log, d.failed_runs[0].log);

  std::ifstream doc(std::string(STEPSCOPE_DOCS_DIR) + "/diagnosis.md");
  ASSERT_TRUE(doc.good());
  std::string line, row;
  while (std::getline(doc, line)) {
    if (line.rfind("| `failed_runs`", 0) == 0) row = line;
  }
  ASSERT_FALSE(row.empty()) << "docs/diagnosis.md has no failed_runs row";
  const nlohmann::json& entry = j.at("failed_runs").at(0);
  EXPECT_EQ(entry.size(), 5u);
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    EXPECT_NE(row.find("`" + it.key() + "`"), std::string::npos) << it.key();
  }

  j.erase("failed_runs");
  back = DiagnosisFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->failed_runs.empty());
  j["failed_runs"] = nlohmann::json::array({{{"run", "x"}}});
  back = DiagnosisFromJson(j);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("failed_runs[0].replicas"), std::string::npos)
      << back.status().message();
}

// A priced decision, its options and what the pricing assumed round-trip; a version-2
// document (the decision a word, its reason beside it) still reads.
TEST(Diagnosis, DroppedLeversRoundTripAndOlderFilesReadWithout) {
  Diagnosis d = Sample();
  d.verdict.levers_dropped.push_back({Lever::kOverlapBucketing, "overlap the reduction", -4.5,
                                      "the step-time model predicts -4.5 samples/s"});
  nlohmann::json j = ToJson(d);
  Result<Diagnosis> back = DiagnosisFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->verdict.levers_dropped.size(), 1u);
  EXPECT_EQ(back->verdict.levers_dropped[0].lever, Lever::kOverlapBucketing);
  EXPECT_EQ(back->verdict.levers_dropped[0].action, "overlap the reduction");
  EXPECT_DOUBLE_EQ(back->verdict.levers_dropped[0].expected_gain_samples_per_s, -4.5);
  EXPECT_EQ(back->verdict.levers_dropped[0].reason, d.verdict.levers_dropped[0].reason);
  j["verdict"].erase("levers_dropped");
  Result<Diagnosis> older = DiagnosisFromJson(j);
  ASSERT_TRUE(older.ok()) << older.status().message();
  EXPECT_TRUE(older->verdict.levers_dropped.empty());
  j["verdict"]["levers_dropped"] = nlohmann::json::array({{{"lever", "overlap_bucketing"}}});
  Result<Diagnosis> bad = DiagnosisFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("levers_dropped[0]"), std::string::npos)
      << bad.status().message();
}

TEST(Diagnosis, PricedDecisionRoundTripsAndVersion2Reads) {
  Diagnosis d = Sample();
  PricedDecision p;
  p.action = d.verdict.decision = Decision::kUpgradeInterconnect;
  p.reason = d.verdict.decision_reason = "the faster link has the least cost";
  p.option = "8 replicas on a 25 GB/s, 5 us link";
  p.replicas = 8;
  p.link = "25 GB/s, 5 us";
  p.levers = {Lever::kLowPrecisionReduction};
  p.runner_up = "stay: 4 replicas as measured";
  p.margin = 0.31;
  d.verdict.priced = p;
  PricedOption o;
  o.kind = OptionKind::kFasterLink;
  o.action = Decision::kUpgradeInterconnect;
  o.label = p.option;
  o.replicas = 8;
  o.samples_per_s = {100, 90, 110};
  o.time_to_target_hours = 2.5;
  o.levers = p.levers;
  d.verdict.options = {o, PricedOption{}};
  TimeToQuality t;
  t.scale = {true, 512, 8, "measured"};
  t.samples_to_target = 1e6;
  t.cost_unit = "cost";
  d.verdict.time_to_quality = t;
  Result<Diagnosis> back = DiagnosisFromJson(ToJson(d));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->verdict.priced.has_value());
  EXPECT_EQ(back->verdict.priced->replicas, 8);
  EXPECT_EQ(back->verdict.priced->levers, p.levers);
  EXPECT_DOUBLE_EQ(back->verdict.priced->margin, 0.31);
  ASSERT_EQ(back->verdict.options.size(), 2u);
  EXPECT_EQ(back->verdict.options[0].kind, OptionKind::kFasterLink);
  EXPECT_EQ(back->verdict.options[0].time_to_target_hours, 2.5);
  EXPECT_FALSE(back->verdict.options[1].time_to_target_hours.has_value());
  ASSERT_TRUE(back->verdict.time_to_quality.has_value());
  EXPECT_EQ(back->verdict.time_to_quality->scale.b_noise, 512);
  EXPECT_EQ(DiagnosisToString(*back), DiagnosisToString(d));

  nlohmann::json v2 = ToJson(d);
  v2["schema_version"] = 2;
  nlohmann::json& verdict = v2["verdict"];
  verdict["decision_reason"] = verdict["decision"]["reason"];
  verdict["decision"] = verdict["decision"]["action"];
  verdict.erase("options");
  verdict.erase("time_to_quality");
  Result<Diagnosis> old = DiagnosisFromJson(v2);
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->verdict.decision, Decision::kUpgradeInterconnect);
  EXPECT_EQ(old->verdict.decision_reason, p.reason);
  EXPECT_FALSE(old->verdict.priced.has_value());

  nlohmann::json bad = ToJson(d);
  bad["verdict"]["options"][0]["kind"] = "teleport";
  Result<Diagnosis> refused = DiagnosisFromJson(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'verdict.options[0].kind'"), std::string::npos)
      << refused.status().message();
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
  j["verdict"]["decision"]["action"] = "buy_lots";
  r = DiagnosisFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'verdict.decision.action' is 'buy_lots', expected one of: "
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
  EXPECT_EQ(d->verdict.currency, Currency::kCost);        // version 1 wrote "cost per sample"
  EXPECT_FALSE(d->verdict.decision_reason.empty());
  ASSERT_TRUE(d->after.has_value());
  ASSERT_EQ(d->after->levers_applied.size(), 2u);
  EXPECT_EQ(d->after->levers_applied[0].lever, Lever::kLoaderWorkersPrefetch);
  EXPECT_EQ(d->after->levers_applied[1].lever, Lever::kRemoveStraggler);
  const analysis::AblationReport& a = d->points.back().ablations;
  ASSERT_FALSE(a.checks.empty());
  EXPECT_EQ(a.checks[0].check, AblationCheckKind::kNoReduce);
  for (const analysis::AblationCheck& c : a.checks) {
    EXPECT_EQ(c.agrees, c.Accepted().Contains(c.measured)) << ToString(c.check);
  }
  EXPECT_DOUBLE_EQ(d->points[0].decomposition.throughput.value, d->points[0].scaling.samples_per_s);
  // Written back, it is a current document that reads to the same diagnosis.
  const nlohmann::json j = ToJson(*d);
  EXPECT_EQ(j.at("schema_version"), kDiagnosisSchemaVersion);
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

}  // namespace
}  // namespace stepscope::decide
