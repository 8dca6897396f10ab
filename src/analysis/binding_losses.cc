#include "analysis/binding_losses.h"

#include <algorithm>

namespace stepscope::analysis {

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

BindingLosses SplitLosses(const Decomposition& reference, bool reference_estimated,
                          const Decomposition& at_n, Seconds straggler_excess) {
  BindingLosses out;
  out.measured_reference = !reference_estimated;
  const Components& c1 = reference.job;
  const Components& cn = at_n.job;
  // The fastest rank's own work before it arrives (compute and input wait): what the job would
  // take with no rank to wait for. The job's work plus its sync wait is what it took.
  Seconds fastest_compute = cn.compute;
  Seconds fastest_input = cn.input_wait;
  Seconds fastest_work = cn.compute + cn.input_wait;
  for (const RankDecomposition& r : at_n.ranks) {
    const Seconds work = r.mean.compute + r.mean.input_wait;
    if (work < fastest_work) {
      fastest_work = work;
      fastest_compute = r.mean.compute;
      fastest_input = r.mean.input_wait;
    }
  }
  // Whichever rank the job's components came from, the wait for the last rank is in its sync
  // wait (a rank that waited) or in its work above the fastest rank's (the rank waited for).
  out.skew = std::max(0.0, cn.compute + cn.input_wait + cn.sync_wait - fastest_work);
  const Seconds stragglers = std::clamp(straggler_excess, 0.0, out.skew);
  const Seconds imbalance = out.skew - stragglers;
  // What is not wait for a rank: the job's own work above the fastest rank's, plus its sync
  // wait, minus the skew (non-zero only when the skew was clamped at 0).
  const Seconds rest = cn.compute + cn.input_wait + cn.sync_wait - fastest_work - out.skew;
  Seconds compute, input, overhead;
  if (out.measured_reference) {
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
  const Seconds transfer = cn.transfer - (out.measured_reference ? c1.transfer : 0.0);
  const double n = at_n.replicas;
  const double tn = cn.step;
  auto loss = [&](Binding b, Seconds s) { return BindingLoss{b, s, tn > 0 ? n * s / tn : 0}; };
  out.losses = {loss(Binding::kCommunication, transfer), loss(Binding::kStragglers, stragglers),
                loss(Binding::kImbalance, imbalance),    loss(Binding::kInput, input),
                loss(Binding::kOverhead, overhead),      loss(Binding::kCompute, compute)};
  return out;
}

Binding ThroughputConstraint(const Decomposition& reference, double share) {
  const Components& c = reference.job;
  if (c.step <= 0) return Binding::kNone;
  const Seconds overhead = std::max(0.0, c.overhead);
  if (c.input_wait >= overhead && c.input_wait >= share * c.step) return Binding::kInput;
  if (overhead > c.input_wait && overhead >= share * c.step) return Binding::kOverhead;
  return Binding::kNone;
}

}  // namespace stepscope::analysis
