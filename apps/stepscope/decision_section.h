// The priced decision of a diagnosis (docs/decide.md): the free levers the verdict recommends
// as changes to the step-time model's scenario, every option priced on that model, and the
// option the user's currency picks, written into the verdict (decision, reason, options,
// time_to_quality) and its explanation.
#pragma once

#include "analysis/diagnosis.h"
#include "decide/decision_inputs.h"
#include "model/step_model.h"
#include "plan/lever_change.h"

namespace stepscope::app {

// The recommended levers as scenario changes, from the job's own values `basis`; a lever the
// model cannot express (length balancing) is left out.
std::vector<decide::LeverOption> LeverOptions(const std::vector<Lever>& recommended,
                                              const plan::LeverBasis& basis);

// Prices the options for `d` (its curve, noise scale and levers) and sets its verdict's priced
// decision. On an error the verdict keeps the curve's decision and a warning says why.
void ApplyPricedDecision(const model::StepModel& model, const decide::DecisionInputs& inputs,
                         const plan::LeverBasis& basis, analysis::Diagnosis* d);

}  // namespace stepscope::app
