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
