#include "trace/trace_set.h"

#include <gtest/gtest.h>

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
}

TEST(TraceSet, DuplicateRanksNameBothFiles) {
  auto a = WriteTemp("dup_a_rank0.json", LegacyRank(0, 300));
  auto b = WriteTemp("dup_b_rank0.json", LegacyRank(0, 300));
  auto set = LoadTraceSet({a, b});
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find(a), std::string::npos);
  EXPECT_NE(set.status().message().find(b), std::string::npos);
}

TEST(TraceSet, ExpandInputsErrors) {
  std::vector<std::string> notes;
  EXPECT_FALSE(ExpandInputs({"/nonexistent/trace.json"}, &notes).ok());
  EXPECT_FALSE(ExpandInputs({}, &notes).ok());
}

}  // namespace
}  // namespace stepscope::trace
