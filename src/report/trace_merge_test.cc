#include "report/trace_merge.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "analysis/synthetic_run.h"
#include "core/step_record.h"
#include "trace/chrome_writer.h"

namespace stepscope::report {
namespace {
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ =
        fs::temp_directory_path() /
        ("stepscope-merge-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

// A run directory as `stepscope train` writes it, from synthetic records with rank 2 slow.
void WriteOwnRun(const TempDir& dir, int replicas) {
  analysis::SyntheticRunSpec spec;
  spec.replicas = replicas;
  spec.steps = 5;
  spec.warmup_steps = 1;
  spec.buckets = 2;
  spec.rank_compute_factor[2] = 2.0;
  const auto records = analysis::SynthesizeRun(spec);
  for (int r = 0; r < replicas; ++r) {
    std::vector<StepRecord> mine;
    for (const auto& rec : records) {
      if (rec.rank == r) mine.push_back(rec);
    }
    ASSERT_TRUE(WriteStepRecords(dir / ("rank-" + std::to_string(r) + ".steps.jsonl"), mine).ok());
    auto w = trace::ChromeTraceWriter::Open(dir / ("rank-" + std::to_string(r) + ".trace.json"));
    ASSERT_TRUE(w.ok());
    auto& t = *w.value();
    t.ProcessName(r, "rank " + std::to_string(r));
    t.ThreadName(r, 1, "main (compute)");
    t.ThreadName(r, 2, "communication");
    for (const auto& rec : mine) {
      t.Complete(r, 1, "step " + std::to_string(rec.step), "step", rec.start, rec.end - rec.start);
      for (const auto& c : rec.collectives) {
        t.Instant(r, 1, "bucket " + std::to_string(c.index) + " ready", c.ready);
        t.Complete(r, 2, "all-reduce bucket " + std::to_string(c.index), "comm", c.start,
                   c.end - c.start, {{"bytes", c.bytes}, {"step", rec.step}});
      }
    }
    ASSERT_TRUE(t.Close().ok());
  }
  std::ofstream(dir / "run.json") << "{}";
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(TraceMerge, OwnRunHasEveryRankAndMatchedFlowsToTheStraggler) {
  TempDir dir;
  WriteOwnRun(dir, 3);
  const std::string out = dir / "merged.json";
  auto stats = MergeRunTraces(dir.str(), out);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats.value().ranks, 3);
  EXPECT_EQ(stats.value().collectives, 6u * 2u);  // 6 steps (1 warm-up) x 2 buckets
  EXPECT_EQ(stats.value().flows, stats.value().collectives);

  const nlohmann::json merged = ReadJson(out);
  std::map<int, std::string> processes;
  std::map<uint64_t, std::vector<nlohmann::json>> flows;
  for (const auto& e : merged["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      processes[e["pid"].get<int>()] = e["args"]["name"];
    }
    if (e["ph"] == "s" || e["ph"] == "f") flows[e["id"].get<uint64_t>()].push_back(e);
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{0, "rank 0"}, {1, "rank 1"}, {2, "rank 2"}}));
  ASSERT_EQ(flows.size(), stats.value().flows);
  for (const auto& [id, pair] : flows) {
    ASSERT_EQ(pair.size(), 2u) << "flow " << id;
    const auto& s = pair[0]["ph"] == "s" ? pair[0] : pair[1];
    const auto& f = pair[0]["ph"] == "s" ? pair[1] : pair[0];
    EXPECT_EQ(s["ph"], "s");
    EXPECT_EQ(f["ph"], "f");
    EXPECT_LE(s["ts"].get<double>(), f["ts"].get<double>());
    EXPECT_EQ(f["pid"], 2) << "the slow rank arrives last";
    EXPECT_EQ(s["tid"], kCollectiveTrack);
  }
}

TEST(TraceMerge, ImportedPyTorchTracesWithUnalignedClocks) {
  const std::string data = STEPSCOPE_TRACE_DATA_DIR "/pytorch-legacy-cpu-gloo";
  ASSERT_TRUE(fs::is_directory(data)) << data;
  TempDir dir;
  for (const char* f : {"ddp_mlp_rank0.pt.trace.json.gz", "ddp_mlp_rank1.pt.trace.json.gz"}) {
    fs::copy_file(data + "/" + f, dir / f);
  }
  const std::string out = dir / "merged.json";
  auto stats = MergeRunTraces(dir.str(), out);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats.value().ranks, 2);
  EXPECT_EQ(stats.value().alignment, "aligned on collective ends");
  EXPECT_GT(stats.value().flows, 0u);
  const nlohmann::json merged = ReadJson(out);
  std::set<int> pids;
  size_t s = 0, f = 0;
  for (const auto& e : merged["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    s += e["ph"] == "s";
    f += e["ph"] == "f";
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
  EXPECT_EQ(s, stats.value().flows);
  EXPECT_EQ(f, stats.value().flows);
}

TEST(TraceMerge, MissingDirectoryIsNamed) {
  auto stats = MergeRunTraces("/nonexistent/run", "/tmp/x.json");
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("/nonexistent/run"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::report
