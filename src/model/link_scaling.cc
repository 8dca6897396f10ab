#include "model/link_scaling.h"

#include "core/text_format.h"

namespace stepscope::model {

Result<AlphaBeta> ScaleMeasuredLink(const StepModel& m, double measured_gbps, double target_gbps,
                                    std::optional<Seconds> latency) {
  if (!(measured_gbps > 0) || !(target_gbps > 0)) {
    return Status::Error("a link's bandwidth must be positive GB/s (e.g. --measured-link 12.5)");
  }
  auto it = m.collectives.find(m.reference.dtype);
  if (it == m.collectives.end()) {
    return Status::Error(
        "--measured-link needs an all-reduce cost fitted from the runs, and none reduced "
        "gradients across replicas (run at 2 or more replicas)");
  }
  AlphaBeta ab = it->second;
  const double factor = measured_gbps / target_gbps;
  ab.seconds_per_byte = ab.seconds_per_byte * factor;
  const double delivered = ab.seconds_per_byte.value > 0 ? 1e-9 / ab.seconds_per_byte.value : 0;
  ab.how = "the cost fitted on the measured " + Fixed(measured_gbps, 3) + " GB/s link, scaled to " +
           Fixed(target_gbps, 3) + " GB/s (delivering " + Fixed(delivered, 3) +
           " GB/s, the share " + "of the nominal rate measured)";
  if (latency) {
    ab.alpha_s = Estimate::Exact(*latency);
    ab.alpha_assumed = false;
    ab.how += ", latency given: " + Fixed(*latency * 1e6, 1) + " us per step";
  } else {
    ab.how += ", latency as fitted";
  }
  return ab;
}

std::optional<std::string> ScaleCrowdedResidual(double measured_gbps, double target_gbps,
                                                StepModel* m) {
  if (!m->measured_link || !m->measured_link->link_binds || !m->crowding) return std::nullopt;
  HostCrowding& h = *m->crowding;
  if (!h.residual_a || !h.residual_b || !(measured_gbps > 0) || !(target_gbps > 0)) {
    return std::nullopt;
  }
  const double factor = measured_gbps / target_gbps;
  auto shift = [factor](Constant* line, const Constant& residual) {
    const double by = (factor - 1) * residual.estimate.value;
    line->estimate.value += by, line->estimate.low += by, line->estimate.high += by;
    line->how += "; its crowded residual scaled by " + Fixed(factor, 3) + " with the link";
  };
  shift(&h.overhead_a, *h.residual_a);
  shift(&h.overhead_b, *h.residual_b);
  return "the crowded baselines' residual in the overhead (" +
         Fixed(1000 * (h.residual_a->estimate.value + h.residual_b->estimate.value), 1) +
         " ms at one rank per core beyond one) scaled by " + Fixed(factor, 3) +
         " with the link: over a link that binds, what the parts do not reproduce of a crowded "
         "step is the reductions' uneven draining, in proportion to their transfers";
}

std::optional<MeasuredLink> JudgeMeasuredLink(const StepModel& m, double measured_gbps) {
  auto it = m.collectives.find(m.reference.dtype);
  if (it == m.collectives.end() || !(measured_gbps > 0)) return std::nullopt;
  const double spb = it->second.seconds_per_byte.value;
  if (!(spb > 0)) return std::nullopt;
  MeasuredLink link;
  link.nominal_gbps = measured_gbps;
  link.delivered_gbps = 1e-9 / spb;
  link.link_binds = link.delivered_gbps <= kFasterThanTheLink * measured_gbps;
  return link;
}

std::optional<std::string> MeasuredLinkCaveat(const StepModel& m, double measured_gbps) {
  const std::optional<MeasuredLink> link = JudgeMeasuredLink(m, measured_gbps);
  if (!link || link->link_binds) return std::nullopt;
  auto it = m.collectives.find(m.reference.dtype);
  const double delivered = link->delivered_gbps;
  return "the all-reduce cost fitted on these runs delivers " + Fixed(delivered, 3) +
         " GB/s, more than the " + Fixed(measured_gbps, 3) +
         " GB/s link they were measured on (--measured-link), with " +
         Fixed(it->second.alpha_s.value * 1e6, 0) +
         " us per latency step: the link's rate did not set their reductions' time (the host's "
         "network stack or a per-message cost did), so scaling its bandwidth says little about "
         "another link. Measure where the link binds, or give the other link's measured "
         "bandwidth and latency with --link alone";
}

std::optional<std::string> FasterLinkCaveat(const std::optional<MeasuredLink>& link,
                                            double target_gbps) {
  if (!link || !link->link_binds || !(target_gbps > kFasterThanTheLink * link->nominal_gbps)) {
    return std::nullopt;
  }
  const double measured_gbps = link->nominal_gbps;
  return "--link " + Fixed(target_gbps, 3) + " GB/s is " + Fixed(target_gbps / measured_gbps, 1) +
         " times the " + Fixed(measured_gbps, 3) +
         " GB/s link these runs were measured on, which set their reductions' time (the fit "
         "delivers " +
         Fixed(link->delivered_gbps, 3) +
         " GB/s): the prediction assumes the host's transport (its network stack, NIC or PCIe) "
         "keeps up with the faster link, which runs on the slower one cannot show. If it does "
         "not, the reductions take longer and the prediction is optimistic; a run on the faster "
         "link settles it";
}

}  // namespace stepscope::model
