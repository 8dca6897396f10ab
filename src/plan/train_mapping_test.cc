#include "plan/train_mapping.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace stepscope::plan {
namespace {

using Words = std::vector<std::string>;

TrainArgs Workload() {
  return {{"--model", "mlp"},
          {"--batch", "8"},
          {"--reduce-dtype", "fp16"},
          {"--no-overlap", std::nullopt},
          {"--inject-crash", "3:5"}};
}

train::TrainOptions Options() {
  train::TrainOptions o;
  o.model.kind = nn::ModelKind::kMlp;
  o.batch = 8;
  o.reducer.dtype = comm::WireDtype::kFp16;
  o.reducer.overlap = false;
  o.injection.crash_rank = 3;
  o.injection.crash_step = 5;
  return o;
}

TEST(MapOntoTrain, NoChangeIsTheWorkload) {
  TrainMapping m = MapOntoTrain(Workload(), Options(), {});
  EXPECT_EQ(m.args, Flatten(Workload()));
  EXPECT_TRUE(m.flags.empty());
  EXPECT_TRUE(m.not_applicable.empty());
}

TEST(MapOntoTrain, NoReduceDropsTheWirePrecision) {
  RunChange change;
  change.no_reduce = true;
  TrainMapping m = MapOntoTrain(Workload(), Options(), change);
  EXPECT_EQ(m.args, (Words{"--model", "mlp", "--batch", "8", "--no-overlap", "--inject-crash",
                           "3:5", "--no-reduce"}));
  EXPECT_FALSE(m.options.reducer.reduce);
  EXPECT_EQ(m.options.reducer.dtype, comm::WireDtype::kFp32);
  EXPECT_TRUE(train::Validate(m.options, 4).ok());
}

TEST(MapOntoTrain, SyntheticInputIsAddedOnce) {
  TrainArgs workload = Workload();
  workload.push_back({"--synthetic-input", std::nullopt});
  RunChange change;
  change.synthetic_input = true;
  TrainMapping m = MapOntoTrain(workload, Options(), change);
  EXPECT_EQ(std::count(m.args.begin(), m.args.end(), "--synthetic-input"), 1);
  EXPECT_TRUE(m.options.synthetic_input);
}

TEST(MapOntoTrain, EveryLeverReplacesTheWorkloadsOption) {
  RunChange change;
  change.levers.micro_batch = 16;
  change.levers.accumulation = 2;
  change.levers.bucket_mib = 0.25;
  change.levers.overlap = true;
  change.levers.wire = comm::WireDtype::kBf16;
  change.levers.loader_workers = 2;
  change.levers.prefetch = 8;
  TrainMapping m = MapOntoTrain(Workload(), Options(), change);
  EXPECT_EQ(m.args, (Words{"--model", "mlp", "--inject-crash", "3:5", "--batch", "16", "--accum",
                           "2", "--bucket-mb", "0.25", "--reduce-dtype", "bf16", "--loader-workers",
                           "2", "--prefetch", "8"}));
  EXPECT_EQ(m.options.batch, 16);
  EXPECT_EQ(m.options.accum, 2);
  EXPECT_DOUBLE_EQ(m.options.reducer.bucket_mb, 0.25);
  EXPECT_TRUE(m.options.reducer.overlap);
  EXPECT_EQ(m.options.reducer.dtype, comm::WireDtype::kBf16);
  EXPECT_EQ(m.options.loader_workers, 2);
  EXPECT_EQ(m.options.prefetch, 8);
  EXPECT_EQ(m.flags, (Words{"--batch 16", "--accum 2", "--bucket-mb 0.25", "no --no-overlap",
                            "--reduce-dtype bf16", "--loader-workers 2", "--prefetch 8"}));
  EXPECT_TRUE(m.not_applicable.empty());
}

TEST(MapOntoTrain, OverlapOffAddsTheBareFlag) {
  RunChange change;
  change.levers.overlap = false;
  const train::TrainOptions defaults;
  TrainMapping m = MapOntoTrain({{"--model", "mlp"}}, defaults, change);
  EXPECT_EQ(m.args, (Words{"--model", "mlp", "--no-overlap"}));
  EXPECT_FALSE(m.options.reducer.overlap);
}

TEST(MapOntoTrain, ASmallBucketCapIsRenderedAsGiven) {
  // --bucket-mb 0.1 through the overlap lever: the cap stays 0.1.
  train::TrainOptions o = Options();
  o.reducer.bucket_mb = 0.1;
  LeverPlan plan = PlanLevers({Lever::kOverlapBucketing}, TrainBasis(o));
  ASSERT_EQ(plan.planned.size(), 1u);
  RunChange change;
  change.levers = plan.planned[0].change;
  TrainArgs workload = Workload();
  workload.push_back({"--bucket-mb", "0.1"});
  TrainMapping m = MapOntoTrain(workload, o, change);
  EXPECT_DOUBLE_EQ(m.options.reducer.bucket_mb, 0.1);
  EXPECT_EQ(m.args.back(), "0.1");
  EXPECT_EQ(m.args[m.args.size() - 2], "--bucket-mb");
  EXPECT_TRUE(train::Validate(m.options, 4).ok());
}

TEST(MapOntoTrain, LengthBalancingNeedsVariableLengths) {
  RunChange change;
  change.levers.balance_lengths = true;
  TrainMapping m = MapOntoTrain(Workload(), Options(), change);
  ASSERT_EQ(m.not_applicable.size(), 1u);
  EXPECT_NE(m.not_applicable[0].find("fixed-length"), std::string::npos);
  EXPECT_EQ(m.args, Flatten(Workload()));

  TrainArgs workload = Workload();
  workload.push_back({"--variable-length", std::nullopt});
  train::TrainOptions o = Options();
  o.variable_length = true;
  m = MapOntoTrain(workload, o, change);
  EXPECT_TRUE(m.not_applicable.empty());
  EXPECT_TRUE(m.options.balance_lengths);
  EXPECT_EQ(m.args.back(), "--balance-lengths");
  EXPECT_EQ(m.flags, std::vector<std::string>{"--balance-lengths"});
}

TEST(MapOntoTrain, StragglersBeyondTheRunAreLeftOutOneByOne) {
  TrainArgs workload = Workload();
  workload.push_back({"--inject-straggler", "1:1.6,3:1.4"});
  train::TrainOptions o = Options();
  o.injection.stragglers = {{1, 1.6}, {3, 1.4}};
  std::vector<std::string> notes;
  RunChange change;
  change.stragglers = StragglersWithin(o, 2, &notes);
  EXPECT_EQ(notes, std::vector<std::string>{
                       "--inject-straggler names rank 3: left out of the 2-replica runs"});
  TrainMapping m = MapOntoTrain(workload, o, change);
  EXPECT_EQ(m.args.back(), "1:1.6");
  EXPECT_EQ(m.options.injection.stragglers, (std::vector<train::StragglerInjection>{{1, 1.6}}));
  EXPECT_TRUE(m.flags.empty());  // not a change of the lever's, only what the run can hold
  change.stragglers = StragglersWithin(o, 1, &notes);
  m = MapOntoTrain(workload, o, change);
  EXPECT_EQ(std::find(m.args.begin(), m.args.end(), "--inject-straggler"), m.args.end());
  EXPECT_TRUE(m.options.injection.stragglers.empty());
  change.stragglers = StragglersWithin(o, 4, &notes);
  m = MapOntoTrain(workload, o, change);
  EXPECT_EQ(m.args, Flatten(workload));
}

TEST(MapOntoTrain, DroppedInjectionsLeaveArgsAndOptions) {
  RunChange change;
  change.dropped = {RankedInjection::kCrash};
  TrainMapping m = MapOntoTrain(Workload(), Options(), change);
  EXPECT_EQ(std::find(m.args.begin(), m.args.end(), "--inject-crash"), m.args.end());
  EXPECT_EQ(m.options.injection.crash_rank, -1);
}

TEST(InjectionsBeyond, NamesEveryInjectionWhoseRankTheJobLacks) {
  train::TrainOptions o;
  o.injection.noise_rank = 2;
  o.injection.crash_rank = 1;
  o.injection.hang_rank = -1;
  std::vector<std::string> notes;
  EXPECT_TRUE(InjectionsBeyond(o, 4, &notes).empty());
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(InjectionsBeyond(o, 2, &notes), std::vector<RankedInjection>{RankedInjection::kNoise});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "--inject-noise names rank 2: left out of the 2-replica runs");
  notes.clear();
  EXPECT_EQ(InjectionsBeyond(o, 1, &notes),
            (std::vector<RankedInjection>{RankedInjection::kNoise, RankedInjection::kCrash}));
  EXPECT_EQ(notes.size(), 2u);
}

TEST(TrainBasis, TakesTheWorkloadsValuesAndItsGradientSize) {
  train::TrainOptions o;
  o.model.kind = nn::ModelKind::kMlp;
  o.model.hidden = {64};
  o.batch = 4;
  o.accum = 2;
  o.loader_workers = 3;
  o.prefetch = 5;
  o.reducer.bucket_mb = 7;
  LeverBasis b = TrainBasis(o);
  EXPECT_EQ(b.micro_batch, 4);
  EXPECT_EQ(b.accumulation, 2);
  EXPECT_EQ(b.loader_workers, 3);
  EXPECT_EQ(b.prefetch, 5);
  EXPECT_DOUBLE_EQ(b.bucket_mib, 7);
  // 784*64 + 64 + 64*10 + 10 parameters of 4 bytes.
  EXPECT_NEAR(b.gradient_mib, (784 * 64 + 64 + 64 * 10 + 10) * 4 / (1024.0 * 1024.0), 1e-12);
}

}  // namespace
}  // namespace stepscope::plan
