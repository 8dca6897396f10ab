#include "model/compute_fit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "core/statistics.h"
#include "core/text_format.h"
#include "model/fit.h"
#include "model/token_cost.h"
#include "model/typical_rank.h"

namespace stepscope::model {
namespace {

std::vector<double> Concat(const std::vector<const RunObservation*>& runs,
                           const std::function<std::vector<double>(const RunObservation&)>& f) {
  std::vector<double> out;
  for (const RunObservation* run : runs) {
    const std::vector<double> v = f(*run);
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// The typical rank's positions in each steady step (the median over ranks, as the compute
// constants take it); empty when a steady record lacks them.
std::vector<double> TypicalPositions(const RunObservation& run,
                                     const std::map<int, double>& exclude) {
  for (const StepRecord& r : run.records) {
    if (!r.warmup && !r.tokens) return {};
  }
  return TypicalPerStep(
      run.records, [](const StepRecord& r) { return static_cast<double>(r.tokens.value_or(0)); },
      exclude);
}

// Variable-length text whose records carry tokens: the positions the pooled compute stands for
// (every baseline's typical rank, pooled as the constants are), token_share moved to them, and
// every run's drawn positions. Left unset when a baseline lacks tokens.
void AddPositions(const std::vector<RunObservation>& runs,
                  const std::vector<const RunObservation*>& baselines, double share_at,
                  const std::map<int, double>& slow, StepModel* m) {
  std::vector<double> pooled;
  for (const RunObservation* run : baselines) {
    const std::vector<double> p = TypicalPositions(*run, slow);
    if (p.empty()) return;
    pooled.insert(pooled.end(), p.begin(), p.end());
  }
  const double positions = Mean(pooled);
  if (!(positions > 0) || !(share_at > 0)) return;
  LengthBuckets& l = *m->length_buckets;
  l.token_share = TokenShareAt(l.token_share, share_at, positions);
  l.positions = positions;
  KeepDrawnPositions(runs, m);
}

// Compute of one phase at b and (when measured) 2b as c0 + c1 b.
void FitPhase(const std::string& phase, const Estimate& at_b, const std::optional<Estimate>& at_2b,
              int b, Constant* c0, Constant* c1) {
  const std::string unit0 = "s per micro-batch", unit1 = "s per sample";
  if (!at_2b) {
    *c1 = Constant{phase + "_per_sample", at_b * (1.0 / b), unit1,
                   "the baselines' " + phase + " at micro-batch " + std::to_string(b) +
                       ", taken as proportional to it (no run at twice the micro-batch)",
                   true};
    *c0 = Constant{phase + "_fixed", Estimate::Exact(0), unit0,
                   "assumed 0: see the per-sample term", true};
    return;
  }
  const double slope = std::max(0.0, (at_2b->value - at_b.value) / b);
  const Estimate e1{slope, std::max(0.0, (at_2b->low - at_b.high) / b),
                    std::max(slope, (at_2b->high - at_b.low) / b)};
  // A negative fixed term (compute growing faster than the micro-batch between b and 2b) is
  // kept, so that both measured points are reproduced; simulate keeps each phase >= 0.
  const double fixed = at_b.value - slope * b;
  const Estimate e0{fixed, std::min(fixed, at_b.low - e1.high * b),
                    std::max(fixed, at_b.high - e1.low * b)};
  std::string how = "from the baselines at micro-batch " + std::to_string(b) + " and the run at " +
                    std::to_string(2 * b);
  if (fixed < 0) {
    how += "; negative: this phase grew faster than the micro-batch, so micro-batches below " +
           std::to_string(b) + " are extrapolated poorly";
  }
  *c1 = Constant{phase + "_per_sample", e1, unit1, how};
  *c0 = Constant{phase + "_fixed", e0, unit0, how};
}

}  // namespace

DoubleBatchPair FindDoubleBatchPair(const std::vector<const RunObservation*>& baselines,
                                    const std::vector<const RunObservation*>& doubles, int batch) {
  DoubleBatchPair pair;
  for (const RunObservation* run : doubles) {
    for (const RunObservation* base : baselines) {
      if (run->config.batch == 2 * batch && base->config.replicas == run->config.replicas &&
          !SteadyByRank(run->records).empty()) {
        pair.doubled = run, pair.baseline = base;
      }
    }
  }
  return pair;
}

void FitCompute(const std::vector<RunObservation>& runs,
                const std::vector<const RunObservation*>& baselines, const DoubleBatchPair& pair,
                double share_at, StepModel* m) {
  const int b = m->reference.batch;
  const std::map<int, double>& slow = m->stragglers;
  // A phase per micro-batch on the typical rank, every steady step of `set`.
  auto phase_steps = [&slow](const std::vector<const RunObservation*>& set, bool forward) {
    return Concat(set, [forward, &slow](const RunObservation& run) {
      return TypicalPerStep(
          run.records,
          [forward](const StepRecord& r) {
            return PerMicroBatch(r, forward ? r.forward : r.backward);
          },
          slow);
    });
  };
  const RunObservation* doubled = pair.doubled;
  const RunObservation* paired = pair.baseline;
  // The pooled phase grown as the pair's grew from b to 2b (their means: only the ratio is used).
  const auto at_2b = [&](bool forward, const Estimate& pooled) -> std::optional<Estimate> {
    if (!doubled) return std::nullopt;
    const double at_b = Mean(phase_steps({paired}, forward));
    const double growth = at_b > 0 ? Mean(phase_steps({doubled}, forward)) / at_b : 2.0;
    return pooled * growth;
  };
  const Estimate forward_b = BootstrapMean(phase_steps(baselines, true));
  const Estimate backward_b = BootstrapMean(phase_steps(baselines, false));
  FitPhase("forward", forward_b, at_2b(true, forward_b), b, &m->forward_c0, &m->forward_c1);
  FitPhase("backward", backward_b, at_2b(false, backward_b), b, &m->backward_c0, &m->backward_c1);
  m->optimizer =
      Constant{"optimizer",
               BootstrapMean(Concat(baselines,
                                    [&slow](const RunObservation& run) {
                                      return TypicalPerStep(
                                          run.records,
                                          [](const StepRecord& r) { return r.optimizer; }, slow);
                                    })),
               "s per step", "the baselines' mean, on the typical rank"};
  const auto compute_mean = [&slow](const RunObservation& run) {
    return Mean(TypicalPerStep(
        run.records, [](const StepRecord& r) { return r.forward + r.backward + r.optimizer; },
        slow));
  };
  if (m->length_buckets) AddPositions(runs, baselines, share_at, slow, m);
  // A variable-length baseline's compute carries the lengths it drew: its ratio is to the pooled
  // compute at its own positions, so that it keeps the host's speed at its N, not its draw.
  const auto pooled_compute = [&](const RunObservation& run) {
    double work = 1;
    if (m->length_buckets && m->length_buckets->positions > 0) {
      const LengthBuckets& l = *m->length_buckets;
      work = WorkAt(l.token_share, l.positions, Mean(TypicalPositions(run, slow)));
    }
    // Per step, as the run's own compute: its micro-batches' forward and backward, one update.
    return std::max(1, run.config.accum) * (forward_b.value + backward_b.value) * work +
           m->optimizer.estimate.value;
  };
  double lo = 1, hi = 1;
  for (const RunObservation* run : baselines) {
    const double expected = pooled_compute(*run);
    const double ratio = expected > 0 ? compute_mean(*run) / expected : 1.0;
    m->compute_ratio[run->config.replicas] = ratio;
    lo = std::min(lo, ratio), hi = std::max(hi, ratio);
  }
  if (hi - lo > 0.05) {
    m->notes.push_back("compute per replica differs across the baselines (" + Fixed(100 * lo, 0) +
                       "-" + Fixed(100 * hi, 0) +
                       " % of their mean): each measured N keeps its own; other N use the mean");
  }
}

}  // namespace stepscope::model
