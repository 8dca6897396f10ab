// Ablation comparison: what each ablation run measured against what the baseline's
// decomposition predicts it should measure. Definitions: docs/metrics.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/decomposition.h"
#include "analysis/skew.h"
#include "core/estimate.h"
#include "core/vocabulary.h"

namespace stepscope::analysis {

struct AblationOptions {
  // Agreement when measured lies in [predicted, predicted_high] widened on both sides by
  // relative * |predicted| (the prediction's own imprecision: it is a model of the step) plus
  // noise * the measured noise: the half-widths of the bootstrap intervals of the compared runs'
  // mean job step (or throughput, for double_batch), summed.
  double relative_tolerance = 0.20;
  double noise_tolerance = 1.0;
};

struct AblationCheck {
  AblationCheckKind check = AblationCheckKind::kNoReduce;
  std::string unit;      // "s/step" or "samples/s"
  double measured = 0;   // measured delta (step-time drop, or throughput gain)
  double predicted = 0;  // predicted from the baseline decomposition
  // Upper end of the predicted range (== predicted when the prediction is a point): doubling
  // the micro-batch may hide some communication behind the longer backward.
  double predicted_high = 0;
  double noise = 0;      // measured noise of the runs compared, in `unit`
  double tolerance = 0;  // relative_tolerance * |predicted| + noise_tolerance * noise
  bool agrees = false;
  std::string sentence;

  // The range the measurement must fall in to agree: [predicted - tolerance,
  // predicted_high + tolerance] around the predicted point.
  Estimate Accepted() const {
    return {predicted, predicted - tolerance, predicted_high + tolerance};
  }
};

struct AblationRuns {
  std::optional<Decomposition> no_reduce;        // reduction removed
  std::optional<Decomposition> synthetic_input;  // in-memory synthetic batches
  std::optional<Decomposition> double_batch;     // micro-batch doubled
};

struct AblationReport {
  std::vector<AblationCheck> checks;
  // Every check agrees; nullopt when there are no checks (nothing confirms the decomposition).
  std::optional<bool> agree;
  std::string sentence;  // "decomposition and ablations agree" or "... disagree: ..."
};

// `skew` (optional) adds the per-rank spread check.
AblationReport CompareAblations(const Decomposition& baseline, const AblationRuns& runs,
                                const SkewReport* skew, const AblationOptions& options = {});

}  // namespace stepscope::analysis
