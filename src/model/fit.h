// Fitting the step-time model from measured runs: the baselines at each replica count, and the
// run at twice the micro-batch for compute's slope (docs/model.md says what each constant comes
// from).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/step_record.h"
#include "model/run_observation.h"
#include "model/step_model.h"

namespace stepscope::model {

struct FitOptions {
  double straggler_margin = 0.10;  // a rank this much slower than the typical one persists
};

// Errors name the run and what is missing: no baseline, a baseline without steady steps.
Result<StepModel> FitStepModel(const std::vector<RunObservation>& runs,
                               const FitOptions& options = {});

// The runs of `runs` at the replica counts `replicas`, and none other: what a model checked on
// the other counts is fitted on (`predict --fit-on`). A double-batch run at another count is left
// out too: its reductions would bring that count's all-reduce cost into the fit, and its compute
// pairs only with the baseline at its own count.
std::vector<RunObservation> RunsAt(const std::vector<RunObservation>& runs,
                                   const std::vector<int>& replicas);

// Keeps the lengths each variable-length run of `runs` drew (its positions per rank and steady
// step) in `m->drawn`, for predicting it as drawn (Scenario::as_drawn). Only where the model
// fitted what a position costs (`length_buckets->positions`); runs already kept stay. The
// lengths are a run's input, not its timing, so a run held out of the fit may be added.
void KeepDrawnPositions(const std::vector<RunObservation>& runs, StepModel* m);

}  // namespace stepscope::model
