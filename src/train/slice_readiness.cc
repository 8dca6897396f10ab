#include "train/slice_readiness.h"

#include <algorithm>

#include "core/statistics.h"

namespace stepscope::train {

void SliceReadiness::BeginBackward(Seconds begin) {
  begin_ = begin;
  step_.clear();
}

void SliceReadiness::SliceReady(Seconds at) { step_.push_back(at); }

void SliceReadiness::EndBackward(Seconds end, bool keep) {
  const Seconds backward = end - begin_;
  if (!keep || kept_ >= kMaxSteps || step_.empty() || !(backward > 0)) return;
  // Every step reports the same slices; a step that reported others is not comparable.
  if (!shares_.empty() && shares_.size() != step_.size()) return;
  shares_.resize(step_.size());
  for (size_t i = 0; i < step_.size(); ++i) {
    shares_[i].push_back(std::clamp((step_[i] - begin_) / backward, 0.0, 1.0));
  }
  ++kept_;
}

std::vector<double> SliceReadiness::MedianShares() const {
  std::vector<double> out;
  for (const std::vector<double>& s : shares_) {
    out.push_back(std::max(out.empty() ? 0.0 : out.back(), Median(s)));
  }
  return out;
}

}  // namespace stepscope::train
