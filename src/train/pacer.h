// ComputePacer: makes a replica's compute take `slowdown` times its thread CPU time in wall time.
// Used to emulate a slower device (slowdown = 1/F) and to inject a straggler (slowdown = FACTOR).
// Real compute still happens; pacing only adds sleep.
//
// A step's compute runs as the same sequence of segments every step (forward, backward between
// the layers' gradient-ready reports, optimizer). Each step is paced by its own work: the target of
// segment k is slowdown x its work (e.g. the tokens of a variable-length batch; 1 for fixed-shape
// batches) x the median CPU time per unit of work of segment k over its last kHistory steps. An
// emulated device computes at a steady speed per unit of work, so the host's cache and scheduler
// jitter, which pacing would otherwise multiply by the slowdown, is not passed on, while a step
// with more work (a longer sequence) takes longer, as it would on the device.
//
// Emulated devices are identical: once calibrated (Calibrate, at the end of the warm-up, with
// the least cost per unit of work any rank measured in any recent step for each segment), every
// rank paces to the same cost, so a host core that is busier than another (cache, scheduling)
// does not make its rank look like a slower device. The least, not the median: host noise and
// the warm-up's cold first steps only ever add CPU time, and a median over a short warm-up can
// sit on cold steps, which made one run's device a third slower than the next run's. Until
// calibrated each segment follows its own median.
//
// A noisy co-tenant (--inject-noise) is part of the target: in a step where it is active it
// takes `share` of the core, stretching every segment of that step by 1 / (1 - share).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/units.h"

namespace stepscope::train {

// A noisy co-tenant beside a rank: on average `share` of its core, in bursts of whole steps.
struct CoTenant {
  double share = 0;  // 0: none
  uint64_t seed = 1;
};

// The share of the core the co-tenant takes in `step`: active in about half the steps (drawn
// from seed and step) at 2 x share, capped at 0.9; 0 in the others.
double CoTenantShare(const CoTenant& co_tenant, int64_t step);

class ComputePacer {
 public:
  explicit ComputePacer(double slowdown, CoTenant co_tenant = {})
      : slowdown_(slowdown), co_tenant_(co_tenant) {}

  bool active() const { return slowdown_ > 1.0 + 1e-9 || co_tenant_.share > 0; }
  // Starts a step: segments are numbered from 0 again. A step that is not `counted` (a warm-up
  // step, which nothing measures) is paced alike but left out of segments() and unhonoured().
  void BeginStep(int64_t step, bool counted = true);
  // Starts a compute segment on the calling thread.
  void Begin();
  // Ends a segment of `work` units (> 0): sleeps until wall time since Begin() reaches its
  // target (above). A segment whose wall time already exceeded the target (the host is too busy
  // to emulate the requested speed) counts as not honoured.
  void End(double work = 1);
  // The co-tenant's share of the core in the current step (0 without one).
  double co_tenant_share() const { return step_share_; }
  // Per segment index: the least CPU time per unit of work over the recent steps.
  std::vector<Seconds> CostPerWork() const;
  // From now on segment k is paced to `cost[k]` per unit of work (segments beyond keep their own
  // median).
  void Calibrate(std::vector<Seconds> cost) { calibrated_ = std::move(cost); }

  int64_t segments() const { return segments_; }
  int64_t unhonoured() const { return unhonoured_; }
  Seconds slept() const { return slept_; }

 private:
  static constexpr size_t kHistory = 9;
  double slowdown_;
  CoTenant co_tenant_;
  double step_share_ = 0;
  size_t segment_ = 0;
  bool counted_ = true;
  std::vector<std::vector<Seconds>> history_;  // per segment index: recent CPU time per work
  std::vector<Seconds> calibrated_;            // per segment index: cost per work, once set
  Seconds wall_begin_ = 0;
  Seconds cpu_begin_ = 0;
  int64_t segments_ = 0;
  int64_t unhonoured_ = 0;
  Seconds slept_ = 0;
};

// CPU time consumed by the calling thread.
Seconds ThreadCpuSeconds();
// Sleeps (never spins) for `seconds` if positive.
void SleepSeconds(Seconds seconds);

}  // namespace stepscope::train
