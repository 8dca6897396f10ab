// Where the lost devices went, by binding candidate: the step-time growth from the 1-replica
// reference to N replicas split among communication, stragglers, imbalance, input, overhead and
// compute, so that the binding constraint is the candidate that lost the most devices (not the
// largest share of the step). Definitions: docs/metrics.md ("Binding constraint").
#pragma once

#include <vector>

#include "analysis/decomposition.h"
#include "core/estimate.h"
#include "core/vocabulary.h"

namespace stepscope::decide {

struct BindingLoss {
  Binding binding = Binding::kCompute;
  Seconds seconds = 0;  // per step, at N (negative: the candidate gained time)
  double devices = 0;   // N * seconds / T(N): devices lost to it
  // `seconds` with its interval: moving-block bootstrap over the N-replica run's steps and the
  // measured 1-replica reference's steps, each resampled on its own (exact when the N-replica
  // run has no per-step series; the reference held fixed when it has none).
  Estimate estimate;
  Estimate DevicesEstimate(double n, Seconds step) const {
    return step > 0 ? estimate * (n / step) : Estimate{};
  }
};

struct BindingLosses {
  // false when the 1-replica reference was estimated from the N-replica run (analyze on one
  // replica count): the candidates are then the waits at N, not growth since one replica.
  bool measured_reference = true;
  Seconds skew = 0;                 // time the job waits for its last-arriving rank, per step
  std::vector<BindingLoss> losses;  // communication, stragglers, imbalance, input, overhead,
                                    // compute, in that order
  const BindingLoss* Top() const;   // the largest positive loss, nullptr when none is
  const BindingLoss& Of(Binding b) const;
  // The top candidate and every other positive one whose interval overlaps the top's: the
  // candidates the noise cannot tell apart. Empty when the top one stands clear (or none is).
  std::vector<const BindingLoss*> Unresolved() const;
};

// `straggler_excess` is the seconds per step the named straggler ranks add (0 when none).
BindingLosses SplitLosses(const analysis::Decomposition& reference, bool reference_estimated,
                          const analysis::Decomposition& at_n, Seconds straggler_excess);

// The losses of one replica count measured several times (the first run and its repeats, each
// split against the same reference): each candidate's mean over the runs, with an interval for
// that mean: on each side, the wider of the runs' mean bootstrap half-width over sqrt(R) and
// the runs' spread (Student's t at 90 %, R - 1 degrees of freedom, times the standard deviation)
// over sqrt(R). More runs narrow it; runs that disagree widen it. One run: returned as it is.
BindingLosses PoolLosses(const std::vector<BindingLosses>& runs);

// The cost that holds one device back already (input wait or overhead at one replica), a
// throughput lever rather than a scaling loss; Binding::kNone when neither reaches
// `share` of the 1-replica step.
Binding ThroughputConstraint(const analysis::Decomposition& reference, double share);

}  // namespace stepscope::decide
