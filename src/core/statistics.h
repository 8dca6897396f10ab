// The statistics every module shares: median, percentile, mean, and the bootstrap that turns a
// sample into an Estimate. One definition each, so that every report means the same thing.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/estimate.h"

namespace stepscope {

// Linear-interpolated percentile (p in [0, 100], clamped) of `values`; 0 for an empty vector.
double Percentile(std::vector<double> values, double p);
double Median(std::vector<double> values);
// `count` (at least 2) evenly spaced quantiles of `sorted` (ascending, not empty), each the
// element at or below its rank: the first and last are the least and the greatest.
std::vector<double> EvenQuantiles(const std::vector<double>& sorted, int count);
// For each value, the median of the others (Median of `values` without that one; 0 where it is
// the only one), in one sort: the reference "the other ranks' median" for every rank at once.
std::vector<double> MedianOfOthers(const std::vector<double>& values);
double Mean(const std::vector<double>& values);  // 0 for an empty vector
// The mean once `share` of the values (rounded down, but at least one once there are 5 or more)
// is dropped from each end: a step or two that the host disturbed does not move it, a cause that
// is present in many steps does. 0 for an empty vector.
double TrimmedMean(std::vector<double> values, double share = 0.1);

struct BootstrapOptions {
  int resamples = 1000;
  double level = 0.90;  // two-sided: the interval holds this share of the resampled statistic
  // Resample contiguous blocks of this many values (a moving-block bootstrap), so that
  // neighbouring steps, which are correlated, stay together. 1: independent values.
  int block = 1;
  uint64_t seed = 0x5eed;  // fixed: the same sample gives the same interval
};

// Percentile bootstrap of `statistic` over `values`: value is the statistic of the sample itself,
// [low, high] the central `level` share of the statistic over resamples of the same size. An
// empty sample gives {0, 0, 0}; a single value gives an exact estimate.
Estimate Bootstrap(const std::vector<double>& values,
                   const std::function<double(const std::vector<double>&)>& statistic,
                   const BootstrapOptions& options = {});

// Bootstrap of a statistic of two independent samples (two runs' steps): each round resamples
// both, the first with `options.block`, the second with `second_block`, so the interval holds
// the noise of both. A sample of one value is held fixed.
Estimate BootstrapPair(
    const std::vector<double>& first, const std::vector<double>& second,
    const std::function<double(const std::vector<double>&, const std::vector<double>&)>& statistic,
    const BootstrapOptions& options = {}, int second_block = 1);

// Bootstrap of the mean, the usual case.
Estimate BootstrapMean(const std::vector<double>& values, const BootstrapOptions& options = {});

}  // namespace stepscope
