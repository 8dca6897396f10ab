#include "model/fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "model/check.h"
#include "model/reduction_fit.h"
#include "model/replay.h"
#include "model/simulate.h"
#include "model/synthetic_testing.h"

namespace stepscope::model {
namespace {

using testing::SyntheticRun;
using testing::Truth;

std::vector<RunObservation> Sweep(const Truth& t, std::vector<int> ns, bool double_batch = true) {
  std::vector<RunObservation> runs;
  for (int n : ns)
    runs.push_back(SyntheticRun(t, "baseline-n" + std::to_string(n), RunRole::kBaseline, n, 8));
  if (double_batch) {
    runs.push_back(SyntheticRun(t, "double_batch-n" + std::to_string(ns.back()),
                                RunRole::kDoubleBatch, ns.back(), 16));
  }
  return runs;
}

TEST(FitStepModel, MemoryFromThePeaksTrainRecorded) {
  const Truth t;  // 4 MiB of fp32 parameters, 1 MiB of activations per sample (layer shapes)
  constexpr Bytes kFixed = 300 << 20, kPerSample = 3 << 20;
  std::vector<RunObservation> runs = Sweep(t, {1, 2, 4});
  // Without a recorded peak: the model's buffers (weights, gradients, two AdamW moments).
  Result<StepModel> sizes = FitStepModel(runs);
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(sizes->memory_fixed, 16 << 20);
  EXPECT_EQ(sizes->memory_per_sample, 1 << 20);
  // The peaks at micro-batch 8 and 16: fixed + per sample x b, both recovered.
  for (RunObservation& r : runs) r.peak_memory_bytes = kFixed + kPerSample * r.config.batch;
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->memory_fixed, kFixed);
  EXPECT_EQ(m->memory_per_sample, kPerSample);
  EXPECT_NE(m->memory_how.find("double_batch-n4"), std::string::npos) << m->memory_how;
  // Only the baselines' peak: per sample from the layer shapes, the rest of the peak fixed.
  runs.back().peak_memory_bytes.reset();
  m = FitStepModel(runs);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->memory_per_sample, 1 << 20);
  EXPECT_EQ(m->memory_fixed, kFixed + kPerSample * 8 - (1 << 20) * 8);
  // A what-if beyond the device memory becomes accumulation by the measured peak: 400 MiB holds
  // (400 - (300 + 3 x 8 - 1 x 8)) / 1 = 84 samples of 1 MiB; 64 x 2 keeps the 128 per step.
  Scenario s;
  s.replicas = 2;
  s.batch = 128;
  s.device_memory_gb = 400.0 / 1024;
  Result<Prediction> p = Predict(*m, s);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->batch, 64);
  EXPECT_EQ(p->accum, 2);
  EXPECT_NE(p->memory_note.find("at most 84"), std::string::npos) << p->memory_note;
}

TEST(FitStepModel, BucketedRunsWaitOnTheBucketedSpreadNotOnWhatAllRanksShare) {
  // Steps alternate +-30 % on every rank together, as bucketed steps change bucket together.
  testing::Truth t;
  t.jitter = 0.3;
  std::vector<RunObservation> runs;
  for (int n : {1, 2, 4}) {
    runs.push_back(
        testing::SyntheticRun(t, "baseline-n" + std::to_string(n), RunRole::kBaseline, n, 8));
  }
  Result<StepModel> plain = FitStepModel(runs);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_GT(plain->compute_jitter.back(), 1.25);  // read as if each rank varied on its own
  // Recorded as bucketed: the ranks of a step differ by the bucketed spread alone (the records
  // carry no tokens, so no noise is known and all of forward and backward scales).
  runs.back().length_buckets = LengthBuckets{true, 0.5, {0.98, 1.0, 1.02}};
  Result<StepModel> bucketed = FitStepModel(runs);
  ASSERT_TRUE(bucketed.ok()) << bucketed.status().message();
  EXPECT_EQ(bucketed->compute_jitter, (std::vector<double>{0.98, 1.0, 1.02}));
  Scenario s;
  s.replicas = 4;
  Result<StepParts> p = SimulateStep(*bucketed, s);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_LT(p->straggler_wait, 0.021 * p->compute);
  // A bucketed run is checked as the bucketed scenario.
  EXPECT_TRUE(ScenarioOf(runs.back()).balance_lengths);
  EXPECT_FALSE(ScenarioOf(runs.front()).balance_lengths);
}

// Variable-length baselines at 1, 2 and 4 replicas whose positions vary from step to step;
// `extra` adds to some ranks' positions (n, rank).
std::vector<RunObservation> VariableLengthSweep(Truth t, std::function<int(int, int)> extra) {
  t.positions = [extra](int n, int r, int s) { return 80 + 10 * (s % 5) + extra(n, r); };
  std::vector<RunObservation> runs = Sweep(t, {1, 2, 4}, false);
  for (RunObservation& r : runs) r.length_buckets = LengthBuckets{false, 0.5, {0.9, 1.0, 1.1}};
  return runs;
}

TEST(FitStepModel, ARankThatDrewLongerExamplesIsNotASlowDevice) {
  // At 4 replicas rank 2 drew 30 more positions every step; at 2, both ranks drew 20 more.
  std::vector<RunObservation> runs = VariableLengthSweep(
      Truth{}, [](int n, int r) { return (n == 4 && r == 2 ? 30 : 0) + (n == 2 ? 20 : 0); });
  std::vector<RunObservation> untokened = runs;
  for (RunObservation& run : untokened) {
    for (StepRecord& r : run.records) r.tokens.reset();
  }
  // Read without the positions: rank 2 is a straggler, and 2 replicas compute slower.
  Result<StepModel> blind = FitStepModel(untokened);
  ASSERT_TRUE(blind.ok()) << blind.status().message();
  EXPECT_EQ(blind->stragglers.count(2), 1u);
  EXPECT_GT(blind->compute_ratio.at(2), 1.05);
  EXPECT_TRUE(blind->drawn.empty());
  // With them: the work its positions explain is the draw, not the device; every N computes
  // at the same speed per position; each run's draw is kept for predicting it as drawn.
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->stragglers.empty());
  for (const auto& [n, ratio] : m->compute_ratio) EXPECT_NEAR(ratio, 1.0, 1e-9) << n;
  ASSERT_TRUE(m->length_buckets.has_value());
  EXPECT_NEAR(m->length_buckets->token_share, 1.0, 1e-9);  // all of it scales
  // The typical rank's positions, pooled over the baselines' steady steps (steps 2 to 11:
  // 80 + 10 (s % 5) averages 100; the 2-replica run 20 more, each a third of the steps).
  EXPECT_NEAR(m->length_buckets->positions, 100 + 20.0 / 3, 1e-9);
  ASSERT_EQ(m->drawn.count("baseline-n4"), 1u);
  const DrawnPositions& d = m->drawn.at("baseline-n4");
  ASSERT_EQ(d.size(), 10u);                                         // the steady steps
  EXPECT_EQ(d.front(), (std::vector<double>{100, 100, 130, 100}));  // step 2
}

TEST(FitStepModel, ASlowDeviceStaysAStragglerForItsPositions) {
  Truth t;
  t.stragglers = {{3, 1.4}};  // at every N that has a rank 3
  Result<StepModel> m = FitStepModel(VariableLengthSweep(t, [](int, int) { return 0; }));
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->stragglers.count(3), 1u);
  EXPECT_NEAR(m->stragglers.at(3), 1.4, 0.05);
  EXPECT_EQ(m->stragglers.size(), 1u);
}

TEST(CheckRun, AVariableLengthRunIsAlsoPredictedForTheLengthsItDrew) {
  Truth t;
  t.positions = [](int, int, int s) { return 80 + 10 * (s % 5); };
  std::vector<RunObservation> runs = VariableLengthSweep(t, [](int, int) { return 0; });
  // A run at 4 replicas that drew 40 % more positions on every rank: the model expects the
  // sampler's lengths and is off by its draw; as drawn, it is not.
  Truth heavy = t;
  heavy.positions = [](int, int, int s) { return 140 + 14 * (s % 5); };
  RunObservation other = SyntheticRun(heavy, "other-n4", RunRole::kOther, 4, 8);
  other.length_buckets = runs.back().length_buckets;
  runs.push_back(other);
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  Result<ModelCheck> c = CheckRun(*m, other);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_GT(c->error, 0.15);
  ASSERT_TRUE(c->as_drawn.has_value());
  EXPECT_LT(std::fabs(c->as_drawn->error), 0.01) << c->as_drawn->error;
  EXPECT_NEAR(c->as_drawn->predicted.value / other.samples_per_s - 1, c->as_drawn->error, 1e-12);
  // A fixed-length run has no draw to take out.
  const std::vector<RunObservation> fixed = Sweep(Truth{}, {1, 2, 4});
  Result<StepModel> plain = FitStepModel(fixed);
  ASSERT_TRUE(plain.ok());
  RunObservation fixed_other = SyntheticRun(Truth{}, "other-n4", RunRole::kOther, 4, 8);
  Result<ModelCheck> fixed_check = CheckRun(*plain, fixed_other);
  ASSERT_TRUE(fixed_check.ok());
  EXPECT_FALSE(fixed_check->as_drawn.has_value());
}

TEST(CheckRun, AHeldOutVariableLengthRunIsPredictedAsDrawnOnceItsLengthsAreKept) {
  // The 4-replica baseline, left out of the fit, drew 40 more positions on every rank.
  std::vector<RunObservation> runs =
      VariableLengthSweep(Truth{}, [](int n, int) { return n == 4 ? 40 : 0; });
  const RunObservation held_out = runs.back();
  runs.pop_back();
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->drawn.count(held_out.name), 0u);
  Result<ModelCheck> blind = CheckRun(*m, held_out);
  ASSERT_TRUE(blind.ok()) << blind.status().message();
  EXPECT_FALSE(blind->as_drawn.has_value());
  // Its lengths (not its timing) kept: checked as drawn too; the fitted runs' draws untouched.
  const DrawnPositions fitted_draw = m->drawn.at(runs.front().name);
  KeepDrawnPositions({held_out, runs.front()}, &*m);
  ASSERT_EQ(m->drawn.count(held_out.name), 1u);
  EXPECT_EQ(m->drawn.at(runs.front().name), fitted_draw);
  Result<ModelCheck> c = CheckRun(*m, held_out);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->as_drawn.has_value());
  EXPECT_EQ(c->error, blind->error);  // the expected prediction does not change: off by the draw
  EXPECT_GT(c->error, 0.10);          // predicted faster than the longer draw ran
  EXPECT_LT(std::fabs(c->as_drawn->error), 0.02) << c->as_drawn->error;
  // A model that did not fit a position's cost keeps no draw.
  Result<StepModel> plain = FitStepModel(Sweep(Truth{}, {1, 2, 4}));
  ASSERT_TRUE(plain.ok());
  KeepDrawnPositions({held_out}, &*plain);
  EXPECT_TRUE(plain->drawn.empty());
}

TEST(RunsAt, AHeldOutCountReachesNoPartOfTheFit) {
  // Baselines at 1, 2 and 4 and a double-batch run at each; the 4-replica runs' reductions cost
  // ten times the latency of the others (a crowded host, say).
  Truth t, slow = t;
  slow.alpha = 10 * t.alpha;
  std::vector<RunObservation> runs;
  for (int n : {1, 2, 4}) {
    const Truth& at = n == 4 ? slow : t;
    runs.push_back(SyntheticRun(at, "baseline-n" + std::to_string(n), RunRole::kBaseline, n, 8));
    runs.push_back(
        SyntheticRun(at, "double_batch-n" + std::to_string(n), RunRole::kDoubleBatch, n, 16));
  }
  const std::vector<RunObservation> fit_set = RunsAt(runs, {1, 2});
  std::vector<std::string> names;
  for (const RunObservation& run : fit_set) names.push_back(run.name);
  EXPECT_EQ(names, (std::vector<std::string>{"baseline-n1", "double_batch-n1", "baseline-n2",
                                             "double_batch-n2"}));
  Result<StepModel> held_out = FitStepModel(fit_set);
  ASSERT_TRUE(held_out.ok()) << held_out.status().message();
  EXPECT_EQ(held_out->fitted_replicas, (std::vector<int>{1, 2}));
  // The reductions are those of N = 2 alone: the fit reproduces their cost exactly.
  const AlphaBeta& ab = held_out->collectives.at("fp32");
  EXPECT_EQ(ab.samples, 2);
  const Seconds at_2 = AllreduceSeconds(ab, 2, t.gradient_bytes);
  EXPECT_NEAR(at_2, 2 * t.alpha + t.gradient_bytes * t.seconds_per_byte, 1e-9);
  // With the double-batch run at 4 (what --fit-on 1,2 kept before), its reductions moved it.
  std::vector<RunObservation> leaky = fit_set;
  leaky.push_back(runs.back());
  Result<StepModel> leaked = FitStepModel(leaky);
  ASSERT_TRUE(leaked.ok()) << leaked.status().message();
  EXPECT_EQ(leaked->collectives.at("fp32").samples, 3);
  EXPECT_GT(AllreduceSeconds(leaked->collectives.at("fp32"), 4, t.gradient_bytes),
            1.5 * AllreduceSeconds(ab, 4, t.gradient_bytes));
}

TEST(CheckRun, ARunThatSharedCoresIsSaidToBeBeyondAFitWithoutCrowding) {
  // Baselines at 1 and 2 replicas on a 2-core host, a held-out one at 4: no fitted baseline
  // shared a core, so the model has no crowding to apply to the one that did.
  std::vector<RunObservation> runs;
  for (int n : {1, 2, 4}) {
    runs.push_back(
        SyntheticRun(Truth{}, "baseline-n" + std::to_string(n), RunRole::kBaseline, n, 8));
    runs.back().ranks_per_host = n, runs.back().cores_per_host = 2;
  }
  Result<StepModel> two = FitStepModel(RunsAt(runs, {1, 2}));
  ASSERT_TRUE(two.ok()) << two.status().message();
  EXPECT_FALSE(two->crowding.has_value());
  const std::optional<std::string> caveat = UnfittedCrowdingCaveat(*two, runs);
  ASSERT_TRUE(caveat.has_value());
  EXPECT_NE(caveat->find("N=4 had more ranks on a host than its 2 cores"), std::string::npos)
      << *caveat;
  // Nothing to say where no run shared cores, or where the model fitted the crowding.
  EXPECT_FALSE(UnfittedCrowdingCaveat(*two, RunsAt(runs, {1, 2})).has_value());
  Result<StepModel> all = FitStepModel(runs);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_TRUE(all->crowding.has_value());
  EXPECT_FALSE(UnfittedCrowdingCaveat(*all, runs).has_value());
  // One replica count that reduced: its latency is not identified, and the notes say so.
  const auto said = [](const StepModel& m, const std::string& what) {
    return std::any_of(m.notes.begin(), m.notes.end(),
                       [&](const std::string& n) { return n.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(said(*two, "measured at one replica count (N=2) only"));
  EXPECT_FALSE(said(*all, "measured at one replica count"));
}

TEST(FitStepModel, RecoversComputeCommunicationAndOverhead) {
  const Truth t;
  Result<StepModel> m = FitStepModel(Sweep(t, {1, 2, 4, 8}));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_NEAR(m->forward_c1.estimate.value, t.forward_per_sample, 1e-9);
  EXPECT_NEAR(m->forward_c0.estimate.value, t.forward_fixed, 1e-9);
  EXPECT_NEAR(m->backward_c1.estimate.value, t.backward_per_sample, 1e-9);
  EXPECT_NEAR(m->backward_c0.estimate.value, t.backward_fixed, 1e-9);
  EXPECT_FALSE(m->forward_c1.assumed);
  EXPECT_NEAR(m->optimizer.estimate.value, t.optimizer, 1e-9);
  EXPECT_NEAR(m->overhead.estimate.value, t.overhead, 1e-9);
  ASSERT_EQ(m->collectives.count("fp32"), 1u);
  EXPECT_NEAR(m->collectives.at("fp32").alpha_s.value, t.alpha, 1e-3 * t.alpha);
  EXPECT_NEAR(m->collectives.at("fp32").seconds_per_byte.value, t.seconds_per_byte,
              1e-3 * t.seconds_per_byte);
  EXPECT_TRUE(m->stragglers.empty());
  EXPECT_TRUE(m->readiness_assumed);  // one bucket per step
  EXPECT_EQ(m->fitted_replicas, (std::vector<int>{1, 2, 4, 8}));
}

// A fixed cost per reduction (launch, scheduling) beside the latency steps: with one bucket size
// at N = 2 and 4 the durations cannot tell the two apart (three terms, two points), and the
// latency fitted takes the fixed cost in, so each added bucket of another bucket size would be
// mispriced. The runs' latency probes (a payload of almost no bytes at each N) identify both.
TEST(FitStepModel, LatencyProbesTellAFixedCostPerReductionFromTheLatency) {
  Truth t;
  t.reduction_fixed = 300e-6;
  std::vector<RunObservation> runs = Sweep(t, {1, 2, 4});
  Result<StepModel> without = FitStepModel(runs);
  ASSERT_TRUE(without.ok()) << without.status().message();
  const AlphaBeta& blind = without->collectives.at("fp32");
  EXPECT_GT(std::abs(blind.alpha_s.value - t.alpha), 0.4 * t.alpha) << blind.how;  // 50 us
  EXPECT_EQ(blind.how.find("latency probes"), std::string::npos);

  AlphaBeta truth;
  truth.alpha_s = Estimate::Exact(t.alpha);
  truth.seconds_per_byte = Estimate::Exact(t.seconds_per_byte);
  truth.fixed_s = Estimate::Exact(t.reduction_fixed);
  for (RunObservation& run : runs) {
    if (run.config.replicas < 2) continue;
    run.latency_probe_bytes = 1024;
    const Seconds probe = AllreduceSeconds(truth, run.config.replicas, 1024);
    run.latency_probe_seconds = {1.2 * probe, probe, probe, 0.9 * probe};  // the median: probe
  }
  Result<StepModel> with = FitStepModel(runs);
  ASSERT_TRUE(with.ok()) << with.status().message();
  const AlphaBeta& seen = with->collectives.at("fp32");
  EXPECT_NEAR(seen.alpha_s.value, t.alpha, 1e-3 * t.alpha) << seen.how;
  EXPECT_NEAR(seen.fixed_s.value, t.reduction_fixed, 1e-3 * t.reduction_fixed);
  EXPECT_NEAR(seen.seconds_per_byte.value, t.seconds_per_byte, 1e-3 * t.seconds_per_byte);
  EXPECT_FALSE(seen.alpha_assumed);
  EXPECT_NE(seen.how.find("3 of them latency probes"), std::string::npos) << seen.how;
  // A run without reduction gives no probe's sample (it has none to give).
  const auto has_probe = [](const RunObservation& run) {
    const std::vector<CollectiveSample> samples = CollectiveSamples(run);
    return std::any_of(samples.begin(), samples.end(),
                       [](const CollectiveSample& c) { return c.probe; });
  };
  EXPECT_TRUE(has_probe(runs[2]));
  runs[2].reduce = false;
  EXPECT_FALSE(has_probe(runs[2]));
}

// Every phase of every record (and each reduction's duration) scaled by its own random factor
// in [1 - spread, 1 + spread], seeded: the noise of a real host, not the alternating jitter.
void AddNoise(std::vector<RunObservation>* runs, double spread, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(1 - spread, 1 + spread);
  for (RunObservation& run : *runs) {
    for (StepRecord& r : run.records) {
      r.forward *= u(rng), r.backward *= u(rng), r.optimizer *= u(rng);
      r.compute = r.forward + r.backward + r.optimizer;
      for (CollectiveRecord& c : r.collectives) c.end = c.start + (c.end - c.start) * u(rng);
    }
  }
}

TEST(FitStepModel, RecoversKnownConstantsFromNoisyRecords) {
  const Truth t;
  for (unsigned seed : {1u, 2u, 3u}) {
    std::vector<RunObservation> runs = Sweep(t, {1, 2, 4, 8});
    AddNoise(&runs, 0.10, seed);  // +-10 % on every phase and reduction
    Result<StepModel> m = FitStepModel(runs);
    ASSERT_TRUE(m.ok()) << m.status().message();
    // The per-sample terms within 10 %, the reductions' bandwidth within 15 %; each band holds
    // or nearly holds the truth (bands are the fit's, not a guarantee).
    const auto near = [](const Constant& c, double truth, double tolerance) {
      const Estimate& e = c.estimate;
      EXPECT_NEAR(e.value, truth, tolerance * truth) << c.name;
      EXPECT_LE(e.low, truth * (1 + tolerance)) << c.name;
      EXPECT_GE(e.high, truth * (1 - tolerance)) << c.name;
    };
    near(m->forward_c1, t.forward_per_sample, 0.10);
    near(m->backward_c1, t.backward_per_sample, 0.10);
    near(m->optimizer, t.optimizer, 0.10);
    const AlphaBeta& ab = m->collectives.at("fp32");
    EXPECT_NEAR(ab.seconds_per_byte.value, t.seconds_per_byte, 0.15 * t.seconds_per_byte);
    // And the fitted model predicts the noisy sweep's own largest point within 10 %.
    Scenario s;
    s.replicas = 8;
    const double predicted = Predict(*m, s)->samples_per_s.value;
    EXPECT_NEAR(predicted / runs[3].samples_per_s, 1.0, 0.10) << "seed " << seed;
  }
}

TEST(FitStepModel, KeepsTheMeasuredBucketLayout) {
  const Truth t;
  std::vector<RunObservation> runs = Sweep(t, {1, 2, 4});
  Result<StepModel> one = FitStepModel(runs);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one->bucket_shares, std::vector<double>{1.0});  // one bucket per step
  // Each step's gradient went out as two buckets, 60 % then 40 % of its bytes (a warm-up step
  // with one bucket does not count).
  for (RunObservation& run : runs) {
    for (StepRecord& r : run.records) {
      if (r.collectives.empty() || r.warmup) continue;
      CollectiveRecord second = r.collectives[0];
      second.index = 1;
      second.bytes = r.collectives[0].bytes * 2 / 5;
      r.collectives[0].bytes -= second.bytes;
      r.collectives.push_back(second);
    }
  }
  Result<StepModel> two = FitStepModel(runs);
  ASSERT_TRUE(two.ok()) << two.status().message();
  ASSERT_EQ(two->bucket_shares.size(), 2u);
  EXPECT_NEAR(two->bucket_shares[0], 0.6, 1e-6);
  EXPECT_NEAR(two->bucket_shares[1], 0.4, 1e-6);
  EXPECT_TRUE(two->slice_shares.empty());  // no run recorded its slices
  // The gradient's slices, as the first run that recorded them has them.
  runs[1].ready_slice_bytes = {1 << 20, 3 << 20};
  Result<StepModel> sliced = FitStepModel(runs);
  ASSERT_TRUE(sliced.ok()) << sliced.status().message();
  EXPECT_EQ(sliced->slice_shares, (std::vector<double>{0.25, 0.75}));
}

TEST(FitStepModel, RecoversTheGradientReadinessWithinBackward) {
  // Two buckets: 60 % of the bytes ready 30 % into backward, the rest at its end.
  std::vector<RunObservation> runs = Sweep(Truth{}, {1, 2, 4});
  for (RunObservation& run : runs) {
    for (StepRecord& r : run.records) {
      if (r.collectives.empty() || !r.backward_start) continue;
      CollectiveRecord first = r.collectives[0];
      first.bytes = r.collectives[0].bytes * 3 / 5;
      first.ready = *r.backward_start + 0.3 * r.backward;
      r.collectives[0].bytes -= first.bytes;
      r.collectives[0].index = 1;
      r.collectives.insert(r.collectives.begin(), first);
    }
  }
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->readiness_assumed);
  bool found = false;
  for (const ReadinessPoint& p : m->readiness) {
    if (std::abs(p.bytes_share - 0.6) < 1e-6) {
      found = true;
      EXPECT_NEAR(p.backward_share, 0.3, 1e-6);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_NEAR(m->readiness.back().bytes_share, 1.0, 1e-9);
  EXPECT_NEAR(m->readiness.back().backward_share, 1.0, 1e-9);
}

TEST(FitStepModel, TheRecordedSlicesIdentifyTheReadinessThatOneBucketCannot) {
  // One bucket per step shows only the end of backward; the slices show the rest: 60 % of the
  // bytes ready 30 % into backward (the median of the baselines that recorded it).
  std::vector<RunObservation> runs = Sweep(Truth{}, {1, 2, 4});
  Result<StepModel> linear = FitStepModel(runs);
  ASSERT_TRUE(linear.ok()) << linear.status().message();
  EXPECT_TRUE(linear->readiness_assumed);
  for (size_t i = 0; i < runs.size(); ++i) {  // the baselines at 1, 2, 4 and the double batch
    runs[i].ready_slice_bytes = {3 << 20, 2 << 20};
    runs[i].ready_slice_share = {i == 1 ? 0.9 : 0.3, 1.0};
  }
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->readiness_assumed);
  EXPECT_NE(m->readiness_how.find("ready_slices_backward_share"), std::string::npos);
  ASSERT_EQ(m->readiness.size(), 3u);
  EXPECT_NEAR(m->readiness[1].backward_share, 0.3, 1e-9);
  EXPECT_NEAR(m->readiness[1].bytes_share, 0.6, 1e-9);
  EXPECT_NEAR(m->readiness[2].backward_share, 1.0, 1e-9);
  EXPECT_NEAR(m->readiness[2].bytes_share, 1.0, 1e-9);
  for (const std::string& note : m->notes) {
    EXPECT_EQ(note.find("readiness within backward not identified"), std::string::npos) << note;
  }
  // A run whose slices differ from the first's does not enter the median.
  runs[1].ready_slice_bytes = {1 << 20, 4 << 20};
  runs[2].ready_slice_share = {0.5, 1.0};
  m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  // The median of the baselines' 0.3 and 0.5 (the double-batch run is not a baseline).
  EXPECT_NEAR(m->readiness[1].backward_share, 0.4, 1e-9);
}

TEST(FitStepModel, TheOverlapRateComesFromTheReductionsBesideBackwardNotTheThroughput) {
  Truth t;
  t.gradient_bytes = 16 << 20;  // reductions longer than backward's second half
  std::vector<RunObservation> runs = Sweep(t, {1, 2, 4, 8});
  // A run at 8 with two buckets a step, the first ready half-way through backward and reduced at
  // half speed beside it; the host ran its compute 30 % slower than in the baselines.
  Truth slower = t;
  for (Seconds* x : {&slower.forward_fixed, &slower.forward_per_sample, &slower.backward_fixed,
                     &slower.backward_per_sample, &slower.optimizer}) {
    *x *= 1.3;
  }
  RunObservation levered =
      SyntheticRun(slower, "lever_overlap_bucketing-n8", RunRole::kOther, 8, 8);
  levered.config.bucket_mb = 8;  // two buckets of 8 MiB
  AlphaBeta ab;
  ab.alpha_s = Estimate::Exact(t.alpha);
  ab.seconds_per_byte = Estimate::Exact(t.seconds_per_byte);
  const Seconds cost = AllreduceSeconds(ab, 8, t.gradient_bytes / 2);
  double steady = 0;
  int steps = 0;
  for (StepRecord& r : levered.records) {
    const Seconds backward = r.backward;
    const ReplayResult replay =
        ReplayReductions({{0.5 * backward, cost}, {backward, cost}}, backward, true, 0.5);
    const Seconds begin = *r.backward_start;
    // The first bucket does a quarter of backward's length of its work beside it, the rest
    // after; the second follows it on the channel.
    ASSERT_GT(cost, 0.25 * backward);
    const Seconds first_end = begin + backward + cost - 0.25 * backward;
    r.collectives = {
        {0, t.gradient_bytes / 2, begin + 0.5 * backward, begin + 0.5 * backward, first_end, 0},
        {1, t.gradient_bytes / 2, begin + backward, first_end, first_end + cost, 0}};
    r.exposed_comm = replay.exposed;
    ASSERT_NEAR(first_end + cost - (begin + backward), replay.exposed, 1e-12);
    r.end = r.start + r.input_wait + r.compute + r.exposed_comm + t.overhead;
    if (!r.warmup && r.rank == 0) steady += r.end - r.start, ++steps;
  }
  levered.samples_per_s = 8.0 * 8 * steps / steady;
  runs.push_back(levered);
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->overlap_rate.assumed);
  EXPECT_NEAR(m->overlap_rate.estimate.value, 0.5, 0.051) << m->overlap_rate.how;
  EXPECT_NE(m->overlap_rate.how.find("ran beside backward"), std::string::npos);
  // The reductions' cost alone: the first bucket's longer duration beside backward is the rate's,
  // not the link's.
  ASSERT_EQ(m->collectives.count("fp32"), 1u);
  EXPECT_NEAR(m->collectives.at("fp32").seconds_per_byte.value, t.seconds_per_byte,
              0.01 * t.seconds_per_byte);
  EXPECT_NEAR(m->collectives.at("fp32").alpha_s.value, t.alpha, 0.05 * t.alpha);

  // Where the reductions that did not overlap cannot give a cost alone (one of them, at one
  // replica count and size: no latency apart from bandwidth), the rate is the one whose replay
  // gives the exposed time.
  std::vector<RunObservation> one_size;
  for (const RunObservation& run : runs) {
    if (run.config.replicas != 8) continue;
    one_size.push_back(run);
    if (run.role != RunRole::kOther) one_size.back().reduce = false;
  }
  m = FitStepModel(one_size);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->overlap_rate.assumed);
  EXPECT_NE(m->overlap_rate.how.find("exposed communication"), std::string::npos)
      << m->overlap_rate.how;
  EXPECT_GE(m->overlap_rate.estimate.value, 0.0);
  EXPECT_LE(m->overlap_rate.estimate.value, 1.0);
}

TEST(FitStepModel, ARunTheLoaderSetDoesNotFitTheOverlapRate) {
  const Truth t;
  std::vector<RunObservation> runs = Sweep(t, {1, 2, 4, 8});
  // A run at 8 that overlapped two buckets per step but waited for its loader most of the step:
  // its step is one loader period whatever the reduction overlapped.
  Truth slow_input = t;
  slow_input.input_wait = 0.2;
  RunObservation levered = SyntheticRun(slow_input, "levers-n8", RunRole::kOther, 8, 8);
  for (StepRecord& r : levered.records) {
    if (r.collectives.empty()) continue;
    CollectiveRecord half = r.collectives.front();
    half.bytes /= 2;
    r.collectives = {half, half};
    r.collectives[1].index = 1;
  }
  runs.push_back(levered);
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->overlap_rate.assumed) << m->overlap_rate.how;
  EXPECT_EQ(m->overlap_rate.estimate.value, 1.0);
  EXPECT_FALSE(m->loader_service.has_value());  // the baselines did not wait
}

TEST(FitStepModel, PredictsAHeldOutReplicaCount) {
  const Truth t;
  Result<StepModel> m = FitStepModel(Sweep(t, {1, 2, 4, 8}));
  ASSERT_TRUE(m.ok());
  const RunObservation held_out = SyntheticRun(t, "baseline-n16", RunRole::kBaseline, 16, 8);
  Result<ModelCheck> c = CheckRun(*m, held_out);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR(c->error, 0.0, 1e-6);
}

TEST(FitStepModel, ALoaderInTheTrainingProcessWaitsInSeries) {
  // A PyTorch DataLoader without workers: every batch is loaded by the training process, its
  // whole time in the step (the synthetic records wait for their batch before the forward). Read
  // as one worker beside the ranks, the loader's "period" was the whole step, and a held-out N
  // whose reduction is longer was predicted with less waiting than it has.
  Truth t;
  t.input_wait = 0.004;
  std::vector<RunObservation> runs = Sweep(t, {1, 2, 4, 8});
  RunObservation held_out = SyntheticRun(t, "baseline-n16", RunRole::kBaseline, 16, 8);
  for (RunObservation* run : {&runs[0], &runs[1], &runs[2], &runs[3], &held_out}) {
    run->config.loader_workers = 0;
  }
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_TRUE(m->loader_service.has_value());
  EXPECT_NEAR(m->loader_service->estimate.value, 0.004, 1e-9);
  EXPECT_NE(m->loader_service->how.find("training process"), std::string::npos);
  Result<ModelCheck> c = CheckRun(*m, held_out);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR(c->error, 0.0, 1e-6);
  // Two workers beside each rank take the loading out of the step.
  Scenario s = ScenarioOf(held_out);
  Result<StepParts> simulated = SimulateStep(*m, s);
  ASSERT_TRUE(simulated.ok());
  const StepParts in_process = *simulated;
  s.loader_workers = 2;
  simulated = SimulateStep(*m, s);
  ASSERT_TRUE(simulated.ok());
  const StepParts workers = *simulated;
  EXPECT_NEAR(in_process.input_wait, 0.004, 1e-9);
  EXPECT_EQ(workers.input_wait, 0.0);
  EXPECT_NEAR(in_process.step() - workers.step(), 0.004, 1e-9);

  // The same records read as one worker beside the ranks: at N=16 the prediction was off.
  for (RunObservation& run : runs) run.config.loader_workers = 1;
  held_out.config.loader_workers = 1;
  Result<StepModel> misread = FitStepModel(runs);
  ASSERT_TRUE(misread.ok());
  Result<ModelCheck> off = CheckRun(*misread, held_out);
  ASSERT_TRUE(off.ok());
  EXPECT_GT(std::fabs(off->error), 0.01);
}

TEST(FitStepModel, TheLoadersServiceGrowsWithTheMicroBatchAsTheDoubleBatchRunShows) {
  // Loading in the training process: 4 ms a batch of 8, 6 ms a batch of 16 (the double-batch
  // run): half the service grows with the micro-batch. Without the double-batch run the service
  // per batch is held whatever the micro-batch.
  Truth t;
  t.input_wait = 0.004;
  std::vector<RunObservation> runs = Sweep(t, {1, 2, 4, 8});
  for (RunObservation& run : runs) {
    run.config.loader_workers = 0;
    if (run.role != RunRole::kDoubleBatch) continue;
    for (StepRecord& r : run.records) r.input_wait = 0.006;
  }
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_TRUE(m->loader_batch_share.has_value());
  EXPECT_NEAR(m->loader_batch_share->estimate.value, 0.5, 1e-6);
  Scenario s;
  s.replicas = 16;
  s.loader_workers = 0;
  auto input_at = [&](const StepModel& model, int batch) {
    s.batch = batch;
    Result<StepParts> p = SimulateStep(model, s);
    EXPECT_TRUE(p.ok());
    return p.ok() ? p->input_wait : -1.0;
  };
  EXPECT_NEAR(input_at(*m, 8), 0.004, 1e-9);
  EXPECT_NEAR(input_at(*m, 16), 0.006, 1e-9);
  EXPECT_NEAR(input_at(*m, 32), 0.010, 1e-9);
  std::vector<RunObservation> no_double;
  for (const RunObservation& run : runs) {
    if (run.role != RunRole::kDoubleBatch) no_double.push_back(run);
  }
  Result<StepModel> held = FitStepModel(no_double);
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_FALSE(held->loader_batch_share.has_value());
  EXPECT_NEAR(input_at(*held, 16), 0.004, 1e-9);
}

TEST(FitStepModel, EachMeasuredReplicaCountKeepsItsLoadersService) {
  // Loader workers beside the ranks, the loader binding: the service per batch measured at each
  // N (its workers share the host's cores with the ranks, so it moves with N) reproduces that
  // N's step; another N takes the mean.
  Truth t;
  t.input_wait = 0.004;
  std::vector<RunObservation> runs = Sweep(t, {1, 2});
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_TRUE(m->loader_service.has_value());
  ASSERT_EQ(m->loader_service_at.size(), 2u);
  EXPECT_GT(m->loader_service_at.at(2).value, m->loader_service_at.at(1).value);
  for (const RunObservation& run : runs) {
    if (run.role != RunRole::kBaseline) continue;
    Result<ModelCheck> c = CheckRun(*m, run);
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_NEAR(c->error, 0.0, 1e-6) << run.name;
  }
  bool noted = false;
  for (const std::string& note : m->notes)
    noted |= note.find("loader's service") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(FitStepModel, AccumulatingRunsArePredictedAsMeasured) {
  // Two micro-batches a step: the records' phases are per step, the fitted constants per
  // micro-batch. Each baseline's compute is its pool's (ratio 1): taking the step's compute over
  // one micro-batch's had doubled the compute predicted at every measured N.
  Truth t;
  t.accum = 2;
  const std::vector<RunObservation> runs = Sweep(t, {1, 2, 4, 8});
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->reference.accum, 2);
  EXPECT_NEAR(m->forward_c1.estimate.value, t.forward_per_sample, 1e-9);
  EXPECT_NEAR(m->backward_c0.estimate.value, t.backward_fixed, 1e-9);
  for (const auto& [n, ratio] : m->compute_ratio) EXPECT_NEAR(ratio, 1.0, 1e-9) << "N=" << n;
  for (const RunObservation& run : runs) {
    if (run.role != RunRole::kBaseline) continue;
    Scenario s;
    s.replicas = run.config.replicas;
    Result<Prediction> p = Predict(*m, s);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_NEAR(p->samples_per_s.value / run.samples_per_s, 1.0, 1e-6) << run.name;
  }
  Result<ModelCheck> c = CheckRun(*m, SyntheticRun(t, "baseline-n16", RunRole::kBaseline, 16, 8));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR(c->error, 0.0, 1e-6);
}

// A sweep on one 2-core host whose overhead grows 2 ms per rank per core beyond one.
RunObservation CrowdedRun(int n, RunRole role, int batch, int cores) {
  Truth t;
  t.overhead = 0.001 + 0.002 * std::max(0.0, n / 2.0 - 1);
  RunObservation run = SyntheticRun(t, "baseline-n" + std::to_string(n), role, n, batch);
  run.ranks_per_host = n;
  run.cores_per_host = cores;
  return run;
}

TEST(FitStepModel, RanksThatOutnumberTheCoresStretchTheOverhead) {
  for (const int cores : {2, 0}) {  // 0: run.json said nothing of the cores
    std::vector<RunObservation> runs;
    for (int n : {1, 2, 4, 8}) runs.push_back(CrowdedRun(n, RunRole::kBaseline, 8, cores));
    runs.push_back(CrowdedRun(8, RunRole::kDoubleBatch, 16, cores));
    Result<StepModel> m = FitStepModel(runs);
    ASSERT_TRUE(m.ok()) << m.status().message();
    Result<ModelCheck> c = CheckRun(*m, CrowdedRun(16, RunRole::kBaseline, 8, cores));
    ASSERT_TRUE(c.ok()) << c.status().message();
    if (cores == 2) {
      ASSERT_TRUE(m->crowding.has_value());
      EXPECT_NEAR(m->crowding->overhead_b.estimate.value, 0.002, 1e-6);
      EXPECT_NEAR(c->error, 0.0, 1e-3);
      // Spread over hosts of 2 devices, no rank shares a core: the uncrowded overhead.
      Scenario spread;
      spread.replicas = 16;
      spread.devices_per_host = 2;
      AlphaBeta link;
      link.alpha_s = {1e-5, 1e-5, 1e-5};
      link.seconds_per_byte = {1e-10, 1e-10, 1e-10};
      spread.inter_link = link;
      Result<StepParts> p = SimulateStep(*m, spread);
      ASSERT_TRUE(p.ok()) << p.status().message();
      EXPECT_NEAR(p->overhead, 0.001, 1e-6);
      // 16 devices bought, nothing said of their hosts: hosts like the largest run's (8 ranks on
      // 2 cores), not 16 ranks crowding the same 2 cores.
      Scenario more;
      more.replicas = 16;
      Result<StepParts> q = SimulateStep(*m, more);
      ASSERT_TRUE(q.ok()) << q.status().message();
      EXPECT_NEAR(q->overhead, 0.001 + 0.002 * 3, 1e-6);
    } else {
      EXPECT_FALSE(m->crowding.has_value());
      EXPECT_GT(c->error, 0.05);  // the pooled overhead misses 16 ranks on 2 cores
    }
  }
}

TEST(FitStepModel, WhatACrowdedHostAddsBeyondTheRecordedPartsFollowsTheCrowding) {
  // The crowded runs' steps are 3 ms per rank per core beyond one longer than their records'
  // parts say (the ranks waking one after another once a reduction ends): the model reproduces
  // the fitted steps and predicts 16 ranks on the same host.
  const auto hidden = [](int n, RunRole role, int batch) {
    RunObservation run = CrowdedRun(n, role, batch, 2);
    const double samples = static_cast<double>(n) * batch;
    // At 2 ranks (a core each) 5 ms more too: not the crowding's, so no line carries it.
    const double step =
        samples / run.samples_per_s + 0.003 * std::max(0.0, n / 2.0 - 1) + (n == 2 ? 0.005 : 0);
    run.samples_per_s = samples / step;
    return run;
  };
  std::vector<RunObservation> runs;
  for (int n : {1, 2, 4, 8}) runs.push_back(hidden(n, RunRole::kBaseline, 8));
  runs.push_back(CrowdedRun(8, RunRole::kDoubleBatch, 16, 2));
  Result<StepModel> m = FitStepModel(runs);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_TRUE(m->crowding.has_value());
  EXPECT_NEAR(m->crowding->overhead_b.estimate.value, 0.002 + 0.003, 1e-6);
  EXPECT_NEAR(m->crowding->overhead_a.estimate.value, 0.001, 1e-6);
  // The residual alone, as a line of its own (what a link what-if scales).
  ASSERT_TRUE(m->crowding->residual_b.has_value());
  EXPECT_NEAR(m->crowding->residual_b->estimate.value, 0.003, 1e-6);
  EXPECT_NEAR(m->crowding->residual_a->estimate.value, 0.0, 1e-6);
  // Said, per crowded baseline: 3 ms per rank per core beyond one (8 ranks on 2 cores: 9 ms).
  bool said = false;
  for (const std::string& note : m->notes) {
    said |= note.find("+9.0 ms at N=8") != std::string::npos;
    EXPECT_EQ(note.find("N=2"), std::string::npos) << note;
  }
  EXPECT_TRUE(said);
  for (int n : {4, 8, 16}) {
    Result<ModelCheck> c = CheckRun(*m, hidden(n, RunRole::kBaseline, 8));
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_NEAR(c->error, 0.0, 1e-3) << n;
  }
}

TEST(FitStepModel, WithoutTheDoubleBatchRunComputeIsProportionalAndSaidSo) {
  Result<StepModel> m = FitStepModel(Sweep(Truth{}, {1, 2}, false));
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->forward_c1.assumed);
  EXPECT_EQ(m->forward_c0.estimate.value, 0.0);
  EXPECT_NEAR(m->forward_c1.estimate.value, (0.002 + 0.008) / 8, 1e-9);
}

TEST(FitStepModel, NamesAPersistentStragglerAndItsFactor) {
  Truth t;
  t.stragglers = {{1, 1.5}};
  Result<StepModel> m = FitStepModel(Sweep(t, {1, 2, 4}));
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->stragglers.size(), 1u);
  EXPECT_NEAR(m->stragglers.at(1), 1.5, 1e-9);
  Scenario s;
  s.replicas = 8;
  Result<StepParts> with = SimulateStep(*m, s);
  s.without_stragglers = true;
  Result<StepParts> without = SimulateStep(*m, s);
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_NEAR(with->straggler_wait, 0.5 * (0.010 + 0.020 + 0.003), 1e-9);
  EXPECT_NEAR(without->straggler_wait, 0.0, 1e-12);
}

TEST(FitStepModel, JitterMakesTheStepWaitForTheSlowestOfN) {
  Truth t;
  t.jitter = 0.1;
  Result<StepModel> m = FitStepModel(Sweep(t, {1, 2}));
  ASSERT_TRUE(m.ok());
  Scenario s;
  s.replicas = 1;
  Result<StepParts> one = SimulateStep(*m, s);
  s.replicas = 1024;
  Result<StepParts> many = SimulateStep(*m, s);
  ASSERT_TRUE(one.ok() && many.ok());
  EXPECT_NEAR(one->straggler_wait, 0.0, 1e-12);
  // The slowest of 1024 is (almost surely) a x1.1 step: 10 % of its compute waits.
  const double all = m->forward_c0.estimate.value + m->forward_c1.estimate.value * 8 +
                     m->backward_c0.estimate.value + m->backward_c1.estimate.value * 8 +
                     m->optimizer.estimate.value;
  EXPECT_NEAR(many->straggler_wait, all * (1.1 / 1.0 - 1), 0.01 * all);
}

// The reductions' own CPU per byte comes from the shared-memory baselines with a core per rank,
// no more than their timed reductions (a rank that spun before every arrival is capped), and
// never from a run whose reductions a link emulation paced, or a wire's all-reduce.
TEST(FitStepModel, TheReductionsCpuPerByteFromARankPerCore) {
  const testing::Truth t;
  auto runs_with = [&](const std::string& algorithm, bool emulated_link) {
    std::vector<RunObservation> runs;
    for (int n : {1, 2, 4}) {
      RunObservation run =
          testing::SyntheticRun(t, "baseline-n" + std::to_string(n), RunRole::kBaseline, n, 8);
      run.config.algorithm = algorithm;
      run.emulated_link = emulated_link;
      run.ranks_per_host = n;
      run.cores_per_host = 2;
      run.cpu_outside_reductions_per_step = 0.01;
      run.cpu_in_reductions_least_rank = 1.0;  // far over the timed reductions: spinning
      runs.push_back(run);
    }
    return runs;
  };
  Result<StepModel> m = FitStepModel(runs_with("shm", false));
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_TRUE(m->host_cpu && m->host_cpu->reduction_per_byte) << "no reduction CPU fitted";
  // N = 2 has a core per rank (N = 4 does not): its timed reduction over its bytes.
  const Seconds timed = 2 * t.alpha + t.gradient_bytes * t.seconds_per_byte;
  EXPECT_NEAR(m->host_cpu->reduction_per_byte->estimate.value, timed / t.gradient_bytes,
              1e-6 * timed / t.gradient_bytes);
  bool said = false;
  for (const std::string& note : m->notes) {
    said = said || note.find("a shared-memory reduction takes at least") != std::string::npos;
  }
  EXPECT_TRUE(said);
  for (const auto& [algorithm, emulated] :
       std::vector<std::pair<std::string, bool>>{{"shm", true}, {"ring", false}}) {
    m = FitStepModel(runs_with(algorithm, emulated));
    ASSERT_TRUE(m.ok() && m->host_cpu) << algorithm;
    EXPECT_FALSE(m->host_cpu->reduction_per_byte) << algorithm << (emulated ? " emulated" : "");
  }
}

TEST(FitStepModel, ClearErrors) {
  std::vector<RunObservation> runs = Sweep(Truth{}, {1, 2});
  for (RunObservation& r : runs) r.role = RunRole::kOther;
  Result<StepModel> none = FitStepModel(runs);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no baseline"), std::string::npos);

  runs = Sweep(Truth{}, {1, 2});
  runs[0].config.dtype = "bf16";
  Result<StepModel> mixed = FitStepModel(runs);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("baseline-n1 differs"), std::string::npos);

  runs = Sweep(Truth{}, {1, 2});
  for (StepRecord& r : runs[0].records) r.warmup = true;
  Result<StepModel> empty = FitStepModel(runs);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("baseline-n1 has no steady"), std::string::npos);
}

TEST(CheckRuns, ChecksOnlyWhatTheFitDidNotUse) {
  const Truth t;
  std::vector<RunObservation> runs = Sweep(t, {1, 2, 4, 8, 16});
  std::vector<RunObservation> fit_on(runs.begin(), runs.begin() + 3);  // N = 1, 2, 4
  Result<StepModel> m = FitStepModel(fit_on);
  ASSERT_TRUE(m.ok());
  const std::vector<ModelCheck> checks = CheckRuns(*m, runs);
  ASSERT_EQ(checks.size(), 2u);  // baselines at 8 and 16 (the double batch is fitted on)
  EXPECT_EQ(checks[0].run, "baseline-n8");
  EXPECT_EQ(checks[1].run, "baseline-n16");
  EXPECT_LT(WorstAbsoluteError(checks), 1e-6);
}

}  // namespace
}  // namespace stepscope::model
