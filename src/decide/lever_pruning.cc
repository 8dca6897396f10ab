#include "decide/lever_pruning.h"

#include <fmt/format.h>

#include <string>

namespace stepscope::decide {

std::vector<Lever> DropLeversThatDoNotPay(const std::vector<LeverGainEvidence>& evidence,
                                          double samples_per_s, Verdict* v,
                                          const VerdictOptions& options) {
  std::vector<Lever> dropped;
  if (!(samples_per_s > 0)) return dropped;
  const double floor = options.min_lever_gain * samples_per_s;
  const std::string old_words = BestLeverWords(v->levers, samples_per_s);
  std::vector<LeverAdvice> kept;
  for (const LeverAdvice& l : v->levers) {
    const LeverGainEvidence* e = nullptr;
    for (const LeverGainEvidence& x : evidence) {
      if (x.lever == l.lever) e = &x;
    }
    const bool measured_pays = e != nullptr && e->measured_gain && *e->measured_gain >= floor;
    if (e == nullptr || e->predicted_gain.high >= floor || measured_pays) {
      kept.push_back(l);
      continue;
    }
    DroppedLever d;
    d.lever = l.lever;
    d.action = l.action;
    d.expected_gain_samples_per_s = e->predicted_gain.value;
    d.reason = fmt::format(
        "the step-time model predicts {:+.1f} samples/s (90% band {:+.1f} to {:+.1f}), below "
        "the {:.0f}% of {:.1f} samples/s a lever must gain",
        e->predicted_gain.value, e->predicted_gain.low, e->predicted_gain.high,
        100 * options.min_lever_gain, samples_per_s);
    d.reason += e->measured_gain
                    ? fmt::format(", and its own run measured {:+.1f}", *e->measured_gain)
                    : std::string(", and no run of its own measured more");
    dropped.push_back(l.lever);
    v->levers_dropped.push_back(std::move(d));
  }
  if (dropped.empty()) return dropped;
  v->levers = std::move(kept);
  RefreshLeverWords(old_words, samples_per_s, v);
  return dropped;
}

}  // namespace stepscope::decide
