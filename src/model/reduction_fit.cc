#include "model/reduction_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/statistics.h"
#include "model/simulate.h"
#include "model/typical_rank.h"

namespace stepscope::model {
namespace {

// A reduction that ran beside backward for less than this share of its duration did not
// overlap it.
constexpr double kBesideShare = 0.05;

// "; N of them ..." for a fit's `how` where latency probes are among its samples.
std::string ProbesAmong(const std::vector<CollectiveSample>& samples) {
  const auto probes = std::count_if(samples.begin(), samples.end(),
                                    [](const CollectiveSample& c) { return c.probe; });
  if (probes == 0) return "";
  return "; " + std::to_string(probes) +
         " of them latency probes (a small payload timed apart from a run's steps: run.json "
         "latency_probe)";
}

}  // namespace

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
  if (!run.latency_probe_seconds.empty() && run.reduce && run.config.replicas >= 2) {
    out.push_back({run.config.replicas, run.latency_probe_bytes, Median(run.latency_probe_seconds),
                   0.0, /*probe=*/true});
  }
  return out;
}

SamplesByRun CollectiveSamplesOf(const std::vector<RunObservation>& runs) {
  SamplesByRun out;
  for (const RunObservation& run : runs) out[&run] = CollectiveSamples(run);
  return out;
}

Status FitCollectives(const std::vector<RunObservation>& runs, const SamplesByRun& samples,
                      double overlap_rate, StepModel* m, std::vector<std::string>* notes) {
  std::map<std::string, std::vector<CollectiveSample>> by_dtype;
  for (const RunObservation& run : runs) {
    if (!run.reduce || run.config.replicas < 2) continue;
    for (CollectiveSample c : samples.at(&run)) {
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
    ab->how += ProbesAmong(ref->second);
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
  for (const auto& [dtype, of_dtype] : by_dtype) {
    if (dtype == m->reference.dtype) continue;
    Result<AlphaBeta> ab = FitAlphaBeta(of_dtype);
    if (!ab.ok()) return ab.status();
    const auto ref = m->collectives.find(m->reference.dtype);
    if (ab->alpha_assumed && ref != m->collectives.end() && !ref->second.alpha_assumed) {
      ab = FitBandwidthGivenLatency(of_dtype, ref->second.alpha_s, ref->second.fixed_s);
      if (!ab.ok()) return ab.status();
    }
    ab->how += ProbesAmong(of_dtype);
    m->collectives[dtype] = *ab;
  }
  return Status::Ok();
}

namespace {

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
std::optional<RateFromDurations> OverlapRateFromDurations(const std::vector<RunObservation>& runs,
                                                          const SamplesByRun& samples) {
  std::map<std::string, std::vector<CollectiveSample>> alone, beside;
  std::map<std::string, std::set<std::string>> beside_runs;
  for (const RunObservation& run : runs) {
    if (!run.reduce || run.config.replicas < 2) continue;
    for (const CollectiveSample& c : samples.at(&run)) {
      (c.beside > 0 ? beside : alone)[run.config.dtype].push_back(c);
      if (c.beside > 0) beside_runs[run.config.dtype].insert(run.name);
    }
  }
  std::vector<double> rates;
  std::set<std::string> used;
  for (const auto& [dtype, overlapped] : beside) {
    const auto a = alone.find(dtype);
    if (a == alone.end()) continue;
    std::set<std::pair<int, Bytes>> points;
    for (const CollectiveSample& c : a->second) points.insert({c.replicas, c.bytes});
    if (points.size() < 2) continue;  // one point: no latency apart from bandwidth
    Result<AlphaBeta> ab = FitAlphaBeta(a->second);
    if (!ab.ok() || ab->alpha_assumed || ab->beta_assumed) continue;
    for (const CollectiveSample& c : overlapped) {
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

}  // namespace

Status FitOverlapRate(const std::vector<RunObservation>& runs, const SamplesByRun& samples,
                      StepModel* m) {
  std::vector<const RunObservation*> overlapped;
  for (const RunObservation& run : runs) {
    bool several = false;
    for (const StepRecord& r : run.records) several |= !r.warmup && r.collectives.size() >= 2;
    if (run.reduce && run.config.overlap && run.config.replicas >= 2 && several &&
        !run.synthetic_input && run.samples_per_s > 0 && !LoaderBound(run)) {
      overlapped.push_back(&run);
    }
  }
  if (overlapped.empty()) return Status::Ok();  // the rate stays as it was (1, assumed)
  if (const std::optional<RateFromDurations> rate = OverlapRateFromDurations(runs, samples)) {
    // The reductions' cost alone: each overlapped one's duration less what the rate slowed it.
    std::vector<std::string> notes;  // the first fit's notes are m's already
    if (Status st = FitCollectives(runs, samples, rate->rate.value, m, &notes); !st.ok()) return st;
    std::string from;
    for (const std::string& run : rate->runs) from += (from.empty() ? "" : ", ") + run;
    m->overlap_rate = Constant{
        "overlap_rate", rate->rate, "share of full speed",
        "from the reductions that ran beside backward (in " + from +
            "): each one's duration against its cost alone, fitted on the reductions that did "
            "not overlap, as 1 - (duration - cost) / time beside backward; the median, the "
            "quartiles as the band. The reductions' cost is then fitted on every reduction, "
            "each overlapped one less what the rate slowed it by"};
  } else {
    std::string names;
    for (const RunObservation* run : overlapped) names += (names.empty() ? "" : ", ") + run->name;
    m->overlap_rate =
        Constant{"overlap_rate", OverlapRateFromExposed(*m, overlapped), "share of full speed",
                 "the rate that best reproduces the exposed communication of the runs "
                 "that overlapped several buckets: " +
                     names +
                     " (the reductions that did not overlap backward do not identify "
                     "their cost alone, which would give the rate from their "
                     "durations)"};
  }
  for (const RunObservation* run : overlapped) {
    if (std::find(m->cost_runs.begin(), m->cost_runs.end(), run->name) == m->cost_runs.end() &&
        run->role == RunRole::kOther) {
      m->cost_runs.push_back(run->name);
    }
  }
  return Status::Ok();
}

}  // namespace stepscope::model
