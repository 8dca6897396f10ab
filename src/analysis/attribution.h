// The attribution waterfall: from N ideal devices down to the measured speed-up X(N)/X(1),
// each component's share of the lost devices. Definitions: docs/metrics.md.
#pragma once

#include <string>
#include <vector>

#include "analysis/decomposition.h"
#include "core/status.h"
#include "core/vocabulary.h"

namespace stepscope::analysis {

struct WaterfallLine {
  Component component = Component::kCompute;
  double delta_seconds = 0;  // c(N) - c(1), seconds per step (0 for the residual)
  double devices = 0;        // devices lost to this component (negative: gained)
};

struct Attribution {
  int replicas = 0;                  // N
  double ideal_devices = 0;          // N
  double measured_speedup = 0;       // X(N) / X(1)
  double lost_devices = 0;           // N - X(N)/X(1) == sum of lines[].devices
  bool reference_estimated = false;  // the 1-replica reference was estimated, not measured
  std::vector<WaterfallLine> lines;
};

// `reference` is the 1-replica decomposition (same micro-batch), `at_n` the N-replica one.
// The lines sum to lost_devices to rounding; a `residual` line appears when the samples per
// step are not N times the reference's.
Result<Attribution> Attribute(const Decomposition& reference, const Decomposition& at_n);

// A 1-replica reference estimated from an N-replica run when none was measured: the fastest
// rank's mean step without exposed communication and without its waits in the job's own
// collectives (script_comm; where some rank waited there, with the most overhead any rank spent
// outside them: the work one rank does alone, such as rank 0's logging, a lone process does
// too), the job's samples divided by N. Used by `analyze` on traces of a single replica count
// and by sweeps without a 1-replica run.
Decomposition EstimateSingleReplica(const Decomposition& at_n);

}  // namespace stepscope::analysis
