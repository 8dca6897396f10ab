// Variable-length text: how a rank's forward and backward follow the positions it computes
// (step records' `tokens`), so that the model can price length-bucketed batches: the part that
// scales with positions shrinks with the bucketed work, the rest does not, and what the
// positions do not explain (the host's timing noise) stays when the ranks' work evens out.
#pragma once

#include <optional>
#include <vector>

#include "core/step_record.h"

namespace stepscope::model {

struct TokenCost {
  // Of forward and backward at the records' mean positions, the share that scales with them
  // (in [0, 1]).
  double token_share = 1;
  // Each rank-step's forward and backward over what its positions predict: sorted quantiles.
  std::vector<double> noise{1.0};
  // The records' mean positions, at which token_share holds.
  double positions = 0;
};

// Least squares `forward + backward = a + c tokens` over the steady records that carry tokens
// (through the origin where the fixed part comes out negative); `noise` keeps `quantiles`
// evenly spaced quantiles of the ratios to the line, scaled to mean 1. nullopt with
// fewer than 8 such records, tokens that do not vary, or a line that is not positive.
std::optional<TokenCost> FitTokenCost(const std::vector<StepRecord>& records, int quantiles = 21);

// The share that scales with positions at `positions`, from `share` at `at` (the fixed part
// stays, the scaling part moves with the positions).
double TokenShareAt(double share, double at, double positions);

// Forward and backward at `positions` over those at `reference`, where `share` of them scales
// with the positions (1 - share + share * positions / reference).
double WorkAt(double share, double reference, double positions);

// A bucketed rank's forward and backward over its step's mean rank, sorted: the ratios of
// `spread` (positions over the step's mean) on the share `share` that scales with positions,
// each times every ratio of `noise`.
std::vector<double> BucketedRatios(const std::vector<double>& spread,
                                   const std::vector<double>& noise, double share);

}  // namespace stepscope::model
