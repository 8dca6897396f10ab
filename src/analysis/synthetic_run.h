// Synthetic step records from a simple timing model of a data-parallel step, for tests and
// demonstrations of the analysis (closed-form ground truth). Not a measurement.
//
// Per rank r and step s, all ranks starting together at t0:
//   input wait, then forward (compute/3), then backward (2 compute/3) during which bucket k
//   becomes ready at t0 + input + forward + backward (k+1)/K (its arrival);
//   the comm thread reduces bucket k from max(latest arrival at k, end of bucket k-1) for
//   bucket_time seconds; the step ends at max(own backward end, end of the last bucket) plus
//   `overhead`. Without reduction (one replica, or the no-reduce ablation) no collective exists.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/step_record.h"
#include "core/units.h"

namespace stepscope::analysis {

struct SyntheticRunSpec {
  int replicas = 1;
  int64_t steps = 20;        // steady-state steps
  int64_t warmup_steps = 2;  // marked warmup=true, before the steady-state ones
  int64_t samples_per_rank = 32;
  Seconds compute = 0.010;                    // per step on a healthy rank
  std::map<int, double> rank_compute_factor;  // straggler: rank -> factor on its compute
  Seconds input_wait = 0;
  Seconds overhead = 0.0005;
  int buckets = 1;              // collectives per step
  Seconds bucket_time = 0.002;  // transfer time of one bucket
  bool reduce = true;           // false: no collectives (no-reduce ablation); off at 1 replica
  double jitter = 0;            // compute varies uniformly by +-jitter (fraction), seeded
  uint64_t seed = 1;
  // Gradient norms: |g_b|^2 = grad_sq + trace_sigma / b, |G_B|^2 = grad_sq + trace_sigma / B.
  double grad_sq = -1;  // <0: leave the norms unknown
  double trace_sigma = 0;
};

std::vector<StepRecord> SynthesizeRun(const SyntheticRunSpec& spec);

// The specs of the three ablations of `spec`: no reduction, synthetic input (no input wait) and
// the doubled micro-batch (twice the compute, input wait and samples).
struct SyntheticAblationSpecs {
  SyntheticRunSpec no_reduce;
  SyntheticRunSpec synthetic_input;
  SyntheticRunSpec double_batch;
};
SyntheticAblationSpecs AblationSpecsOf(const SyntheticRunSpec& spec);

}  // namespace stepscope::analysis
