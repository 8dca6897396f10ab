#include "model/simulate.h"

#include <algorithm>
#include <cmath>

#include "core/number_text.h"
#include "core/text_format.h"
#include "model/host_cpu.h"
#include "model/host_crowding.h"
#include "model/order_statistics.h"
#include "model/replay.h"
#include "model/token_cost.h"

namespace stepscope::model {
namespace {

// The scenario's buckets (bytes, launch order) for a `total`-byte gradient at `bucket_mb`.
// At the measured bucket size, the measured layout. At another, with the gradient's slices
// known (the granularity the reducer groups: layers, blocks), the slices grouped in ready order
// as the reducer groups them: a bucket closes once it holds at least the size, and a reducer with
// its own first-bucket limit (reference.first_bucket_mb: PyTorch DDP's 1 MiB) closes its first
// at that limit. Without the slices, from the measured layout: for a larger size, consecutive
// measured buckets merged until one holds at least the size; for a smaller one, each measured
// bucket split into pieces of at most the size (which assumes layers finer than the measured
// buckets), the first measured bucket kept as it was under a first-bucket limit. Without a
// measured layout either, buckets of exactly the size.
std::vector<double> BucketSizes(const StepModel& m, double bucket_mb, double total) {
  const double cap = bucket_mb * 1024 * 1024;
  std::vector<double> out;
  const bool measured = bucket_mb == m.reference.bucket_mb;
  const bool first_kept = m.reference.first_bucket_mb > 0;
  if (!m.slice_shares.empty() && !(measured && !m.bucket_shares.empty())) {
    double open = 0;
    for (const double share : m.slice_shares) {
      open += share * total;
      const double limit =
          out.empty() && first_kept ? m.reference.first_bucket_mb * 1024 * 1024 : cap;
      if (open >= limit) out.push_back(open), open = 0;
    }
    if (open > 0) out.push_back(open);
    return out;
  }
  if (m.bucket_shares.empty()) {
    for (double done = 0; done < total;) {
      const double size = std::min(cap, total - done);
      done += size;
      out.push_back(size);
    }
    return out;
  }
  double open = 0;
  for (size_t i = 0; i < m.bucket_shares.size(); ++i) {
    const double size = m.bucket_shares[i] * total;
    if (measured || (i == 0 && first_kept)) {
      out.push_back(size);
    } else if (bucket_mb > m.reference.bucket_mb) {
      open += size;
      if (open >= cap) out.push_back(open), open = 0;
    } else {
      const double pieces = std::ceil(size / cap);
      for (int k = 0; k < static_cast<int>(pieces); ++k) out.push_back(size / pieces);
    }
  }
  if (open > 0) out.push_back(open);
  return out;
}

// Share of backward elapsed when `bytes_share` of the gradient bytes are ready (piecewise
// linear through the readiness profile).
double ReadyShare(const std::vector<ReadinessPoint>& profile, double bytes_share) {
  for (size_t i = 1; i < profile.size(); ++i) {
    const ReadinessPoint& a = profile[i - 1];
    const ReadinessPoint& b = profile[i];
    if (bytes_share <= b.bytes_share + 1e-12) {
      const double span = b.bytes_share - a.bytes_share;
      const double t = span > 0 ? (bytes_share - a.bytes_share) / span : 1.0;
      return a.backward_share + std::clamp(t, 0.0, 1.0) * (b.backward_share - a.backward_share);
    }
  }
  return 1.0;
}

// A higher overlap rate makes the step faster: its fast end is the interval's high end.
Side Flip(Side side) {
  return side == Side::kLow ? Side::kHigh : side == Side::kHigh ? Side::kLow : side;
}

// More buckets per step than this is a bucket size given by mistake (and a replay too long).
constexpr int kMaxBuckets = 1000000;
// A crowding line extrapolated below this compute ratio is held at it (a line fitted on few
// points can fall steeply).
constexpr double kMinComputeRatio = 0.5;

// The cost of one all-reduce in a scenario: on one flat link (the given link, the fitted cost
// of the precision, or the reference precision's at the same cost per wire byte), or across
// hosts (the inter-host link is needed only beyond one host). Unknown (known() false) when
// nothing was measured or given.
struct CollectiveCost {
  const AlphaBeta* flat = nullptr;
  const AlphaBeta* intra = nullptr;
  const AlphaBeta* inter = nullptr;
  int per_host = 0;
  CrossHostAlgorithm algorithm = CrossHostAlgorithm::kHierarchical;

  bool known() const {
    return flat != nullptr || intra != nullptr || (inter != nullptr && per_host == 1);
  }
  double Cost(int replicas, Bytes bytes, Side side) const {
    if (flat) return AllreduceSeconds(*flat, replicas, bytes, side);
    // One device per host: a ring of hosts, whichever the algorithm.
    if (!intra) return AllreduceSeconds(*inter, replicas, bytes, side);
    if (!inter || replicas <= per_host) return AllreduceSeconds(*intra, replicas, bytes, side);
    return CrossHostAllreduceSeconds(*intra, *inter, algorithm, per_host, replicas, bytes, side);
  }
};

// What reducing `bytes` costs in bandwidth on `cost`'s host link against `reference_bytes` on
// `reference`'s (their seconds per byte; the bytes' ratio where either is not known).
double BytesCostRatio(const CollectiveCost& cost, const CollectiveCost& reference, Side side,
                      Bytes bytes, Bytes reference_bytes) {
  const AlphaBeta* a = cost.flat ? cost.flat : cost.intra;
  const AlphaBeta* b = reference.flat ? reference.flat : reference.intra;
  const double wire = static_cast<double>(bytes) / static_cast<double>(reference_bytes);
  if (!a || !b) return wire;
  const double per_byte = Pick(b->seconds_per_byte, side);
  return per_byte > 0 ? wire * Pick(a->seconds_per_byte, side) / per_byte : wire;
}

Result<CollectiveCost> ResolveCost(const StepModel& m, const Scenario& s,
                                   const std::string& dtype) {
  const AlphaBeta* fitted = nullptr;
  if (auto it = m.collectives.find(dtype); it != m.collectives.end()) {
    fitted = &it->second;
  } else if (auto ref = m.collectives.find(m.reference.dtype); ref != m.collectives.end()) {
    fitted = &ref->second;  // same cost per wire byte: an assumption the notes state
  }
  CollectiveCost c;
  const std::optional<int> per_host =
      s.devices_per_host ? s.devices_per_host
                         : (m.hosts ? std::optional<int>(m.hosts->devices_per_host) : std::nullopt);
  if (!per_host) {
    c.flat = s.link ? &*s.link : fitted;
    return c;
  }
  if (*per_host < 1) return Status::Error("devices per host must be at least 1");
  c.per_host = *per_host;
  if (m.hosts) c.algorithm = m.hosts->algorithm;
  c.intra = s.intra_link ? &*s.intra_link : (m.hosts && m.hosts->intra) ? &*m.hosts->intra : fitted;
  c.inter = s.inter_link                  ? &*s.inter_link
            : (m.hosts && m.hosts->inter) ? &*m.hosts->inter
            : s.link                      ? &*s.link
                                          : nullptr;
  if (s.replicas > c.per_host) {
    if (!c.inter) {
      return Status::Error(
          "devices across hosts need an inter-host link (e.g. --inter-link 25,10)");
    }
    if (!c.intra && c.per_host > 1) {
      return Status::Error(
          "no intra-host link was measured or given: give one (e.g. --intra-link 100,2)");
    }
  }
  return c;
}

struct Resolved {
  int replicas, batch, accum, workers;
  std::string dtype;
  double bucket_mb;
  bool overlap;
};

}  // namespace

double FirstBucketMb(const std::string& algorithm) {
  return algorithm == "gloo" || algorithm == "nccl" || algorithm == "ucc" ? 1.0 : 0.0;
}

int WireWidth(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "bf16" || dtype == "fp16") return 2;
  return 0;
}

namespace {

// Forward and backward with length-bucketed batches over as drawn: the part that scales with
// the positions at the bucketed work, the rest as it was.
double BucketedWork(const LengthBuckets& l) {
  return 1 - l.token_share + l.token_share * l.work_ratio;
}

// How a scenario's ranks' forward and backward stand against the fitted compute: `work` on the
// mean rank, and the expected slowest rank over it (the step waits for it).
struct RankSpread {
  double work = 1;
  double slowest = 1;
};

// H_n = 1 + 1/2 + ... + 1/n; past 256 terms by its expansion (within 1e-11).
double HarmonicNumber(int n) {
  if (n > 256) {
    const double x = n;
    return std::log(x) + 0.5772156649015329 + 1 / (2 * x) - 1 / (12 * x * x);
  }
  double h = 0;
  for (int i = 1; i <= n; ++i) h += 1.0 / i;
  return h;
}

// Where the crowding's queue form sets a scenario's compute (host_crowding.h): a model fitted
// with it, at a replica count whose compute was not measured, on a host whose ranks share cores.
bool QueueApplies(const StepModel& m, const Scenario& s) {
  return m.crowding && m.crowding->queue_b && m.crowding->cpu_per_rank_step > 0 &&
         m.compute_ratio.count(s.replicas) == 0 &&
         Crowding(ScenarioRanksPerHost(m.crowding->max_ranks_per_host, s),
                  m.crowding->cores_per_host) > 0;
}

// SimulateStep with the ranks' spread given, and the host's load where the crowding's queue
// form applies (Simulate below solves it).
Result<StepParts> SimulateAt(const StepModel& m, const Scenario& s, Side side,
                             const RankSpread& spread, double load) {
  const Resolved r{s.replicas,
                   s.batch.value_or(m.reference.batch),
                   s.accum.value_or(m.reference.accum),
                   s.loader_workers.value_or(m.reference.loader_workers),
                   s.dtype.value_or(m.reference.dtype),
                   s.bucket_mb.value_or(m.reference.bucket_mb),
                   s.overlap.value_or(m.reference.overlap)};
  if (r.replicas < 1) return Status::Error("replicas must be at least 1");
  if (r.batch < 1 || r.accum < 1) return Status::Error("micro-batch and accumulation must be >= 1");
  if (r.workers < 0) {
    return Status::Error("loader workers must be at least 0 (0: loading in the training process)");
  }
  if (!(s.compute_scale > 0)) return Status::Error("compute scale must be > 0");
  if (!(r.bucket_mb > 0)) return Status::Error("bucket size must be > 0 MiB");
  const int width = WireWidth(r.dtype);
  if (width == 0)
    return Status::Error("unknown wire precision '" + r.dtype + "' (fp32, bf16, fp16)");
  if (!m.reference.comm_hook.empty() && r.dtype != m.reference.dtype) {
    return Status::Error("the runs reduced through the script's own communication hook (" +
                         m.reference.comm_hook + "), whose wire precision (" + m.reference.dtype +
                         " as recorded) is the hook's: a what-if cannot change it; drop "
                         "--reduce-dtype, or register another hook and measure that");
  }

  // Ranks per core beyond one, where the model knows how crowding stretches compute and
  // overhead (host_crowding.h).
  const double crowded = m.crowding
                             ? Crowding(ScenarioRanksPerHost(m.crowding->max_ranks_per_host, s),
                                        m.crowding->cores_per_host)
                             : 0.0;
  const auto measured = m.compute_ratio.find(r.replicas);
  double compute_ratio = 1.0;
  // Where the queue's form applies: the share of the stretched compute that is waiting for a
  // core beyond what the most loaded baseline waited (its waits are in the fitted jitter).
  double queue_share = 0;
  if (measured != m.compute_ratio.end()) {
    compute_ratio = measured->second;
  } else if (QueueApplies(m, s)) {
    const double b = m.crowding->queue_b->estimate.value;
    compute_ratio =
        std::max(kMinComputeRatio, m.crowding->queue_a->estimate.value + b * QueueWait(load));
    queue_share = std::max(0.0, b) *
                  std::max(0.0, QueueWait(load) - QueueWait(m.crowding->queue_load)) /
                  compute_ratio;
  } else if (m.crowding) {
    compute_ratio =
        std::max(kMinComputeRatio, m.crowding->compute_ratio_a.estimate.value +
                                       m.crowding->compute_ratio_b.estimate.value * crowded);
  }
  const double scale = s.compute_scale / compute_ratio;
  const double b = r.batch;
  const double work = spread.work;
  const Seconds forward = std::max(
      0.0,
      work * (Pick(m.forward_c0.estimate, side) + Pick(m.forward_c1.estimate, side) * b) / scale);
  const Seconds backward = std::max(
      0.0,
      work * (Pick(m.backward_c0.estimate, side) + Pick(m.backward_c1.estimate, side) * b) / scale);
  const Seconds optimizer = Pick(m.optimizer.estimate, side) / scale;

  // The rank the step waits for: the slowest of N jittering ranks, or a persistent straggler.
  double critical = spread.slowest;
  if (!s.without_stragglers) {
    for (const auto& [rank, factor] : m.stragglers) {
      if (rank < r.replicas) critical = std::max(critical, factor);
    }
  }
  critical = std::max(critical, 1.0);
  // A queue's wait for a core is exponential about its mean (a single queue's), and the step
  // waits for the slowest of its N ranks: the expected largest of N such waits is the mean times
  // the harmonic number H_N, so the slowest rank waits (H_N - 1) means more than the typical one
  // (of the waiting the baselines' jitter does not hold).
  if (queue_share > 0) critical += queue_share * (HarmonicNumber(r.replicas) - 1);

  StepParts p;
  p.compute = r.accum * (forward + backward) + optimizer;
  // The critical rank is slower in all its compute, the optimizer included (it runs after the
  // reduction, and the next step's reduction waits for it).
  p.straggler_wait = (r.accum * (forward + backward) + optimizer) * (critical - 1.0);

  // Buckets of the scenario's size, ready as the profile says, replayed on one channel.
  const Seconds backward_critical = backward * critical;
  Result<CollectiveCost> cost = ResolveCost(m, s, r.dtype);
  if (!cost.ok()) return cost.status();
  // Ranks that outnumber their cores share them inside the reduction too, where the host does
  // its arithmetic (host_cpu.h); a link given in the scenario is not the host's. The CPU per byte
  // was measured in the reference precision: another one's arithmetic is scaled by what its
  // fitted reduction costs per byte against the reference's (bf16 on the shared-memory path
  // converts as it reduces, and is slower than fp32, not twice as fast).
  // Only where the scenario's ranks outnumber their cores; the reference precision's cost is
  // resolved only for another precision, and without it that precision gets no bound.
  bool host_bound =
      m.host_cpu && m.host_cpu->reduction_per_byte && !s.link && !s.intra_link && !s.inter_link &&
      ScenarioRanksPerHost(m.host_cpu->max_ranks_per_host, s) > m.host_cpu->cores_per_host;
  std::optional<CollectiveCost> reference_cost;
  if (host_bound && r.dtype != m.reference.dtype) {
    Result<CollectiveCost> c = ResolveCost(m, s, m.reference.dtype);
    if (c.ok() && c->known()) reference_cost = *c;
    host_bound = reference_cost.has_value();
  }
  if (cost->known() && r.replicas > 1 && m.gradient_bytes > 0) {
    const double cap = r.bucket_mb * 1024 * 1024;
    const double total = static_cast<double>(m.gradient_bytes);
    if (total / cap > kMaxBuckets) {
      return Status::Error("bucket size " + Fixed(r.bucket_mb, 6) + " MiB makes more than " +
                           std::to_string(kMaxBuckets) + " buckets of the " +
                           std::to_string(m.gradient_bytes) + "-byte gradient (give a larger one)");
    }
    std::vector<BucketEvent> buckets;
    double done = 0;
    for (const double size : BucketSizes(m, r.bucket_mb, total)) {
      done += size;
      const Seconds ready =
          ReadyShare(m.readiness, std::min(1.0, done / total)) * backward_critical;
      const Bytes wire = static_cast<Bytes>(std::llround(size * width / 4.0));
      Seconds seconds = cost->Cost(r.replicas, wire, side);
      if (host_bound) {
        const Bytes reference_wire =
            static_cast<Bytes>(std::llround(size * WireWidth(m.reference.dtype) / 4.0));
        Seconds floor = ReductionCpuFloor(*m.host_cpu, s, reference_wire, side);
        if (reference_cost) {
          floor *= BytesCostRatio(*cost, *reference_cost, side, wire, reference_wire);
        }
        seconds = std::max(seconds, floor);
      }
      buckets.push_back({ready, seconds});
    }
    const double rate = Pick(m.overlap_rate.estimate, Flip(side));
    p.exposed_comm = ReplayReductions(buckets, backward_critical, r.overlap, rate).exposed;
  }
  p.overhead = m.crowding ? std::max(0.0, Pick(m.crowding->overhead_a.estimate, side) +
                                              Pick(m.crowding->overhead_b.estimate, side) * crowded)
                          : Pick(m.overhead.estimate, side);
  // Accumulating K micro-batches asks the loader for K batches per step: K/K_ref loader periods
  // (or K/K_ref of the reference's wait) per step, not one.
  const double batches = static_cast<double>(r.accum) / std::max(1, m.reference.accum);
  if (m.loader_service) {
    // A measured N's own service; other N the baselines' mean, its band their range.
    const auto measured_service = m.loader_service_at.find(r.replicas);
    // The share of it that grows with the micro-batch, where the double-batch run showed it.
    const double per_batch =
        m.loader_batch_share
            ? std::max(0.0, 1 + Pick(m.loader_batch_share->estimate, side) *
                                    (static_cast<double>(r.batch) / m.reference.batch - 1))
            : 1.0;
    const Seconds service =
        per_batch * Pick(measured_service != m.loader_service_at.end() ? measured_service->second
                                                                       : m.loader_service->estimate,
                         side);
    const Seconds other = p.compute + p.straggler_wait + p.exposed_comm + p.overhead;
    // No workers: the training process loads each batch itself, in series with the rest.
    p.input_wait =
        r.workers == 0 ? batches * service : std::max(0.0, batches * service / r.workers - other);
  } else {
    p.input_wait = batches * Pick(m.input_wait.estimate, side);
  }
  // The host's cores: a step no shorter than its ranks' CPU work over them (host_cpu.h). The
  // excess is the ranks waiting for cores, in overhead; a loader that waited for less than that
  // no longer sets the step.
  if (m.host_cpu) {
    const Seconds floor = HostCpuFloor(*m.host_cpu, s, r.batch * r.accum, side);
    if (floor > p.step()) {
      const Seconds other = p.compute + p.straggler_wait + p.exposed_comm + p.overhead;
      p.input_wait = m.loader_service && r.workers > 0 ? 0.0 : p.input_wait;
      p.overhead += floor - other - p.input_wait;
    }
  }
  return p;
}

// What the wire's pricing assumes, or "": a fitted model asked for a wire precision it never
// measured, on its own fitted cost (no link given), prices it at the reference precision's cost
// per wire byte; a link given to a model whose script hook was recorded in the bucket's bytes
// prices those bytes, not what the hook sends.
std::string WireNote(const StepModel& m, const Scenario& s) {
  const bool link = s.link || s.intra_link || s.inter_link;
  if (link && m.reference.comm_hook_bytes_are_bucket) {
    return "the script's own communication hook (" + m.reference.comm_hook +
           ") was recorded in the bucket's bytes, not what it sends: the link prices the "
           "bucket's bytes, at most what a hook that compresses (PowerSGD) sends";
  }
  const std::string dtype = s.dtype.value_or(m.reference.dtype);
  if (m.fitted_replicas.empty() || link || m.collectives.count(dtype) != 0 ||
      m.collectives.count(m.reference.dtype) == 0) {
    return "";
  }
  return dtype + " on the wire was never measured: priced at " + m.reference.dtype +
         "'s fitted cost per wire byte (" + std::to_string(WireWidth(dtype)) + " bytes per " +
         "gradient element instead of " + std::to_string(WireWidth(m.reference.dtype)) +
         "), an assumption: an all-reduce that reduces on the host can be slower in 16 bits " +
         "(docs/model.md); a run at that precision replaces it (the lever's own run, diagnose "
         "--apply-levers; not the reduced-precision check's, which measures the loss)";
}

// A smaller bucket size than the measured one, with the measured buckets but not the gradient's
// slices: the buckets were split into pieces of the size, which a reducer never does to a layer.
std::string SplitBucketNote(const StepModel& m, const Scenario& s) {
  if (!s.bucket_mb || !(*s.bucket_mb < m.reference.bucket_mb) || m.bucket_shares.empty() ||
      !m.slice_shares.empty()) {
    return "";
  }
  return "buckets of " + Fixed(*s.bucket_mb, 3) + " MiB split from the measured ones: layers " +
         "finer than the measured buckets are assumed (a reducer never splits a layer); " +
         "the runs did not record the gradient's slices (run.json model.ready_slices_bytes), " +
         "which would group them as the reducer does";
}

// The expected slowest of the scenario's ranks relative to the mean one: from the measured
// jitter; with length-bucketed batches each rank's forward and backward drawn from the bucketed
// spread (on the part that scales with positions) times the host's noise, or no spread where
// the lengths are not known.
double JitterMax(const StepModel& m, const Scenario& s) {
  const int n = std::max(1, s.replicas);
  if (!s.balance_lengths) return ExpectedMaximum(m.compute_jitter, n);
  if (!m.length_buckets) return 1.0;
  const LengthBuckets& l = *m.length_buckets;
  if (l.applied) return ExpectedMaximum(m.compute_jitter, n);  // bucketed already
  // On the scaling share of the bucketed forward and backward.
  return ExpectedMaximum(
      BucketedRatios(l.spread, l.noise, l.token_share * l.work_ratio / BucketedWork(l)), n);
}

// A run as it drew its lengths: each rank's work from its positions in each step, the slowest
// of them under the host's noise around the positions, averaged over the run's steps.
Result<RankSpread> DrawnSpread(const StepModel& m, const Scenario& s) {
  const auto drawn = m.drawn.find(s.as_drawn);
  if (drawn == m.drawn.end() || !m.length_buckets || !(m.length_buckets->positions > 0)) {
    return Status::Error("run '" + s.as_drawn +
                         "' has no positions per rank to predict it as drawn (variable-length "
                         "runs whose records carry tokens have)");
  }
  const LengthBuckets& l = *m.length_buckets;
  double work = 0, slowest = 0;
  size_t rank_steps = 0;
  for (const std::vector<double>& step : drawn->second) {
    if (static_cast<int>(step.size()) != s.replicas) {
      return Status::Error("run '" + s.as_drawn + "' drew lengths for " +
                           std::to_string(step.size()) + " ranks in a step, not " +
                           std::to_string(s.replicas));
    }
    std::vector<double> ranks;
    for (double positions : step) {
      ranks.push_back(WorkAt(l.token_share, l.positions, positions));
      work += ranks.back(), ++rank_steps;
    }
    slowest += ExpectedMaximumScaled(l.noise, ranks);
  }
  if (rank_steps == 0 || !(work > 0)) {
    return Status::Error("run '" + s.as_drawn + "' has no steady step with positions");
  }
  const double steps = static_cast<double>(drawn->second.size());
  work /= static_cast<double>(rank_steps);
  return RankSpread{work, slowest / steps / work};
}

// The load's bisection: at most this many halvings, ended once its interval is this narrow.
constexpr int kLoadIterations = 50;
constexpr double kLoadTolerance = 1e-6;

// SimulateStep with the ranks' spread given (it does not depend on the side, so Predict
// computes it once for its six simulations). Where the crowding's queue form applies to the
// scenario, its host's load and its step are solved together: rho = R d / (C step), d each
// rank's CPU per step in the most loaded baseline, the step the simulation's at that rho
// (longer as rho grows, so rho - R d / (C step(rho)) only grows: bisection).
Result<StepParts> Simulate(const StepModel& m, const Scenario& s, Side side,
                           const RankSpread& spread) {
  if (!QueueApplies(m, s)) return SimulateAt(m, s, side, spread, 0);
  const double work = ScenarioRanksPerHost(m.crowding->max_ranks_per_host, s) *
                      m.crowding->cpu_per_rank_step / m.crowding->cores_per_host;
  double low = 0, high = kMaxQueueLoad;
  Result<StepParts> at = SimulateAt(m, s, side, spread, high);
  if (!at.ok() || work / at->step() >= high) return at;  // the cap: the cores' floor takes over
  for (int i = 0; i < kLoadIterations && high - low > kLoadTolerance; ++i) {
    const double mid = (low + high) / 2;
    at = SimulateAt(m, s, side, spread, mid);
    if (!at.ok()) return at;
    (work / at->step() > mid ? low : high) = mid;
  }
  return SimulateAt(m, s, side, spread, (low + high) / 2);
}

// The scenario's ranks against the fitted compute: as a run drew them, or expected (length-
// bucketed batches compute less padding in forward and backward).
Result<RankSpread> SpreadOf(const StepModel& m, const Scenario& s) {
  if (!s.as_drawn.empty()) return DrawnSpread(m, s);
  const double work = s.balance_lengths && m.length_buckets && !m.length_buckets->applied
                          ? BucketedWork(*m.length_buckets)
                          : 1.0;
  return RankSpread{work, JitterMax(m, s)};
}

}  // namespace

Result<StepParts> SimulateStep(const StepModel& m, const Scenario& s, Side side) {
  Result<RankSpread> spread = SpreadOf(m, s);
  if (!spread.ok()) return spread.status();
  return Simulate(m, s, side, *spread);
}

Result<Prediction> Predict(const StepModel& m, const Scenario& asked) {
  Scenario s = asked;
  Prediction out;
  out.replicas = s.replicas;
  int batch = s.batch.value_or(m.reference.batch), accum = s.accum.value_or(m.reference.accum);
  if (!s.device_memory_gb) s.device_memory_gb = m.device_memory_gb;
  if (s.device_memory_gb) {
    const double limit = *s.device_memory_gb * 1024.0 * 1024 * 1024;
    const auto need = [&](int mb) {
      return static_cast<double>(m.memory_fixed) + static_cast<double>(m.memory_per_sample) * mb;
    };
    if (need(batch) > limit) {
      const double room = limit - static_cast<double>(m.memory_fixed);
      const int fits = m.memory_per_sample > 0 && room > 0
                           ? static_cast<int>(room / static_cast<double>(m.memory_per_sample))
                           : 0;
      if (fits < 1) {
        out.fits_memory = false;
        out.memory_note =
            "does not fit in " + Fixed(*s.device_memory_gb, 1) + " GiB even at micro-batch 1";
      } else {
        // The same samples per step: the largest micro-batch that fits and divides them.
        const int samples = batch * accum;
        int micro = std::min(fits, samples);
        while (samples % micro != 0) --micro;
        const int new_accum = samples / micro;
        out.memory_note = "micro-batch " + std::to_string(batch) + " does not fit in " +
                          Fixed(*s.device_memory_gb, 1) + " GiB (at most " + std::to_string(fits) +
                          "): modelled as " + std::to_string(micro) + " x " +
                          std::to_string(new_accum) + " accumulated, the same " +
                          std::to_string(samples) + " samples per step";
        batch = micro, accum = new_accum;
      }
    }
  }
  s.batch = batch, s.accum = accum;
  out.batch = batch, out.accum = accum;
  out.wire_note = WireNote(m, s);
  out.bucket_note = SplitBucketNote(m, s);
  Scenario one = s;
  one.replicas = 1;
  one.ranks_per_host.reset();  // one replica runs alone on its host
  one.as_drawn.clear();        // a run's lengths were drawn for its own ranks
  Result<RankSpread> spread_n = SpreadOf(m, s);
  if (!spread_n.ok()) return spread_n.status();
  Result<RankSpread> spread_1 = SpreadOf(m, one);
  if (!spread_1.ok()) return spread_1.status();
  double step[3], per_s[3], eff[3];
  const Side sides[3] = {Side::kValue, Side::kLow, Side::kHigh};
  for (int i = 0; i < 3; ++i) {
    Result<StepParts> at_n = Simulate(m, s, sides[i], *spread_n);
    if (!at_n.ok()) return at_n.status();
    Result<StepParts> at_1 = Simulate(m, one, sides[i], *spread_1);
    if (!at_1.ok()) return at_1.status();
    (i == 0 ? out.parts : i == 1 ? out.parts_fast : out.parts_slow) = *at_n;
    const double samples = static_cast<double>(batch) * accum;
    step[i] = at_n->step();
    per_s[i] = step[i] > 0 ? s.replicas * samples / step[i] : 0;
    const double one_per_s = at_1->step() > 0 ? samples / at_1->step() : 0;
    eff[i] = one_per_s > 0 ? per_s[i] / (s.replicas * one_per_s) : 0;
  }
  out.step_s = {step[0], step[1], step[2]};
  out.samples_per_s = {per_s[0], per_s[2], per_s[1]};
  out.efficiency = {eff[0], std::min({eff[0], eff[1], eff[2]}), std::max({eff[0], eff[1], eff[2]})};
  return out;
}

Result<std::vector<int>> ParseReplicaList(const std::string& text) {
  const NumberContext context{"replica count in '" + text + "'", "--replicas 1,2,4 or 16..4096"};
  const auto whole = [&](std::string_view part) -> Result<int> {
    Result<int64_t> n = ParseInteger(part, context);
    if (!n.ok()) return n.status();
    if (*n < 1 || *n > (1 << 24)) {
      return Status::Error(context.name + ": " + std::string(part) +
                           " is outside 1..16777216 (e.g. " + context.example + ")");
    }
    return static_cast<int>(*n);
  };
  std::vector<int> out;
  if (const size_t dots = text.find(".."); dots != std::string::npos) {
    Result<int> lo = whole(std::string_view(text).substr(0, dots));
    if (!lo.ok()) return lo.status();
    Result<int> hi = whole(std::string_view(text).substr(dots + 2));
    if (!hi.ok()) return hi.status();
    if (*hi < *lo)
      return Status::Error("replica range '" + text + "' ends below its start (e.g. " +
                           context.example + ")");
    for (long long n = *lo; n <= *hi; n *= 2) out.push_back(static_cast<int>(n));
    if (out.back() != *hi) out.push_back(*hi);
    return out;
  }
  for (std::string_view part : SplitText(text, ',')) {
    Result<int> n = whole(part);
    if (!n.ok()) return n.status();
    out.push_back(*n);
  }
  if (out.empty()) return Status::Error("no replica count given (e.g. " + context.example + ")");
  return out;
}

}  // namespace stepscope::model
