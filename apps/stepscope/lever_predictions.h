// Each recommended lever's expected gain as the step-time model's re-simulation with the lever
// applied, at the largest replica count measured, against what the lever's own run measured
// (docs/model.md, "Levers").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/estimate.h"
#include "decide/diagnosis.h"
#include "decide/priced_options.h"
#include "model/step_model.h"

namespace stepscope::app {

struct LeverPrediction {
  Lever lever = Lever::kBiggerMicroBatch;
  std::string change;  // the lever as a change to the model's scenario, in words
  int replicas = 0;
  Estimate predicted_samples_per_s, predicted_gain_samples_per_s;
  // Against one replica with the same lever (0 when not simulated): a lever that makes every
  // device faster raises both.
  double predicted_efficiency = 0;
  std::string memory_note;  // set when the lever's micro-batch does not fit the device memory
  std::string wire_note;    // set when the lever's wire precision was never measured
  std::string bucket_note;  // set when the lever's smaller buckets split the measured ones
  // The lever's own run at `replicas` (alone, or the only lever applied) and the baseline there.
  std::optional<double> measured_samples_per_s, measured_gain_samples_per_s;
  // Variable-length text: the gain re-simulated for the lengths the lever's run and the
  // baseline drew (model::Scenario::as_drawn), which one short run's draw does not move.
  std::optional<Estimate> predicted_gain_as_drawn;
};

// The model's prediction for each lever of `levers` made on top of `base` at `replicas`, against
// `base` alone (no measurement). Levers the model cannot simulate are left out (a warning in
// `warnings`).
std::vector<LeverPrediction> PredictLeversFrom(const model::StepModel& model,
                                               const model::Scenario& base, int replicas,
                                               const std::vector<decide::LeverOption>& levers,
                                               std::vector<std::string>* warnings);

// The model's prediction for each lever of `levers` at the largest measured N of `d`, with the
// measurement where a run of that lever exists (d.after). Levers the model cannot simulate are
// left out (a warning in `warnings`).
std::vector<LeverPrediction> PredictLevers(const model::StepModel& model,
                                           const std::vector<decide::LeverOption>& levers,
                                           const decide::Diagnosis& d,
                                           std::vector<std::string>* warnings);

// Writes the model's gains into the verdict's levers (expected_samples_per_s,
// expected_gain_samples_per_s, expected_efficiency: the model's against one replica with the
// lever, else against `one_replica_samples_per_s`, basis), drops the levers the model rules out
// (decide::DropLeversThatDoNotPay) and re-explains the verdict.
void UseModelGains(const std::vector<LeverPrediction>& predictions, decide::Verdict* verdict,
                   double one_replica_samples_per_s);

// The model's curve with every lever of `levers` applied together, at each of `replicas`
// (diagnosis.json `lever_curve[]`, the report's what-if curve); empty without levers or when
// the model cannot simulate them.
std::vector<model::Prediction> LeverCurve(const model::StepModel& model,
                                          const std::vector<decide::LeverOption>& levers,
                                          const std::vector<int>& replicas);

// diagnosis.json `lever_predictions[]`.
nlohmann::json ToJson(const std::vector<LeverPrediction>& predictions);
// The terminal's table: predicted against measured, one line a lever.
std::string LeverPredictionsText(const std::vector<LeverPrediction>& predictions);

}  // namespace stepscope::app
