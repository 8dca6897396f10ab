// Test helper: the records of a run made from known model constants (one bucket per step, ring
// all-reduce cost, optional stragglers and step-to-step jitter), for fitting to recover.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model/collective_fit.h"
#include "model/fit.h"

namespace stepscope::model::testing {

struct Truth {
  Seconds forward_fixed = 0.002, forward_per_sample = 0.001;
  Seconds backward_fixed = 0.004, backward_per_sample = 0.002;
  Seconds optimizer = 0.003, input_wait = 0.0005, overhead = 0.001;
  double alpha = 100e-6, seconds_per_byte = 1.0 / 1e9;
  Seconds reduction_fixed = 0;  // per reduction, whatever N (launch and scheduling)
  Bytes gradient_bytes = 4 << 20;
  std::map<int, double> stragglers;  // rank -> compute factor
  double jitter = 0;                 // steps alternate compute x (1 - jitter), x (1 + jitter)
  int steps = 12, warmup = 2;
  int accum = 1;  // micro-batches per step; the last one's backward reduces
  // Variable-length text: the positions rank r computes in step s of a run of n replicas
  // (records' tokens); forward and backward scale with them over `reference_positions`. Unset:
  // no tokens recorded.
  std::function<int(int n, int r, int s)> positions;
  double reference_positions = 100;
};

inline RunObservation SyntheticRun(const Truth& t, const std::string& name, RunRole role,
                                   int replicas, int batch) {
  RunObservation run;
  run.name = name;
  run.role = role;
  run.config.replicas = replicas;
  run.config.batch = batch;
  run.config.accum = t.accum;
  run.config.bucket_mb = 25;
  run.gradient_bytes = t.gradient_bytes;
  run.parameters = t.gradient_bytes / 4;
  run.activation_bytes_per_sample = 1 << 20;
  AlphaBeta ab;
  ab.alpha_s = Estimate::Exact(t.alpha);
  ab.seconds_per_byte = Estimate::Exact(t.seconds_per_byte);
  ab.fixed_s = Estimate::Exact(t.reduction_fixed);
  const Seconds cost = AllreduceSeconds(ab, replicas, t.gradient_bytes);
  Seconds clock = 100, steady_time = 0;
  for (int s = 0; s < t.steps; ++s) {
    const double wobble = 1 + ((s + 1) % 2 ? -t.jitter : t.jitter);
    std::vector<StepRecord> step(replicas);
    Seconds last_ready = 0;
    for (int r = 0; r < replicas; ++r) {
      const double factor = (t.stragglers.count(r) ? t.stragglers.at(r) : 1.0) * wobble;
      StepRecord& x = step[r];
      x.rank = r, x.step = s, x.warmup = s < t.warmup, x.samples = batch * t.accum;
      x.micro_batches = t.accum, x.start = clock;
      x.input_wait = t.input_wait;
      double work = 1;
      if (t.positions) {
        x.tokens = t.positions(replicas, r, s);
        work = static_cast<double>(*x.tokens) / t.reference_positions;
      }
      const Seconds forward = (t.forward_fixed + t.forward_per_sample * batch) * factor * work;
      const Seconds backward = (t.backward_fixed + t.backward_per_sample * batch) * factor * work;
      x.forward = t.accum * forward;
      x.backward = t.accum * backward;
      x.optimizer = t.optimizer * factor;  // a slow rank is slow in all its compute
      x.compute = x.forward + x.backward + x.optimizer;
      // Every micro-batch's forward and backward in turn; the last backward reduces.
      x.backward_start = clock + x.input_wait + x.forward + (t.accum - 1) * backward;
      last_ready = std::max(last_ready, *x.backward_start + backward);
    }
    const Seconds comm_end = replicas > 1 ? last_ready + cost : last_ready;
    for (StepRecord& x : step) {
      const Seconds ready = *x.backward_start + x.backward / t.accum;
      if (replicas > 1)
        x.collectives.push_back({0, t.gradient_bytes, ready, last_ready, comm_end, 0});
      x.exposed_comm = comm_end - ready;
      x.end = comm_end + x.optimizer + t.overhead;
    }
    // Every rank ends together (the next step starts after the slowest).
    Seconds end = 0;
    for (const StepRecord& x : step) end = std::max(end, x.end);
    for (StepRecord& x : step) {
      x.end = end;
      run.records.push_back(x);
    }
    if (s >= t.warmup) steady_time += end - clock;
    clock = end;
  }
  run.samples_per_s = replicas * batch * t.accum * (t.steps - t.warmup) / steady_time;
  return run;
}

// The model fitted to baselines at `replicas` (micro-batch `batch`) and a double-batch run at the
// largest; fails the calling test when it cannot be fitted.
inline StepModel FitSynthetic(const Truth& t, const std::vector<int>& replicas = {1, 2, 4, 8},
                              int batch = 8) {
  std::vector<RunObservation> runs;
  for (int n : replicas) {
    runs.push_back(SyntheticRun(t, "baseline-n" + std::to_string(n), RunRole::kBaseline, n, batch));
  }
  const int largest = replicas.back();
  runs.push_back(SyntheticRun(t, "double_batch-n" + std::to_string(largest), RunRole::kDoubleBatch,
                              largest, 2 * batch));
  Result<StepModel> m = FitStepModel(runs);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : StepModel{};
}

}  // namespace stepscope::model::testing
