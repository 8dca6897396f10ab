#include "train/recorder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace stepscope::train {
namespace {

std::string TempDir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("stepscope-recorder-" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

// More steps than the queue holds: Append waits for the writer, nothing is lost or reordered,
// and both files are complete after Close.
TEST(RankRecorder, WritesEveryQueuedStepInOrder) {
  const std::string dir = TempDir("order");
  auto recorder = RankRecorder::Open(dir, 3);
  ASSERT_TRUE(recorder.ok()) << recorder.status().message();
  const int64_t n = static_cast<int64_t>(RankRecorder::kMaxQueued) * 2 + 17;
  for (int64_t i = 0; i < n; ++i) {
    StepRecord r;
    r.rank = 3;
    r.step = i;
    r.start = static_cast<double>(i);
    r.end = i + 0.5;
    r.collectives.push_back(CollectiveRecord{0, 1024, i + 0.1, i + 0.2, i + 0.3, 1.0});
    StepTimeline t;
    t.forwards.push_back({i + 0.0, i + 0.1});
    ASSERT_TRUE((*recorder)->Append(std::move(r), std::move(t)).ok());
  }
  ASSERT_TRUE((*recorder)->Close().ok());
  auto records = ReadStepRecords(RankRecorder::StepsPath(dir, 3));
  ASSERT_TRUE(records.ok()) << records.status().message();
  ASSERT_EQ(static_cast<int64_t>(records->size()), n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ((*records)[i].step, i);
  std::ifstream trace(RankRecorder::TracePath(dir, 3));
  const nlohmann::json j = nlohmann::json::parse(trace);
  int64_t steps = 0;
  for (const auto& e : j["traceEvents"]) steps += e.value("cat", "") == "step";
  EXPECT_EQ(steps, n);
  std::filesystem::remove_all(dir);
}

// Destroying the recorder without Close (an error return in the trainer) still writes what
// was queued.
TEST(RankRecorder, DestructionWritesWhatWasQueued) {
  const std::string dir = TempDir("destroy");
  {
    auto recorder = RankRecorder::Open(dir, 0);
    ASSERT_TRUE(recorder.ok());
    for (int64_t i = 0; i < 5; ++i) {
      StepRecord r;
      r.step = i;
      r.end = 1;
      ASSERT_TRUE((*recorder)->Append(std::move(r), {}).ok());
    }
  }
  auto records = ReadStepRecords(RankRecorder::StepsPath(dir, 0));
  ASSERT_TRUE(records.ok()) << records.status().message();
  EXPECT_EQ(records->size(), 5u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stepscope::train
