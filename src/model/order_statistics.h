// The expected maximum of N independent draws from a measured distribution: what a synchronous
// step waits for when every replica's compute varies step to step.
#pragma once

#include <vector>

namespace stepscope::model {

// E[max of `draws` draws] from the empirical distribution of `samples` (any order), exactly:
// with the sample sorted, x_(i) is the maximum with probability (i/n)^N - ((i-1)/n)^N. 0 for an
// empty sample; draws < 1 counts as 1. Fastest on a sorted sample (a fitted model keeps its
// jitter sorted): another is sorted into a copy first. At large N only the top of the sample
// counts; the terms below a probability of 1e-17 are folded into one.
double ExpectedMaximum(const std::vector<double>& samples, long long draws);

// E[max over r of scales[r] * e_r], each e_r drawn independently from the empirical
// distribution of `sorted` (ascending, equal weights): the slowest of ranks whose work differs
// (scales) under the same noise. Exact: P(max <= x) = prod over r of F(x / scales[r]). 0 for an
// empty sample or no scales; scales must be positive.
double ExpectedMaximumScaled(const std::vector<double>& sorted, const std::vector<double>& scales);

}  // namespace stepscope::model
