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
};

// Ranks per core beyond one: 0 while every rank has a core of its own.
double Crowding(int ranks_per_host, int cores_per_host);

// Lines a + b c of the compute ratio and the overhead over the points' crowding. nullopt
// unless the points share one known core count, at least one is crowded and at least two
// crowding values differ (a line needs two). The bands: the lines through every pair of
// points with distinct crowding (their smallest and largest intercept and slope).
std::optional<HostCrowding> FitHostCrowding(const std::vector<CrowdingPoint>& points);

}  // namespace stepscope::model
