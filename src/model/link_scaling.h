// A link what-if relative to the measured link: the fitted all-reduce cost, its bandwidth term
// scaled by target / measured nominal bandwidth. A transport delivers a share of its link's
// nominal rate (protocol headers, acknowledgements, the stack's own costs); that share, fitted
// on the measured link, carries over to a faster or slower link of the same kind, which a
// nominal rate taken at face value would ignore.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "core/units.h"
#include "model/step_model.h"

namespace stepscope::model {

// The reference precision's fitted cost, its seconds per byte times measured_gbps /
// target_gbps (the band with it), its launch cost kept; its latency per step replaced by
// `latency` when one is given, else kept. Errors: no fitted all-reduce cost, a bandwidth that
// is not positive.
Result<AlphaBeta> ScaleMeasuredLink(const StepModel& m, double measured_gbps, double target_gbps,
                                    std::optional<Seconds> latency);

// Why the fitted cost does not describe the measured link, or nothing: its bandwidth exceeds
// the link's nominal rate (by more than kFasterThanTheLink), which no transport delivers, so the
// fit traded latency for bandwidth and the link did not set the reductions' time (the host's
// network stack did, or a per-message cost). Scaling the bandwidth term of such a fit says
// nothing about another link.
inline constexpr double kFasterThanTheLink = 1.05;
std::optional<std::string> MeasuredLinkCaveat(const StepModel& m, double measured_gbps);

// A note when the scaled-to link is faster (past kFasterThanTheLink) than the measured link,
// as JudgeMeasuredLink found it, where that link bound: the prediction assumes the host's
// transport (network stack, NIC, PCIe) keeps up with the faster rate, which runs on the slower
// link cannot show. Nothing for a slower or equal target, for no judged link, or where the
// measured link did not bind (MeasuredLinkCaveat speaks there).
std::optional<std::string> FasterLinkCaveat(const std::optional<MeasuredLink>& link,
                                            double target_gbps);

// A link what-if where the measured link bound (MeasuredLink::link_binds): the crowded
// baselines' residual in the crowding's overhead line (HostCrowding::residual_a, residual_b)
// scaled by measured / target nominal bandwidth, as the reductions' bandwidth term is. Over a
// link the residual is the link's: ranks that leave a reduction one after another as its
// transfers drain unevenly, growing with their time (emulated TCP links at 50, 100 and 200
// Mbit/s, 4 ranks on 2 cores: +25, +76 and +12 ms of 2.25, 1.13 and 0.55 s steps; +153, +58 and
// +21 ms with smaller ring segments), not a fixed cost per step that a faster link would keep.
// Returns a note saying what was scaled; nothing (and no change) without a binding link or a
// residual.
std::optional<std::string> ScaleCrowdedResidual(double measured_gbps, double target_gbps,
                                                StepModel* m);

// The measured link against the reference precision's fitted cost (link_binds false past
// kFasterThanTheLink); nothing without a fitted all-reduce cost or a positive rate.
std::optional<MeasuredLink> JudgeMeasuredLink(const StepModel& m, double measured_gbps);

}  // namespace stepscope::model
