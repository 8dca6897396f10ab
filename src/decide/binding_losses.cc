#include "decide/binding_losses.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/statistics.h"

namespace stepscope::decide {

const BindingLoss* BindingLosses::Top() const {
  const BindingLoss* top = nullptr;
  for (const BindingLoss& l : losses) {
    if (l.seconds > 0 && (top == nullptr || l.seconds > top->seconds)) top = &l;
  }
  return top;
}

const BindingLoss& BindingLosses::Of(Binding b) const {
  for (const BindingLoss& l : losses) {
    if (l.binding == b) return l;
  }
  static const BindingLoss kNothing{};
  return kNothing;
}

namespace {

// One split of the growth since one replica, from the job's components at N and the fastest
// rank's compute and input wait; the order of BindingLosses::losses.
std::array<Seconds, 6> Split(const analysis::Components& c1, bool measured_reference,
                             const analysis::Components& cn, Seconds fastest_compute,
                             Seconds fastest_input, Seconds straggler_excess, Seconds* skew_out) {
  const Seconds fastest_work = fastest_compute + fastest_input;
  // Whichever rank the job's components came from, the wait for the last rank is in its sync
  // wait (a rank that waited) or in its work above the fastest rank's (the rank waited for).
  const Seconds skew = std::max(0.0, cn.compute + cn.input_wait + cn.sync_wait - fastest_work);
  const Seconds stragglers = std::clamp(straggler_excess, 0.0, skew);
  const Seconds imbalance = skew - stragglers;
  // What is not wait for a rank: the job's own work above the fastest rank's, plus its sync
  // wait, minus the skew (non-zero only when the skew was clamped at 0).
  const Seconds rest = cn.compute + cn.input_wait + cn.sync_wait - fastest_work - skew;
  Seconds compute, input, overhead;
  if (measured_reference) {
    compute = fastest_compute - c1.compute + rest;
    input = fastest_input - c1.input_wait;
    overhead = cn.overhead - c1.overhead;
  } else {
    // One replica count: the reference is the fastest rank itself, so only the waits at N
    // can be told apart; input wait and overhead are counted whole.
    compute = 0;
    input = cn.input_wait;
    overhead = std::max(0.0, cn.overhead);
  }
  const Seconds transfer = cn.transfer - (measured_reference ? c1.transfer : 0.0);
  if (skew_out != nullptr) *skew_out = skew;
  return {transfer, stragglers, imbalance, input, overhead, compute};
}

constexpr Binding kOrder[] = {Binding::kCommunication, Binding::kStragglers, Binding::kImbalance,
                              Binding::kInput,         Binding::kOverhead,   Binding::kCompute};

}  // namespace

BindingLosses SplitLosses(const analysis::Decomposition& reference, bool reference_estimated,
                          const analysis::Decomposition& at_n, Seconds straggler_excess) {
  BindingLosses out;
  out.measured_reference = !reference_estimated;
  const analysis::Components& c1 = reference.job;
  const analysis::Components& cn = at_n.job;
  // The fastest rank's own work before it arrives (compute and input wait): what the job would
  // take with no rank to wait for. The job's work plus its sync wait is what it took.
  int fastest = -1;
  Seconds fastest_work = cn.compute + cn.input_wait;
  for (size_t r = 0; r < at_n.ranks.size(); ++r) {
    const analysis::Components& m = at_n.ranks[r].mean;
    if (m.compute + m.input_wait < fastest_work) {
      fastest_work = m.compute + m.input_wait;
      fastest = static_cast<int>(r);
    }
  }
  auto fastest_of = [&](const analysis::Components& job, const analysis::Components* rank) {
    return rank != nullptr ? std::pair{rank->compute, rank->input_wait}
                           : std::pair{job.compute, job.input_wait};
  };
  const auto [fc, fi] = fastest_of(cn, fastest >= 0 ? &at_n.ranks[fastest].mean : nullptr);
  const std::array<Seconds, 6> seconds =
      Split(c1, out.measured_reference, cn, fc, fi, straggler_excess, &out.skew);

  // Each candidate's interval: the split recomputed on block-bootstrap resamples of the N-replica
  // run's steps (the job's and the fastest rank's components averaged over the resampled steps)
  // and, when the reference was measured step by step, of the 1-replica run's steps too: the
  // growth since one replica carries the noise of both runs.
  const size_t steps = at_n.job_per_step.size();
  const bool per_step =
      steps > 1 && (fastest < 0 || (static_cast<size_t>(fastest) < at_n.ranks_per_step.size() &&
                                    at_n.ranks_per_step[fastest].size() == steps));
  const size_t reference_steps = out.measured_reference ? reference.job_per_step.size() : 0;
  std::array<Estimate, 6> estimates;
  for (size_t i = 0; i < 6; ++i) estimates[i] = Estimate::Exact(seconds[i]);
  if (per_step) {
    auto indices = [](size_t count) {
      std::vector<double> out(std::max<size_t>(count, 1));
      for (size_t s = 0; s < count; ++s) out[s] = static_cast<double>(s);
      return out;
    };
    auto block = [](size_t count) {
      return std::max(1, static_cast<int>(std::lround(std::sqrt(count))));
    };
    BootstrapOptions options;
    options.block = block(steps);
    for (size_t i = 0; i < 6; ++i) {
      estimates[i] = BootstrapPair(
          indices(steps), indices(reference_steps),
          [&](const std::vector<double>& sample, const std::vector<double>& reference_sample) {
            analysis::Components job, rank, ref;
            for (double x : sample) {
              const size_t s = static_cast<size_t>(x);
              job = job + at_n.job_per_step[s];
              if (fastest >= 0) rank = rank + at_n.ranks_per_step[fastest][s];
            }
            const double inv = 1.0 / static_cast<double>(sample.size());
            job = job * inv;
            rank = rank * inv;
            if (reference_steps > 0) {
              for (double x : reference_sample) {
                ref = ref + reference.job_per_step[static_cast<size_t>(x)];
              }
              ref = ref * (1.0 / static_cast<double>(reference_sample.size()));
            } else {
              ref = c1;
            }
            const auto [c, in] = fastest_of(job, fastest >= 0 ? &rank : nullptr);
            return Split(ref, out.measured_reference, job, c, in, straggler_excess, nullptr)[i];
          },
          options, block(reference_steps));
    }
  }
  const double n = at_n.replicas;
  const double tn = cn.step;
  for (size_t i = 0; i < 6; ++i) {
    BindingLoss l;
    l.binding = kOrder[i];
    l.seconds = seconds[i];
    l.devices = tn > 0 ? n * seconds[i] / tn : 0;
    l.estimate = estimates[i];
    out.losses.push_back(l);
  }
  return out;
}

std::vector<const BindingLoss*> BindingLosses::Unresolved() const {
  std::vector<const BindingLoss*> out;
  const BindingLoss* top = Top();
  if (top == nullptr) return out;
  out.push_back(top);
  for (const BindingLoss& l : losses) {
    if (&l != top && l.seconds > 0 && l.estimate.Overlaps(top->estimate)) out.push_back(&l);
  }
  if (out.size() == 1) out.clear();
  return out;
}

namespace {

// Student's t, 0.95 quantile (a two-sided 90 % interval), by degrees of freedom.
double StudentT90(int df) {
  static constexpr double kT[] = {6.314, 2.920, 2.353, 2.132, 2.015,
                                  1.943, 1.895, 1.860, 1.833, 1.812};
  if (df < 1) return 0;
  return df <= 10 ? kT[df - 1] : 1.645 + 1.7 / df;  // about 1.8 at 11, toward 1.645
}

}  // namespace

BindingLosses PoolLosses(const std::vector<BindingLosses>& runs) {
  if (runs.size() <= 1) return runs.empty() ? BindingLosses{} : runs.front();
  const double r = static_cast<double>(runs.size());
  const double root = std::sqrt(r);
  BindingLosses out = runs.front();
  double skew = 0;
  for (const BindingLosses& run : runs) skew += run.skew / r;
  out.skew = skew;
  for (size_t i = 0; i < out.losses.size(); ++i) {
    double mean = 0, devices = 0, below = 0, above = 0;
    for (const BindingLosses& run : runs) {
      const BindingLoss& l = run.losses[i];
      mean += l.seconds / r;
      devices += l.devices / r;
      below += (l.estimate.value - l.estimate.low) / r;
      above += (l.estimate.high - l.estimate.value) / r;
    }
    double var = 0;
    for (const BindingLosses& run : runs) {
      var += (run.losses[i].seconds - mean) * (run.losses[i].seconds - mean) / (r - 1);
    }
    const double spread = StudentT90(static_cast<int>(runs.size()) - 1) * std::sqrt(var) / root;
    BindingLoss& l = out.losses[i];
    l.seconds = mean;
    l.devices = devices;
    l.estimate = {mean, mean - std::max(below / root, spread),
                  mean + std::max(above / root, spread)};
  }
  return out;
}

Binding ThroughputConstraint(const analysis::Decomposition& reference, double share) {
  const analysis::Components& c = reference.job;
  if (c.step <= 0) return Binding::kNone;
  const Seconds overhead = std::max(0.0, c.overhead);
  if (c.input_wait >= overhead && c.input_wait >= share * c.step) return Binding::kInput;
  if (overhead > c.input_wait && overhead >= share * c.step) return Binding::kOverhead;
  return Binding::kNone;
}

}  // namespace stepscope::decide
