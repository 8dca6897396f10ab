// The scaling curve: throughput, efficiency, speed-up and marginal device value per replica
// count. Definitions: docs/metrics.md.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace stepscope::analysis {

// What a throughput counts. Records that carry no batch size (a profiler trace without one)
// give a step rate, which must never read as a sample rate.
enum class ThroughputUnit { kSamples, kSteps };

// "samples/s" or "steps/s": the unit as printed and as written to diagnosis.json.
std::string_view UnitText(ThroughputUnit unit);
// "samples" or "steps": what the unit counts, for phrases like "cost per million steps".
std::string_view UnitNoun(ThroughputUnit unit);
// The inverse of UnitText; nullopt for any other text.
std::optional<ThroughputUnit> ParseThroughputUnit(std::string_view text);

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
  // True only between two measured replica counts: false for the first point, even when X(1)
  // is an estimate (an estimated reference is no measurement of the added devices).
  bool has_marginal = false;
};

// Points sorted by replica count. X(1) is the 1-replica throughput; when there is no 1-replica
// point, pass `reference_samples_per_s` (> 0), an estimate of one device's throughput (e.g. from
// EstimateSingleDeviceThroughput). Errors on duplicate or non-positive replica counts, or when
// no reference is known.
Result<std::vector<ScalingPoint>> ScalingCurve(std::vector<ScalingInput> inputs,
                                               double reference_samples_per_s = 0);

}  // namespace stepscope::analysis
