// Ground truths for the verdict: synthetic sweeps whose cause is known by construction.
#include "decide/verdict.h"

#include <gtest/gtest.h>

#include "decide/build_diagnosis.h"
#include "decide/synthetic_run_set.h"

namespace stepscope::decide {
namespace {

// A sweep over `ns` with the three ablations at every replica count. `at` adjusts the spec
// for a replica count (e.g. transfer that grows with N).
template <typename Adjust>
std::vector<RunSet> Sweep(const analysis::SyntheticRunSpec& base, std::vector<int> ns, Adjust at) {
  std::vector<RunSet> runs;
  for (int n : ns) {
    analysis::SyntheticRunSpec spec = base;
    spec.replicas = n;
    spec.seed = base.seed * 1000 + n;
    at(n, &spec);
    runs.push_back(SynthesizeRunSet(spec));
  }
  return runs;
}

Diagnosis Diagnose(const std::vector<RunSet>& runs, const DiagnoseOptions& options = {}) {
  Result<Diagnosis> d = BuildDiagnosis(runs, options);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return std::move(d).value();
}

bool HasLever(const Verdict& v, Lever lever) {
  for (const LeverAdvice& l : v.levers) {
    if (l.lever == lever) return true;
  }
  return false;
}

TEST(Verdict, CommunicationHeavy) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.jitter = 0.02;
  const Diagnosis d = Diagnose(Sweep(base, {1, 2, 4, 8}, [](int n, analysis::SyntheticRunSpec* s) {
    s->bucket_time = 0.008 * 2.0 * (n - 1) / n;  // ring all-reduce of a large model
  }));
  EXPECT_EQ(d.verdict.binding, Binding::kCommunication);
  EXPECT_TRUE(d.verdict.straggler_ranks.empty());
  EXPECT_LT(d.points.back().scaling.efficiency, 0.5);
  EXPECT_EQ(d.points.back().ablations.agree, true) << d.points.back().ablations.sentence;
  bool confirmed = false;
  for (const std::string& e : d.verdict.evidence) {
    confirmed = confirmed || e.find("no_reduce ablation confirms") != std::string::npos;
  }
  EXPECT_TRUE(confirmed);
  EXPECT_TRUE(HasLever(d.verdict, Lever::kBiggerMicroBatch));
  EXPECT_TRUE(HasLever(d.verdict, Lever::kLowPrecisionReduction));
  EXPECT_EQ(d.verdict.decision, Decision::kPullLevers);
  ASSERT_TRUE(d.attribution.has_value());
  EXPECT_EQ(d.attribution->lines[3].component, Component::kTransfer);
  EXPECT_GT(d.attribution->lines[3].devices, 0.7 * d.attribution->lost_devices);
}

// A script that synchronises its ranks each step outside DDP (a barrier, a loss all-reduced to
// log it): the helper records the time blocked there as script_comm, a part of the overhead
// that the evidence names; without it the overhead is only overhead.
TEST(Verdict, TheScriptsOwnCollectivesAreNamedInTheOverhead) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.bucket_time = 0.0002;
  auto at = [](int n, analysis::SyntheticRunSpec* s) { s->overhead = n > 1 ? 0.004 : 0.0005; };
  std::vector<RunSet> runs = Sweep(base, {1, 2, 4}, at);
  const auto mentions = [](const Verdict& v) {
    for (const std::string& e : v.evidence) {
      if (e.find("in the job's own collectives") != std::string::npos) return e;
    }
    return std::string();
  };
  EXPECT_EQ(mentions(Diagnose(runs).verdict), "");
  for (size_t i = 1; i < runs.size(); ++i) {  // at 2 and 4 replicas
    for (StepRecord& r : runs[i].baseline) r.script_comm = 0.003;
  }
  const Diagnosis d = Diagnose(runs);
  EXPECT_EQ(d.verdict.binding, Binding::kOverhead) << d.verdict.explanation;
  EXPECT_NEAR(d.points.back().decomposition.job.script_comm, 0.003, 1e-4);
  EXPECT_LE(d.points.back().decomposition.job.script_comm,
            d.points.back().decomposition.job.overhead);
  EXPECT_NE(mentions(d.verdict).find("is blocked 3.00 ms per step"), std::string::npos)
      << mentions(d.verdict);
  // Written to diagnosis.json and read back.
  Result<Diagnosis> back = DiagnosisFromJson(ToJson(d));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back->points.back().decomposition.job.script_comm,
                   d.points.back().decomposition.job.script_comm);
}

TEST(Verdict, TheWirePrecisionOfTheScriptsOwnHookIsNotALever) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.jitter = 0.02;
  DiagnoseOptions options;
  options.verdict.script_comm_hook = "fp16_compress_hook";
  const Diagnosis d = Diagnose(Sweep(base, {1, 2, 4, 8},
                                     [](int n, analysis::SyntheticRunSpec* s) {
                                       s->bucket_time = 0.008 * 2.0 * (n - 1) / n;
                                     }),
                               options);
  EXPECT_EQ(d.verdict.binding, Binding::kCommunication);
  EXPECT_TRUE(HasLever(d.verdict, Lever::kBiggerMicroBatch));
  EXPECT_FALSE(HasLever(d.verdict, Lever::kLowPrecisionReduction));
  bool said = false;
  for (const std::string& e : d.verdict.evidence) {
    said = said || e.find("own communication hook (fp16_compress_hook)") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(Verdict, InputBound) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.input_wait = 0.015;
  base.bucket_time = 0.0003;
  base.jitter = 0.02;
  const Diagnosis d = Diagnose(Sweep(base, {1, 2, 4}, [](int, analysis::SyntheticRunSpec*) {}));
  // The same input wait at every replica count holds every device back but loses nothing to
  // scaling: a throughput constraint beside a near-linear curve, not the binding one.
  EXPECT_EQ(d.verdict.binding, Binding::kNone);
  EXPECT_EQ(d.verdict.throughput_constraint, Binding::kInput);
  ASSERT_FALSE(d.verdict.levers.empty());
  EXPECT_EQ(d.verdict.levers.front().lever, Lever::kLoaderWorkersPrefetch);
  EXPECT_EQ(d.verdict.decision, Decision::kPullLevers);
  EXPECT_EQ(d.points.back().ablations.agree, true);
}

TEST(Verdict, StragglerNamedByRank) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.bucket_time = 0.0005;
  base.buckets = 2;
  base.jitter = 0.02;
  base.rank_compute_factor[2] = 1.5;
  const Diagnosis d = Diagnose(Sweep(base, {1, 2, 4}, [](int, analysis::SyntheticRunSpec*) {}));
  EXPECT_EQ(d.verdict.binding, Binding::kStragglers);
  EXPECT_EQ(d.verdict.straggler_ranks, std::vector<int>{2});
  EXPECT_TRUE(HasLever(d.verdict, Lever::kRemoveStraggler));
  EXPECT_NE(d.verdict.explanation.find("rank(s) 2"), std::string::npos) << d.verdict.explanation;
}

TEST(Verdict, InputThatGrowsWithReplicasBinds) {
  // The loader shares the host with the replicas: input wait grows with N.
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.bucket_time = 0.0003;
  base.jitter = 0.02;
  const Diagnosis d = Diagnose(Sweep(base, {1, 2, 4}, [](int n, analysis::SyntheticRunSpec* s) {
    s->input_wait = 0.004 * (n - 1);
  }));
  EXPECT_EQ(d.verdict.binding, Binding::kInput) << d.verdict.explanation;
  EXPECT_EQ(d.verdict.throughput_constraint, Binding::kNone);
  EXPECT_TRUE(d.verdict.straggler_ranks.empty());
}

TEST(Verdict, ASteadyRankDifferenceAtNearLinearScalingIsNotABinding) {
  // The 1-replica run came out slower than the 2-replica job's fast rank (host noise), and
  // rank 1 is steadily 20% slower than rank 0: it is named, but nothing was lost by scaling.
  analysis::SyntheticRunSpec base;
  base.bucket_time = 0.0003;
  base.jitter = 0.01;
  const Diagnosis d = Diagnose(Sweep(base, {1, 2}, [](int n, analysis::SyntheticRunSpec* s) {
    s->compute = n == 1 ? 0.0118 : 0.010;
    if (n == 2) s->rank_compute_factor[1] = 1.2;
  }));
  EXPECT_GT(d.points.back().scaling.efficiency, 0.9);
  EXPECT_EQ(d.verdict.straggler_ranks, std::vector<int>{1});
  EXPECT_EQ(d.verdict.binding, Binding::kNone) << d.verdict.explanation;
}

TEST(Verdict, RotatingImbalanceIsNotCommunication) {
  // Work varies per rank and step (variable-length inputs): a different rank is slowest each
  // step, no rank consistently so.
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.bucket_time = 0.0003;
  base.jitter = 0.6;
  const Diagnosis d = Diagnose(Sweep(base, {1, 4}, [](int, analysis::SyntheticRunSpec*) {}));
  EXPECT_LT(d.points.back().scaling.efficiency, 0.9);
  EXPECT_TRUE(d.verdict.straggler_ranks.empty());
  EXPECT_EQ(d.verdict.binding, Binding::kImbalance) << d.verdict.explanation;
}

TEST(Verdict, ImbalanceAdvisesBalancedLengths) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.bucket_time = 0.0003;
  base.jitter = 0.6;
  const Diagnosis d = Diagnose(Sweep(base, {1, 4}, [](int, analysis::SyntheticRunSpec*) {}));
  ASSERT_EQ(d.verdict.binding, Binding::kImbalance) << d.verdict.explanation;
  ASSERT_TRUE(HasLever(d.verdict, Lever::kBalanceLengths));
  const double imbalance = [&] {
    for (const BindingLoss& l : d.verdict.losses)
      if (l.binding == Binding::kImbalance) return l.seconds;
    return 0.0;
  }();
  const analysis::Decomposition& at4 = d.points.back().decomposition;
  for (const LeverAdvice& l : d.verdict.levers) {
    if (l.lever != Lever::kBalanceLengths) continue;
    // The gain of removing the imbalance seconds from the step.
    EXPECT_NEAR(l.expected_samples_per_s, at4.samples_per_step / (at4.job.step - imbalance), 1e-6);
    EXPECT_NE(l.action.find("--balance-lengths"), std::string::npos);
  }
}

TEST(Verdict, CriticalPathPutsTheStragglersWorkInItsComponentsAndItsLossInStragglers) {
  // Rank 2 computes 1.5x as long with two buckets: the job's components come from rank 2,
  // the rank everybody waited for, so the job has no sync wait and rank 2's compute.
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.bucket_time = 0.0005;
  base.buckets = 2;
  base.rank_compute_factor[2] = 1.5;
  const Diagnosis d = Diagnose(Sweep(base, {1, 4}, [](int, analysis::SyntheticRunSpec*) {}));
  const analysis::Components& job = d.points.back().decomposition.job;
  EXPECT_NEAR(job.compute, 0.015, 1e-9);
  EXPECT_NEAR(job.sync_wait, 0.0, 1e-9);
  EXPECT_NEAR(job.compute + job.input_wait + job.sync_wait + job.transfer + job.overhead, job.step,
              1e-12);
  EXPECT_EQ(d.verdict.binding, Binding::kStragglers) << d.verdict.explanation;
  // The waterfall sums exactly without a residual; by cause, the 5 ms are the straggler's.
  ASSERT_TRUE(d.attribution.has_value());
  double sum = 0;
  for (const analysis::WaterfallLine& l : d.attribution->lines) {
    EXPECT_NE(l.component, Component::kResidual);
    sum += l.devices;
  }
  EXPECT_NEAR(sum, d.attribution->lost_devices, 1e-9);
  for (const BindingLoss& l : d.verdict.losses) {
    if (l.binding == Binding::kStragglers) {
      EXPECT_NEAR(l.seconds, 0.005, 1e-9);
    } else if (l.binding == Binding::kCompute) {
      EXPECT_NEAR(l.seconds, 0.0, 1e-9);
    }
  }
}

// Rotating imbalance at 4 replicas (compute +-60% per rank and step) with one bucket whose
// transfer takes `transfer_in_imbalances` times the imbalance loss. The compute draws do not
// depend on the bucket time, so the imbalance loss is the same in every sweep.
Diagnosis ImbalanceBesideTransfer(double transfer_in_imbalances, bool ablations = true) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.jitter = 0.6;
  base.bucket_time = 0.0001;
  auto imbalance_of = [](const Diagnosis& d) {
    for (const BindingLoss& l : d.verdict.losses)
      if (l.binding == Binding::kImbalance) return l.seconds;
    return 0.0;
  };
  const double imbalance =
      imbalance_of(Diagnose(Sweep(base, {1, 4}, [](int, analysis::SyntheticRunSpec*) {})));
  EXPECT_GT(imbalance, 0.001);
  std::vector<RunSet> runs = Sweep(base, {1, 4}, [&](int n, analysis::SyntheticRunSpec* s) {
    s->bucket_time = n == 1 ? 0.0001 : imbalance * transfer_in_imbalances;
  });
  for (RunSet& set : runs) {
    if (!ablations) set.no_reduce.reset(), set.synthetic_input.reset(), set.double_batch.reset();
  }
  return Diagnose(runs);
}

TEST(Verdict, TwoCausesWithinTheNoiseAreInconclusive) {
  // Transfer grew by exactly the imbalance loss: the imbalance's bootstrap interval holds the
  // transfer's, so neither can be named.
  const Diagnosis d = ImbalanceBesideTransfer(1.0);
  ASSERT_EQ(d.verdict.binding, Binding::kInconclusive) << d.verdict.explanation;
  ASSERT_GE(d.verdict.candidates.size(), 2u);
  bool comm = false, imbalance = false;
  for (const BindingCandidate& c : d.verdict.candidates) {
    comm = comm || c.binding == Binding::kCommunication;
    imbalance = imbalance || c.binding == Binding::kImbalance;
    EXPECT_LE(c.seconds.low, c.seconds.value);
    EXPECT_GE(c.seconds.high, c.seconds.value);
    EXPECT_GT(c.devices.value, 0);
  }
  EXPECT_TRUE(comm && imbalance);
  EXPECT_EQ(d.verdict.explanation.find("overhead"), std::string::npos) << d.verdict.explanation;
  EXPECT_NE(d.verdict.explanation.find("within the noise"), std::string::npos);
  // The no-reduce ablation ran at 4 and did not separate them: more steps or repeats may.
  EXPECT_EQ(d.verdict.explanation.find("run the no-reduce ablation"), std::string::npos)
      << d.verdict.explanation;
  EXPECT_NE(d.verdict.explanation.find("To separate them, run more steps or repeated runs"),
            std::string::npos)
      << d.verdict.explanation;
  // Without the ablations, the advice is to run the one that separates them.
  const Diagnosis without = ImbalanceBesideTransfer(1.0, /*ablations=*/false);
  ASSERT_EQ(without.verdict.binding, Binding::kInconclusive) << without.verdict.explanation;
  EXPECT_NE(without.verdict.explanation.find("To separate them, run the no-reduce ablation"),
            std::string::npos)
      << without.verdict.explanation;
  // The candidates survive the JSON round trip.
  Result<Diagnosis> back = DiagnosisFromString(DiagnosisToString(d));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->verdict.candidates.size(), d.verdict.candidates.size());
  EXPECT_EQ(back->verdict.candidates[0].binding, d.verdict.candidates[0].binding);
  EXPECT_DOUBLE_EQ(back->verdict.candidates[0].seconds.low, d.verdict.candidates[0].seconds.low);
}

TEST(Verdict, ACauseWellAboveTheNoiseIsNamed) {
  const Diagnosis d = ImbalanceBesideTransfer(3.0);
  EXPECT_EQ(d.verdict.binding, Binding::kCommunication) << d.verdict.explanation;
  EXPECT_TRUE(d.verdict.candidates.empty());
}

TEST(Verdict, RepeatsNarrowTheIntervalsUntilACauseStandsClear) {
  // Transfer grew by 1.2 times the imbalance loss: within one run's noise of each other, but
  // the mean of six runs (the first and five repeats, other draws of the same jitter) is not.
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.jitter = 0.6;
  base.bucket_time = 0.0001;
  const double imbalance = [&] {
    const Diagnosis d = Diagnose(Sweep(base, {1, 4}, [](int, analysis::SyntheticRunSpec*) {}));
    for (const BindingLoss& l : d.verdict.losses)
      if (l.binding == Binding::kImbalance) return l.seconds;
    return 0.0;
  }();
  std::vector<RunSet> runs = Sweep(base, {1, 4}, [&](int n, analysis::SyntheticRunSpec* s) {
    s->bucket_time = n == 1 ? 0.0001 : 1.2 * imbalance;
  });
  const Diagnosis once = Diagnose(runs);
  EXPECT_EQ(once.verdict.binding, Binding::kInconclusive) << once.verdict.explanation;
  for (int k = 2; k <= 6; ++k) {
    analysis::SyntheticRunSpec again = base;
    again.replicas = 4;
    again.seed = 7000 + k;
    again.bucket_time = 1.2 * imbalance;
    runs.back().repeats.push_back(SynthesizeRunSet(again).baseline);
  }
  const Diagnosis repeated = Diagnose(runs);
  EXPECT_EQ(repeated.verdict.binding, Binding::kCommunication) << repeated.verdict.explanation;
  // The imbalance's interval (the transfer is exact here: no noise on the synthetic link).
  const BindingLoss& imbalance_once = once.verdict.losses[2];
  const BindingLoss& imbalance_six = repeated.verdict.losses[2];
  ASSERT_EQ(imbalance_six.binding, Binding::kImbalance);
  EXPECT_LT(imbalance_six.estimate.high - imbalance_six.estimate.low,
            imbalance_once.estimate.high - imbalance_once.estimate.low);
}

// The straggler lever's action by the kind of slowness: a rank slow in every step is fixed or
// excluded; one slow in bursts (40 ms in every other step) points at what shares its host.
std::string StragglerAction(bool bursts) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.jitter = 0.01;
  std::vector<RunSet> runs = Sweep(base, {1, 4}, [&](int n, analysis::SyntheticRunSpec* s) {
    if (n == 4 && !bursts) s->rank_compute_factor[2] = 1.8;
  });
  if (bursts) {
    for (StepRecord& r : runs.back().baseline) {
      const Seconds extra = r.rank == 2 && r.step % 2 == 0 ? 0.016 : 0.0;
      r.compute += extra, r.forward += extra, r.end += extra;
      for (CollectiveRecord& c : r.collectives) c.ready += extra, c.start += extra;
    }
  }
  const Diagnosis d = Diagnose(runs);
  EXPECT_EQ(d.verdict.straggler_ranks, std::vector<int>{2}) << d.verdict.explanation;
  for (const LeverAdvice& l : d.verdict.levers) {
    if (l.lever == Lever::kRemoveStraggler) return l.action;
  }
  return "";
}

TEST(Verdict, TheStragglerLeverFollowsTheKindOfSlowness) {
  EXPECT_NE(StragglerAction(false).find("fix or exclude straggler rank(s) 2"), std::string::npos);
  EXPECT_NE(StragglerAction(true).find("find what shares rank(s) 2's host in bursts"),
            std::string::npos);
}

// The communication-heavy sweep with the pacing of its runs as run.json reports it.
Diagnosis CommunicationWithPacing(int64_t unhonoured_of_1000) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  std::vector<RunSet> runs = Sweep(base, {1, 4}, [](int n, analysis::SyntheticRunSpec* s) {
    s->bucket_time = 0.008 * 2.0 * (n - 1) / n;
  });
  for (RunSet& r : runs) {
    EmulationHonesty h;
    h.paced_segments = 1000;
    h.unhonoured_segments = unhonoured_of_1000;
    r.honesty = h;
  }
  return Diagnose(runs);
}

TEST(Verdict, UnhonouredEmulationNamesNoCause) {
  const Diagnosis d = CommunicationWithPacing(200);  // 20% of the segments ran too slow
  EXPECT_EQ(d.verdict.binding, Binding::kInconclusive);
  EXPECT_NE(d.verdict.explanation.find("could not honour"), std::string::npos)
      << d.verdict.explanation;
  ASSERT_FALSE(d.warnings.empty());
  bool warned = false;
  for (const std::string& w : d.warnings) {
    warned = warned || w.find("200 of 1000 paced compute segments") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST(Verdict, AnUnhonouredAblationAtTheLargestCountWarnsAndNamesNoCause) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  std::vector<RunSet> runs = Sweep(base, {1, 4}, [](int n, analysis::SyntheticRunSpec* s) {
    s->bucket_time = 0.008 * 2.0 * (n - 1) / n;
  });
  for (RunSet& r : runs) r.honesty = EmulationHonesty{1000, 0, 0, 0};
  EmulationHonesty slow;  // the no-reduction ablation at 4 replicas ran 40 % of it too slow
  slow.paced_segments = 1000;
  slow.unhonoured_segments = 400;
  runs.back().ablation_honesty["no_reduce"] = slow;
  const Diagnosis d = Diagnose(runs);
  EXPECT_EQ(d.verdict.binding, Binding::kInconclusive) << d.verdict.explanation;
  bool warned = false;
  for (const std::string& w : d.warnings) {
    warned = warned ||
             w.find("in the no_reduce ablation at 4 replica(s): 400 of 1000") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST(Verdict, AFewUnhonouredSegmentsWarnButDoNotOverrule) {
  const Diagnosis d = CommunicationWithPacing(10);  // 1%
  EXPECT_EQ(d.verdict.binding, Binding::kCommunication) << d.verdict.explanation;
  EXPECT_FALSE(d.warnings.empty());
}

TEST(Verdict, LossesSumToTheLostDevices) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.input_wait = 0.001;
  base.overhead = 0.0005;
  base.jitter = 0.1;
  base.rank_compute_factor[3] = 1.3;
  const Diagnosis d = Diagnose(Sweep(base, {1, 4}, [](int n, analysis::SyntheticRunSpec* s) {
    s->bucket_time = 0.004 * 2.0 * (n - 1) / n;
  }));
  ASSERT_TRUE(d.attribution.has_value());
  double sum = 0;
  for (const BindingLoss& l : d.verdict.losses) sum += l.devices;
  EXPECT_NEAR(sum, d.attribution->lost_devices, 1e-9);
  EXPECT_GT(d.verdict.losses.size(), 5u);
}

TEST(Verdict, NearLinearBuysMoreDevices) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.020;
  base.bucket_time = 0.0004;
  base.overhead = 0.0002;
  base.jitter = 0.01;
  DiagnoseOptions options;
  options.cost.device_cost_per_hour = 2.0;
  const Diagnosis d =
      Diagnose(Sweep(base, {1, 2, 4, 8}, [](int, analysis::SyntheticRunSpec*) {}), options);
  EXPECT_TRUE(d.verdict.binding == Binding::kNone || d.verdict.binding == Binding::kCompute)
      << ToString(d.verdict.binding);
  EXPECT_EQ(d.verdict.decision, Decision::kBuyDevices) << d.verdict.decision_reason;
  EXPECT_EQ(d.verdict.currency, Currency::kCost);
  ASSERT_EQ(d.verdict.costs.size(), 4u);
  // One device at 2/h doing X(1) samples/s: 2 / (3600 X(1)) per sample.
  const double x1 = d.points[0].scaling.samples_per_s;
  EXPECT_NEAR(d.verdict.costs[0].cost_per_million_samples, 2.0 / (3600 * x1) * 1e6, 1e-9);
  EXPECT_GT(d.verdict.costs[3].marginal_cost_per_million_samples, 0);
}

TEST(Verdict, ComputeThatGrowsWithReplicasMeansDoNotBuy) {
  // Compute per step grows with N (shared memory bandwidth): nothing waits, no lever helps.
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.bucket_time = 0.0001;
  base.overhead = 0.0001;
  const Diagnosis d = Diagnose(Sweep(base, {1, 2, 4}, [](int n, analysis::SyntheticRunSpec* s) {
    s->compute = 0.010 * (n == 1 ? 1.0 : n == 2 ? 1.6 : 3.0);
  }));
  EXPECT_EQ(d.verdict.binding, Binding::kCompute);
  EXPECT_EQ(d.verdict.decision, Decision::kUpgradeDevices) << d.verdict.decision_reason;
  ASSERT_TRUE(d.attribution.has_value());
  EXPECT_EQ(d.attribution->lines[0].component, Component::kCompute);
  EXPECT_GT(d.attribution->lines[0].devices, 0.9 * d.attribution->lost_devices);
}

// Compute grows by `growth` at 2 replicas beside an exposed reduction of about 5 ms; the
// no-reduce ablation's compute is back at one replica's when `growth_goes_with_reduction`.
Diagnosis ComputeGrowthBesideReduction(double growth, bool growth_goes_with_reduction) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.010;
  base.jitter = 0.3;
  base.bucket_time = 0.0001;
  std::vector<RunSet> runs = Sweep(base, {1, 2}, [&](int n, analysis::SyntheticRunSpec* s) {
    if (n == 1) return;
    s->compute = 0.010 + growth;
    s->bucket_time = 0.005;
  });
  if (growth_goes_with_reduction) {
    analysis::SyntheticRunSpec alone = analysis::AblationSpecsOf(base).no_reduce;
    alone.replicas = 2;
    alone.seed = 77;
    runs.back().no_reduce = analysis::SynthesizeRun(alone);
  }
  return Diagnose(runs);
}

bool HasEvidence(const Verdict& v, const std::string& words) {
  for (const std::string& e : v.evidence) {
    if (e.find(words) != std::string::npos) return true;
  }
  return false;
}

TEST(Verdict, ComputeGrowthThatGoesWithTheReductionIsCommunication) {
  // Compute and communication each lose about 5 ms, within the noise of each other; removing
  // the reduction removes both (the reduction competes with the compute for the cores).
  const Diagnosis d = ComputeGrowthBesideReduction(0.005, true);
  EXPECT_EQ(d.verdict.binding, Binding::kCommunication) << d.verdict.explanation;
  EXPECT_TRUE(d.verdict.candidates.empty());
  EXPECT_TRUE(HasEvidence(d.verdict, "went with the reduction")) << d.verdict.explanation;
  // The same growth left by the no-reduce run is not communication's.
  const Diagnosis stays = ComputeGrowthBesideReduction(0.005, false);
  EXPECT_NE(stays.verdict.binding, Binding::kCommunication) << stays.verdict.explanation;
}

TEST(Verdict, ComputeGrowthLeftWithoutTheReductionIsCompute) {
  const Diagnosis d = ComputeGrowthBesideReduction(0.012, false);
  EXPECT_EQ(d.verdict.binding, Binding::kCompute) << d.verdict.explanation;
}

TEST(Verdict, AClearComputeGrowthThatGoesWithTheReductionIsCommunication) {
  // 15 ms of compute growth against 5 ms exposed: compute stands clear in the decomposition,
  // yet the no-reduce run is back at one replica's step.
  const Diagnosis d = ComputeGrowthBesideReduction(0.015, true);
  EXPECT_EQ(d.verdict.binding, Binding::kCommunication) << d.verdict.explanation;
  EXPECT_TRUE(HasEvidence(d.verdict, "despite the decomposition")) << d.verdict.explanation;
}

TEST(Verdict, DeadlineIsTheCurrency) {
  analysis::SyntheticRunSpec base;
  base.compute = 0.020;
  base.bucket_time = 0.0004;
  DiagnoseOptions options;
  options.cost.deadline_hours = 1.0;
  // One device does about 1560 samples/s; the deadline needs 3000.
  options.cost.samples_to_target = 3000.0 * 3600;
  const Diagnosis d =
      Diagnose(Sweep(base, {1, 2, 4}, [](int, analysis::SyntheticRunSpec*) {}), options);
  EXPECT_EQ(d.verdict.currency, Currency::kTime);
  EXPECT_NE(d.verdict.decision_reason.find("needs 3000.0 samples/s, met from 2 replicas"),
            std::string::npos)
      << d.verdict.decision_reason;
}

TEST(Verdict, NoCurveMeansNotYet) {
  analysis::SyntheticRunSpec base;
  const Diagnosis d = Diagnose(Sweep(base, {1}, [](int, analysis::SyntheticRunSpec*) {}));
  EXPECT_EQ(d.verdict.decision, Decision::kPullLevers);
  EXPECT_FALSE(d.attribution.has_value());
}

TEST(Verdict, SingleReplicaCountFromTraces) {
  // `analyze` sees one replica count: the reference is estimated and said to be.
  analysis::SyntheticRunSpec spec;
  spec.replicas = 4;
  spec.bucket_time = 0.008;
  RunSet set;
  set.baseline = analysis::SynthesizeRun(spec);
  const Diagnosis d = Diagnose({set});
  ASSERT_TRUE(d.attribution.has_value());
  EXPECT_TRUE(d.attribution->reference_estimated);
  EXPECT_EQ(d.verdict.binding, Binding::kCommunication);
  ASSERT_FALSE(d.warnings.empty());
  EXPECT_NE(d.warnings[0].find("estimated"), std::string::npos);
}

TEST(Verdict, MissingRankIsReported) {
  analysis::SyntheticRunSpec spec;
  spec.replicas = 4;
  RunSet set;
  set.replicas = 4;
  for (const StepRecord& r : analysis::SynthesizeRun(spec)) {
    if (r.rank != 3) set.baseline.push_back(r);
  }
  const Diagnosis d = Diagnose({set});
  ASSERT_EQ(d.points.size(), 1u);
  EXPECT_EQ(d.points[0].scaling.replicas, 3);
  ASSERT_FALSE(d.points[0].decomposition.warnings.empty());
  EXPECT_NE(d.points[0].decomposition.warnings[0].find("4 ranks were launched"), std::string::npos);
}

TEST(Verdict, NoiseScaleInformsTheQualityNote) {
  analysis::SyntheticRunSpec base;
  base.grad_sq = 1.0;
  base.trace_sigma = 1000.0;  // B_noise = 1000, far above B = 4 x 32
  const Diagnosis d = Diagnose(Sweep(base, {1, 4}, [](int, analysis::SyntheticRunSpec*) {}));
  ASSERT_TRUE(d.noise_scale.known);
  EXPECT_NEAR(d.noise_scale.b_noise, 1000, 1e-6);
  EXPECT_NE(d.verdict.quality_note.find("B_noise ~ 1000"), std::string::npos)
      << d.verdict.quality_note;
  EXPECT_NE(d.verdict.quality_note.find("still cuts the steps"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::decide
