#include "decide/decision_inputs.h"

#include <fmt/format.h>

#include <algorithm>

namespace stepscope::decide {

Status Validate(const DecisionInputs& in) {
  if (in.device_cost_per_hour && !(*in.device_cost_per_hour >= 0)) {
    return Status::Error(
        "option --device-cost: a price cannot be negative (e.g. --device-cost 2.5)");
  }
  if (in.deadline_hours && !(*in.deadline_hours > 0)) {
    return Status::Error("option --deadline: hours must be positive (e.g. --deadline 48)");
  }
  if (in.budget && !(*in.budget > 0)) {
    return Status::Error("option --budget: must be positive (e.g. --budget 5000)");
  }
  if (in.samples_to_target && !(*in.samples_to_target > 0)) {
    return Status::Error("option --samples-to-target: must be positive (e.g. 1e9)");
  }
  if ((in.deadline_hours || in.budget) && !in.samples_to_target) {
    return Status::Error(
        fmt::format("option {}: a deadline or budget needs a target to measure it against; give "
                    "--samples-to-target S or --target-run DIR",
                    in.deadline_hours ? "--deadline" : "--budget"));
  }
  for (int n : in.candidates) {
    if (n < 1) return Status::Error("option --candidates: replica counts must be >= 1");
  }
  const bool upgrades = !in.link_upgrades.empty() || !in.device_upgrades.empty();
  if (upgrades && !in.device_cost_per_hour) {
    return Status::Error(
        "options --link-upgrade/--device-upgrade: an upgrade's price is added to the device's "
        "own; give --device-cost PRICE too");
  }
  for (const LinkUpgrade& l : in.link_upgrades) {
    if (!(l.gbps > 0) || l.latency_us < 0 || !(l.price_per_device_hour >= 0)) {
      return Status::Error(
          "option --link-upgrade: write GBPS[,LATENCY_US]:PRICE with positive GB/s, latency >= 0 "
          "and price >= 0 (e.g. --link-upgrade 25,5:0.4)");
    }
  }
  for (const DeviceUpgrade& d : in.device_upgrades) {
    if (!(d.speed > 0) || !(d.price_per_device_hour >= 0)) {
      return Status::Error(
          "option --device-upgrade: write SPEED:PRICE with speed > 0 and price >= 0 (e.g. "
          "--device-upgrade 2:3.0)");
    }
  }
  return Status::Ok();
}

std::vector<int> CandidateReplicas(const DecisionInputs& in, int largest_measured) {
  std::vector<int> out = in.candidates;
  if (out.empty()) {
    for (int n = 2 * largest_measured; n <= 8 * largest_measured; n *= 2) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string CostUnit(const DecisionInputs& in) {
  return in.device_cost_per_hour ? "cost" : "device-hours";
}

}  // namespace stepscope::decide
