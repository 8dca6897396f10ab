// The model checked against a measurement it was not fitted on: predicted against measured
// samples/s for a run's own configuration.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/estimate.h"
#include "core/status.h"
#include "model/fit.h"
#include "model/step_model.h"

namespace stepscope::model {

struct ModelCheck {
  std::string run;
  int replicas = 0;
  Estimate predicted_samples_per_s;
  double measured_samples_per_s = 0;
  double error = 0;  // predicted / measured - 1
  bool within_band = false;
  // Its reductions entered the all-reduce fit, or it fitted the overlap rate (its compute,
  // input and overhead are still predicted).
  bool partly_fitted = false;
  // A diagnosis's earlier prediction, made before the run existed, from the replica counts then
  // known (diagnose, on a resumed sweep with a new count).
  bool predicted_before = false;
  std::vector<int> predicted_from;
  // A variable-length run predicted for the lengths it drew (Scenario::as_drawn): its draw
  // taken out of the error.
  struct AsDrawn {
    Estimate predicted;
    double error = 0;  // predicted / measured - 1
  };
  std::optional<AsDrawn> as_drawn;
};

Result<ModelCheck> CheckRun(const StepModel& model, const RunObservation& run);

// Every run of `runs` that the fit did not use (role kOther, or a baseline outside the fitted
// replica counts) and that reduced gradients over real input; runs whose scenario the model
// cannot simulate are skipped.
std::vector<ModelCheck> CheckRuns(const StepModel& model, const std::vector<RunObservation>& runs);

// Where runs of `runs` had more ranks on a host than its cores but the model has no crowding
// line (its baselines did not show how sharing cores stretches a step): a note saying those runs
// are predicted as if each rank had a core of its own. nullopt otherwise.
std::optional<std::string> UnfittedCrowdingCaveat(const StepModel& model,
                                                  const std::vector<RunObservation>& runs);

// Median and largest absolute error over `checks` (0 for none).
double MedianAbsoluteError(const std::vector<ModelCheck>& checks);
double WorstAbsoluteError(const std::vector<ModelCheck>& checks);

}  // namespace stepscope::model
