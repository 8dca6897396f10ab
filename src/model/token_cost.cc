#include "model/token_cost.h"

#include <algorithm>

#include "core/statistics.h"

namespace stepscope::model {

std::optional<TokenCost> FitTokenCost(const std::vector<StepRecord>& records, int quantiles) {
  std::vector<std::pair<double, double>> points;  // (tokens, forward + backward)
  for (const StepRecord& r : records) {
    if (!r.warmup && r.tokens) {
      points.emplace_back(static_cast<double>(*r.tokens), r.forward + r.backward);
    }
  }
  if (points.size() < 8) return std::nullopt;
  double mw = 0, mx = 0;
  for (const auto& [w, x] : points) mw += w, mx += x;
  mw /= static_cast<double>(points.size()), mx /= static_cast<double>(points.size());
  double sww = 0, swx = 0;
  for (const auto& [w, x] : points) sww += (w - mw) * (w - mw), swx += (w - mw) * (x - mx);
  if (!(sww > 0) || !(mx > 0)) return std::nullopt;
  double c = std::max(0.0, swx / sww);
  double a = mx - c * mw;
  if (a < 0) {  // no fixed part: the line through the origin
    double sw2 = 0, swx0 = 0;
    for (const auto& [w, x] : points) sw2 += w * w, swx0 += w * x;
    a = 0, c = swx0 / sw2;
  }
  if (!(a + c * mw > 0)) return std::nullopt;
  TokenCost out;
  out.token_share = c * mw / (a + c * mw);
  out.positions = mw;
  std::vector<double> ratios;
  for (const auto& [w, x] : points) {
    const double line = a + c * w;
    if (line > 0) ratios.push_back(x / line);
  }
  if (ratios.empty()) return std::nullopt;
  // The noise is the spread around the line, not its level: mean 1.
  double mean = 0;
  for (double r : ratios) mean += r;
  mean /= static_cast<double>(ratios.size());
  for (double& r : ratios) r /= mean;
  std::sort(ratios.begin(), ratios.end());
  out.noise = EvenQuantiles(ratios, quantiles);
  return out;
}

double WorkAt(double share, double reference, double positions) {
  return reference > 0 ? 1 - share + share * positions / reference : 1.0;
}

double TokenShareAt(double share, double at, double positions) {
  const double work = WorkAt(share, at, positions);
  return work > 0 && at > 0 ? share * positions / at / work : share;
}

std::vector<double> BucketedRatios(const std::vector<double>& spread,
                                   const std::vector<double>& noise, double share) {
  std::vector<double> out;
  out.reserve(spread.size() * noise.size());
  for (double x : spread) {
    for (double e : noise) out.push_back((1 - share + share * x) * e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace stepscope::model
