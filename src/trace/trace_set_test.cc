#include "trace/trace_set.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "trace/test_util.h"

namespace stepscope::trace {
namespace {

using testing::WriteTemp;

// A legacy-style rank: steps of 1000 us, compute [0,c) in each, one all-reduce that starts when
// the rank arrives (after its compute) and ends at 900 us of the true step. `shift` is the
// rank's own clock zero against the true time.
std::string LegacyRank(double shift, double compute) {
  std::string s = "[";
  for (int i = 0; i < 4; ++i) {
    double t0 = i * 1000 - shift;
    auto ev = [&](const char* name, int tid, double ts, double dur) {
      s += std::string(s.size() > 1 ? "," : "") + "{\"name\":\"" + name +
           "\",\"ph\":\"X\",\"ts\":" + std::to_string(ts) + ",\"dur\":" + std::to_string(dur) +
           ",\"tid\":" + std::to_string(tid) + ",\"pid\":\"CPU functions\"}";
    };
    ev(("ProfilerStep#" + std::to_string(i)).c_str(), 1, t0, 1000);
    ev("aten::mm", 1, t0, compute);
    ev("gloo:all_reduce", 2, t0 + compute, 900 - compute);
  }
  return s + "]";
}

TEST(TraceSet, UnalignedClocksAreAlignedOnCollectiveEnds) {
  auto a = WriteTemp("set_rank0.json", LegacyRank(0, 300));
  auto b = WriteTemp("set_rank1.json", LegacyRank(-5000, 600));  // its zero is 5 ms later
  TraceSetOptions opt;
  opt.warmup_steps = 1;
  auto set = LoadTraceSet({a, b}, opt);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->clock_method, ClockMethod::kCollectiveEnds);
  EXPECT_NEAR(set->clock_offsets.at(1), -5000e-6, 1e-9);
  ASSERT_EQ(set->traces.size(), 2u);
  // Rank 1 arrives 300 us later at every collective: it is the last arrival every time.
  EXPECT_EQ(set->match.times_last, (std::vector<int>{0, 4}));
  const ImportedStep& s1 = set->traces[1].steps[2];
  EXPECT_NEAR(s1.start, 2000e-6, 1e-9);
  EXPECT_NEAR(s1.compute, 600e-6, 1e-9);
  EXPECT_NEAR(s1.exposed_comm, 300e-6, 1e-9);
  EXPECT_NEAR(s1.idle, 100e-6, 1e-9);
  EXPECT_TRUE(set->traces[0].steps[0].warmup);
  EXPECT_FALSE(set->traces[0].steps[1].warmup);
  EXPECT_EQ(set->records.size(), 8u);
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

// A Kineto CPU trace of one step [0,1000) with two process groups over gloo. The launches
// (record_param_comms on the main thread) name group and sequence number; the gloo worker
// events (one worker thread per group) name neither and start 10 us after their launch.
std::string TwoGroupRank(int rank, double launch_a, double launch_b) {
  std::string s = "{\"distributedInfo\":{\"rank\":" + std::to_string(rank) +
                  ",\"world_size\":2},\"traceEvents\":[";
  auto ev = [&](const std::string& name, int tid, double ts, double dur, const std::string& args) {
    s += std::string(s.back() == '[' ? "" : ",") + "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" +
         name + "\",\"pid\":7,\"tid\":" + std::to_string(tid) + ",\"ts\":" + std::to_string(ts) +
         ",\"dur\":" + std::to_string(dur) + ",\"args\":{" + args + "}}";
  };
  ev("ProfilerStep#0", 1, 0, 1000, "");
  ev("aten::mm", 1, 0, 90, "");
  ev("record_param_comms", 1, launch_a, 5,
     "\"Collective name\":\"allreduce\",\"Process Group Name\":\"A\",\"Seq\":1");
  ev("record_param_comms", 1, launch_b, 5,
     "\"Collective name\":\"allreduce\",\"Process Group Name\":\"B\",\"Seq\":1");
  ev("gloo:all_reduce", 2, launch_a + 10, 900 - launch_a - 10, "");
  ev("gloo:all_reduce", 3, launch_b + 10, 900 - launch_b - 10, "");
  return s + "]}";
}

TEST(TraceSet, ConcurrentGlooGroupsMatchByGroupAndSequence) {
  // Rank 0 launches A at 100 and B at 200; rank 1 launches B at 150 and A at 300. In start
  // order the gloo events pair rank 0's A with rank 1's B; by (group, seq) A's arrivals are 100
  // and 300 (rank 1 last, skew 200 us) and B's 200 and 150 (rank 0 last, skew 50 us).
  auto a = WriteTemp("gloo_groups_0.json", TwoGroupRank(0, 100, 200));
  auto b = WriteTemp("gloo_groups_1.json", TwoGroupRank(1, 300, 150));
  TraceSetOptions opt;
  opt.warmup_steps = 0;
  auto set = LoadTraceSet({a, b}, opt);
  ASSERT_TRUE(set.ok()) << set.status().message();
  EXPECT_EQ(set->match.method, MatchMethod::kAlignedArrival);
  EXPECT_TRUE(set->match.by_sequence);
  ASSERT_EQ(set->match.collectives.size(), 2u);
  for (const MatchedCollective& m : set->match.collectives) {
    if (m.group == "A") {
      EXPECT_EQ(m.last_rank, 1);
      EXPECT_NEAR(m.skew, 200e-6, 1e-9);
    } else {
      EXPECT_EQ(m.group, "B");
      EXPECT_EQ(m.last_rank, 0);
      EXPECT_NEAR(m.skew, 50e-6, 1e-9);
    }
  }
  EXPECT_EQ(set->match.times_last, (std::vector<int>{1, 1}));
  // Communication time still comes from the gloo events: [110,900) and [210,900) on rank 0.
  EXPECT_NEAR(set->traces[0].steps[0].comm_busy, 790e-6, 1e-9);
  // The records pair A with A: the same index at ready 100 us (rank 0) and 300 us (rank 1).
  ASSERT_EQ(set->records.size(), 2u);
  int index_a = -1;
  for (const CollectiveRecord& c : set->records[0].collectives) {
    if (std::abs(c.ready - 100e-6) < 1e-9) index_a = c.index;
  }
  bool paired = false;
  for (const CollectiveRecord& c : set->records[1].collectives) {
    paired = paired || (c.index == index_a && std::abs(c.ready - 300e-6) < 1e-9);
  }
  EXPECT_TRUE(paired);
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

// A real DDP job whose script calls dist.barrier() after each step while rank 0 sleeps 10 ms
// (tests/data/traces/README.md): the barrier is the script's, not the gradient's communication.
// Rank 1 is blocked in it about 10 ms a step; it is matched across ranks no more, and the set
// counts one call a step.
TEST(TraceSet, ARealScriptsBarrierIsItsOwnNotTheGradients) {
  const std::string dir =
      std::string(STEPSCOPE_TRACE_DATA_DIR) + "/pytorch-legacy-cpu-gloo-barrier/";
  TraceSetOptions opt;
  opt.warmup_steps = 1;
  auto set = LoadTraceSet(
      {dir + "ddp_barrier_rank0.pt.trace.json.gz", dir + "ddp_barrier_rank1.pt.trace.json.gz"},
      opt);
  ASSERT_TRUE(set.ok()) << set.status().message();
  ASSERT_EQ(set->traces.size(), 2u);
  std::vector<double> blocked[2];
  for (const StepRecord& r : set->records) {
    if (r.warmup) continue;
    ASSERT_TRUE(r.script_comm.has_value());
    blocked[r.rank].push_back(*r.script_comm);
    EXPECT_LE(*r.script_comm + r.exposed_comm, r.step_time() + 1e-9);
  }
  ASSERT_EQ(blocked[1].size(), 5u);
  for (double b : blocked[1]) EXPECT_GT(b, 0.008);
  for (double b : blocked[0]) EXPECT_LT(b, 0.003);
  for (const ImportedTrace& t : set->traces) {
    for (const ImportedStep& s : t.steps) {
      EXPECT_FALSE(s.collectives.empty());
      for (const ImportedCollective& c : s.collectives) EXPECT_NE(c.name, "gloo:barrier");
    }
  }
  EXPECT_EQ(ScriptCallsPerStep(*set),
            (std::vector<std::pair<std::string, double>>{{"barrier", 1.0}}));
  const nlohmann::json section = TraceSectionJson(*set);
  EXPECT_GT(section["ranks"][1]["script_comm"].get<double>(), 0.008);
  EXPECT_LT(section["ranks"][0]["script_comm"].get<double>(), 0.003);
  EXPECT_TRUE(section["steps"][1].contains("script_comm"));
  EXPECT_NE(TraceSummaryText(*set).find("own coll."), std::string::npos);
}

TEST(TraceSet, DuplicateRanksNameBothFiles) {
  auto a = WriteTemp("dup_a_rank0.json", LegacyRank(0, 300));
  auto b = WriteTemp("dup_b_rank0.json", LegacyRank(0, 300));
  auto set = LoadTraceSet({a, b});
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find(a), std::string::npos);
  EXPECT_NE(set.status().message().find(b), std::string::npos);
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

// A run's folder that a run was ended in holds the helper's progress and process files beside
// the traces: they are not taken for traces.
TEST(TraceSet, ExpandInputsLeavesStepscopesOwnFilesOut) {
  const std::string dir = std::filesystem::temp_directory_path().string() +
                          "/stepscope-expand-test-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  for (const char* name : {"rank0.pt.trace.json", "run.json", "sweep.json", "device.json",
                           "rank-1.progress.json", "process-host-41.json"}) {
    std::ofstream(dir + "/" + name) << "{}";
  }
  std::vector<std::string> notes;
  Result<std::vector<std::string>> files = ExpandInputs({dir}, &notes);
  ASSERT_TRUE(files.ok()) << files.status().message();
  EXPECT_EQ(*files, std::vector<std::string>{dir + "/rank0.pt.trace.json"});
  std::filesystem::remove_all(dir);
}

TEST(TraceSet, ExpandInputsErrors) {
  std::vector<std::string> notes;
  EXPECT_FALSE(ExpandInputs({"/nonexistent/trace.json"}, &notes).ok());
  EXPECT_FALSE(ExpandInputs({}, &notes).ok());
}

}  // namespace
}  // namespace stepscope::trace
