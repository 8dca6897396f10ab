#include "train/noise_scale.h"

namespace stepscope::train {

double EstimateNoiseScale(double mean_local_sq, double mean_global_sq, double b, double B) {
  if (!(B > b) || !(b > 0)) return -1;
  const double g2 = (B * mean_global_sq - b * mean_local_sq) / (B - b);
  const double trace = (mean_local_sq - mean_global_sq) / (1.0 / b - 1.0 / B);
  if (!(g2 > 0) || !(trace > 0)) return -1;
  return trace / g2;
}

}  // namespace stepscope::train
