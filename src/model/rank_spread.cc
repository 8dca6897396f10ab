#include "model/rank_spread.h"

#include <algorithm>
#include <vector>

#include "core/statistics.h"
#include "model/token_cost.h"
#include "model/typical_rank.h"

namespace stepscope::model {

void FitComputeJitter(const std::vector<const RunObservation*>& baselines, StepModel* m) {
  m->compute_jitter.clear();
  const std::optional<LengthBuckets>& l = m->length_buckets;
  if (l && l->applied && !l->spread.empty()) {
    m->compute_jitter = BucketedRatios(l->spread, l->noise, l->token_share);
    m->notes.push_back(
        "the runs were length-bucketed: the ranks' spread is the bucketed one by the job's own "
        "sampler (run.json lengths) times the noise around forward and backward per position, "
        "not each rank's step-to-step variation");
  } else {
    for (const RunObservation* run : baselines) {
      for (auto& [rank, steps] : SteadyByRank(run->records)) {
        std::vector<double> c;
        for (const StepRecord* r : steps) c.push_back(r->forward + r->backward + r->optimizer);
        const double mean = Mean(c);
        if (mean <= 0) continue;
        for (double x : c) m->compute_jitter.push_back(x / mean);
      }
    }
    if (m->compute_jitter.empty()) m->compute_jitter.push_back(1.0);
  }
  std::sort(m->compute_jitter.begin(), m->compute_jitter.end());  // order statistics read it sorted
}

std::map<int, double> FindStragglers(const RunObservation& largest, double share_at,
                                     const std::optional<LengthBuckets>& lengths, double margin) {
  std::map<int, double> means;
  std::vector<double> steps;
  for (auto& [rank, rs] : SteadyByRank(largest.records)) {
    double fb = 0, optimizer = 0;
    std::vector<double> positions;
    for (const StepRecord* r : rs) {
      fb += r->forward + r->backward, optimizer += r->optimizer;
      steps.push_back(r->step_time());
      if (r->tokens) positions.push_back(static_cast<double>(*r->tokens));
    }
    const double n = static_cast<double>(rs.size());
    double work = 1;
    if (lengths && share_at > 0 && positions.size() == rs.size()) {
      work = WorkAt(lengths->token_share, share_at, Mean(positions));
    }
    means[rank] = (work > 0 ? fb / work : fb) / n + optimizer / n;
  }
  const double step = Mean(steps);
  std::vector<double> values;
  for (const auto& [rank, mean] : means) values.push_back(mean);
  // Each rank against the median of the other ranks: unbiased at N = 2.
  const std::vector<double> typicals = MedianOfOthers(values);
  std::map<int, double> stragglers;
  size_t i = 0;
  for (const auto& [rank, mean] : means) {
    const double typical = typicals[i++];
    if (typical > 0 && mean >= typical * (1 + margin) && mean - typical >= 0.01 * step) {
      stragglers[rank] = mean / typical;
    }
  }
  return stragglers;
}

}  // namespace stepscope::model
