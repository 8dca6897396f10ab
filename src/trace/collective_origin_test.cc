#include "trace/collective_origin.h"

#include <gtest/gtest.h>

namespace stepscope::trace {
namespace {

TEST(CollectiveKind, OneKindForEveryWayATraceNamesACollective) {
  for (const char* name :
       {"c10d::allreduce_", "gloo:all_reduce", "nccl:all_reduce", "allreduce",
        "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL"}) {
    EXPECT_EQ(CollectiveKind(name), "allreduce") << name;
  }
  EXPECT_EQ(CollectiveKind("c10d::barrier"), "barrier");
  EXPECT_EQ(CollectiveKind("gloo:barrier"), "barrier");
  EXPECT_EQ(CollectiveKind("c10d::broadcast_"), "broadcast");
  EXPECT_EQ(CollectiveKind("ncclKernel_Broadcast_RING_LL_Sum_int8_t(x)"), "broadcast");
  EXPECT_EQ(CollectiveKind("c10d::allgather_"), "allgather");
  EXPECT_EQ(CollectiveKind("gloo:all_gather"), "allgather");
  EXPECT_EQ(CollectiveKind("gloo:"), "");
}

TEST(CallName, PyTorchsNameForTheCall) {
  EXPECT_EQ(CallName("c10d::allreduce_"), "all_reduce");
  EXPECT_EQ(CallName("c10d::barrier"), "barrier");
  EXPECT_EQ(CallName("c10d::broadcast_"), "broadcast");
  EXPECT_EQ(CallName("c10d::allgather_"), "all_gather");
  EXPECT_EQ(CallName("c10d::_allgather_base_"), "all_gather_into_tensor");
  EXPECT_EQ(CallName("allreduce"), "all_reduce");  // record_param_comms' collective name
  EXPECT_EQ(CallName("c10d::odd:name\x1b[31m"), "oddname31m");  // only [A-Za-z0-9_] reach a report
}

TEST(MarkScriptLaunches, OutsideDdpsPartsTheScriptsKindsAreTheScripts) {
  // Backward [10,20), DDP's forward [0,5).
  std::vector<CollectiveLaunch> l = {
      {"broadcast", "broadcast", 2},   {"allreduce", "all_reduce", 12},
      {"allreduce", "all_reduce", 20}, {"barrier", "barrier", 25},
      {"alltoall", "all_to_all", 26},  {"allgatherbase", "all_gather_into_tensor", 27}};
  MarkScriptLaunches({{0, 5}, {10, 20}}, &l);
  EXPECT_FALSE(l[0].script);
  EXPECT_FALSE(l[1].script);
  EXPECT_TRUE(l[2].script);  // as backward ends: the loss all-reduced after backward()
  EXPECT_TRUE(l[3].script);
  EXPECT_FALSE(l[4].script);  // a model-parallel part's: sharded embeddings
  EXPECT_FALSE(l[5].script);  // sharded parameters
}

TEST(ScriptRuns, TheKthRunOfAKindCarriesOutTheKthLaunchOfIt) {
  std::vector<CollectiveLaunch> l = {{"allreduce", "all_reduce", 10, false},
                                     {"allreduce", "all_reduce", 30, true},
                                     {"barrier", "barrier", 31, true},
                                     {"allreduce", "all_reduce", 50, false}};
  // Runs out of order; the first all-reduce queued behind nothing, the second after backward.
  std::vector<CollectiveRun> r = {
      {"allreduce", 52}, {"barrier", 33}, {"allreduce", 31}, {"allreduce", 11}, {"other", 12}};
  EXPECT_EQ(ScriptRuns(l, r, false), (std::vector<bool>{false, true, true, false, false}));
  // A run begun before every launch left of its kind carries out one the trace does not show:
  // the launches after it keep their runs.
  std::vector<CollectiveRun> early = {{"allreduce", 5}, {"allreduce", 11}, {"allreduce", 31}};
  EXPECT_EQ(ScriptRuns(l, early, false), (std::vector<bool>{false, false, true}));
  // NCCL runs a barrier as an all-reduce kernel.
  std::vector<CollectiveRun> device = {
      {"allreduce", 11}, {"allreduce", 31}, {"allreduce", 32}, {"allreduce", 51}};
  EXPECT_EQ(ScriptRuns(l, device, true), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(ScriptRuns(l, device, false), (std::vector<bool>{false, true, false, false}));
}

}  // namespace
}  // namespace stepscope::trace
