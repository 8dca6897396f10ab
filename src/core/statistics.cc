#include "core/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace stepscope {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (rank - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

double Median(std::vector<double> values) { return Percentile(std::move(values), 50); }

std::vector<double> EvenQuantiles(const std::vector<double>& sorted, int count) {
  const int q = std::max(count, 2);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(q));
  for (int i = 0; i < q; ++i) {
    out.push_back(sorted[static_cast<size_t>(static_cast<double>(i) / (q - 1) *
                                             static_cast<double>(sorted.size() - 1))]);
  }
  return out;
}

std::vector<double> MedianOfOthers(const std::vector<double>& values) {
  const size_t n = values.size();
  std::vector<double> out(n, 0.0);
  if (n < 2) return out;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&values](size_t a, size_t b) { return values[a] < values[b]; });
  // The median of n - 1 sorted values, read from the sorted n with position `gone` skipped.
  const double rank = 0.5 * static_cast<double>(n - 2);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, n - 2);
  for (size_t gone = 0; gone < n; ++gone) {
    auto at = [&](size_t k) { return values[order[k < gone ? k : k + 1]]; };
    out[order[gone]] = at(lo) + (rank - static_cast<double>(lo)) * (at(hi) - at(lo));
  }
  return out;
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double TrimmedMean(std::vector<double> values, double share) {
  if (values.empty()) return 0;
  size_t cut = static_cast<size_t>(share * static_cast<double>(values.size()));
  if (values.size() >= 5) cut = std::max<size_t>(cut, 1);
  cut = std::min(cut, (values.size() - 1) / 2);
  std::sort(values.begin(), values.end());
  return std::accumulate(values.begin() + static_cast<std::ptrdiff_t>(cut),
                         values.end() - static_cast<std::ptrdiff_t>(cut), 0.0) /
         static_cast<double>(values.size() - 2 * cut);
}

namespace {

// Draws moving-block resamples of one sample: blocks of `block` consecutive values at uniform
// starts, concatenated to the sample's size.
class BlockResampler {
 public:
  BlockResampler(const std::vector<double>& values, int block)
      : values_(values),
        block_(std::clamp<size_t>(static_cast<size_t>(std::max(block, 1)), 1, values.size())),
        start_(0, values.size() - block_),
        resample_(values.size()) {}
  const std::vector<double>& Draw(std::mt19937_64& rng) {
    for (size_t i = 0; i < resample_.size();) {
      const size_t s = start_(rng);
      for (size_t k = 0; k < block_ && i < resample_.size(); ++k) resample_[i++] = values_[s + k];
    }
    return resample_;
  }

 private:
  const std::vector<double>& values_;
  size_t block_;
  std::uniform_int_distribution<size_t> start_;
  std::vector<double> resample_;
};

// The point with the central `level` share of the resampled statistics around it.
Estimate Interval(double point, const std::vector<double>& stats, double level) {
  const double tail = 100 * (1 - std::clamp(level, 0.0, 1.0)) / 2;
  const double low = Percentile(stats, tail);
  const double high = Percentile(stats, 100 - tail);
  // The point lies inside its own interval even when the statistic is skewed.
  return {point, std::min(low, point), std::max(high, point)};
}

}  // namespace

Estimate Bootstrap(const std::vector<double>& values,
                   const std::function<double(const std::vector<double>&)>& statistic,
                   const BootstrapOptions& options) {
  if (values.empty()) return {};
  const double point = statistic(values);
  if (values.size() == 1 || options.resamples < 2) return Estimate::Exact(point);
  std::mt19937_64 rng(options.seed);
  BlockResampler resampler(values, options.block);
  std::vector<double> stats;
  stats.reserve(static_cast<size_t>(options.resamples));
  for (int b = 0; b < options.resamples; ++b) stats.push_back(statistic(resampler.Draw(rng)));
  return Interval(point, stats, options.level);
}

Estimate BootstrapPair(
    const std::vector<double>& first, const std::vector<double>& second,
    const std::function<double(const std::vector<double>&, const std::vector<double>&)>& statistic,
    const BootstrapOptions& options, int second_block) {
  if (first.empty() || second.empty()) return {};
  const double point = statistic(first, second);
  if ((first.size() == 1 && second.size() == 1) || options.resamples < 2) {
    return Estimate::Exact(point);
  }
  std::mt19937_64 rng(options.seed);
  BlockResampler a(first, options.block), b(second, second_block);
  std::vector<double> stats;
  stats.reserve(static_cast<size_t>(options.resamples));
  for (int r = 0; r < options.resamples; ++r) {
    const std::vector<double>& ra = a.Draw(rng);
    stats.push_back(statistic(ra, b.Draw(rng)));
  }
  return Interval(point, stats, options.level);
}

Estimate BootstrapMean(const std::vector<double>& values, const BootstrapOptions& options) {
  return Bootstrap(
      values, [](const std::vector<double>& v) { return Mean(v); }, options);
}

}  // namespace stepscope
