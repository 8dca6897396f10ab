#include "analysis/ablation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text_format.h"

namespace stepscope::analysis {
namespace {

// `noise` is the compared runs' step-to-step spread, in the check's unit.
AblationCheck Check(AblationCheckKind kind, std::string unit, double measured, double predicted,
                    double predicted_high, double scale, double noise, const AblationOptions& o) {
  AblationCheck c;
  c.check = kind;
  c.unit = std::move(unit);
  c.measured = measured;
  c.predicted = predicted;
  c.predicted_high = std::max(predicted, predicted_high);
  c.tolerance = std::max({o.relative_tolerance * std::abs(predicted), o.step_tolerance * scale,
                          o.noise_tolerance * noise});
  c.agrees = c.Accepted().Contains(measured);
  return c;
}

// The job's step once `removed` is gone from every rank: the slowest rank's remaining time
// still bounds it (a straggler stays slow without the reduction).
template <typename Part>
double StepWithout(const Decomposition& d, Part removed) {
  double worst = 0;
  for (const RankDecomposition& r : d.ranks) worst = std::max(worst, r.mean.step - removed(r.mean));
  return worst;
}

// Step-to-step spread of a run's job step: how far one run's mean can drift from another's.
double Spread(const Decomposition& d) { return std::max(0.0, d.step_p90 - d.step_p50); }

}  // namespace

AblationReport CompareAblations(const Decomposition& baseline, const AblationRuns& runs,
                                const SkewReport* skew, const AblationOptions& options) {
  AblationReport report;
  const Components& b = baseline.job;
  if (runs.no_reduce) {
    const double predicted =
        b.step - StepWithout(baseline, [](const Components& c) { return c.exposed_comm; });
    AblationCheck c =
        Check(AblationCheckKind::kNoReduce, "s/step", b.step - runs.no_reduce->job.step, predicted,
              predicted, b.step, Spread(baseline) + Spread(*runs.no_reduce), options);
    c.sentence = fmt::format(
        "removing the reduction cut the step by {} against {} predicted from exposed "
        "communication (job: sync wait {} + transfer {})",
        Ms(c.measured), Ms(c.predicted), Ms(b.sync_wait), Ms(b.transfer));
    report.checks.push_back(c);
  }
  if (runs.synthetic_input) {
    const double predicted =
        b.step - StepWithout(baseline, [](const Components& c) { return c.input_wait; });
    AblationCheck c = Check(AblationCheckKind::kSyntheticInput, "s/step",
                            b.step - runs.synthetic_input->job.step, predicted, predicted, b.step,
                            Spread(baseline) + Spread(*runs.synthetic_input), options);
    c.sentence = fmt::format(
        "synthetic input cut the step by {} against {} predicted from input wait (job: {})",
        Ms(c.measured), Ms(c.predicted), Ms(b.input_wait));
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
    // Spread in step time becomes spread in throughput through x = samples / step.
    const Decomposition& db = *runs.double_batch;
    const double noise = (b.step > 0 ? x * Spread(baseline) / b.step : 0) +
                         (db.job.step > 0 ? db.samples_per_s * Spread(db) / db.job.step : 0);
    AblationCheck c = Check(AblationCheckKind::kDoubleBatch, "samples/s", db.samples_per_s - x, low,
                            high, x, noise, options);
    c.sentence = fmt::format(
        "doubling the micro-batch changed throughput by {:+.1f} samples/s against {:+.1f} to "
        "{:+.1f} predicted (compute and input double; communication stays, or hides behind the "
        "longer backward)",
        c.measured, c.predicted, c.predicted_high);
    report.checks.push_back(c);
  }
  if (skew != nullptr && baseline.ranks.size() > 1) {
    // The fastest rank waits at the barrier for about the compute it is ahead by.
    double max_sync = 0;
    for (const RankDecomposition& r : baseline.ranks)
      max_sync = std::max(max_sync, r.mean.sync_wait);
    AblationCheck c =
        Check(AblationCheckKind::kRankSpread, "s/step", max_sync, skew->compute_spread,
              skew->compute_spread, b.step, Spread(baseline), options);
    c.sentence = fmt::format(
        "the longest mean sync wait of any rank is {} against a per-rank compute spread of {}",
        Ms(c.measured), Ms(c.predicted));
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
