// The rule that turns priced options into the decision (docs/decide.md, "The rule"):
// with currency `cost`, the least cost to the target among the options that meet the deadline
// (all of them when none does, or there is no deadline); with `time`, the least time to the
// target within the budget (likewise). Options within `tie_share` of the best are a tie, won by
// the one better in the other currency. Staying as measured wins when no option beats it by more
// than `tie_share` in either currency.
#pragma once

#include <string>
#include <vector>

#include "core/vocabulary.h"
#include "decide/decision_inputs.h"
#include "decide/priced_options.h"

namespace stepscope::decide {

struct PricedDecision {
  Decision action = Decision::kStay;
  std::string option;  // the chosen option's label
  int replicas = 0;
  std::string link;         // "" : as measured
  double device_speed = 1;  // relative to the measured devices
  std::vector<Lever> levers;
  std::string reason;     // why, in words, with the figures
  std::string runner_up;  // the best option with another action ("" when none)
  // How much worse the runner-up is in the currency, as a share of the chosen option's figure
  // (negative when the runner-up was cheaper but tied and lost on the other currency).
  double margin = 0;
  Currency currency = Currency::kCost;
};

// `options` must not be empty (PriceOptions always prices "stay").
PricedDecision Choose(const std::vector<PricedOption>& options, const DecisionInputs& inputs);

}  // namespace stepscope::decide
