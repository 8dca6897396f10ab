#include "model/order_statistics.h"

#include <algorithm>
#include <cmath>

namespace stepscope::model {

double ExpectedMaximum(const std::vector<double>& samples, long long draws) {
  if (samples.empty()) return 0.0;
  if (!std::is_sorted(samples.begin(), samples.end())) {
    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    return ExpectedMaximum(sorted, draws);
  }
  const size_t n = samples.size();
  if (draws <= 1) {  // the mean
    double sum = 0.0;
    for (double x : samples) sum += x;
    return sum / static_cast<double>(n);
  }
  // From the largest value down: x_(i) is the maximum with probability (i/n)^N - ((i-1)/n)^N.
  // exp(d * log(p)) keeps (i/n)^N finite and exact enough for N in the thousands. Once
  // P(max <= x_(i-1)) is below kNegligible, what remains weighs that much at most and is taken
  // at x_(i-1): at large N only the top of the sample is visited.
  constexpr double kNegligible = 1e-17;
  const double d = static_cast<double>(draws);
  const double count = static_cast<double>(n);
  double expected = 0.0, at = 1.0;  // at: P(max <= x_(i))
  for (size_t i = n; i >= 1; --i) {
    const double below = i > 1 ? std::exp(d * std::log(static_cast<double>(i - 1) / count)) : 0.0;
    expected += samples[i - 1] * (at - below);
    at = below;
    if (at < kNegligible) {
      if (i > 1) expected += samples[i - 2] * at;
      break;
    }
  }
  return expected;
}

double ExpectedMaximumScaled(const std::vector<double>& sorted, const std::vector<double>& scales) {
  if (sorted.empty() || scales.empty()) return 0.0;
  const double count = static_cast<double>(sorted.size());
  // F(y): the share of the sample at or below y.
  const auto share_at_most = [&](double y) {
    return static_cast<double>(std::upper_bound(sorted.begin(), sorted.end(), y) - sorted.begin()) /
           count;
  };
  // Every value the maximum can take, ascending; P(max <= x) steps up at each.
  std::vector<double> values;
  values.reserve(sorted.size() * scales.size());
  for (double scale : scales) {
    for (double e : sorted) values.push_back(scale * e);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  double expected = 0.0, below = 0.0;  // below: P(max < x)
  for (double x : values) {
    double at = 1.0;  // P(max <= x)
    for (double scale : scales) {
      // x / scale can land a rounding step below the sample value it came from.
      at *= share_at_most(x / scale * (1 + 1e-12));
    }
    expected += x * (at - below);
    below = at;
  }
  return expected;
}

}  // namespace stepscope::model
