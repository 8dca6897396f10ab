#include "decide/goodput.h"

namespace stepscope::decide {

double StatisticalEfficiency(const StatisticalScale& s, double global_batch) {
  if (!s.known || !(s.b_noise > 0) || !(global_batch > 0)) return 1.0;
  return (1 + s.reference_batch / s.b_noise) / (1 + global_batch / s.b_noise);
}

double Goodput(const StatisticalScale& s, double samples_per_s, double global_batch) {
  return samples_per_s * StatisticalEfficiency(s, global_batch);
}

}  // namespace stepscope::decide
