#include "model/simulate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "model/fit.h"
#include "model/host_crowding.h"
#include "model/synthetic_testing.h"

namespace stepscope::model {
namespace {

template <typename T>
T Must(Result<T> r) {
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r).value();
}

StepModel Fitted(const testing::Truth& t = {}) { return testing::FitSynthetic(t); }

// At 8 replicas with every bucket after backward (no overlap), where the exposed communication
// is the sum of the buckets' costs: one bucket's cost, and the exposed time at a bucket size.
struct NoOverlapAt8 {
  const StepModel& m;
  double Ring(double bytes) const {
    return AllreduceSeconds(m.collectives.at("fp32"), 8, static_cast<Bytes>(std::llround(bytes)));
  }
  double Exposed(std::optional<double> bucket_mb) const {
    Scenario x;
    x.replicas = 8;
    x.overlap = false;
    x.bucket_mb = bucket_mb;
    return Must(SimulateStep(m, x)).exposed_comm;
  }
};

TEST(ParseReplicaList, ListsAndDoublingRanges) {
  EXPECT_EQ(Must(ParseReplicaList("1,2,4")), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(Must(ParseReplicaList("16..128")), (std::vector<int>{16, 32, 64, 128}));
  EXPECT_EQ(Must(ParseReplicaList("3..20")), (std::vector<int>{3, 6, 12, 20}));
  for (const char* bad : {"", "0", "1,,2", "4x", "8..2", "1..", "-1", "2.5"}) {
    Result<std::vector<int>> r = ParseReplicaList(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("e.g."), std::string::npos) << r.status().message();
    }
  }
}

TEST(SimulateStep, OneBucketWithoutOverlapHandComputed) {
  const testing::Truth t;
  const StepModel m = Fitted(t);
  Scenario s;
  s.replicas = 16;
  Result<StepParts> p = SimulateStep(m, s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const double fb = 0.002 + 0.001 * 8 + 0.004 + 0.002 * 8;
  EXPECT_NEAR(p->compute, fb + t.optimizer, 1e-9);
  // One 4 MiB bucket ready at the end of backward: its whole ring cost is exposed.
  const double cost = 30 * t.alpha + 30.0 / 16 * t.gradient_bytes * t.seconds_per_byte;
  EXPECT_NEAR(p->exposed_comm, cost, 1e-3 * cost);
  EXPECT_NEAR(p->overhead, t.overhead, 1e-9);
  EXPECT_NEAR(p->input_wait, t.input_wait, 1e-9);
}

TEST(SimulateStep, SmallerBucketsHideCommunicationBehindBackward) {
  const StepModel m = Fitted();
  Scenario s;
  s.replicas = 8;
  const Seconds one_bucket = Must(SimulateStep(m, s)).exposed_comm;
  s.bucket_mb = 0.5;  // 8 buckets ready through backward (readiness assumed uniform)
  const Seconds eight = Must(SimulateStep(m, s)).exposed_comm;
  EXPECT_LT(eight, 0.5 * one_bucket);
  s.overlap = false;  // the same buckets after backward: more latency, nothing hidden
  EXPECT_GT(Must(SimulateStep(m, s)).exposed_comm, one_bucket);
}

TEST(SimulateStep, TheMeasuredBucketLayoutIsKeptMergedOrSplit) {
  // The reducer's buckets hold whole layers: at a 1 MiB bucket size, a 4 MiB gradient of two
  // layers went out as 2 buckets (60 % and 40 % of the bytes), not as 4 of 1 MiB.
  StepModel m = Fitted();
  m.reference.bucket_mb = 1;
  m.readiness = {{0, 0}, {0.5, 0.6}, {1, 1}};
  m.readiness_assumed = false;
  const NoOverlapAt8 at8{m};
  const auto ring = [&](double bytes) { return at8.Ring(bytes); };
  const auto exposed = [&](std::optional<double> mb) { return at8.Exposed(mb); };
  const double total = static_cast<double>(m.gradient_bytes);
  // Without a measured layout: four buckets of exactly 1 MiB.
  m.bucket_shares.clear();
  const double even = 4 * ring(total / 4);
  EXPECT_NEAR(exposed(std::nullopt), even, 1e-6 * even);
  m.bucket_shares = {0.6, 0.4};
  const double measured = ring(0.6 * total) + ring(0.4 * total);
  EXPECT_NEAR(exposed(std::nullopt), measured, 1e-6 * measured);
  // Larger: the two merge into one once they hold 3 MiB together.
  EXPECT_NEAR(exposed(3.0), ring(total), 1e-6 * ring(total));
  // Smaller: each measured bucket split into pieces of at most 0.5 MiB (5 and 4 pieces).
  const double split = 5 * ring(0.6 * total / 5) + 4 * ring(0.4 * total / 4);
  EXPECT_NEAR(exposed(0.5), split, 1e-6 * split);
  EXPECT_GT(exposed(0.5), exposed(std::nullopt));  // more latency terms
  // Splitting is an assumption, and the prediction says so; merging is not.
  Scenario smaller;
  smaller.replicas = 8;
  smaller.bucket_mb = 0.5;
  const std::string note = Must(Predict(m, smaller)).bucket_note;
  EXPECT_NE(note.find("split from the measured ones"), std::string::npos) << note;
  EXPECT_NE(note.find("ready_slices_bytes"), std::string::npos) << note;
  smaller.bucket_mb = 3.0;
  EXPECT_TRUE(Must(Predict(m, smaller)).bucket_note.empty());
  // PyTorch DDP's reducer launches its first bucket under its own 1 MiB limit at any bucket
  // size: that bucket is kept, the rest merged or split.
  m.reference.first_bucket_mb = FirstBucketMb("gloo");
  EXPECT_EQ(m.reference.first_bucket_mb, 1.0);
  EXPECT_EQ(FirstBucketMb("shm"), 0.0);
  m.bucket_shares = {0.1, 0.5, 0.4};
  const double kept_merged = ring(0.1 * total) + ring(0.9 * total);
  EXPECT_NEAR(exposed(3.0), kept_merged, 1e-6 * kept_merged);
  const double kept_split =
      ring(0.1 * total) + 4 * ring(0.5 * total / 4) + 4 * ring(0.4 * total / 4);  // 2 and 1.6 MiB
  EXPECT_NEAR(exposed(0.5), kept_split, 1e-6 * kept_split);
}

TEST(SimulateStep, KnownSlicesAreGroupedAsTheReducerGroupsThem) {
  // PyTorch DDP over an MLP 16-512-512-512-3 (python/stepscope_torch/ddp_test.py, which checks
  // these buckets against DDP itself): its gradients in ready order, and the buckets DDP makes
  // of them at 25 MB and at 0.25 MB (its first closed at its own 1 MiB limit).
  StepModel m = Fitted();
  const std::vector<double> bytes = {12, 6144, 2048, 1048576, 2048, 1048576, 2048, 32768};
  double total = 0;
  for (double b : bytes) total += b;
  m.gradient_bytes = static_cast<Bytes>(total);
  for (double b : bytes) m.slice_shares.push_back(b / total);
  m.bucket_shares = {1056780 / total, 1085440 / total};  // measured at 25 MB
  m.reference.bucket_mb = 25;
  m.reference.first_bucket_mb = 1;
  const NoOverlapAt8 at8{m};
  const auto ring = [&](double bytes) { return at8.Ring(bytes); };
  const auto exposed = [&](double mb) { return at8.Exposed(mb); };
  const double at_quarter = ring(1056780) + ring(1050624) + ring(34816);
  EXPECT_NEAR(exposed(0.25), at_quarter, 1e-6 * at_quarter);
  Scenario quarter;
  quarter.replicas = 8;
  quarter.bucket_mb = 0.25;
  EXPECT_TRUE(Must(Predict(m, quarter)).bucket_note.empty());  // grouped, not assumed
  // At 2 MB DDP's first bucket still closes at 1 MiB; stepscope's own reducer, without a
  // first-bucket limit, fills its first to 2 MB (two 1 MiB layers) and leaves the first layer.
  const double ddp_at_two = ring(1056780) + ring(1085440);
  EXPECT_NEAR(exposed(2), ddp_at_two, 1e-6 * ddp_at_two);
  m.reference.first_bucket_mb = 0;
  const double own_at_two = ring(2107404) + ring(34816);
  EXPECT_NEAR(exposed(2), own_at_two, 1e-6 * own_at_two);
}

TEST(SimulateStep, WhatIfsChangeWhatTheyShould) {
  const testing::Truth t;
  const StepModel m = Fitted(t);
  Scenario s;
  s.replicas = 8;
  const StepParts base = Must(SimulateStep(m, s));
  Scenario faster = s;
  faster.compute_scale = 2;
  EXPECT_NEAR(Must(SimulateStep(m, faster)).compute, base.compute / 2, 1e-12);
  Scenario half = s;
  half.dtype = "bf16";  // not measured: the same cost per wire byte, half the bytes
  const StepParts bf16 = Must(SimulateStep(m, half));
  const double bw = 1.75 * t.gradient_bytes * t.seconds_per_byte;
  EXPECT_NEAR(base.exposed_comm - bf16.exposed_comm, bw / 2, 1e-3 * bw);
  Scenario link = s;
  link.link = LinkAlphaBeta(100.0, 0);
  EXPECT_NEAR(Must(SimulateStep(m, link)).exposed_comm, 1.75 * t.gradient_bytes / 100e9, 1e-9);
  Scenario accum = s;
  accum.accum = 4;
  const double fb = 0.002 + 0.001 * 8 + 0.004 + 0.002 * 8;
  EXPECT_NEAR(Must(SimulateStep(m, accum)).compute, 4 * fb + t.optimizer, 1e-9);
  // Four micro-batches per step wait four times for their batches.
  EXPECT_NEAR(Must(SimulateStep(m, accum)).input_wait, 4 * base.input_wait, 1e-12);
}

TEST(SimulateStep, LengthBucketsCutPaddingAndTheSpreadTheStepWaitsOn) {
  testing::Truth t;
  t.jitter = 0.3;  // as drawn, a rank's work varies by +-30 % from step to step
  StepModel m = Fitted(t);
  Scenario s;
  s.replicas = 8;
  const StepParts drawn = Must(SimulateStep(m, s));
  const double optimizer = m.optimizer.estimate.value;
  const double fb = drawn.compute - optimizer;
  // The slowest of 8 ranks: 1.3 unless all 8 drew 0.7.
  EXPECT_NEAR(drawn.straggler_wait, drawn.compute * (0.3 - 0.6 / 256), 1e-9);
  Scenario bucketed = s;
  bucketed.balance_lengths = true;
  // Without what the sampler would do (a trace, a spec): the rotating imbalance goes, the
  // padding is not known.
  StepParts p = Must(SimulateStep(m, bucketed));
  EXPECT_NEAR(p.compute, drawn.compute, 1e-12);
  EXPECT_NEAR(p.straggler_wait, 0, 1e-12);
  // With it: forward and backward compute the bucketed work, and the slowest of 8 is drawn
  // from the bucketed spread.
  m.length_buckets = LengthBuckets{false, 0.5, {0.9, 1.0, 1.1}};
  p = Must(SimulateStep(m, bucketed));
  EXPECT_NEAR(p.compute, 0.5 * fb + optimizer, 1e-12);
  const double slowest = 1.1 * (1 - std::pow(2.0 / 3, 8)) +
                         1.0 * (std::pow(2.0 / 3, 8) - std::pow(1.0 / 3, 8)) +
                         0.9 * std::pow(1.0 / 3, 8);
  EXPECT_NEAR(p.straggler_wait, p.compute * (slowest - 1), 1e-9);
  // Where the records tell: only the part that scales with positions shrinks (here 80 %), and
  // the host's noise (here +-5 %) multiplies each rank's bucketed work.
  m.length_buckets->token_share = 0.8;
  m.length_buckets->noise = {0.95, 1.05};
  p = Must(SimulateStep(m, bucketed));
  EXPECT_NEAR(p.compute, (0.2 + 0.8 * 0.5) * fb + optimizer, 1e-12);
  // Bucketed, the scaling share is 0.4 / 0.6 of forward and backward: ratios 1 + (2/3)(x - 1).
  std::vector<double> ratios;
  for (double x : {0.9, 1.0, 1.1}) {
    for (double e : {0.95, 1.05}) ratios.push_back((1 + 2.0 / 3 * (x - 1)) * e);
  }
  std::sort(ratios.begin(), ratios.end());
  double expected = 0;
  for (size_t i = 0; i < ratios.size(); ++i) {
    expected += ratios[i] * (std::pow((i + 1) / 6.0, 8) - std::pow(i / 6.0, 8));
  }
  EXPECT_NEAR(p.straggler_wait, p.compute * (expected - 1), 1e-9);
  EXPECT_NEAR(Must(SimulateStep(m, s)).compute, drawn.compute, 1e-12);  // asked only
  // Runs bucketed already keep their work.
  m.length_buckets->applied = true;
  EXPECT_NEAR(Must(SimulateStep(m, bucketed)).compute, drawn.compute, 1e-12);
}

TEST(SimulateStep, ARunAsItDrewItsLengths) {
  StepModel m = Fitted();
  const double optimizer = m.optimizer.estimate.value;
  Scenario s;
  s.replicas = 2;
  const StepParts expected = Must(SimulateStep(m, s));
  const double fb = expected.compute - optimizer;
  m.length_buckets = LengthBuckets{false, 0.5, {1.0}};
  m.length_buckets->token_share = 1;
  m.length_buckets->positions = 100;
  m.length_buckets->noise = {0.9, 1.1};
  // Two steps of two ranks: work 1 and 1.5, then 0.5 and 1 (mean 1). The slowest under the
  // noise: 1.35 or 1.65 by the heavier rank's noise (1.5), then 0.9 or 1.1 (1.0); 1.25 on average.
  m.drawn["run-a"] = {{100, 150}, {50, 100}};
  Scenario drawn = s;
  drawn.as_drawn = "run-a";
  StepParts p = Must(SimulateStep(m, drawn));
  EXPECT_NEAR(p.compute, fb + optimizer, 1e-12);
  EXPECT_NEAR(p.straggler_wait, p.compute * 0.25, 1e-12);
  // Twice the positions: twice forward and backward, the same spread.
  m.drawn["run-b"] = {{200, 300}, {100, 200}};
  drawn.as_drawn = "run-b";
  p = Must(SimulateStep(m, drawn));
  EXPECT_NEAR(p.compute, 2 * fb + optimizer, 1e-12);
  EXPECT_NEAR(p.straggler_wait, p.compute * 0.25, 1e-12);
  // Half of forward and backward scales: 1 - 0.5 + 0.5 x 2 = 1.5 times.
  m.length_buckets->token_share = 0.5;
  EXPECT_NEAR(Must(SimulateStep(m, drawn)).compute, 1.5 * fb + optimizer, 1e-12);
  // Predict takes one replica's efficiency from the expected scenario, not the draw.
  EXPECT_TRUE(Predict(m, drawn).ok());
  // A run the model has no positions of, or positions for other ranks: errors naming the run.
  drawn.as_drawn = "nope";
  Result<StepParts> missing = SimulateStep(m, drawn);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'nope'"), std::string::npos);
  drawn.as_drawn = "run-a";
  drawn.replicas = 4;
  Result<StepParts> other = SimulateStep(m, drawn);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("2 ranks"), std::string::npos)
      << other.status().message();
}

// A loader-bound step lasts one loader period per batch: accumulating K micro-batches asks the
// loader for K batches per step, so accumulation cannot hide the loader (and more workers can).
TEST(SimulateStep, AccumulationAsksTheLoaderForEveryMicroBatch) {
  StepModel m = Fitted();
  const Seconds period = 0.5;  // far longer than the rest of the step
  m.loader_service =
      Constant{"loader_service", Estimate::Exact(period), "s per batch per worker", "test"};
  Scenario s;
  s.replicas = 4;
  s.loader_workers = 1;
  EXPECT_NEAR(Must(SimulateStep(m, s)).step(), period, 1e-9);
  s.accum = 4;
  EXPECT_NEAR(Must(SimulateStep(m, s)).step(), 4 * period, 1e-9);
  s.loader_workers = 4;
  EXPECT_NEAR(Must(SimulateStep(m, s)).step(), period, 1e-9);
}

TEST(SimulateStep, AcrossHostsHandComputed) {
  const testing::Truth t;
  const StepModel m = Fitted(t);  // one 4 MiB bucket, ready at the end of backward
  Scenario s;
  s.replicas = 32;
  s.devices_per_host = 8;
  s.intra_link = LinkAlphaBeta(100, 2e-6);
  s.inter_link = LinkAlphaBeta(10, 20e-6);
  // Inside a host: 14 steps of 2 us and 14/8 of 4 MiB at 100 GB/s; between the 4 hosts: each
  // host's 512 KiB shard, 6 steps of 20 us and 6/4 of it at 10 GB/s. All of it exposed.
  const double bytes = 4 << 20;
  const double expected =
      14 * 2e-6 + 14.0 / 8 * bytes / 100e9 + 6 * 20e-6 + 6.0 / 4 * (bytes / 8) / 10e9;
  EXPECT_NEAR(Must(SimulateStep(m, s)).exposed_comm, expected, 1e-9);
  // Without an intra-host link given, the cost fitted on the measured host is used inside one.
  Scenario fitted_intra = s;
  fitted_intra.intra_link.reset();
  const double measured_intra = 14 * t.alpha + 14.0 / 8 * bytes * t.seconds_per_byte;
  EXPECT_NEAR(Must(SimulateStep(m, fitted_intra)).exposed_comm,
              measured_intra + 6 * 20e-6 + 6.0 / 4 * (bytes / 8) / 10e9, 1e-3 * expected);
  // Within one host the inter-host link plays no part and is not needed.
  Scenario one_host = s;
  one_host.replicas = 8;
  one_host.inter_link.reset();
  EXPECT_NEAR(Must(SimulateStep(m, one_host)).exposed_comm, 14 * 2e-6 + 14.0 / 8 * bytes / 100e9,
              1e-9);
  // Beyond one host without an inter-host link: refused, saying what to give.
  Scenario no_inter = one_host;
  no_inter.replicas = 16;
  Result<StepParts> r = SimulateStep(m, no_inter);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--inter-link"), std::string::npos);
}

TEST(SimulateStep, RefusesABucketSizeThatMakesMillionsOfBuckets) {
  const StepModel m = Fitted();
  Scenario s;
  s.replicas = 4;
  s.bucket_mb = 1e-9;
  Result<StepParts> r = SimulateStep(m, s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("buckets"), std::string::npos);
}

TEST(SimulateStep, RefusesScenariosItCannotSimulate) {
  const StepModel m = Fitted();
  Scenario s;
  s.replicas = 0;
  EXPECT_FALSE(SimulateStep(m, s).ok());
  s.replicas = 2;
  s.compute_scale = 0;
  EXPECT_FALSE(SimulateStep(m, s).ok());
  s.compute_scale = 1;
  s.dtype = "int8";
  Result<StepParts> r = SimulateStep(m, s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("int8"), std::string::npos);
}

// Ranks whose CPU work outgrows their host's cores step at the cores' pace: R d / C, with the
// excess in overhead and a loader that waited for less no longer setting the step.
TEST(SimulateStep, TheHostsCoresBoundTheStep) {
  StepModel m = Fitted();
  const Seconds period = 0.045;  // longer than the rest of the synthetic step
  m.loader_service =
      Constant{"loader_service", Estimate::Exact(period), "s per batch per worker", "test"};
  const StepModel plain = m;
  HostCpu h;
  h.cores_per_host = 2;
  h.max_ranks_per_host = 8;
  h.reference_samples = m.reference.batch * m.reference.accum;
  h.per_step = {"host_cpu_per_step", Estimate{0.0065, 0.006, 0.007}, "s", "test"};
  h.per_sample = {"host_cpu_per_sample", Estimate::Exact(0), "s", "test", true};
  m.host_cpu = h;
  Scenario s;
  s.replicas = 4;
  s.loader_workers = 1;
  EXPECT_NEAR(Must(SimulateStep(m, s)).step(), period, 1e-9);  // 4 x 6.5 ms / 2 = 13 ms
  s.replicas = 16;
  s.ranks_per_host = 16;  // 16 x 6.5 / 2 = 52 ms
  const StepParts crowded = Must(SimulateStep(m, s));
  const StepParts without = Must(SimulateStep(plain, s));
  EXPECT_NEAR(crowded.step(), 0.052, 1e-9);
  EXPECT_EQ(crowded.input_wait, 0);
  const Seconds other = without.step() - without.input_wait;
  EXPECT_NEAR(crowded.overhead, without.overhead + 0.052 - other, 1e-9);
  EXPECT_EQ(crowded.compute, without.compute);
  EXPECT_NEAR(Must(SimulateStep(m, s, Side::kHigh)).step(), 16 * 0.007 / 2, 1e-9);
  // Two ranks to a host: each has a core, the loader sets the step again.
  s.ranks_per_host = 2;
  EXPECT_NEAR(Must(SimulateStep(m, s)).step(), without.step(), 1e-9);
  // Efficiency is against one replica alone on its host, not one on a crowded host.
  s.ranks_per_host = 16;
  Result<Prediction> p = Predict(m, s);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->efficiency.value, period / 0.052, 0.02);
}

// Ranks that outnumber their cores share them inside a shared-memory reduction too: the
// reduction takes at least R a share(N) bytes / C, and a link given in the scenario is not the
// host's arithmetic.
TEST(SimulateStep, CrowdedRanksShareTheCoresInsideAHostsReduction) {
  const testing::Truth t;
  StepModel m = Fitted(t);
  const Seconds ring = 30 * t.alpha + 30.0 / 16 * t.gradient_bytes * t.seconds_per_byte;
  HostCpu h;
  h.cores_per_host = 2;
  h.max_ranks_per_host = 16;
  h.reference_samples = m.reference.batch * m.reference.accum;
  h.per_step = {"host_cpu_per_step", Estimate::Exact(0), "s", "test"};
  h.per_sample = {"host_cpu_per_sample", Estimate::Exact(0), "s", "test", true};
  // Each rank's arithmetic: 1.5x the ring's bandwidth term alone.
  const double per_byte = 1.5 * t.seconds_per_byte;
  h.reduction_per_byte =
      Constant{"host_reduction_cpu_per_byte", Estimate{per_byte, 0.5 * per_byte, 2 * per_byte},
               "CPU s per rank per wire byte", "test"};
  m.host_cpu = h;
  Scenario s;
  s.replicas = 16;
  s.ranks_per_host = 16;
  const Seconds floor = 16 * per_byte * (30.0 / 16) * t.gradient_bytes / 2;
  ASSERT_GT(floor, ring);
  EXPECT_NEAR(Must(SimulateStep(m, s)).exposed_comm, floor, 1e-3 * floor);
  EXPECT_NEAR(Must(SimulateStep(m, s, Side::kHigh)).exposed_comm, 2 * floor, 2e-3 * floor);
  // bf16 on the wire, never measured: half the bytes to reduce, at fp32's cost per byte.
  s.dtype = "bf16";
  EXPECT_NEAR(Must(SimulateStep(m, s)).exposed_comm, floor / 2, 1e-3 * floor);
  // Measured, and slower per element than fp32 (it converts as it reduces): its arithmetic is
  // scaled as its cost per byte is, 3.2x fp32's per wire byte, 1.6x per element.
  AlphaBeta bf16 = m.collectives.at("fp32");
  bf16.seconds_per_byte = Estimate::Exact(3.2 * t.seconds_per_byte);
  m.collectives["bf16"] = bf16;
  EXPECT_NEAR(Must(SimulateStep(m, s)).exposed_comm, 1.6 * floor, 2e-3 * floor);
  m.collectives.erase("bf16");
  s.dtype.reset();
  // A core per rank: the fitted ring alone.
  s.ranks_per_host = 2;
  EXPECT_NEAR(Must(SimulateStep(m, s)).exposed_comm, ring, 1e-3 * ring);
  // A link given: its cost, not the host's.
  s.ranks_per_host = 16;
  s.link = m.collectives.at("fp32");
  EXPECT_NEAR(Must(SimulateStep(m, s)).exposed_comm, ring, 1e-3 * ring);
}

// A model whose crowding was fitted with the queue's form: compute ratio a + b rho/(1-rho), each
// rank 8 ms of CPU a step, on hosts of 2 cores (the line in the crowding says 1.0 throughout).
StepModel QueueCrowded(double a, double b, Seconds cpu_per_rank_step) {
  StepModel m = Fitted();
  HostCrowding h;
  h.cores_per_host = 2;
  h.max_ranks_per_host = 16;
  h.compute_ratio_a = {"crowding_compute_ratio_a", Estimate::Exact(1), "ratio", "test"};
  h.compute_ratio_b = {"crowding_compute_ratio_b", Estimate::Exact(0), "ratio", "test"};
  h.overhead_a = {"crowding_overhead_a", Estimate::Exact(0), "s", "test"};
  h.overhead_b = {"crowding_overhead_b", Estimate::Exact(0), "s", "test"};
  h.queue_a = Constant{"crowding_queue_a", Estimate::Exact(a), "ratio", "test"};
  h.queue_b = Constant{"crowding_queue_b", Estimate::Exact(b), "ratio", "test"};
  h.cpu_per_rank_step = cpu_per_rank_step;
  h.queue_load = 0.5;  // the most loaded baseline's, whose waits the jitter holds
  m.crowding = h;
  return m;
}

TEST(SimulateStep, ACrowdedHostsLoadAndStepAreSolvedTogether) {
  Scenario s;
  s.replicas = 16;
  s.ranks_per_host = 16;
  const StepParts plain = Must(SimulateStep(QueueCrowded(1, 0, 0.008), s));
  const StepParts p = Must(SimulateStep(QueueCrowded(1, 0.05, 0.008), s));
  // The compute ratio is a + b q at the load the step it makes gives: rho = 16 x 8 ms / (2 x
  // step).
  const double rho = 16 * 0.008 / (2 * p.step());
  ASSERT_GT(rho, kQueueLoad);
  ASSERT_LT(rho, kMaxQueueLoad);
  const double ratio = 1 + 0.05 * rho / (1 - rho);
  EXPECT_NEAR(p.compute / plain.compute, ratio, 1e-4);
  EXPECT_GT(p.compute, 1.1 * plain.compute);
  // The slowest of the 16 ranks waits H_16 - 1 mean waits more than the typical one, of the
  // waiting beyond the most loaded baseline's (q = 1 at its rho of 0.5).
  double h16 = 0;
  for (int i = 1; i <= 16; ++i) h16 += 1.0 / i;
  EXPECT_NEAR(p.straggler_wait / p.compute - plain.straggler_wait / plain.compute,
              (ratio - 1 - 0.05) / ratio * (h16 - 1), 1e-4);
  // Work beyond what the cores can do at the cap: the load is held there, and the step's floor
  // (the cores' own time, where the model has it) takes over.
  const StepParts capped = Must(SimulateStep(QueueCrowded(1, 0.05, 1.0), s));
  EXPECT_NEAR(capped.compute / plain.compute, 1 + 0.05 * QueueWait(kMaxQueueLoad), 1e-9);
  // A rank per core: no crowding, so no queue.
  s.ranks_per_host = 2;
  EXPECT_NEAR(Must(SimulateStep(QueueCrowded(1, 0.05, 0.008), s)).compute,
              Must(SimulateStep(QueueCrowded(1, 0, 0.008), s)).compute, 1e-12);
}

TEST(Predict, BandsOrderedAndEfficiencyAgainstOneReplica) {
  testing::Truth t;
  t.jitter = 0.05;
  const StepModel m = Fitted(t);
  Scenario s;
  s.replicas = 1;
  Result<Prediction> one = Predict(m, s);
  ASSERT_TRUE(one.ok());
  EXPECT_NEAR(one->efficiency.value, 1.0, 1e-12);
  s.replicas = 64;
  Result<Prediction> p = Predict(m, s);
  ASSERT_TRUE(p.ok());
  EXPECT_LE(p->samples_per_s.low, p->samples_per_s.value);
  EXPECT_LE(p->samples_per_s.value, p->samples_per_s.high);
  EXPECT_LT(p->efficiency.value, 1.0);
  EXPECT_NEAR(p->samples_per_s.value, 64 * 8 / p->step_s.value, 1e-9);
}

TEST(Predict, AMicroBatchThatDoesNotFitBecomesAccumulation) {
  const StepModel m = Fitted();  // 1 MiB of activations per sample, 4 MiB of parameters
  Scenario s;
  s.replicas = 4;
  s.batch = 64;
  // 16 MiB fixed (weights, gradients, two AdamW moments) + 64 MiB of activations > 48 MiB.
  s.device_memory_gb = 48.0 / 1024;
  Result<Prediction> p = Predict(m, s);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->fits_memory);
  EXPECT_EQ(p->batch, 32);
  EXPECT_EQ(p->accum, 2);
  EXPECT_NE(p->memory_note.find("does not fit"), std::string::npos);
  s.device_memory_gb = 8.0 / 1024;  // not even the parameters
  p = Predict(m, s);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->fits_memory);
}

TEST(Predict, EachComponentHasABandAroundItsValue) {
  testing::Truth t;
  t.jitter = 0.05;
  const StepModel m = Fitted(t);
  Scenario s;
  s.replicas = 64;
  const Prediction p = Must(Predict(m, s));
  EXPECT_LE(p.parts_fast.step(), p.parts.step());
  EXPECT_LE(p.parts.step(), p.parts_slow.step());
  EXPECT_LT(p.parts_fast.exposed_comm + p.parts_fast.straggler_wait,
            p.parts_slow.exposed_comm + p.parts_slow.straggler_wait);
  EXPECT_NEAR(p.step_s.low, p.parts_fast.step(), 1e-12);
  EXPECT_NEAR(p.step_s.high, p.parts_slow.step(), 1e-12);
}

TEST(Predict, AWirePrecisionNeverMeasuredIsPricedPerByteAndSaidSo) {
  const StepModel m = Fitted();  // fp32 reductions only
  Scenario s;
  s.replicas = 8;
  EXPECT_TRUE(Must(Predict(m, s)).wire_note.empty());
  s.dtype = "bf16";
  const Prediction half = Must(Predict(m, s));
  EXPECT_NE(half.wire_note.find("bf16 on the wire was never measured"), std::string::npos)
      << half.wire_note;
  EXPECT_NE(half.wire_note.find("fp32's fitted cost per wire byte"), std::string::npos);
  // A link the scenario gives is priced by its bytes: no assumption about the fitted one.
  s.link = LinkAlphaBeta(100.0, 0);
  EXPECT_TRUE(Must(Predict(m, s)).wire_note.empty());
}

TEST(Predict, TheWirePrecisionOfTheScriptsOwnHookIsNotAWhatIf) {
  StepModel m = Fitted();
  m.reference.comm_hook = "fp16_compress_hook";
  m.reference.dtype = "fp16";
  Scenario s;
  s.replicas = 8;
  EXPECT_TRUE(Predict(m, s).ok());  // the measured precision, at another replica count
  s.dtype = "fp32";
  const Result<Prediction> p = Predict(m, s);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("own communication hook (fp16_compress_hook)"),
            std::string::npos)
      << p.status().message();
  // A hook recorded in the bucket's bytes: a link what-if says what it priced.
  m.reference.comm_hook = "powerSGD_hook";
  m.reference.dtype = "fp32";
  m.reference.comm_hook_bytes_are_bucket = true;
  s.dtype.reset();
  EXPECT_TRUE(Must(Predict(m, s)).wire_note.empty());
  s.link = LinkAlphaBeta(100.0, 0);
  EXPECT_NE(Must(Predict(m, s)).wire_note.find("(powerSGD_hook) was recorded in the bucket's"),
            std::string::npos);
}

TEST(Predict, TheMemoryFallbackKeepsTheSamplesPerStep) {
  const StepModel m = Fitted();  // 1 MiB of activations per sample, 16 MiB fixed
  Scenario s;
  s.replicas = 4;
  s.batch = 48;
  s.device_memory_gb = 36.0 / 1024;  // room for 20 samples: 16 x 3 keeps the 48
  const Prediction p = Must(Predict(m, s));
  EXPECT_EQ(p.batch, 16);
  EXPECT_EQ(p.accum, 3);
  EXPECT_NE(p.memory_note.find("at most 20"), std::string::npos) << p.memory_note;
  EXPECT_NEAR(p.samples_per_s.value, 4 * 48 / p.step_s.value, 1e-9);
}

}  // namespace
}  // namespace stepscope::model
