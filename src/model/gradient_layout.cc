#include "model/gradient_layout.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "core/statistics.h"
#include "model/typical_rank.h"

namespace stepscope::model {

std::vector<ReadinessPoint> BucketReadiness(const std::vector<const RunObservation*>& runs,
                                            int* buckets) {
  std::map<int, std::vector<double>> share_by_bucket;
  std::map<int, double> bytes_share;
  for (const RunObservation* run : runs) {
    for (const StepRecord& r : run->records) {
      if (r.warmup || !r.backward_start || r.collectives.empty()) continue;
      const Seconds backward = PerMicroBatch(r, r.backward);
      if (backward <= 0) continue;
      double total = 0, cumulative = 0;
      for (const CollectiveRecord& c : r.collectives) total += static_cast<double>(c.bytes);
      for (const CollectiveRecord& c : r.collectives) {
        cumulative += static_cast<double>(c.bytes);
        share_by_bucket[c.index].push_back(
            std::clamp((c.ready - *r.backward_start) / backward, 0.0, 1.0));
        bytes_share[c.index] = total > 0 ? cumulative / total : 1.0;
      }
    }
  }
  *buckets = static_cast<int>(share_by_bucket.size());
  std::vector<ReadinessPoint> profile{{0, 0}};
  for (auto& [index, shares] : share_by_bucket) {
    const double at = std::max(profile.back().backward_share, Median(shares));
    const double bytes = std::max(profile.back().bytes_share, bytes_share[index]);
    profile.push_back({at, bytes});
  }
  if (profile.back().bytes_share < 1.0 || profile.back().backward_share < 1.0) {
    profile.push_back({1.0, 1.0});
  }
  return profile;
}

std::vector<ReadinessPoint> SliceReadiness(const std::vector<const RunObservation*>& runs) {
  const RunObservation* first = nullptr;
  std::vector<std::vector<double>> per_slice;
  for (const RunObservation* run : runs) {
    if (run->ready_slice_share.empty() ||
        run->ready_slice_share.size() != run->ready_slice_bytes.size()) {
      continue;
    }
    if (first == nullptr) {
      first = run;
      per_slice.resize(run->ready_slice_share.size());
    }
    if (run->ready_slice_bytes != first->ready_slice_bytes) continue;
    for (size_t i = 0; i < per_slice.size(); ++i) {
      per_slice[i].push_back(run->ready_slice_share[i]);
    }
  }
  if (first == nullptr) return {};
  const std::vector<Bytes>& bytes = first->ready_slice_bytes;
  const double total = static_cast<double>(std::accumulate(bytes.begin(), bytes.end(), Bytes{0}));
  std::vector<ReadinessPoint> profile{{0, 0}};
  double cumulative = 0;
  for (size_t i = 0; i < per_slice.size(); ++i) {
    cumulative += static_cast<double>(bytes[i]);
    profile.push_back({std::max(profile.back().backward_share, Median(per_slice[i])),
                       std::min(1.0, cumulative / total)});
  }
  if (profile.back().backward_share < 1.0) profile.push_back({1.0, 1.0});
  return profile;
}

std::vector<double> BucketShares(const std::vector<const RunObservation*>& runs) {
  std::map<size_t, std::vector<std::vector<double>>> by_count;  // count -> per index -> shares
  for (const RunObservation* run : runs) {
    for (const StepRecord& r : run->records) {
      if (r.warmup || r.collectives.empty()) continue;
      double total = 0;
      for (const CollectiveRecord& c : r.collectives) total += static_cast<double>(c.bytes);
      if (!(total > 0)) continue;
      std::vector<std::vector<double>>& per_index = by_count[r.collectives.size()];
      per_index.resize(r.collectives.size());
      for (size_t i = 0; i < r.collectives.size(); ++i) {
        per_index[i].push_back(static_cast<double>(r.collectives[i].bytes) / total);
      }
    }
  }
  const std::vector<std::vector<double>>* most = nullptr;
  for (const auto& [count, per_index] : by_count) {
    if (most == nullptr || per_index.front().size() > most->front().size()) most = &per_index;
  }
  std::vector<double> shares;
  if (most == nullptr) return shares;
  double sum = 0;
  for (const std::vector<double>& s : *most) {
    shares.push_back(Median(s));
    sum += shares.back();
  }
  for (double& s : shares) s /= sum;
  return shares;
}

std::vector<double> SliceShares(const std::vector<const RunObservation*>& runs) {
  const auto recorded = std::find_if(runs.begin(), runs.end(), [](const RunObservation* run) {
    return !run->ready_slice_bytes.empty();  // each slice > 0 (run.json is checked on reading)
  });
  if (recorded == runs.end()) return {};
  const std::vector<Bytes>& bytes = (*recorded)->ready_slice_bytes;
  const double total = static_cast<double>(std::accumulate(bytes.begin(), bytes.end(), Bytes{0}));
  std::vector<double> shares;
  for (const Bytes b : bytes) shares.push_back(static_cast<double>(b) / total);
  return shares;
}

void FitGradientLayout(const std::vector<const RunObservation*>& reducing,
                       const std::vector<const RunObservation*>& baselines, StepModel* m) {
  int buckets = 0;
  m->bucket_shares = BucketShares(reducing);
  m->slice_shares = SliceShares(baselines);
  m->readiness = BucketReadiness(reducing, &buckets);
  m->readiness_how =
      "per measured bucket, the median share of backward elapsed when it was ready, against the "
      "share of the gradient's bytes ready by then";
  if (std::vector<ReadinessPoint> sliced = SliceReadiness(baselines); !sliced.empty()) {
    // The slices are finer than the buckets, and identify the profile where one bucket a step
    // shows only the end of backward.
    m->readiness = std::move(sliced);
    m->readiness_how =
        "per gradient slice (the layers or blocks backward reports ready; run.json "
        "model.ready_slices_backward_share), the median share of backward elapsed when it was "
        "ready, against the share of the gradient's bytes ready by then";
  } else if (buckets <= 1) {
    m->readiness_assumed = true;
    m->readiness = {{0, 0}, {1, 1}};
    m->readiness_how =
        "assumed: gradients ready uniformly over backward (one bucket per step measured)";
    m->notes.push_back(
        "gradient readiness within backward not identified (one bucket per "
        "step): assumed uniform over backward");
  }
}

}  // namespace stepscope::model
