#include "model/fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "core/statistics.h"
#include "core/text_format.h"
#include "model/compute_fit.h"
#include "model/gradient_layout.h"
#include "model/host_cpu.h"
#include "model/host_crowding.h"
#include "model/memory_fit.h"
#include "model/rank_spread.h"
#include "model/reduction_fit.h"
#include "model/simulate.h"
#include "model/token_cost.h"
#include "model/typical_rank.h"

namespace stepscope::model {
namespace {

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

// A run's CPU demand as the host CPU fit sees it; nullopt without a recorded CPU time. Its
// reductions' own CPU per step: the least-waiting rank's, and no more than the reductions'
// time from the last rank's arrival (a rank that waited in every step, as under a rotating
// imbalance, spun before it).
std::optional<HostCpuPoint> HostCpuPointOf(const RunObservation* run, const SamplesByRun& samples) {
  if (!run || !run->cpu_outside_reductions_per_step) return std::nullopt;
  std::optional<Seconds> reducing;
  if (run->reduce && run->cpu_in_reductions_least_rank) {
    Seconds timed = 0;
    for (const CollectiveSample& c : samples.at(run)) timed += c.probe ? 0.0 : c.seconds;
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
std::vector<HostCpuPoint> HostCpuPoints(const std::vector<const RunObservation*>& baselines,
                                        const SamplesByRun& samples) {
  std::vector<HostCpuPoint> points;
  for (const RunObservation* run : baselines) {
    std::optional<HostCpuPoint> p = HostCpuPointOf(run, samples);
    if (!p) return {};
    points.push_back(*p);
  }
  return points;
}

// A run's step from its throughput (replicas x micro-batch x accumulation samples a step); 0
// without one.
Seconds MeasuredStep(const RunObservation& run) {
  return run.samples_per_s > 0 ? static_cast<double>(run.config.replicas) * run.config.batch *
                                     run.config.accum / run.samples_per_s
                               : 0.0;
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
    const Seconds measured = MeasuredStep(run);
    // The overhead that makes the simulated step the measured one, at this run's crowding.
    (*points)[i].overhead = std::max(0.0, p->overhead + measured - p->step());
    (*points)[i].residual = (*points)[i].overhead - p->overhead;
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

// A run's loader service per batch, where its records show it: a loader in the training process
// waits its whole service time (its mean wait); workers the loader bound serve one batch per
// period each (workers x its mean step). nullopt otherwise.
std::optional<Estimate> LoaderService(const RunObservation& run) {
  if (run.config.loader_workers == 0) {
    return BootstrapMean(
        TypicalPerStep(run.records, [](const StepRecord& r) { return r.input_wait; }));
  }
  if (!LoaderBound(run)) return std::nullopt;
  return BootstrapMean(
             TypicalPerStep(run.records, [](const StepRecord& r) { return r.step_time(); })) *
         run.config.loader_workers;
}

// The share of the loader's service per batch that grows with the micro-batch, from the
// double-batch run against the baseline at its N, where both show the service: a loader in the
// training process (its wait), or workers the loader bound in both (one period each). Unset
// otherwise: the service per batch is then held at the baselines' whatever the micro-batch.
void FitLoaderBatchShare(const DoubleBatchPair& pair, StepModel* m) {
  if (pair.baseline == nullptr || pair.doubled == nullptr) return;
  const auto at = m->loader_service_at.find(pair.baseline->config.replicas);
  if (at == m->loader_service_at.end()) return;
  const RunObservation& d = *pair.doubled;
  const std::optional<Estimate> service = LoaderService(d);
  if (!service) return;
  const Estimate& doubled = *service;
  const Estimate& base = at->second;
  if (!(base.value > 0 && base.low > 0)) return;
  // Its micro-batches per step may differ from the baseline's: the service is per batch.
  const double batches =
      static_cast<double>(std::max(1, d.config.accum)) / std::max(1, pair.baseline->config.accum);
  const double growth = static_cast<double>(d.config.batch) / pair.baseline->config.batch - 1;
  if (!(growth > 0)) return;
  auto share = [&](double doubled_service, double base_service) {
    return std::clamp((doubled_service / batches / base_service - 1) / growth, 0.0, 1.0);
  };
  m->loader_batch_share = Constant{
      "loader_batch_share",
      Estimate{share(doubled.value, base.value), share(doubled.low, base.high),
               share(doubled.high, base.low)},
      "share of the service per batch",
      "the double-batch run (" + d.name +
          ") against the baseline at N=" + std::to_string(pair.baseline->config.replicas) +
          ": how much of the loader's service per batch grows with the micro-batch (0 to 1)"};
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

  // Variable-length text: what a position costs (token_cost.h). Then how the ranks' compute
  // spreads: its jitter and the named stragglers (rank_spread.h).
  m.length_buckets = baselines.back()->length_buckets;
  double share_at = 0;  // the positions token_share holds at, once fitted
  if (m.length_buckets) {
    if (const std::optional<TokenCost> t = FitTokenCost(baselines.back()->records)) {
      m.length_buckets->token_share = t->token_share;
      m.length_buckets->noise = t->noise;
      share_at = t->positions;
    }
  }
  FitComputeJitter(baselines, &m);
  m.stragglers =
      FindStragglers(*baselines.back(), share_at, m.length_buckets, options.straggler_margin);

  // Compute per micro-batch and the optimizer per step, pooled over the baselines, with the slope
  // in the micro-batch from the double-batch run (compute_fit.h).
  const DoubleBatchPair pair = FindDoubleBatchPair(baselines, doubles, b);
  FitCompute(runs, baselines, pair, share_at, &m);

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
  const SamplesByRun samples = CollectiveSamplesOf(runs);  // read once, used by three fits
  if (Status s = FitCollectives(runs, samples, 1.0, &m, &m.notes); !s.ok()) return s;
  if (m.collectives.empty()) {
    m.notes.push_back(
        "no run at 2 replicas or more reduced gradients: the all-reduce cost is "
        "unknown and taken as 0 unless a link is given");
  }
  FitGradientLayout(reducing, baselines, &m);

  // Input: a worker's service time per batch where the wait shows the loader binding; a loader
  // in the training process (no workers) waits its whole service time every batch.
  std::vector<double> waits;
  std::map<int, Estimate>& services = m.loader_service_at;  // by replicas
  bool in_process = false;
  for (const RunObservation* run : baselines) {
    const std::vector<double> w =
        TypicalPerStep(run->records, [](const StepRecord& r) { return r.input_wait; });
    waits.insert(waits.end(), w.begin(), w.end());
    if (std::optional<Estimate> service = LoaderService(*run)) {
      services[run->config.replicas] = *service;
      in_process = in_process || run->config.loader_workers == 0;
    }
  }
  m.input_wait = Constant{"input_wait", BootstrapMean(waits), "s per step",
                          "the baselines' mean wait for a batch, held constant"};
  if (!services.empty()) {
    double lo = services.begin()->second.value, hi = lo, sum = 0;
    for (const auto& [n, service] : services) {
      lo = std::min(lo, service.value), hi = std::max(hi, service.value), sum += service.value;
    }
    const double mean = sum / static_cast<double>(services.size());
    m.loader_service = Constant{
        "loader_service", Estimate{mean, lo, hi}, "s per batch per worker",
        in_process ? "the baselines' wait for their batches, loaded in the training process "
                     "(the loader's whole service time, in series with the rest of the step)"
                   : "workers x step time of the baselines that waited for input "
                     "(a loader-bound step lasts one loader period)"};
    FitLoaderBatchShare(pair, &m);
    if (hi > 1.05 * lo && services.size() > 1) {
      m.notes.push_back(
          "the loader's service per batch differs across the baselines (" +
          Fixed(100 * lo / mean, 0) + "-" + Fixed(100 * hi / mean, 0) +
          " % of their mean; loader workers share the host's cores with the ranks): each "
          "measured N keeps its own; other N use the mean");
    }
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
  m.overhead = Constant{"overhead", BootstrapMean(pooled_overhead), "s per step",
                        "the baselines' residual (step - input - compute - exposed)"};

  // Ranks that outnumber the cores: compute and overhead as lines in the crowding.
  std::vector<CrowdingPoint> crowding;
  for (size_t i = 0; i < baselines.size(); ++i) {
    const RunObservation& run = *baselines[i];
    crowding.push_back({run.ranks_per_host, run.cores_per_host,
                        m.compute_ratio.at(run.config.replicas), Mean(overheads[i]),
                        run.cpu_busiest_host_share, MeasuredStep(run)});
  }
  m.crowding = FitHostCrowding(crowding);
  if (m.crowding) {
    m.notes.push_back(
        "ranks outnumbered the " + std::to_string(m.crowding->cores_per_host) +
        " cores of their host in some baselines: compute and overhead follow the ranks per core "
        "(lines fitted on the baselines), for scenarios with the same cores per host");
    if (m.crowding->queue_b) {
      m.notes.push_back(
          "a crowded baseline kept its host's cores at least " + Fixed(100 * kQueueLoad, 0) +
          " % busy: compute stretches as a queue's waiting, rho/(1-rho) of the host's load rho "
          "(its ranks' CPU per step over its cores and the step, solved with the step), not "
          "along the line in ranks per core");
    }
  }

  FitMemory(*baselines.back(), pair.baseline, pair.doubled, &m);
  m.host_cpu = FitHostCpu(HostCpuPoints(baselines, samples), HostCpuPointOf(pair.baseline, samples),
                          HostCpuPointOf(pair.doubled, samples));
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

  if (Status s = FitOverlapRate(runs, samples, &m); !s.ok()) return s;
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

}  // namespace stepscope::model
