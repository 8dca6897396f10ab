// The priced decision of a diagnosis (docs/decide.md): the free levers the verdict recommends
// as changes to the step-time model's scenario, every option priced on that model, and the
// option the user's currency picks, written into the verdict (decision, reason, options,
// time_to_quality) and its explanation.
#pragma once

#include "decide/decision_inputs.h"
#include "decide/diagnosis.h"
#include "model/step_model.h"
#include "plan/lever_change.h"
#include "sweep/sweep_store.h"

namespace stepscope::app {

// The recommended levers as scenario changes, from the job's own values `basis`; a lever the
// model cannot express (length balancing) is left out.
std::vector<decide::LeverOption> LeverOptions(const std::vector<Lever>& recommended,
                                              const plan::LeverBasis& basis);

// The job's values once the `applied` levers are made (planned from `basis` as LeverOptions
// plans them): what the levers of the verdict after the levers start from.
plan::LeverBasis LeveredBasis(const std::vector<Lever>& applied, const plan::LeverBasis& basis);

// Adds to the fixed costs the time a job spends starting and ending, as the sweep's finished
// runs measured it: each run's process time (the launcher's, in the sweep store) less its steps
// and held-out evaluations (run.json), the median over the runs. Runs whose run.json predates
// these fields are left out; with none left, nothing is added.
void AddMeasuredStartup(const sweep::SweepStore& store, decide::DecisionInputs* inputs);

// Prices the options for `d` (its curve, noise scale and levers) and sets its verdict's priced
// decision; likewise the verdict after the levers (d->after), from the levered configuration,
// its own levers priced from the levered values (LeveredBasis). On an error a verdict keeps the
// curve's decision and a warning says why.
void ApplyPricedDecision(const model::StepModel& model, const decide::DecisionInputs& inputs,
                         const plan::LeverBasis& basis, decide::Diagnosis* d);

}  // namespace stepscope::app
