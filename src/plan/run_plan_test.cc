#include "plan/run_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace stepscope::plan {
namespace {

using Words = std::vector<std::string>;

PlanRequest Request(std::vector<int> replicas, std::set<int> ablate_at, int repeats = 1) {
  PlanRequest r;
  r.workload = {{"--model", "mlp"}, {"--batch", "8"}, {"--reduce-dtype", "bf16"}};
  r.options.model.kind = nn::ModelKind::kMlp;
  r.options.batch = 8;
  r.options.reducer.dtype = comm::WireDtype::kBf16;
  r.replicas = std::move(replicas);
  r.ablate_at = std::move(ablate_at);
  r.repeats = repeats;
  return r;
}

Words Names(const RunPlan& plan) {
  Words names;
  for (const PlannedRun& run : plan.runs) names.push_back(run.name);
  return names;
}

const PlannedRun& Find(const RunPlan& plan, const std::string& name) {
  auto it = std::find_if(plan.runs.begin(), plan.runs.end(),
                         [&](const PlannedRun& r) { return r.name == name; });
  EXPECT_NE(it, plan.runs.end()) << name;
  return *it;
}

TEST(PlanMainRuns, BaselinesFirstThenAblationsFromTheLargestDown) {
  RunPlan plan = PlanMainRuns(Request({1, 2, 4}, {1, 2, 4}));
  EXPECT_EQ(Names(plan),
            (Words{"baseline-n1", "baseline-n2", "baseline-n4", "no_reduce-n4",
                   "synthetic_input-n4", "double_batch-n4", "no_reduce-n2", "synthetic_input-n2",
                   "double_batch-n2", "synthetic_input-n1", "double_batch-n1"}));
  EXPECT_TRUE(plan.notes.empty());
}

TEST(PlanMainRuns, AblationsOnlyWhereAsked) {
  EXPECT_EQ(Names(PlanMainRuns(Request({1, 2, 4}, {4}))),
            (Words{"baseline-n1", "baseline-n2", "baseline-n4", "no_reduce-n4",
                   "synthetic_input-n4", "double_batch-n4"}));
  EXPECT_EQ(Names(PlanMainRuns(Request({1, 2}, {}))), (Words{"baseline-n1", "baseline-n2"}));
}

TEST(PlanMainRuns, RepeatsOfTheBaselineComeLastOnePassPerRepeat) {
  RunPlan plan = PlanMainRuns(Request({1, 2}, {2}, 3));
  EXPECT_EQ(Names(plan), (Words{"baseline-n1", "baseline-n2", "no_reduce-n2", "synthetic_input-n2",
                                "double_batch-n2", "baseline-n1-r2", "baseline-n2-r2",
                                "baseline-n1-r3", "baseline-n2-r3"}));
  const PlannedRun& repeat = Find(plan, "baseline-n2-r3");
  EXPECT_EQ(repeat.id.repeat, 3);
  EXPECT_EQ(repeat.id.replicas, 2);
  EXPECT_EQ(repeat.args, Find(plan, "baseline-n2").args);
}

TEST(PlanConfirmingRepeat, OneMoreBaselineAtTheCountAfterTheAskedRepeats) {
  RunPlan once = PlanConfirmingRepeat(Request({1, 2, 4}, {4}), 4);
  EXPECT_EQ(Names(once), (Words{"baseline-n4-r2"}));
  EXPECT_EQ(once.runs.front().args,
            Find(PlanMainRuns(Request({1, 2, 4}, {4})), "baseline-n4").args);
  EXPECT_EQ(Names(PlanConfirmingRepeat(Request({1, 2}, {2}, 3), 2)), (Words{"baseline-n2-r4"}));
}

TEST(PlanMainRuns, VariantArguments) {
  RunPlan plan = PlanMainRuns(Request({2}, {2}));
  EXPECT_EQ(Find(plan, "baseline-n2").args,
            (Words{"--model", "mlp", "--batch", "8", "--reduce-dtype", "bf16"}));
  EXPECT_EQ(Find(plan, "no_reduce-n2").args,
            (Words{"--model", "mlp", "--batch", "8", "--no-reduce"}));
  EXPECT_EQ(
      Find(plan, "synthetic_input-n2").args,
      (Words{"--model", "mlp", "--batch", "8", "--reduce-dtype", "bf16", "--synthetic-input"}));
  EXPECT_EQ(Find(plan, "double_batch-n2").args,
            (Words{"--model", "mlp", "--reduce-dtype", "bf16", "--batch", "16"}));
  EXPECT_EQ(Find(plan, "double_batch-n2").id.variant, Variant::Of(VariantKind::kDoubleBatch));
}

TEST(PlanMainRuns, InjectionsBeyondNAreDroppedWithANote) {
  PlanRequest r = Request({1, 2}, {});
  r.workload.push_back({"--inject-crash", "1:2"});
  r.options.injection.crash_rank = 1;
  r.options.injection.crash_step = 2;
  RunPlan plan = PlanMainRuns(r);
  const Words& one = Find(plan, "baseline-n1").args;
  EXPECT_EQ(std::find(one.begin(), one.end(), "--inject-crash"), one.end());
  const Words& two = Find(plan, "baseline-n2").args;
  EXPECT_NE(std::find(two.begin(), two.end(), "--inject-crash"), two.end());
  EXPECT_EQ(plan.notes, Words{"--inject-crash names rank 1: left out of the 1-replica runs"});
}

TEST(PlanMainRuns, NotesAreDistinct) {
  PlanRequest r = Request({1, 2}, {1}, 2);
  r.workload.push_back({"--inject-straggler", "1:3"});
  r.options.injection.stragglers = {{1, 3.0}};
  EXPECT_EQ(PlanMainRuns(r).notes.size(), 1u);
}

TEST(PlanLeverRuns, AllLeversAtEveryCountThenEachAloneAtTheLargest) {
  PlanRequest r = Request({1, 2, 4}, {});
  LeverPlan levers =
      PlanLevers({Lever::kBiggerMicroBatch, Lever::kLoaderWorkersPrefetch, Lever::kRemoveStraggler},
                 TrainBasis(r.options));
  LeverRuns runs = PlanLeverRuns(r, levers);
  EXPECT_EQ(Names(runs.plan),
            (Words{"levers-n1", "levers-n2", "levers-n4", "lever_bigger_micro_batch-n4",
                   "lever_loader_workers_prefetch-n4"}));
  EXPECT_EQ(Find(runs.plan, "levers-n4").args,
            (Words{"--model", "mlp", "--reduce-dtype", "bf16", "--batch", "16", "--loader-workers",
                   "2", "--prefetch", "8"}));
  EXPECT_EQ(Find(runs.plan, "lever_bigger_micro_batch-n4").args,
            (Words{"--model", "mlp", "--reduce-dtype", "bf16", "--batch", "16"}));
  ASSERT_EQ(runs.applied.size(), 2u);
  EXPECT_EQ(runs.applied[0].lever.lever, Lever::kBiggerMicroBatch);
  EXPECT_EQ(runs.applied[0].flags, Words{"--batch 16"});
  EXPECT_EQ(runs.applied[1].flags, (Words{"--loader-workers 2", "--prefetch 8"}));
  ASSERT_EQ(runs.skipped.size(), 1u);
  EXPECT_EQ(runs.skipped[0].lever, Lever::kRemoveStraggler);
}

TEST(PlanLeverRuns, OneLeverHasNoRunOfItsOwn) {
  PlanRequest r = Request({1, 2}, {});
  LeverRuns runs = PlanLeverRuns(r, PlanLevers({Lever::kBiggerMicroBatch}, TrainBasis(r.options)));
  EXPECT_EQ(Names(runs.plan), (Words{"levers-n1", "levers-n2"}));
}

TEST(PlanLeverRuns, LeversTrainCannotMakeAreSkippedAndNoneLeavesNoRuns) {
  PlanRequest r = Request({1, 2}, {});
  LeverRuns runs = PlanLeverRuns(
      r, PlanLevers({Lever::kBalanceLengths, Lever::kRemoveStraggler}, TrainBasis(r.options)));
  EXPECT_TRUE(runs.plan.runs.empty());
  EXPECT_TRUE(runs.applied.empty());
  ASSERT_EQ(runs.skipped.size(), 2u);
  EXPECT_EQ(runs.skipped[1].lever, Lever::kBalanceLengths);
  EXPECT_NE(runs.skipped[1].reason.find("not applicable"), std::string::npos);
}

TEST(PlanWireCheck, ThreeUnpacedRunsAtTwoReplicas) {
  PlanRequest r = Request({1, 4}, {});
  r.workload = {{"--model", "mlp"},
                {"--batch", "8"},
                {"--steps", "30"},
                {"--emulate-device-speed", "0.1"},
                {"--emulate-link", "0.02,50"},
                {"--inject-straggler", "1:2"},
                {"--seed", "7"}};
  r.options.reducer.dtype = comm::WireDtype::kFp32;
  r.options.seed = 7;
  const RunPlan plan = PlanWireCheck(r, comm::WireDtype::kBf16, 200);
  EXPECT_EQ(Names(plan), (Words{"wire_fp32-n2", "wire_reduced-n2", "wire_fp32_seed2-n2"}));
  auto value = [](const PlannedRun& run, const std::string& flag) -> std::string {
    auto it = std::find(run.args.begin(), run.args.end(), flag);
    return it == run.args.end() || it + 1 == run.args.end() ? "" : *(it + 1);
  };
  for (const PlannedRun& run : plan.runs) {
    EXPECT_EQ(run.id.replicas, 2);
    EXPECT_EQ(value(run, "--steps"), "200") << run.name;
    for (const char* flag : {"--emulate-device-speed", "--emulate-link", "--inject-straggler"}) {
      EXPECT_EQ(std::find(run.args.begin(), run.args.end(), flag), run.args.end())
          << run.name << " keeps " << flag;
    }
  }
  EXPECT_EQ(value(plan.runs[0], "--reduce-dtype"), "fp32");
  EXPECT_EQ(value(plan.runs[1], "--reduce-dtype"), "bf16");
  EXPECT_EQ(value(plan.runs[2], "--reduce-dtype"), "fp32");
  EXPECT_EQ(value(plan.runs[0], "--seed"), "7");
  EXPECT_EQ(value(plan.runs[1], "--seed"), "7");
  EXPECT_EQ(value(plan.runs[2], "--seed"), "8");
}

TEST(PlanNoiseScale, OneUnpacedFp32RunWithNormsEveryStep) {
  PlanRequest r = Request({1, 4}, {});
  r.workload = {{"--model", "mlp"},         {"--batch", "8"},
                {"--steps", "30"},          {"--emulate-device-speed", "0.1"},
                {"--reduce-dtype", "bf16"}, {"--inject-straggler", "1:2"}};
  r.options.reducer.dtype = comm::WireDtype::kBf16;
  const RunPlan plan = PlanNoiseScale(r, 1000);
  ASSERT_EQ(Names(plan), (Words{"noise_scale-n2"}));
  const PlannedRun& run = plan.runs[0];
  auto value = [&](const std::string& flag) -> std::string {
    auto it = std::find(run.args.begin(), run.args.end(), flag);
    return it == run.args.end() || it + 1 == run.args.end() ? "" : *(it + 1);
  };
  EXPECT_EQ(run.id.replicas, 2);
  EXPECT_EQ(value("--steps"), "1000");
  EXPECT_EQ(run.steps, 1000);  // what the progress line prices it by
  EXPECT_EQ(PlanMainRuns(r).runs.front().steps, r.options.steps);
  EXPECT_EQ(value("--grad-norm-every"), "1");
  EXPECT_EQ(value("--reduce-dtype"), "fp32");
  EXPECT_EQ(value("--batch"), "8");
  for (const char* flag : {"--emulate-device-speed", "--inject-straggler"}) {
    EXPECT_EQ(std::find(run.args.begin(), run.args.end(), flag), run.args.end()) << flag;
  }
}

TEST(DefaultWorkload, IsAGptWithEmulation) {
  const TrainArgs w = DefaultWorkload();
  EXPECT_TRUE(Has(w, "--model"));
  EXPECT_TRUE(Has(w, "--emulate-link"));
  EXPECT_EQ(Flatten(w)[1], "gpt");
  EXPECT_TRUE(Has(SweepDefaults(), "--no-eval"));
}

}  // namespace
}  // namespace stepscope::plan
