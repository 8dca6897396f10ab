#include "sweep/run_records.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sweep/sweep_store.h"

namespace stepscope::sweep {
namespace {

std::string RunDir(const std::string& name, const std::string& run_json) {
  const std::string dir = (std::filesystem::temp_directory_path() / name).string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/run.json") << run_json;
  return dir;
}

TEST(RunPacing, ReadsTheEmulationCounts) {
  const std::string dir = RunDir("stepscope_run_pacing_emulated",
                                 R"({"buckets_per_step": 3, "steps": 40,
    "emulation": {"emulated": true, "device_speed": 0.5, "link_gbps": 10,
                  "paced_segments": 200, "unhonoured_segments": 7, "unhonoured_links": 2}})");
  Result<std::optional<RunPacing>> p = ReadRunPacing(dir);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->paced_segments, 200);
  EXPECT_EQ((*p)->unhonoured_segments, 7);
  EXPECT_EQ((*p)->unhonoured_links, 2);
  EXPECT_EQ((*p)->link_reductions, 120);
}

TEST(RunPacing, NotEmulatedIsNulloptAndMissingIsAnError) {
  const std::string dir =
      RunDir("stepscope_run_pacing_plain", R"({"emulation": {"emulated": false}})");
  Result<std::optional<RunPacing>> p = ReadRunPacing(dir);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->has_value());
  EXPECT_FALSE(ReadRunPacing(dir + "/absent").ok());
}

// Damaged files found by fuzzing: a flag of the wrong kind, a count beyond int64 and a replica
// count beyond int are read as absent or refused with the field named, never thrown or
// converted out of range.
TEST(RunPacing, DamagedFieldsAreAbsentOrNamed) {
  auto p = RunPacingFromText(R"({"emulation": {"emulated": "yes", "paced_segments": 1}})", "r");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->has_value());
  p = RunPacingFromText(
      R"({"steps": 1e300, "buckets_per_step": 4,
          "emulation": {"emulated": true, "paced_segments": 1e300, "link_gbps": 1}})",
      "r");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->paced_segments, 0);
  EXPECT_EQ((*p)->link_reductions, 0);
  auto s = RunSummaryFromText(R"({"replicas": 1e300})", "x/run.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("x/run.json: field 'replicas'"), std::string::npos)
      << s.status().message();
}

TEST(SweepManifest, DamagedRunIsNamed) {
  auto runs = ParseSweepManifest(
      R"({"workload": ["w"], "runs": [{"name": "a", "args": [], "state": "finished",
          "replicas": 1e300, "seconds": 1}]})",
      "d/sweep.json", {"w"});
  ASSERT_FALSE(runs.ok());
  EXPECT_NE(runs.status().message().find("runs[0].replicas"), std::string::npos)
      << runs.status().message();
  EXPECT_NE(runs.status().message().find("--fresh"), std::string::npos);
  EXPECT_FALSE(ParseSweepManifest("[1,2]", "d/sweep.json", {"w"}).ok());
  EXPECT_FALSE(ParseSweepManifest(R"({"workload": ["w"], "runs": 3})", "d/sweep.json", {"w"}).ok());
}

}  // namespace
}  // namespace stepscope::sweep
