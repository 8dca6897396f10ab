// Host crowding: ranks that outnumber their host's cores share them, so each rank's compute
// and its per-step overhead (the launch, the optimizer's bookkeeping, the collective's own
// threads) stretch with the ranks per core. Fitted from baselines that ran with more ranks than
// cores on a host, as lines in the crowding c = max(0, ranks per host / cores per host - 1);
// used only where a scenario's ranks per host are known (docs/model.md, "Host crowding").
#pragma once

#include <optional>
#include <vector>

#include "model/step_model.h"

namespace stepscope::model {

// One baseline as the crowding fit sees it.
struct CrowdingPoint {
  int ranks_per_host = 0;  // the most ranks any host ran
  int cores_per_host = 0;
  double compute_ratio = 1;  // the run's compute / the pooled compute
  Seconds overhead = 0;      // the run's mean overhead per step
  // The busiest host's load: its ranks' process CPU per step over its cores and the step
  // (run.json cpu.busiest_host_share); unset when not recorded. And the run's step.
  std::optional<double> load;
  Seconds step = 0;
  // Of `overhead`: what the model's other parts did not reproduce of the run's step (fit.cc
  // adds it to a crowded baseline's overhead); 0 where none was added.
  Seconds residual = 0;
};

// A host whose cores were at least this busy in a crowded baseline stretches compute as a queue
// does: below it the line in the crowding (a waking rank seldom finds every core taken, and the
// stretch is the scheduler's per rank).
inline constexpr double kQueueLoad = 0.5;
// A scenario's load is held below this (the step's floor, the cores' own time, takes over
// where the ranks' work fills them: host_cpu.h).
inline constexpr double kMaxQueueLoad = 0.95;

// Ranks per core beyond one: 0 while every rank has a core of its own.
double Crowding(int ranks_per_host, int cores_per_host);

// A queue's waiting in units of the service time at load `load`: rho / (1 - rho), the load
// held in [0, kMaxQueueLoad].
double QueueWait(double load);

// Lines a + b c of the compute ratio and the overhead over the points' crowding. nullopt
// unless the points share one known core count, at least one is crowded and at least two
// crowding values differ (a line needs two). The bands: the lines through every pair of
// points with distinct crowding (their smallest and largest intercept and slope). Where every
// point recorded its load (below kMaxQueueLoad) and a crowded one's reached kQueueLoad, the
// compute ratio is also fitted as a line in QueueWait(load) (HostCrowding::queue_a, queue_b),
// which simulation then uses instead. Where some point carries a residual, that part of the
// overhead is also fitted as a line of its own (HostCrowding::residual_a, residual_b).
std::optional<HostCrowding> FitHostCrowding(const std::vector<CrowdingPoint>& points);

}  // namespace stepscope::model
