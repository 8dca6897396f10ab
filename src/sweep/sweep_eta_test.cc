#include "sweep/sweep_eta.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/step_record.h"

namespace stepscope::sweep {
namespace {

TEST(SweepEta, WithoutLoopsEachJobTakesItsReplicaCountsMeanThenTheMean) {
  std::vector<Job> jobs{{"a", 1, {}}, {"b", 2, {}}, {"c", 4, {}}};
  std::vector<RunDuration> done{{1, "", 10}, {2, "", 20}};
  EXPECT_DOUBLE_EQ(EstimateRemainingSeconds(jobs, 1, done), 20 + 15);
  EXPECT_DOUBLE_EQ(EstimateRemainingSeconds(jobs, 0, {}), 0);
}

TEST(SweepEta, ALongerRunIsPricedByItsStepsBeyondTheStartUp) {
  // Two 30-step runs at 2 replicas: 4 s of start-up and 0.1 s a step (3 s of loop) each.
  const std::vector<RunDuration> done{
      {2, "", 7, 30, 3}, {2, "", 7.2, 30, 3.2}, {1, "", 5, 30, 1.5}};
  Job noise{"noise_scale-n2", 2, {}, {}, 1000};
  // start-up (4 + 4) / 2, a step (0.1 + 0.10667) / 2
  EXPECT_NEAR(EstimateRemainingSeconds({noise}, 0, done), 4 + 1000 * (0.1 + 3.2 / 30) / 2, 1e-9);
  Job unknown{"x-n2", 2, {}, {}, 0};  // steps not known: the mean duration
  EXPECT_DOUBLE_EQ(EstimateRemainingSeconds({unknown}, 0, done), 7.1);
  Job four{"baseline-n4", 4, {}, {}, 30};  // no run at 4: every run's start-up and step time
  EXPECT_NEAR(EstimateRemainingSeconds({four}, 0, done),
              (4 + 4 + 3.5) / 3 + 30 * (0.1 + 3.2 / 30 + 0.05) / 3, 1e-9);
}

TEST(SweepEta, ARunOfAnotherTimingClassIsPricedByItsOwnClassOrItsMeanDuration) {
  // Paced 12-step runs at 0.3 s a step; the unpaced noise-scale run steps in 8 ms.
  std::vector<RunDuration> done{{2, "", 4.5, 12, 3.6}, {1, "", 3.0, 12, 2.4}};
  const Job noise{"noise_scale-n2", 2, {}, {}, 400};
  // No unpaced run measured yet: the mean duration at its replica count, not 400 paced steps.
  EXPECT_DOUBLE_EQ(EstimateRemainingSeconds({noise}, 0, done, {"unpaced"}), 4.5);
  // An unpaced run at 2 replicas: its time a step, with the start-up of the runs at 2.
  done.push_back({2, "unpaced", 3.5, 200, 1.6});
  EXPECT_NEAR(EstimateRemainingSeconds({noise}, 0, done, {"unpaced"}),
              (0.9 + 1.9) / 2 + 400 * 0.008, 1e-9);
  // The paced class is unchanged by it.
  EXPECT_NEAR(EstimateRemainingSeconds({{"b-n2", 2, {}, {}, 12}}, 0, done, {""}),
              (0.9 + 1.9) / 2 + 12 * 0.3, 1e-9);
}

TEST(SweepEta, TheLoopIsRankZerosFirstStartToItsLastEnd) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "stepscope_sweep_eta_loop").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const StoredRun run{"baseline-n2", 2, {}, "finished", 9.0, 0};
  EXPECT_EQ(MeasureRunDuration(run, dir).steps, 0);  // no records: unknown
  std::vector<StepRecord> records(3);
  for (int i = 0; i < 3; ++i) {
    records[i].step = i;
    records[i].start = 100.0 + i;
    records[i].end = 100.5 + i;
  }
  ASSERT_TRUE(WriteStepRecords(dir + "/rank-0.steps.jsonl", records).ok());
  const RunDuration d = MeasureRunDuration(run, dir);
  EXPECT_EQ(d.replicas, 2);
  EXPECT_EQ(d.steps, 3);
  EXPECT_DOUBLE_EQ(d.loop_seconds, 2.5);
  // A clock the run's duration cannot hold (records from elsewhere) is not used.
  EXPECT_EQ(MeasureRunDuration({"x", 2, {}, "finished", 2.0, 0}, dir).steps, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stepscope::sweep
