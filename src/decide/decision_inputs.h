// What the decision is asked to optimise and what it may buy: the currency, the prices, the
// deadline, the budget, the target and the upgrades on offer (diagnose's --currency,
// --device-cost, --deadline, --budget, --samples-to-target, --candidates, --link-upgrade,
// --device-upgrade; docs/decide.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/vocabulary.h"

namespace stepscope::decide {

// A faster interconnect on offer: its bandwidth and latency, at a price per device-hour (on top
// of the device's own price).
struct LinkUpgrade {
  double gbps = 0;
  double latency_us = 0;
  double price_per_device_hour = 0;
};

// Devices `speed` times faster than the measured ones, at a price per device-hour on top of the
// device's own price.
struct DeviceUpgrade {
  double speed = 1;
  double price_per_device_hour = 0;
};

struct DecisionInputs {
  Currency currency = Currency::kCost;
  // Price of one measured device per hour; without it costs are counted in device-hours.
  std::optional<double> device_cost_per_hour;
  std::optional<double> deadline_hours;     // wall clock to the target
  std::optional<double> budget;             // money (or device-hours) to the target
  std::optional<double> samples_to_target;  // at samples_to_target_batch
  // The global batch the target's samples were counted at; 0: the reference (one replica).
  // A target measured at another batch is converted with the noise scale (goodput.h).
  double samples_to_target_batch = 0;
  std::vector<int> candidates;  // replica counts to price; empty: the default
  std::vector<LinkUpgrade> link_upgrades;
  std::vector<DeviceUpgrade> device_upgrades;
  // The noise scale averaged over training to the target, from a multi-replica target run;
  // when set it prices every option instead of the sweep's own (early-training) estimate.
  std::optional<double> b_noise_to_target;
  std::string b_noise_to_target_how;
  // Time each job spends outside its steps (start-up, evaluation), measured by the runs, and
  // its parts in words (e.g. "start-up 2.1 s (median of 5 runs)").
  double fixed_hours = 0;
  std::vector<std::string> fixed_parts;
  // Options whose cost (with `cost`) or time (with `time`) lies within this share of the best
  // are a tie, and the one better in the other currency wins: with near-linear scaling the
  // cost barely moves while the time halves, and the verdict buys the time.
  double tie_share = 0.1;
};

// Errors name the option and what to do: a negative price, a deadline or budget without a
// target, an upgrade without a device price, a candidate below one.
Status Validate(const DecisionInputs& in);

// The replica counts priced for "more devices": the candidates, or doublings of the largest
// measured count up to 8 times it.
std::vector<int> CandidateReplicas(const DecisionInputs& in, int largest_measured);

// "cost" or "device-hours", for table headings.
std::string CostUnit(const DecisionInputs& in);

}  // namespace stepscope::decide
