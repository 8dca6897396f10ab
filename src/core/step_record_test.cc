#include "core/step_record.h"

#include <gtest/gtest.h>

namespace stepscope {
namespace {

TEST(StepRecord, RoundTripsThroughJson) {
  StepRecord r;
  r.rank = 3;
  r.step = 17;
  r.start = 1.5;
  r.end = 1.75;
  r.input_wait = 0.01;
  r.compute = 0.2;
  r.exposed_comm = 0.03;
  r.local_grad_sq = 2.5;
  r.collectives.push_back({0, 1024, 1.6, 1.61, 1.7, 3.5});
  auto back = StepRecordFromJson(StepRecordToJson(r), "test");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->rank, 3);
  EXPECT_EQ(back->step, 17);
  EXPECT_DOUBLE_EQ(back->step_time(), 0.25);
  EXPECT_NEAR(back->overhead(), 0.25 - 0.01 - 0.2 - 0.03, 1e-12);
  ASSERT_EQ(back->collectives.size(), 1u);
  EXPECT_EQ(back->collectives[0].bytes, 1024);
  EXPECT_DOUBLE_EQ(back->collectives[0].busbw_gbps, 3.5);
  EXPECT_FALSE(back->backward_start.has_value());
}

TEST(StepRecord, BackwardStartRoundTrips) {
  StepRecord r;
  r.start = 10.25;
  r.end = 10.5;
  r.backward_start = 10.375;
  r.collectives.push_back({0, 64, 10.4, 10.41, 10.45, 1.0});
  const std::string line = StepRecordToJson(r);
  EXPECT_NE(line.find("\"version\":" + std::to_string(kStepRecordVersion)), std::string::npos)
      << line;
  auto back = StepRecordFromJson(line, "test");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->backward_start.has_value());
  EXPECT_DOUBLE_EQ(*back->backward_start, 10.375);
}

TEST(StepRecord, UnknownBackwardStartIsNotWritten) {
  StepRecord r;
  r.end = 1;
  EXPECT_EQ(StepRecordToJson(r).find("backward_start"), std::string::npos);
}

TEST(StepRecord, ALossIsWrittenAndReadOnlyWhereRecorded) {
  StepRecord r;
  r.end = 1;
  EXPECT_EQ(StepRecordToJson(r).find("loss"), std::string::npos);
  auto unknown = StepRecordFromJson(StepRecordToJson(r), "test");
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->loss.has_value());
  r.loss = 0.0;  // a loss of 0 is a loss
  auto zero = StepRecordFromJson(StepRecordToJson(r), "test");
  ASSERT_TRUE(zero.ok());
  ASSERT_TRUE(zero->loss.has_value());
  EXPECT_EQ(*zero->loss, 0.0);
  auto bad = StepRecordFromJson(
      R"({"version":4,"rank":0,"step":0,"start":0,"end":1,"loss":"high"})", "f:3");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("loss"), std::string::npos) << bad.status().message();
}

TEST(StepRecord, TokensRoundTripAndAreChecked) {
  StepRecord r;
  r.end = 1;
  EXPECT_EQ(StepRecordToJson(r).find("tokens"), std::string::npos);
  r.tokens = 384;
  auto back = StepRecordFromJson(StepRecordToJson(r), "test");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->tokens, std::optional<int64_t>(384));
  auto refused = StepRecordFromJson(
      R"({"version":4,"rank":0,"step":2,"start":0,"end":1,"tokens":0})", "r.jsonl:5");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("r.jsonl:5: field 'tokens'"), std::string::npos)
      << refused.status().message();
}

TEST(StepRecord, ScriptCommRoundTripsAndIsCheckedAgainstTheStep) {
  StepRecord r;
  r.start = 2;
  r.end = 2.5;
  EXPECT_EQ(StepRecordToJson(r).find("script_comm"), std::string::npos);
  r.script_comm = 0.125;
  auto back = StepRecordFromJson(StepRecordToJson(r), "test");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->script_comm, std::optional<Seconds>(0.125));
  for (const char* value : {"-0.01", "0.75"}) {
    auto refused = StepRecordFromJson(
        std::string(R"({"version":5,"rank":1,"step":3,"start":2,"end":2.5,"script_comm":)") +
            value + "}",
        "r.jsonl:4");
    ASSERT_FALSE(refused.ok()) << value;
    EXPECT_NE(refused.status().message().find("r.jsonl:4: field 'script_comm'"), std::string::npos)
        << refused.status().message();
  }
  // A version-4 line has no such field: one there is not read.
  auto older = StepRecordFromJson(
      R"({"version":4,"rank":0,"step":0,"start":0,"end":1,"script_comm":0.5})", "test");
  ASSERT_TRUE(older.ok());
  EXPECT_FALSE(older->script_comm.has_value());
}

TEST(StepRecord, CpuWaitRoundTripsAndIsCheckedAgainstCompute) {
  StepRecord r;
  r.end = 1;
  r.compute = 0.5;
  EXPECT_EQ(StepRecordToJson(r).find("cpu_wait"), std::string::npos);
  EXPECT_DOUBLE_EQ(r.compute_on_cpu(), 0.5);
  r.cpu_wait = 0.125;
  auto back = StepRecordFromJson(StepRecordToJson(r), "test");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->cpu_wait.has_value());
  EXPECT_DOUBLE_EQ(*back->cpu_wait, 0.125);
  EXPECT_DOUBLE_EQ(back->compute_on_cpu(), 0.375);
  // More waiting for a core than the compute it was part of is a broken file, named.
  const std::string bad =
      R"({"version":3,"rank":0,"step":2,"start":0,"end":1,"compute":0.1,"cpu_wait":0.2})";
  auto refused = StepRecordFromJson(bad, "r.jsonl:3");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("r.jsonl:3: field 'cpu_wait'"), std::string::npos)
      << refused.status().message();
}

// A line as version 1 wrote it (no "version", no "backward_start") still reads.
TEST(StepRecord, VersionOneLineReads) {
  const std::string v1 =
      R"({"rank":1,"step":4,"epoch":0,"warmup":false,"samples":32,"micro_batches":1,)"
      R"("start":2.5,"end":2.75,"input_wait":0.01,"forward":0.05,"backward":0.1,)"
      R"("optimizer":0.02,"compute":0.17,"exposed_comm":0.03,"comm_busy":0.06,"loss":2.3,)"
      R"("local_grad_sq":-1,"global_grad_sq":-1,"collectives":[{"index":0,"bytes":4096,)"
      R"("ready":2.6,"start":2.6,"end":2.65,"busbw_gbps":0.1}]})";
  auto r = StepRecordFromJson(v1, "old.jsonl:1");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->rank, 1);
  EXPECT_EQ(r->step, 4);
  EXPECT_DOUBLE_EQ(r->compute, 0.17);
  ASSERT_EQ(r->collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(r->collectives[0].ready, 2.6);
  EXPECT_FALSE(r->backward_start.has_value());
}

TEST(StepRecord, NewerVersionIsRefusedByName) {
  const std::string line = R"({"version":)" + std::to_string(kStepRecordVersion + 1) +
                           R"(,"rank":0,"step":0,"start":0,"end":1})";
  auto r = StepRecordFromJson(line, "new.jsonl:7");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("new.jsonl:7"), std::string::npos);
  EXPECT_NE(r.status().message().find("version"), std::string::npos);
}

TEST(StepRecord, MissingFieldIsNamed) {
  auto r = StepRecordFromJson(R"({"rank": 0, "step": 1, "start": 0})", "f.jsonl:4");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("f.jsonl:4"), std::string::npos);
  EXPECT_NE(r.status().message().find("'end'"), std::string::npos);
}

TEST(StepRecord, TruncatedLineIsAnError) {
  auto r = StepRecordFromJson(R"({"rank": 0, "step": 1, "sta)", "x:1");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos);
}

TEST(StepRecord, EndBeforeStartIsAnError) {
  auto r = StepRecordFromJson(R"({"rank": 0, "step": 1, "start": 2, "end": 1})", "x:1");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'end'"), std::string::npos);
}

}  // namespace
}  // namespace stepscope
