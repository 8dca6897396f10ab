// The scaling curve: throughput, efficiency, speed-up and marginal device value per replica
// count. Definitions: docs/metrics.md.
#pragma once

#include <vector>

#include "core/status.h"

namespace stepscope::analysis {

struct ScalingInput {
  int replicas = 0;
  double samples_per_s = 0;
};

struct ScalingPoint {
  int replicas = 0;
  double samples_per_s = 0;
  double speedup = 0;                // X(N) / X(1)
  double efficiency = 0;             // X(N) / (N X(1))
  double marginal_device_value = 0;  // (X(N_i) - X(N_{i-1})) / X(1) / (N_i - N_{i-1})
  bool has_marginal = false;         // false for the first point
};

// Points sorted by replica count. X(1) is the 1-replica throughput; when there is no 1-replica
// point, pass `reference_samples_per_s` (> 0), an estimate of one device's throughput (e.g. from
// EstimateSingleDeviceThroughput). Errors on duplicate or non-positive replica counts, or when
// no reference is known.
Result<std::vector<ScalingPoint>> ScalingCurve(std::vector<ScalingInput> inputs,
                                               double reference_samples_per_s = 0);

}  // namespace stepscope::analysis
