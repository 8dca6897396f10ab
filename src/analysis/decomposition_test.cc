#include "analysis/decomposition.h"

#include <gtest/gtest.h>

#include <cmath>

namespace stepscope::analysis {
namespace {

// Two ranks, two collectives. Rank 0 arrives at 1.00 and 1.20, rank 1 at 1.10 and 1.30.
// Rank 0's wait after its own last arrival (1.20) for the latest arrival (1.30) is 0.10.
StepRecord Rank(int rank, int64_t step, Seconds ready0, Seconds ready1, Seconds exposed) {
  StepRecord r;
  r.rank = rank;
  r.step = step;
  r.samples = 16;
  r.start = 0.9;
  r.input_wait = 0.01;
  r.compute = ready1 - r.start - r.input_wait;  // backward ends at the last arrival
  r.exposed_comm = exposed;
  r.end = ready1 + exposed + 0.002;  // 2 ms overhead
  r.collectives.push_back({0, 100, ready0, ready0, ready0 + 0.01, 1});
  r.collectives.push_back({1, 100, ready1, ready1, ready1 + 0.01, 1});
  return r;
}

TEST(Decomposition, SyncWaitAndTransferSplitByHand) {
  const StepRecord r0 = Rank(0, 5, 1.00, 1.20, 0.15);
  const StepRecord r1 = Rank(1, 5, 1.10, 1.30, 0.05);
  const std::map<int, Seconds> last = LastArrivals({&r0, &r1});
  ASSERT_EQ(last.size(), 2u);
  EXPECT_DOUBLE_EQ(last.at(0), 1.10);
  EXPECT_DOUBLE_EQ(last.at(1), 1.30);

  const Components c0 = StepComponents(r0, last);
  EXPECT_NEAR(c0.sync_wait, 0.10, 1e-12);
  EXPECT_NEAR(c0.transfer, 0.05, 1e-12);
  EXPECT_NEAR(c0.overhead, 0.002, 1e-12);
  const Components c1 = StepComponents(r1, last);
  EXPECT_NEAR(c1.sync_wait, 0.0, 1e-12);  // the last rank waits for nobody
  EXPECT_NEAR(c1.transfer, 0.05, 1e-12);
  // The components sum to the step.
  EXPECT_NEAR(c0.compute + c0.input_wait + c0.sync_wait + c0.transfer + c0.overhead, c0.step,
              1e-12);
}

TEST(Decomposition, SyncWaitIsClippedToExposedComm) {
  // Rank 0 only blocked for 0.06 s: the 0.10 s lag was partly hidden.
  const StepRecord r0 = Rank(0, 5, 1.00, 1.20, 0.06);
  const StepRecord r1 = Rank(1, 5, 1.10, 1.30, 0.05);
  const Components c0 = StepComponents(r0, LastArrivals({&r0, &r1}));
  EXPECT_NEAR(c0.sync_wait, 0.06, 1e-12);
  EXPECT_NEAR(c0.transfer, 0.0, 1e-12);
}

TEST(Decomposition, CollectiveMissingOnARankIsIgnored) {
  StepRecord r0 = Rank(0, 5, 1.00, 1.20, 0.15);
  StepRecord r1 = Rank(1, 5, 1.10, 1.30, 0.05);
  r1.collectives.pop_back();  // collective 1 only on rank 0
  const std::map<int, Seconds> last = LastArrivals({&r0, &r1});
  ASSERT_EQ(last.size(), 1u);
  // Rank 0's own last arrival at a shared collective is 1.00; the latest is 1.10.
  EXPECT_NEAR(SyncWait(r0, last), 0.10, 1e-12);
}

TEST(Decomposition, JobFollowsTheLastArrivingRankAndThroughputSumsRanks) {
  std::vector<StepRecord> records;
  StepRecord warm = Rank(0, 0, 1.0, 1.2, 5.0);
  warm.warmup = true;
  records.push_back(warm);
  records.push_back(Rank(0, 1, 1.00, 1.20, 0.16));  // step 0.462 s: slowest
  records.push_back(Rank(1, 1, 1.10, 1.30, 0.05));  // step 0.452 s, last at collective 1
  records.push_back(Rank(0, 2, 1.00, 1.20, 0.10));  // step 0.402 s
  records.push_back(Rank(1, 2, 1.10, 1.30, 0.20));  // step 0.602 s: slowest, last
  records.push_back(Rank(0, 3, 1.00, 1.20, 0.10));  // only on rank 0: dropped
  Result<Decomposition> d = Decompose(records);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->replicas, 2);
  EXPECT_EQ(d->steps, 2);
  ASSERT_EQ(d->warnings.size(), 1u);
  EXPECT_NE(d->warnings[0].find("step 3"), std::string::npos);
  // The job's step is the slowest rank's; its components are rank 1's, the rank everybody
  // waited for at the last collective: no sync wait on that path. In step 1 rank 0 took 0.010 s
  // longer than rank 1 after it: overhead.
  EXPECT_NEAR(d->job.step, (0.462 + 0.602) / 2, 1e-12);
  EXPECT_NEAR(d->job.sync_wait, 0.0, 1e-12);
  EXPECT_NEAR(d->job.transfer, (0.05 + 0.20) / 2, 1e-12);
  EXPECT_NEAR(d->job.overhead, (0.012 + 0.002) / 2, 1e-12);
  EXPECT_NEAR(
      d->job.compute + d->job.input_wait + d->job.sync_wait + d->job.transfer + d->job.overhead,
      d->job.step, 1e-12);
  EXPECT_NEAR(d->samples_per_step, 32, 1e-12);
  EXPECT_NEAR(d->samples_per_s, 32 / d->job.step, 1e-9);
  ASSERT_EQ(d->ranks.size(), 2u);
  EXPECT_NEAR(d->ranks[0].mean.sync_wait, (0.10 + 0.10) / 2, 1e-12);
  EXPECT_NEAR(d->ranks[1].mean.exposed_comm, (0.05 + 0.20) / 2, 1e-12);
  ASSERT_EQ(d->job_per_step.size(), 2u);
  ASSERT_EQ(d->ranks_per_step.size(), 2u);
  EXPECT_NEAR(d->ranks_per_step[0][1].sync_wait, 0.10, 1e-12);
  EXPECT_TRUE(d->step_estimate.Contains(d->job.step));
}

TEST(Decomposition, TheJobsStepIsItsPeriodNotTheLargestStepOfAnyRank) {
  // Four ranks, one collective per step ending every 0.1 s; each rank wakes after it with its
  // own delay (0 to 8 ms, changing from step to step), so each rank's step is the period plus
  // the change in its delay. The largest step per step would add the jitter; the job's step
  // (latest start to latest end) is the period.
  const double delay[4][6] = {{0.000, 0.008, 0.001, 0.007, 0.000, 0.008},
                              {0.008, 0.000, 0.007, 0.001, 0.008, 0.000},
                              {0.004, 0.004, 0.000, 0.008, 0.002, 0.005},
                              {0.002, 0.006, 0.008, 0.000, 0.005, 0.001}};
  std::vector<StepRecord> records;
  double largest_sum = 0;
  for (int64_t k = 1; k < 6; ++k) {
    double largest = 0;
    for (int r = 0; r < 4; ++r) {
      StepRecord s;
      s.rank = r;
      s.step = k;
      s.samples = 8;
      s.start = 0.1 * k + delay[r][k - 1];
      s.end = 0.1 * (k + 1) + delay[r][k];
      s.compute = 0.05;
      s.exposed_comm = 0.1 * (k + 1) - 0.001 - s.start - s.compute;
      s.collectives.push_back(
          {0, 100, s.start + s.compute, 0.1 * (k + 1) - 0.01, 0.1 * (k + 1) - 0.001, 1});
      largest = std::max(largest, s.step_time());
      records.push_back(s);
    }
    largest_sum += largest;
  }
  Result<Decomposition> d = Decompose(records);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_GT(largest_sum / 5, 0.1 + 0.005);  // what the largest step per step would say
  // Latest end minus latest start: the latest delay is 8 ms at every step, so each is the period.
  EXPECT_NEAR(d->job.step, 0.1, 1e-9);
  EXPECT_NEAR(d->samples_per_s, 32 / 0.1, 1e-6);
  for (const Components& c : d->job_per_step) {
    EXPECT_NEAR(c.compute + c.input_wait + c.sync_wait + c.transfer + c.overhead, c.step, 1e-12);
    EXPECT_GE(c.compute, 0);
    EXPECT_GE(c.overhead, 0);
  }
}

TEST(Decomposition, ACriticalStepLongerThanTheJobsGivesBackItsBeginning) {
  Components c;
  c.step = 0.100;
  c.input_wait = 0.002;
  c.overhead = 0.001;
  c.compute = 0.060;
  c.backward = 0.040;
  c.sync_wait = 0.010;
  c.transfer = 0.027;
  c.exposed_comm = 0.037;
  Components longer = c;
  FitToJobStep(0.110, &longer);  // the slowest rank ended later: overhead
  EXPECT_NEAR(longer.overhead, 0.011, 1e-12);
  EXPECT_NEAR(longer.step, 0.110, 1e-12);
  Components shorter = c;
  FitToJobStep(0.090, &shorter);  // began 10 ms before the job: input, overhead, then compute
  EXPECT_NEAR(shorter.input_wait, 0, 1e-12);
  EXPECT_NEAR(shorter.overhead, 0, 1e-12);
  EXPECT_NEAR(shorter.compute, 0.053, 1e-12);
  EXPECT_NEAR(shorter.backward, 0.040, 1e-12);
  EXPECT_NEAR(shorter.exposed_comm, 0.037, 1e-12);
  Components all = c;
  FitToJobStep(0.020, &all);  // beyond its compute: its communication, wait first
  EXPECT_NEAR(all.compute, 0, 1e-12);
  EXPECT_NEAR(all.backward, 0, 1e-12);
  EXPECT_NEAR(all.sync_wait, 0, 1e-12);
  EXPECT_NEAR(all.transfer, 0.020, 1e-12);
  EXPECT_NEAR(all.exposed_comm, 0.020, 1e-12);
  EXPECT_NEAR(all.input_wait + all.overhead + all.compute + all.sync_wait + all.transfer, all.step,
              1e-12);
}

TEST(Decomposition, TheScriptsOwnCollectivesArePartOfTheOverhead) {
  StepRecord r = Rank(0, 3, 1.00, 1.20, 0.05);      // 2 ms of overhead
  EXPECT_EQ(StepComponents(r, {}).script_comm, 0);  // not recorded
  r.script_comm = 0.0015;
  const Components c = StepComponents(r, {});
  EXPECT_NEAR(c.script_comm, 0.0015, 1e-12);
  EXPECT_NEAR(c.overhead, 0.002, 1e-9);
  r.script_comm = 0.004;  // more than the step leaves outside its phases: at most the overhead
  EXPECT_NEAR(StepComponents(r, {}).script_comm, 0.002, 1e-9);
  Components fitted = c;
  FitToJobStep(c.step - 0.0105, &fitted);  // began before the job: input wait, then overhead
  EXPECT_NEAR(fitted.overhead, 0.0015, 1e-9);
  EXPECT_NEAR(fitted.script_comm, 0.0015, 1e-9);
  FitToJobStep(fitted.step - 0.001, &fitted);
  EXPECT_NEAR(fitted.script_comm, 0.0005, 1e-9);
  EXPECT_NEAR((c * 2 + c).script_comm, 0.0045, 1e-12);
}

TEST(Decomposition, CriticalRankIsLastAtTheLastCollectiveNotTheLongestStep) {
  // Rank 1 arrives last at collective 1 but started late, so rank 0's step is longer.
  StepRecord r0 = Rank(0, 1, 1.00, 1.20, 0.15);
  StepRecord r1 = Rank(1, 1, 1.10, 1.30, 0.05);
  r1.start = 1.0;
  r1.compute = 0.29;
  EXPECT_GT(r0.step_time(), r1.step_time());
  EXPECT_EQ(CriticalRank({&r0, &r1}, LastArrivals({&r0, &r1})), 1u);
  // Without collectives: the rank with the largest step.
  r0.collectives.clear();
  r1.collectives.clear();
  EXPECT_EQ(CriticalRank({&r0, &r1}, LastArrivals({&r0, &r1})), 0u);
}

TEST(Decomposition, ATransferInFlightWhileWaitingIsTransferNotSyncWait) {
  // Rank 0's backward ends at 1.20 with collective 0 (all arrived at 1.10) still reducing until
  // 1.25; collective 1 waits for rank 1 until 1.30 and ends at 1.32. Along the path: transfer
  // 1.20-1.25, sync wait 1.25-1.30, transfer 1.30-1.32.
  StepRecord r0 = Rank(0, 5, 1.00, 1.20, 0.12);
  StepRecord r1 = Rank(1, 5, 1.10, 1.30, 0.02);
  for (StepRecord* r : {&r0, &r1}) {
    r->collectives[0].start = 1.10;
    r->collectives[0].end = 1.25;
    r->collectives[1].start = 1.30;
    r->collectives[1].end = 1.32;
  }
  const Components c0 = StepComponents(r0, LastArrivals({&r0, &r1}));
  EXPECT_NEAR(c0.sync_wait, 0.05, 1e-12);
  EXPECT_NEAR(c0.transfer, 0.07, 1e-12);
  // Per collective: collective 0 transferred 1.20-1.25; collective 1 waited 1.25-1.30 and
  // transferred 1.30-1.32.
  const std::vector<CollectiveSplit> split = SplitExposed(r0, LastArrivals({&r0, &r1}));
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].index, 0);
  EXPECT_NEAR(split[0].sync_wait, 0.0, 1e-12);
  EXPECT_NEAR(split[0].transfer, 0.05, 1e-12);
  EXPECT_EQ(split[1].index, 1);
  EXPECT_NEAR(split[1].sync_wait, 0.05, 1e-12);
  EXPECT_NEAR(split[1].transfer, 0.02, 1e-12);
}

TEST(Decomposition, JobSplitsSyncWaitAndTransferPerCollectiveAlongTheCriticalPath) {
  // Rank 1 arrives last at collective 0 (1.10 against 1.00) but rank 0 arrives last at
  // collective 1 (1.40 against 1.30): the step waits for rank 0, whose path has no sync wait;
  // rank 1 waits 1.30-1.40 at collective 1. Collective 0 ends at 1.15 on both, collective 1 at
  // 1.45.
  std::vector<StepRecord> records;
  for (int64_t step : {1, 2}) {
    StepRecord r0 = Rank(0, step, 1.00, 1.40, 0.05);
    StepRecord r1 = Rank(1, step, 1.10, 1.30, 0.15);
    for (StepRecord* r : {&r0, &r1}) {
      r->collectives[0].end = 1.15;
      r->collectives[1].end = 1.45;
    }
    records.push_back(r0);
    records.push_back(r1);
  }
  Result<Decomposition> d = Decompose(records);
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->job_collectives.size(), 2u);
  Seconds wait = 0, transfer = 0;
  for (const CollectiveSplit& c : d->job_collectives) {
    wait += c.sync_wait;
    transfer += c.transfer;
  }
  EXPECT_NEAR(wait, d->job.sync_wait, 1e-12);
  EXPECT_NEAR(transfer, d->job.transfer, 1e-12);
  // Along rank 0's path: collective 0 ended before its backward did, collective 1 moved bytes
  // 1.40-1.45.
  EXPECT_NEAR(d->job_collectives[0].transfer, 0.0, 1e-12);
  EXPECT_NEAR(d->job_collectives[1].sync_wait, 0.0, 1e-12);
  EXPECT_NEAR(d->job_collectives[1].transfer, 0.05, 1e-12);
  // Rank 1's own split: the wait is at collective 1.
  const std::vector<CollectiveSplit> r1 =
      SplitExposed(records[1], LastArrivals({&records[0], &records[1]}));
  ASSERT_EQ(r1.size(), 2u);
  EXPECT_NEAR(r1[0].sync_wait, 0.0, 1e-12);
  EXPECT_NEAR(r1[1].sync_wait, 0.10, 1e-12);
  EXPECT_NEAR(r1[1].transfer, 0.05, 1e-12);
}

// Work lead: rank 1 leaves each step's collective 50 ms after rank 0 and arrives 100 ms after it
// at the next one; 50 ms of that is work it did more since the ranks were together, 50 ms its
// later exit. Rank 0's sync wait (100 ms) is then twice the lead its work explains.
TEST(Decomposition, WorkLeadCountsTheWorkSinceTheRanksWereLastTogether) {
  std::vector<StepRecord> records;
  for (int64_t step = 1; step <= 3; ++step) {
    const double t = static_cast<double>(step);
    for (int rank : {0, 1}) {
      StepRecord r;
      r.rank = rank;
      r.step = step;
      r.samples = 8;
      r.start = t;
      const double ready = t + (rank == 0 ? 0.20 : 0.30);
      const double end = t + (rank == 0 ? 0.50 : 0.55);
      r.compute = ready - t;
      r.exposed_comm = end - ready;
      r.end = end + 0.01;
      r.collectives.push_back({0, 100, ready, ready, end, 1});
      records.push_back(r);
    }
  }
  Result<Decomposition> d = Decompose(records);
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->ranks.size(), 2u);
  EXPECT_NEAR(d->ranks[0].work_lead, 0.05, 1e-9);
  EXPECT_NEAR(d->ranks[1].work_lead, 0.0, 1e-9);
  EXPECT_NEAR(d->ranks[0].mean.sync_wait, 0.10, 1e-9);
  // One step alone has nothing before it to measure from.
  records.resize(2);
  Result<Decomposition> one = Decompose(records);
  ASSERT_TRUE(one.ok());
  EXPECT_LT(one->ranks[0].work_lead, 0);
}

TEST(Decomposition, ErrorsAreNamed) {
  EXPECT_FALSE(Decompose({}).ok());
  std::vector<StepRecord> dup = {Rank(0, 1, 1, 1.2, 0.1), Rank(0, 1, 1, 1.2, 0.1)};
  Result<Decomposition> d = Decompose(dup);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("rank 0 reports step 1 twice"), std::string::npos);
  std::vector<StepRecord> disjoint = {Rank(0, 1, 1, 1.2, 0.1), Rank(1, 2, 1, 1.2, 0.1)};
  EXPECT_FALSE(Decompose(disjoint).ok());
}

TEST(Decomposition, NonFiniteIsAnErrorAndNegativeAWarning) {
  StepRecord bad = Rank(1, 4, 1.0, 1.2, 0.1);
  bad.compute = std::nan("");
  Result<Decomposition> d = Decompose({Rank(0, 4, 1.0, 1.2, 0.1), bad});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("rank 1 step 4: field 'compute'"), std::string::npos);

  StepRecord over = Rank(1, 4, 1.0, 1.2, 0.1);
  over.compute += 1.0;  // parts longer than the step
  d = Decompose({Rank(0, 4, 1.0, 1.2, 0.1), over});
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->warnings.size(), 1u);
  EXPECT_NE(d->warnings[0].find("rank 1 step 4"), std::string::npos);
}

TEST(Decomposition, PercentileInterpolates) {
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 90), 10);
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0);
}

}  // namespace
}  // namespace stepscope::analysis
