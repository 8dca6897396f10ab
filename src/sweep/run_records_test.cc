#include "sweep/run_records.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace stepscope::sweep
