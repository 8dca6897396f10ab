#include "model/fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "core/statistics.h"
#include "core/text_format.h"
#include "model/host_cpu.h"
#include "model/host_crowding.h"
#include "model/simulate.h"
#include "model/token_cost.h"

namespace stepscope::model {
namespace {

using RankSteps = std::map<int, std::vector<const StepRecord*>>;

RankSteps SteadyByRank(const std::vector<StepRecord>& records) {
  RankSteps by_rank;
  for (const StepRecord& r : records) {
    if (!r.warmup) by_rank[r.rank].push_back(&r);
  }
  return by_rank;
}

// Per steady step, the median over ranks of `f` (the typical rank, untouched by a straggler).
// Ranks in `exclude` (persistent stragglers) are left out while any other rank remains.
template <typename F>
std::vector<double> TypicalPerStep(const std::vector<StepRecord>& records, F f,
                                   const std::map<int, double>& exclude = {}) {
  bool others = false;
  for (const StepRecord& r : records) others |= !r.warmup && !exclude.count(r.rank);
  std::map<int64_t, std::vector<double>> by_step;
  for (const StepRecord& r : records) {
    if (!r.warmup && (!others || !exclude.count(r.rank))) by_step[r.step].push_back(f(r));
  }
  std::vector<double> out;
  for (auto& [step, values] : by_step) out.push_back(Median(values));
  return out;
}

// True when the typical rank waited for its batch 2 % of the step or more: the loader, not the
// rest of the step, set the step's length (one loader period).
bool LoaderBound(const RunObservation& run) {
  const double wait =
      Mean(TypicalPerStep(run.records, [](const StepRecord& r) { return r.input_wait; }));
  const double step =
      Mean(TypicalPerStep(run.records, [](const StepRecord& r) { return r.step_time(); }));
  return step > 0 && wait >= 0.02 * step;
}

double PerMicroBatch(const StepRecord& r, Seconds total) {
  return total / std::max(1, r.micro_batches);
}

Constant Make(const std::string& name, Estimate e, const std::string& unit, const std::string& how,
              bool assumed = false) {
  return Constant{name, e, unit, how, assumed};
}

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

// Each rank's positions in each steady step, steps in order; empty when a steady record lacks
// them.
DrawnPositions DrawnPositionsOf(const RunObservation& run) {
  std::map<int64_t, std::map<int, double>> by_step;
  for (const StepRecord& r : run.records) {
    if (r.warmup) continue;
    if (!r.tokens) return {};
    by_step[r.step][r.rank] = static_cast<double>(*r.tokens);
  }
  DrawnPositions out;
  for (const auto& [step, ranks] : by_step) {
    std::vector<double>& positions = out.emplace_back();
    for (const auto& [rank, p] : ranks) positions.push_back(p);
  }
  return out;
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
    *c1 = Make(phase + "_per_sample", at_b * (1.0 / b), unit1,
               "the baselines' " + phase + " at micro-batch " + std::to_string(b) +
                   ", taken as proportional to it (no run at twice the micro-batch)",
               true);
    *c0 = Make(phase + "_fixed", Estimate::Exact(0), unit0, "assumed 0: see the per-sample term",
               true);
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
  *c1 = Make(phase + "_per_sample", e1, unit1, how);
  *c0 = Make(phase + "_fixed", e0, unit0, how);
}

// A reduction that ran beside backward for less than this share of its duration did not
// overlap it.
constexpr double kBesideShare = 0.05;

// One sample per (run, bucket): the median over steps of the last-starting rank's duration, and
// of the time it ran beside that rank's reducing backward.
std::vector<CollectiveSample> CollectiveSamples(const RunObservation& run) {
  // Per bucket and step, each rank's reduction and the end of that rank's reducing backward.
  struct Seen {
    const CollectiveRecord* c;
    Seconds backward_end;
  };
  std::map<int, std::map<int64_t, std::vector<Seen>>> by_bucket;
  for (const StepRecord& r : run.records) {
    if (r.warmup) continue;
    const Seconds backward_end =
        r.backward_start ? *r.backward_start + PerMicroBatch(r, r.backward) : 0;
    for (const CollectiveRecord& c : r.collectives) {
      by_bucket[c.index][r.step].push_back({&c, backward_end});
    }
  }
  std::vector<CollectiveSample> out;
  for (auto& [index, steps] : by_bucket) {
    std::vector<double> costs, besides;
    Bytes bytes = 0;
    for (auto& [step, cs] : steps) {
      if (static_cast<int>(cs.size()) != run.config.replicas) continue;  // a rank lacks it
      // The reduction as the last rank to start it sees it: the critical path's share.
      const Seen* last = &cs.front();
      for (const Seen& c : cs) {
        if (c.c->start > last->c->start) last = &c;
        bytes = c.c->bytes;
      }
      costs.push_back(std::max(0.0, last->c->end - last->c->start));
      besides.push_back(
          run.config.overlap && last->backward_end > 0
              ? std::max(0.0, std::min(last->c->end, last->backward_end) - last->c->start)
              : 0.0);
    }
    if (costs.empty()) continue;
    CollectiveSample sample{run.config.replicas, bytes, Median(costs), Median(besides)};
    // A reduction whose start and backward's end are a few clock reads apart did not overlap.
    if (sample.beside < kBesideShare * sample.seconds) sample.beside = 0;
    out.push_back(sample);
  }
  return out;
}

// All-reduce cost per wire precision into m->collectives, from every run given that reduced at
// N >= 2 (its reductions' cost does not depend on what else the run changed), each reduction
// that overlapped backward corrected for the overlap rate (CollectiveSamples). Notes what the
// samples cannot identify into `notes`.
Status FitCollectives(const std::vector<RunObservation>& runs, double overlap_rate, StepModel* m,
                      std::vector<std::string>* notes) {
  std::map<std::string, std::vector<CollectiveSample>> by_dtype;
  for (const RunObservation& run : runs) {
    if (!run.reduce || run.config.replicas < 2) continue;
    for (CollectiveSample c : CollectiveSamples(run)) {
      // Beside backward it progressed at the overlap rate: its cost alone is its duration less
      // what that slowed it by.
      c.seconds = std::max(0.0, c.seconds - (1 - overlap_rate) * c.beside);
      by_dtype[run.config.dtype].push_back(c);
    }
  }
  m->collectives.clear();
  if (auto ref = by_dtype.find(m->reference.dtype); ref != by_dtype.end()) {
    Result<AlphaBeta> ab = FitAlphaBeta(ref->second);
    if (!ab.ok()) return ab.status();
    m->collectives[m->reference.dtype] = *ab;
    std::set<int> counts;
    for (const CollectiveSample& c : ref->second) counts.insert(c.replicas);
    if (ab->alpha_assumed && counts.size() == 1) {
      notes->push_back(
          "the reductions were measured at one replica count (N=" +
          std::to_string(*counts.begin()) +
          ") only, where their latency cannot be told from their bandwidth: latency taken as 0, "
          "so the predicted reduction grows with N by the bandwidth term alone (optimistic where "
          "each added replica adds a step to the reduction); a baseline at another N identifies "
          "it");
    }
  }
  for (const auto& [dtype, samples] : by_dtype) {
    if (dtype == m->reference.dtype) continue;
    Result<AlphaBeta> ab = FitAlphaBeta(samples);
    if (!ab.ok()) return ab.status();
    const auto ref = m->collectives.find(m->reference.dtype);
    if (ab->alpha_assumed && ref != m->collectives.end() && !ref->second.alpha_assumed) {
      ab = FitBandwidthGivenLatency(samples, ref->second.alpha_s, ref->second.fixed_s);
      if (!ab.ok()) return ab.status();
    }
    m->collectives[dtype] = *ab;
  }
  return Status::Ok();
}

// The rate that best reproduces the exposed communication of `overlapped` under `m` (a grid
// over [0, 1]; the band: every rate within 10 % of the best fit's squared error, and at least
// one grid step).
Estimate OverlapRateFromExposed(StepModel m, const std::vector<const RunObservation*>& overlapped) {
  std::map<const RunObservation*, double> exposed;
  for (const RunObservation* run : overlapped) {
    exposed[run] =
        Mean(TypicalPerStep(run->records, [](const StepRecord& r) { return r.exposed_comm; }));
  }
  constexpr int kSteps = 20;
  std::vector<double> error(kSteps + 1, 0.0);
  for (int i = 0; i <= kSteps; ++i) {
    m.overlap_rate.estimate = Estimate::Exact(static_cast<double>(i) / kSteps);
    for (const RunObservation* run : overlapped) {
      // The point value only: no band, no efficiency (Predict's extra simulations).
      Result<StepParts> p = SimulateStep(m, ScenarioOf(*run));
      if (!p.ok() || p->step() <= 0) continue;
      // The typical rank's wait at the reduction: the replay's exposed part and the wait for
      // the slowest rank's compute.
      const double predicted = p->exposed_comm + p->straggler_wait;
      error[i] += std::pow((predicted - exposed[run]) / p->step(), 2);
    }
  }
  const int best = static_cast<int>(std::min_element(error.begin(), error.end()) - error.begin());
  int lo = best, hi = best;
  while (lo > 0 && error[lo - 1] <= 1.1 * error[best]) --lo;
  while (hi < kSteps && error[hi + 1] <= 1.1 * error[best]) ++hi;
  lo = std::max(0, std::min(lo, best - 1)), hi = std::min(kSteps, std::max(hi, best + 1));
  return {static_cast<double>(best) / kSteps, static_cast<double>(lo) / kSteps,
          static_cast<double>(hi) / kSteps};
}

// The rate from the reductions' durations: each reduction that ran beside backward took its
// cost alone (fitted on the reductions that did not overlap, per wire precision) plus what the
// rate slowed it by, so rate = 1 - (duration - cost) / time beside. The median over those
// reductions, the band their quartiles (at least 0.05 either side). Nothing when the
// reductions that did not overlap do not identify both latency and bandwidth of a precision
// that overlapped.
struct RateFromDurations {
  Estimate rate;
  std::set<std::string> runs;  // the runs whose reductions gave it
};
std::optional<RateFromDurations> OverlapRateFromDurations(const std::vector<RunObservation>& runs) {
  std::map<std::string, std::vector<CollectiveSample>> alone, beside;
  std::map<std::string, std::set<std::string>> beside_runs;
  for (const RunObservation& run : runs) {
    if (!run.reduce || run.config.replicas < 2) continue;
    for (const CollectiveSample& c : CollectiveSamples(run)) {
      (c.beside > 0 ? beside : alone)[run.config.dtype].push_back(c);
      if (c.beside > 0) beside_runs[run.config.dtype].insert(run.name);
    }
  }
  std::vector<double> rates;
  std::set<std::string> used;
  for (const auto& [dtype, samples] : beside) {
    const auto a = alone.find(dtype);
    if (a == alone.end()) continue;
    std::set<std::pair<int, Bytes>> points;
    for (const CollectiveSample& c : a->second) points.insert({c.replicas, c.bytes});
    if (points.size() < 2) continue;  // one point: no latency apart from bandwidth
    Result<AlphaBeta> ab = FitAlphaBeta(a->second);
    if (!ab.ok() || ab->alpha_assumed || ab->beta_assumed) continue;
    for (const CollectiveSample& c : samples) {
      const Seconds cost = AllreduceSeconds(*ab, c.replicas, c.bytes);
      rates.push_back(std::clamp(1 - (c.seconds - cost) / c.beside, 0.0, 1.0));
    }
    used.insert(beside_runs[dtype].begin(), beside_runs[dtype].end());
  }
  if (rates.empty()) return std::nullopt;
  std::sort(rates.begin(), rates.end());
  const size_t quarter = (rates.size() - 1) / 4;
  const double q1 = rates[quarter], q3 = rates[rates.size() - 1 - quarter];
  const double mid = Median(rates);
  return RateFromDurations{Estimate{mid, std::max(0.0, std::min(q1, mid - 0.05)),
                                    std::min(1.0, std::max(q3, mid + 0.05))},
                           used};
}

// Gradient readiness: for each bucket, the median share of backward elapsed when it was ready,
// against the share of the step's bytes ready by then.
// `buckets`: how many buckets per step were measured.
std::vector<ReadinessPoint> Readiness(const std::vector<const RunObservation*>& runs,
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

// Gradient readiness from the recorded slices: each slice's share of backward elapsed when it
// was ready (per slice the median over the runs that recorded the same slices as the first),
// against the share of the gradient's bytes ready by then. Empty when no run recorded them.
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

// The measured bucket layout: each bucket's median share of the step's bytes, in launch order,
// over the steps with the most common bucket count; empty with no reducing steps.
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

// The gradient's slices as shares of its bytes, from the first run that recorded them; empty
// when none did.
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

// Memory per replica as fixed + per_sample x micro-batch. From the peak resident memory train
// recorded: the slope between the baseline and the double-batch run at the same N, and the
// rest of the baseline's peak as the fixed part; without the double-batch run's peak, the
// activations per sample from the layer shapes. Without any recorded peak: the model's buffers
// (weights, gradients, optimizer state; 4 bytes each per parameter) and those activations.
void FitMemory(const RunObservation& reference, const RunObservation* paired,
               const RunObservation* doubled, StepModel* m) {
  const Bytes buffers =
      static_cast<Bytes>(reference.parameters) * 4 * (2 + reference.optimizer_state_floats);
  const Bytes shapes = reference.activation_bytes_per_sample;
  const RunObservation* base = paired && paired->peak_memory_bytes ? paired : &reference;
  if (!base->peak_memory_bytes) {
    m->memory_fixed = buffers, m->memory_per_sample = shapes;
    m->memory_how =
        "the model's sizes (no peak memory recorded): weights, gradients and optimizer state, "
        "and the activations per sample from the layer shapes";
    return;
  }
  const int b = base->config.batch;
  const Bytes peak = *base->peak_memory_bytes;
  m->memory_per_sample = shapes;
  m->memory_how = "the peak resident memory of " + base->name + " at micro-batch " +
                  std::to_string(b) + "; per sample from the layer shapes";
  if (doubled && doubled->peak_memory_bytes && base == paired) {
    const double slope =
        static_cast<double>(*doubled->peak_memory_bytes - peak) / static_cast<double>(b);
    if (slope > 0) {
      m->memory_per_sample = static_cast<Bytes>(std::llround(slope));
      m->memory_how = "the peak resident memory of " + base->name + " and " + doubled->name +
                      " (micro-batch " + std::to_string(b) + " and " + std::to_string(2 * b) +
                      ") as fixed + per sample x micro-batch";
    } else {
      m->memory_how += " (the peak did not grow from " + base->name + " to " + doubled->name + ")";
    }
  }
  m->memory_fixed = std::max<Bytes>(buffers, peak - m->memory_per_sample * b);
}

// A run's CPU demand as the host CPU fit sees it; nullopt without a recorded CPU time. Its
// reductions' own CPU per step: the least-waiting rank's, and no more than the reductions'
// time from the last rank's arrival (a rank that waited in every step, as under a rotating
// imbalance, spun before it).
std::optional<HostCpuPoint> HostCpuPointOf(const RunObservation* run) {
  if (!run || !run->cpu_outside_reductions_per_step) return std::nullopt;
  std::optional<Seconds> reducing;
  if (run->reduce && run->cpu_in_reductions_least_rank) {
    Seconds timed = 0;
    for (const CollectiveSample& c : CollectiveSamples(*run)) timed += c.seconds;
    reducing = std::min(*run->cpu_in_reductions_least_rank, timed);
  }
  return HostCpuPoint{run->name,
                      run->config.replicas,
                      run->ranks_per_host,
                      run->cores_per_host,
                      *run->cpu_outside_reductions_per_step,
                      run->config.batch * run->config.accum,
                      reducing,
                      run->gradient_bytes * WireWidth(run->config.dtype) / 4,
                      run->config.algorithm == "shm" && !run->emulated_link};
}

// Every baseline's point, or none when one of them lacks it (the fit then leaves the ceiling out).
std::vector<HostCpuPoint> HostCpuPoints(const std::vector<const RunObservation*>& baselines) {
  std::vector<HostCpuPoint> points;
  for (const RunObservation* run : baselines) {
    std::optional<HostCpuPoint> p = HostCpuPointOf(run);
    if (!p) return {};
    points.push_back(*p);
  }
  return points;
}

// Crowded hosts: what the fitted parts do not reproduce of each crowded baseline's step goes
// into its overhead, and the crowding lines are fitted again. Ranks that share cores wake one after
// another once a reduction ends, so the last of them leaves it well after the rank the
// reduction's cost is timed on (on this 2-core host, 11 ms of a 161 ms step at 8 ranks): a
// cost of crowding, which the lines then carry (held at the largest run's crowding beyond the
// measured host), not the link's. A variable-length baseline is simulated as it drew its lengths;
// a loader-bound one keeps its overhead (its step is the loader's period whatever else it does).
void AddCrowdedResiduals(const std::vector<const RunObservation*>& baselines,
                         std::vector<CrowdingPoint>* points, StepModel* m) {
  std::string residuals;
  for (size_t i = 0; i < baselines.size(); ++i) {
    const RunObservation& run = *baselines[i];
    // A rank of its own per core: nothing of the crowding's to add (a residual there is the
    // other parts', which a line in the crowding would carry to every N).
    if (Crowding(run.ranks_per_host, run.cores_per_host) <= 0) continue;
    if (LoaderBound(run) || run.samples_per_s <= 0) continue;
    Scenario s = ScenarioOf(run);
    if (m->drawn.count(run.name) != 0) s.as_drawn = run.name;
    Result<StepParts> p = SimulateStep(*m, s);
    if (!p.ok()) continue;
    const Seconds measured = static_cast<double>(run.config.replicas) * run.config.batch *
                             run.config.accum / run.samples_per_s;
    // The overhead that makes the simulated step the measured one, at this run's crowding.
    (*points)[i].overhead = std::max(0.0, p->overhead + measured - p->step());
    const double ms = 1000 * (measured - p->step());
    if (std::fabs(ms) >= 0.05) {
      residuals += (residuals.empty() ? "" : ", ") + std::string(ms > 0 ? "+" : "") + Fixed(ms, 1) +
                   " ms at N=" + std::to_string(run.config.replicas);
    }
  }
  if (std::optional<HostCrowding> refitted = FitHostCrowding(*points)) {
    m->crowding = refitted;
    if (!residuals.empty()) {
      m->notes.push_back(
          "the crowding lines' overhead includes what the other parts did not "
          "reproduce of each baseline's step (" +
          residuals + "): on shared cores, the ranks waking one after another");
    }
  }
}

}  // namespace

Result<StepModel> FitStepModel(const std::vector<RunObservation>& runs, const FitOptions& options) {
  std::vector<const RunObservation*> baselines, doubles;
  for (const RunObservation& run : runs) {
    if (run.role == RunRole::kBaseline) baselines.push_back(&run);
    if (run.role == RunRole::kDoubleBatch) doubles.push_back(&run);
  }
  if (baselines.empty()) {
    return Status::Error("no baseline run to fit (a diagnose directory has runs/baseline-nN)");
  }
  std::sort(baselines.begin(), baselines.end(),
            [](const RunObservation* a, const RunObservation* b) {
              return a->config.replicas < b->config.replicas;
            });
  StepModel m;
  m.reference = baselines.back()->config;
  for (const RunObservation* run : baselines) {
    const Config& c = run->config;
    if (c.batch != m.reference.batch || c.accum != m.reference.accum ||
        c.dtype != m.reference.dtype || c.bucket_mb != m.reference.bucket_mb ||
        c.overlap != m.reference.overlap) {
      return Status::Error("baseline " + run->name +
                           " differs from the other baselines in more than the replica count "
                           "(micro-batch, accumulation, precision, bucket or overlap)");
    }
    if (SteadyByRank(run->records).empty()) {
      return Status::Error("baseline " + run->name + " has no steady step records");
    }
    m.fitted_replicas.push_back(c.replicas);
  }
  const int b = m.reference.batch;

  // Jitter (every rank's step-to-step ratio to its own mean) and persistent stragglers (from
  // the largest baseline).
  for (const RunObservation* run : baselines) {
    for (auto& [rank, steps] : SteadyByRank(run->records)) {
      std::vector<double> c;
      for (const StepRecord* r : steps) c.push_back(r->forward + r->backward + r->optimizer);
      const double mean = Mean(c);
      if (mean <= 0) continue;
      for (double x : c) m.compute_jitter.push_back(x / mean);
    }
  }
  if (m.compute_jitter.empty()) m.compute_jitter.push_back(1.0);
  m.length_buckets = baselines.back()->length_buckets;
  double share_at = 0;  // the positions token_share holds at, once fitted
  if (m.length_buckets) {
    if (const std::optional<TokenCost> t = FitTokenCost(baselines.back()->records)) {
      m.length_buckets->token_share = t->token_share;
      m.length_buckets->noise = t->noise;
      share_at = t->positions;
    }
  }
  if (m.length_buckets && m.length_buckets->applied && !m.length_buckets->spread.empty()) {
    // Bucketed runs: every rank of a step draws from one bucket, so each rank's work moves with
    // the step's and its ratio to its own mean counts what all ranks share, which nobody waits
    // on. The step waits on the spread within a bucket, and on the host's noise.
    const LengthBuckets& l = *m.length_buckets;
    m.compute_jitter = BucketedRatios(l.spread, l.noise, l.token_share);
    m.notes.push_back(
        "the runs were length-bucketed: the ranks' spread is the bucketed one by the job's own "
        "sampler (run.json lengths) times the noise around forward and backward per position, "
        "not each rank's step-to-step variation");
  }
  std::sort(m.compute_jitter.begin(), m.compute_jitter.end());  // order statistics read it sorted
  {
    const RankSteps largest = SteadyByRank(baselines.back()->records);
    std::map<int, double> means;
    std::vector<double> steps;
    for (auto& [rank, rs] : largest) {
      double fb = 0, optimizer = 0;
      std::vector<double> positions;
      for (const StepRecord* r : rs) {
        fb += r->forward + r->backward, optimizer += r->optimizer;
        steps.push_back(r->step_time());
        if (r->tokens) positions.push_back(static_cast<double>(*r->tokens));
      }
      const double n = static_cast<double>(rs.size());
      // Variable-length text: a rank that drew longer examples over a few steps is not a slow
      // device. Its forward and backward count at the typical positions (the line fitted on
      // them), so that only a rank slower for its positions persists.
      double work = 1;
      if (share_at > 0 && positions.size() == rs.size()) {
        work = WorkAt(m.length_buckets->token_share, share_at, Mean(positions));
      }
      means[rank] = (work > 0 ? fb / work : fb) / n + optimizer / n;
    }
    const double step = Mean(steps);
    for (auto& [rank, mean] : means) {
      std::vector<double> others;  // the median of the other ranks: unbiased at N = 2
      for (auto& [other, other_mean] : means) {
        if (other != rank) others.push_back(other_mean);
      }
      const double typical = Median(others);
      if (typical > 0 && mean >= typical * (1 + options.straggler_margin) &&
          mean - typical >= 0.01 * step) {
        m.stragglers[rank] = mean / typical;
      }
    }
  }

  // Compute per micro-batch, and the optimizer per step.
  const std::map<int, double>& slow = m.stragglers;
  auto phase_at = [&slow](const std::vector<const RunObservation*>& set, bool forward) {
    return BootstrapMean(Concat(set, [forward, &slow](const RunObservation& run) {
      return TypicalPerStep(
          run.records,
          [forward](const StepRecord& r) {
            return PerMicroBatch(r, forward ? r.forward : r.backward);
          },
          slow);
    }));
  };
  // Compute constants from all baselines pooled (replicas sharing a host make each N's compute
  // differ by its own noise); the slope in b from the double-batch run against the baseline at
  // the same N, applied to the pooled value. Each fitted N keeps its ratio to the pool.
  const RunObservation* doubled = nullptr;
  const RunObservation* paired = nullptr;
  for (const RunObservation* run : doubles) {
    for (const RunObservation* base : baselines) {
      if (run->config.batch == 2 * b && base->config.replicas == run->config.replicas &&
          !SteadyByRank(run->records).empty()) {
        doubled = run, paired = base;
      }
    }
  }
  const auto at_2b = [&](bool forward, const Estimate& pooled) -> std::optional<Estimate> {
    if (!doubled) return std::nullopt;
    const double at_b = phase_at({paired}, forward).value;
    const double growth = at_b > 0 ? phase_at({doubled}, forward).value / at_b : 2.0;
    return pooled * growth;
  };
  const Estimate forward_b = phase_at(baselines, true), backward_b = phase_at(baselines, false);
  FitPhase("forward", forward_b, at_2b(true, forward_b), b, &m.forward_c0, &m.forward_c1);
  FitPhase("backward", backward_b, at_2b(false, backward_b), b, &m.backward_c0, &m.backward_c1);
  m.optimizer =
      Make("optimizer",
           BootstrapMean(Concat(baselines,
                                [&slow](const RunObservation& run) {
                                  return TypicalPerStep(
                                      run.records, [](const StepRecord& r) { return r.optimizer; },
                                      slow);
                                })),
           "s per step", "the baselines' mean, on the typical rank");
  const auto compute_mean = [&slow](const RunObservation& run) {
    return Mean(TypicalPerStep(
        run.records, [](const StepRecord& r) { return r.forward + r.backward + r.optimizer; },
        slow));
  };
  if (m.length_buckets) AddPositions(runs, baselines, share_at, slow, &m);
  // A variable-length baseline's compute carries the lengths it drew: its ratio is to the pooled
  // compute at its own positions, so that it keeps the host's speed at its N, not its draw.
  const auto pooled_compute = [&](const RunObservation& run) {
    double work = 1;
    if (m.length_buckets && m.length_buckets->positions > 0) {
      const LengthBuckets& l = *m.length_buckets;
      work = WorkAt(l.token_share, l.positions, Mean(TypicalPositions(run, slow)));
    }
    return (forward_b.value + backward_b.value) * work + m.optimizer.estimate.value;
  };
  double lo = 1, hi = 1;
  for (const RunObservation* run : baselines) {
    const double expected = pooled_compute(*run);
    const double ratio = expected > 0 ? compute_mean(*run) / expected : 1.0;
    m.compute_ratio[run->config.replicas] = ratio;
    lo = std::min(lo, ratio), hi = std::max(hi, ratio);
  }
  if (hi - lo > 0.05) {
    m.notes.push_back("compute per replica differs across the baselines (" +
                      std::to_string(static_cast<int>(std::lround(100 * lo))) + "-" +
                      std::to_string(static_cast<int>(std::lround(100 * hi))) +
                      " % of their mean): each measured N keeps its own; other N use the mean");
  }

  // All-reduce cost per wire precision, from every run given that reduced at N >= 2 (its
  // reductions' cost does not depend on what else the run changed); the gradient's size and
  // its readiness from the baselines.
  for (const RunObservation& run : runs) {
    if (run.reduce && run.config.replicas >= 2 && run.role == RunRole::kOther) {
      m.cost_runs.push_back(run.name);
    }
  }
  std::vector<const RunObservation*> reducing;
  for (const RunObservation* run : baselines) {
    m.gradient_bytes = std::max(m.gradient_bytes, run->gradient_bytes);
    if (run->reduce && run->config.replicas >= 2) reducing.push_back(run);
  }
  if (Status s = FitCollectives(runs, 1.0, &m, &m.notes); !s.ok()) return s;
  if (m.collectives.empty()) {
    m.notes.push_back(
        "no run at 2 replicas or more reduced gradients: the all-reduce cost is "
        "unknown and taken as 0 unless a link is given");
  }
  int buckets = 0;
  m.bucket_shares = BucketShares(reducing);
  m.slice_shares = SliceShares(baselines);
  m.readiness = Readiness(reducing, &buckets);
  m.readiness_how =
      "per measured bucket, the median share of backward elapsed when it was ready, against the "
      "share of the gradient's bytes ready by then";
  if (std::vector<ReadinessPoint> sliced = SliceReadiness(baselines); !sliced.empty()) {
    // The slices are finer than the buckets, and identify the profile where one bucket a step
    // shows only the end of backward.
    m.readiness = std::move(sliced);
    m.readiness_how =
        "per gradient slice (the layers or blocks backward reports ready; run.json "
        "model.ready_slices_backward_share), the median share of backward elapsed when it was "
        "ready, against the share of the gradient's bytes ready by then";
  } else if (buckets <= 1) {
    m.readiness_assumed = true;
    m.readiness = {{0, 0}, {1, 1}};
    m.readiness_how =
        "assumed: gradients ready uniformly over backward (one bucket per step measured)";
    m.notes.push_back(
        "gradient readiness within backward not identified (one bucket per "
        "step): assumed uniform over backward");
  }

  // Input: a worker's service time per batch where the wait shows the loader binding.
  std::vector<double> waits, services;
  for (const RunObservation* run : baselines) {
    const std::vector<double> w =
        TypicalPerStep(run->records, [](const StepRecord& r) { return r.input_wait; });
    waits.insert(waits.end(), w.begin(), w.end());
    if (LoaderBound(*run)) {
      const double step =
          Mean(TypicalPerStep(run->records, [](const StepRecord& r) { return r.step_time(); }));
      services.push_back(run->config.loader_workers * step);  // wait + the rest = one period
    }
  }
  m.input_wait = Make("input_wait", BootstrapMean(waits), "s per step",
                      "the baselines' mean wait for a batch, held constant");
  if (!services.empty()) {
    const auto [lo, hi] = std::minmax_element(services.begin(), services.end());
    m.loader_service =
        Make("loader_service", Estimate{Mean(services), *lo, *hi}, "s per batch per worker",
             "workers x step time of the baselines that waited for input "
             "(a loader-bound step lasts one loader period)");
  }
  // Each baseline's overhead per step on the typical rank: pooled for the overhead, and per run
  // for the crowding below.
  std::vector<std::vector<double>> overheads;
  std::vector<double> pooled_overhead;
  for (const RunObservation* run : baselines) {
    overheads.push_back(
        TypicalPerStep(run->records, [](const StepRecord& r) { return r.overhead(); }));
    pooled_overhead.insert(pooled_overhead.end(), overheads.back().begin(), overheads.back().end());
  }
  m.overhead = Make("overhead", BootstrapMean(pooled_overhead), "s per step",
                    "the baselines' residual (step - input - compute - exposed)");

  // Ranks that outnumber the cores: compute and overhead as lines in the crowding.
  std::vector<CrowdingPoint> crowding;
  for (size_t i = 0; i < baselines.size(); ++i) {
    const RunObservation& run = *baselines[i];
    crowding.push_back({run.ranks_per_host, run.cores_per_host,
                        m.compute_ratio.at(run.config.replicas), Mean(overheads[i])});
  }
  m.crowding = FitHostCrowding(crowding);
  if (m.crowding) {
    m.notes.push_back(
        "ranks outnumbered the " + std::to_string(m.crowding->cores_per_host) +
        " cores of their host in some baselines: compute and overhead follow the ranks per core "
        "(lines fitted on the baselines), for scenarios with the same cores per host");
  }

  FitMemory(*baselines.back(), paired, doubled, &m);
  m.host_cpu =
      FitHostCpu(HostCpuPoints(baselines), HostCpuPointOf(paired), HostCpuPointOf(doubled));
  if (m.host_cpu) {
    m.notes.push_back(
        "the step is at least the time the host's " + std::to_string(m.host_cpu->cores_per_host) +
        " cores take for its ranks' CPU work (ranks per host x CPU per rank per step / cores)");
    if (m.host_cpu->reduction_per_byte) {
      m.notes.push_back(
          "where ranks outnumber their cores, a shared-memory reduction takes at least the "
          "cores' time for every rank's share of it (ranks per host x CPU per wire byte x "
          "2(N-1)/N x bytes / cores), the CPU per byte measured where each rank had a core");
    }
  }

  // How fast reductions progress beside backward: the rate that best reproduces the exposed
  // communication of the runs that overlapped several buckets (a grid over [0, 1]; the band:
  // every rate within 10 % of the best fit's squared error, and at least one grid step). Their
  // exposed communication, not their throughput: a run's compute moves with the host from run
  // to run, and fitted on the throughput the rate would absorb that movement.
  // A run whose loader set the step (it waited for input) says nothing about the rate: its
  // step is one loader period whatever the reduction overlapped, and fitting on it would pick an
  // arbitrary rate that then inflates every step the loader no longer sets.
  std::vector<const RunObservation*> overlapped;
  for (const RunObservation& run : runs) {
    bool several = false;
    for (const StepRecord& r : run.records) several |= !r.warmup && r.collectives.size() >= 2;
    if (run.reduce && run.config.overlap && run.config.replicas >= 2 && several &&
        !run.synthetic_input && run.samples_per_s > 0 && !LoaderBound(run)) {
      overlapped.push_back(&run);
    }
  }
  if (!overlapped.empty()) {
    std::string names;
    for (const RunObservation* run : overlapped) names += (names.empty() ? "" : ", ") + run->name;
    if (const std::optional<RateFromDurations> rate = OverlapRateFromDurations(runs)) {
      // The reductions' cost alone: each overlapped one's duration less what the rate slowed it.
      std::vector<std::string> notes;  // the first fit's notes are m's already
      if (Status st = FitCollectives(runs, rate->rate.value, &m, &notes); !st.ok()) return st;
      std::string from;
      for (const std::string& run : rate->runs) from += (from.empty() ? "" : ", ") + run;
      m.overlap_rate = Make(
          "overlap_rate", rate->rate, "share of full speed",
          "from the reductions that ran beside backward (in " + from +
              "): each one's duration against its cost alone, fitted on the reductions that did "
              "not overlap, as 1 - (duration - cost) / time beside backward; the median, the "
              "quartiles as the band. The reductions' cost is then fitted on every reduction, "
              "each overlapped one less what the rate slowed it by");
    } else {
      m.overlap_rate =
          Make("overlap_rate", OverlapRateFromExposed(m, overlapped), "share of full speed",
               "the rate that best reproduces the exposed communication of the runs "
               "that overlapped several buckets: " +
                   names +
                   " (the reductions that did not overlap backward do not identify "
                   "their cost alone, which would give the rate from their "
                   "durations)");
    }
    for (const RunObservation* run : overlapped) {
      if (std::find(m.cost_runs.begin(), m.cost_runs.end(), run->name) == m.cost_runs.end() &&
          run->role == RunRole::kOther) {
        m.cost_runs.push_back(run->name);
      }
    }
  }
  if (m.crowding) AddCrowdedResiduals(baselines, &crowding, &m);
  return m;
}

std::vector<RunObservation> RunsAt(const std::vector<RunObservation>& runs,
                                   const std::vector<int>& replicas) {
  std::vector<RunObservation> out;
  for (const RunObservation& run : runs) {
    if (std::find(replicas.begin(), replicas.end(), run.config.replicas) != replicas.end()) {
      out.push_back(run);
    }
  }
  return out;
}

void KeepDrawnPositions(const std::vector<RunObservation>& runs, StepModel* m) {
  if (!m->length_buckets || !(m->length_buckets->positions > 0)) return;
  for (const RunObservation& run : runs) {
    if (m->drawn.count(run.name) != 0) continue;
    DrawnPositions drawn = DrawnPositionsOf(run);
    if (!drawn.empty()) m->drawn[run.name] = std::move(drawn);
  }
}

Scenario ScenarioOf(const RunObservation& run) {
  Scenario s;
  s.replicas = run.config.replicas;
  s.dtype = run.config.dtype;
  s.bucket_mb = run.config.bucket_mb;
  s.overlap = run.config.overlap;
  s.batch = run.config.batch;
  s.accum = run.config.accum;
  s.loader_workers = run.config.loader_workers;
  if (run.ranks_per_host > 0) s.ranks_per_host = run.ranks_per_host;
  // A run with length-bucketed batches (a lever run, say) is the bucketed scenario.
  s.balance_lengths = run.length_buckets && run.length_buckets->applied;
  return s;
}

}  // namespace stepscope::model
