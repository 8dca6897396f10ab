// Statistical efficiency and goodput: how much training progress a sample buys at a global
// batch B, from the gradient noise scale B_noise (McCandlish et al. 2018). Samples to a target
// grow as E(B) = E_min (1 + B / B_noise), so against a reference batch B0 a sample at B is worth
// (1 + B0 / B_noise) / (1 + B / B_noise) of a sample at B0. Goodput = samples/s x that.
#pragma once

#include <string>

namespace stepscope::decide {

struct StatisticalScale {
  bool known = false;          // false: every batch is taken as equally efficient (assumed)
  double b_noise = 0;          // samples
  double reference_batch = 1;  // the global batch the target's samples are counted at
  std::string how;             // where B_noise came from, or why it is unknown
};

// Progress per sample at `global_batch` relative to the reference batch (1 when unknown).
double StatisticalEfficiency(const StatisticalScale& s, double global_batch);

// Samples/s that count: samples_per_s x StatisticalEfficiency.
double Goodput(const StatisticalScale& s, double samples_per_s, double global_batch);

}  // namespace stepscope::decide
