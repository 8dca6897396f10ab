#include "analysis/ablation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text_format.h"

namespace stepscope::analysis {
namespace {

// `noise` is the compared runs' measured noise, in the check's unit.
AblationCheck Check(AblationCheckKind kind, std::string unit, double measured, double predicted,
                    double predicted_high, double noise, const AblationOptions& o) {
  AblationCheck c;
  c.check = kind;
  c.unit = std::move(unit);
  c.measured = measured;
  c.predicted = predicted;
  c.predicted_high = std::max(predicted, predicted_high);
  c.noise = std::max(0.0, noise);
  c.tolerance = o.relative_tolerance * std::abs(predicted) + o.noise_tolerance * c.noise;
  c.agrees = c.Accepted().Contains(measured);
  return c;
}

// The job's step once `removed` is gone from every rank, step by step: the slowest rank's
// remaining time still bounds each step (a straggler stays slow without the reduction).
template <typename Part>
double StepWithout(const Decomposition& d, Part removed) {
  const size_t steps = d.ranks_per_step.empty() ? 0 : d.ranks_per_step.front().size();
  if (steps == 0) {  // no per-step series (a decomposition read back from a file): rank means
    double worst = 0;
    for (const RankDecomposition& r : d.ranks)
      worst = std::max(worst, r.mean.step - removed(r.mean));
    return worst;
  }
  double sum = 0;
  for (size_t s = 0; s < steps; ++s) {
    double worst = 0;
    for (const std::vector<Components>& rank : d.ranks_per_step) {
      worst = std::max(worst, rank[s].step - removed(rank[s]));
    }
    sum += worst;
  }
  return sum / static_cast<double>(steps);
}

// Half the width of a run's bootstrap interval of its mean job step (or throughput).
double HalfWidth(const Estimate& e) { return std::max(0.0, e.Width() / 2); }

std::string Range(const AblationCheck& c, bool ms) {
  const Estimate a = c.Accepted();
  return ms ? fmt::format("{} to {}", Ms(a.low), Ms(a.high))
            : fmt::format("{:+.1f} to {:+.1f}", a.low, a.high);
}

}  // namespace

AblationReport CompareAblations(const Decomposition& baseline, const AblationRuns& runs,
                                const SkewReport* skew, const AblationOptions& options) {
  AblationReport report;
  const Components& b = baseline.job;
  if (runs.no_reduce) {
    const double predicted =
        b.step - StepWithout(baseline, [](const Components& c) { return c.exposed_comm; });
    AblationCheck c = Check(
        AblationCheckKind::kNoReduce, "s/step", b.step - runs.no_reduce->job.step, predicted,
        predicted, HalfWidth(baseline.step_estimate) + HalfWidth(runs.no_reduce->step_estimate),
        options);
    c.sentence = fmt::format(
        "removing the reduction cut the step by {} against {} predicted from exposed "
        "communication (job: sync wait {} + transfer {}; accepted {} with noise {})",
        Ms(c.measured), Ms(c.predicted), Ms(b.sync_wait), Ms(b.transfer), Range(c, true),
        Ms(c.noise));
    report.checks.push_back(c);
  }
  if (runs.synthetic_input) {
    const double predicted =
        b.step - StepWithout(baseline, [](const Components& c) { return c.input_wait; });
    AblationCheck c =
        Check(AblationCheckKind::kSyntheticInput, "s/step", b.step - runs.synthetic_input->job.step,
              predicted, predicted,
              HalfWidth(baseline.step_estimate) + HalfWidth(runs.synthetic_input->step_estimate),
              options);
    c.sentence = fmt::format(
        "synthetic input cut the step by {} against {} predicted from input wait (job: {}; "
        "accepted {} with noise {})",
        Ms(c.measured), Ms(c.predicted), Ms(b.input_wait), Range(c, true), Ms(c.noise));
    report.checks.push_back(c);
  }
  if (runs.double_batch) {
    // Compute and input scale with the micro-batch; communication and overhead do not.
    // At best the extra backward hides exposed communication behind it.
    const double t2 = b.step + b.compute + b.input_wait;
    const double backward = b.backward > 0 ? b.backward : b.compute * 2.0 / 3.0;
    const double t2_best = t2 - std::min(b.exposed_comm, backward);
    const double x = baseline.samples_per_s;
    const double low = t2 > 0 ? 2 * baseline.samples_per_step / t2 - x : 0;
    const double high = t2_best > 0 ? 2 * baseline.samples_per_step / t2_best - x : low;
    const Decomposition& db = *runs.double_batch;
    const double noise = HalfWidth(baseline.throughput) + HalfWidth(db.throughput);
    AblationCheck c = Check(AblationCheckKind::kDoubleBatch, "samples/s", db.samples_per_s - x, low,
                            high, noise, options);
    c.sentence = fmt::format(
        "doubling the micro-batch changed throughput by {:+.1f} samples/s against {:+.1f} to "
        "{:+.1f} predicted (compute and input double; communication stays, or hides behind the "
        "longer backward; accepted {} with noise {:.1f})",
        c.measured, c.predicted, c.predicted_high, Range(c, false), c.noise);
    report.checks.push_back(c);
  }
  if (skew != nullptr && baseline.ranks.size() > 1) {
    // The fastest rank waits at the barrier for about the compute it is ahead by.
    double max_sync = 0;
    for (const RankDecomposition& r : baseline.ranks)
      max_sync = std::max(max_sync, r.mean.sync_wait);
    // Per step, each rank is ahead of the step's last-arriving rank by the work it did less
    // since the ranks were last together (the end of the previous step's collectives: the
    // previous step's update and this step's input, forward and backward); the rank furthest
    // ahead on average should wait about that long (RankDecomposition::work_lead). Without
    // collectives, the work (compute and input wait) of each step; without per-step series, the
    // spread of the ranks' mean compute.
    double lead = skew->compute_spread;
    // With its reductions overlapped, the rank furthest ahead may still be moving its earlier
    // buckets when the last rank arrives: that part of its lead is hidden (transfer, not sync
    // wait), so its wait lies between its lead less that transfer (queued_transfer) and its
    // lead.
    double hidden = 0;
    const auto& per_step = baseline.ranks_per_step;
    const size_t steps = per_step.empty() ? 0 : per_step.front().size();
    const bool leads = std::all_of(baseline.ranks.begin(), baseline.ranks.end(),
                                   [](const RankDecomposition& r) { return r.work_lead >= 0; });
    if (leads) {
      lead = 0;
      for (const RankDecomposition& r : baseline.ranks) {
        if (r.work_lead > lead) {
          lead = r.work_lead;
          hidden = r.queued_transfer;
        }
      }
    } else if (steps > 0) {
      std::vector<double> rank_lead(per_step.size(), 0);
      for (size_t s = 0; s < steps; ++s) {
        double slowest = 0;
        for (const auto& rank : per_step)
          slowest = std::max(slowest, rank[s].compute + rank[s].input_wait);
        for (size_t r = 0; r < per_step.size(); ++r) {
          rank_lead[r] += slowest - (per_step[r][s].compute + per_step[r][s].input_wait);
        }
      }
      lead = *std::max_element(rank_lead.begin(), rank_lead.end()) / static_cast<double>(steps);
    }
    AblationCheck c =
        Check(AblationCheckKind::kRankSpread, "s/step", max_sync, std::max(0.0, lead - hidden),
              lead, HalfWidth(baseline.step_estimate), options);
    c.sentence = fmt::format(
        "the longest mean sync wait of any rank is {} against the {} of work it is ahead of "
        "each step's last-arriving rank{} (accepted {} with noise {})",
        Ms(c.measured), Ms(lead),
        hidden > 0 ? fmt::format(", less up to {} its own reductions still in flight hide",
                                 Ms(std::min(hidden, lead)))
                   : std::string(),
        Range(c, true), Ms(c.noise));
    report.checks.push_back(c);
  }
  std::vector<std::string> disagree;
  for (const AblationCheck& c : report.checks) {
    if (!c.agrees) disagree.push_back(fmt::format("{} ({})", ToString(c.check), c.sentence));
  }
  if (!report.checks.empty()) report.agree = disagree.empty();
  if (report.checks.empty()) {
    report.sentence = "no ablation runs to compare with the decomposition";
  } else if (*report.agree) {
    report.sentence = "decomposition and ablations agree";
  } else {
    report.sentence =
        fmt::format("decomposition and ablations disagree: {}", fmt::join(disagree, "; "));
  }
  return report;
}

}  // namespace stepscope::analysis
