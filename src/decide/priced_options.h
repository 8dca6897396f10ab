// Every option the decision weighs, priced: stay as is, each free lever and all of them, more
// devices at each candidate count, fewer devices, a faster interconnect (at today's count and
// with more devices), faster devices, and accumulation instead of more devices. Throughput comes
// from the step-time model (model/simulate.h) for every option alike, so the options compare on
// one footing; progress per sample from the noise scale (goodput.h); time and cost to the target
// from both (docs/decide.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/estimate.h"
#include "core/status.h"
#include "core/vocabulary.h"
#include "decide/decision_inputs.h"
#include "decide/goodput.h"
#include "model/step_model.h"

namespace stepscope::decide {

enum class OptionKind {
  kStay,
  kLever,
  kAllLevers,
  kMoreDevices,
  kFewerDevices,
  kFasterLink,
  kFasterDevices,
  kAccumulation,
};
std::string_view ToString(OptionKind k);
std::optional<OptionKind> ParseOptionKind(std::string_view text);

// A free lever as a change to the model's scenario (its replicas are ignored).
struct LeverOption {
  Lever lever = Lever::kBiggerMicroBatch;
  std::string words;  // "micro-batch 2 -> 4"
  model::Scenario change;
};

struct PricedOption {
  OptionKind kind = OptionKind::kStay;
  Decision action = Decision::kStay;
  std::string label;  // in words: "32 replicas, with the free levers"
  int replicas = 0;
  int global_batch = 0;               // samples per step
  std::string link;                   // "" : as measured; else "25 GB/s, 5 us"
  double device_speed = 1;            // relative to the measured devices
  std::vector<Lever> levers;          // the free levers this option includes
  Estimate samples_per_s;             // from the model (band: slowest/fastest fitted parts)
  double statistical_efficiency = 1;  // progress per sample against the reference batch
  double goodput = 0;                 // samples/s x statistical efficiency
  double price_per_hour = 0;          // all devices and upgrades (device-hours without prices)
  // Per million samples of progress at the reference batch: always defined.
  double hours_per_million = 0, cost_per_million = 0;
  // With a target: wall clock (steps plus the measured fixed time) and its cost.
  std::optional<double> time_to_target_hours, cost_to_target;
  bool meets_deadline = true;  // true without a deadline
  bool within_budget = true;   // true without a budget
  std::string note;            // e.g. the memory fallback the model applied
};

// The lever changes merged into one scenario: every field a lever sets overrides `s`.
model::Scenario WithLevers(model::Scenario s, const std::vector<LeverOption>& levers);

struct OptionsRequest {
  // The configuration "stay" keeps and every other option starts from: the measured one, or
  // after the levers were applied the levered one (`base_words` says which).
  model::Scenario base;
  std::string base_words = "as measured";
  int largest_measured = 1;
  std::vector<int> measured_replicas;  // fewer-device options come from these
  std::vector<LeverOption> levers;
  StatisticalScale scale;
  DecisionInputs inputs;
};

// Errors when the model cannot simulate a scenario (the message names it).
Result<std::vector<PricedOption>> PriceOptions(const model::StepModel& model,
                                               const OptionsRequest& request);

// The option's metric in a currency: time (or cost) to the target, else per million samples.
double TimeOf(const PricedOption& o);
double CostOf(const PricedOption& o);

}  // namespace stepscope::decide
