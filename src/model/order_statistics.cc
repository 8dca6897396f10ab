#include "model/order_statistics.h"

#include <algorithm>
#include <cmath>

namespace stepscope::model {

double ExpectedMaximum(std::vector<double> samples, long long draws) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  const double d = static_cast<double>(std::max(1LL, draws));
  double expected = 0.0, below = 0.0;  // below: P(max <= x_(i-1))
  for (size_t i = 0; i < samples.size(); ++i) {
    // exp(d * log(p)) keeps (i/n)^N finite and exact enough for N in the thousands.
    const double at = std::exp(d * std::log(static_cast<double>(i + 1) / n));
    expected += samples[i] * (at - below);
    below = at;
  }
  return expected;
}

}  // namespace stepscope::model
