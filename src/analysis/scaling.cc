#include "analysis/scaling.h"

#include <fmt/format.h>

#include <algorithm>

namespace stepscope::analysis {

std::string_view UnitText(ThroughputUnit unit) {
  return unit == ThroughputUnit::kSteps ? "steps/s" : "samples/s";
}

std::string_view UnitNoun(ThroughputUnit unit) {
  return unit == ThroughputUnit::kSteps ? "steps" : "samples";
}

std::optional<ThroughputUnit> ParseThroughputUnit(std::string_view text) {
  for (ThroughputUnit u : {ThroughputUnit::kSamples, ThroughputUnit::kSteps}) {
    if (text == UnitText(u)) return u;
  }
  return std::nullopt;
}

Result<std::vector<ScalingPoint>> ScalingCurve(std::vector<ScalingInput> inputs,
                                               double reference_samples_per_s) {
  if (inputs.empty()) return Status::Error("scaling curve: no points");
  std::sort(inputs.begin(), inputs.end(),
            [](const ScalingInput& a, const ScalingInput& b) { return a.replicas < b.replicas; });
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].replicas <= 0) {
      return Status::Error(
          fmt::format("scaling curve: replica count {} is not positive", inputs[i].replicas));
    }
    if (i > 0 && inputs[i].replicas == inputs[i - 1].replicas) {
      return Status::Error(
          fmt::format("scaling curve: two runs with {} replicas; keep one per replica count",
                      inputs[i].replicas));
    }
  }
  double x1 = inputs.front().replicas == 1 ? inputs.front().samples_per_s : reference_samples_per_s;
  if (x1 <= 0) {
    return Status::Error(
        "scaling curve: no positive 1-replica throughput and no reference estimate given");
  }
  std::vector<ScalingPoint> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ScalingPoint p;
    p.replicas = inputs[i].replicas;
    p.samples_per_s = inputs[i].samples_per_s;
    p.speedup = p.samples_per_s / x1;
    p.efficiency = p.speedup / p.replicas;
    if (i > 0) {
      p.has_marginal = true;
      p.marginal_device_value = (inputs[i].samples_per_s - inputs[i - 1].samples_per_s) / x1 /
                                (inputs[i].replicas - inputs[i - 1].replicas);
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace stepscope::analysis
