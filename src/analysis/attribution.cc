#include "analysis/attribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace stepscope::analysis {

Result<Attribution> Attribute(const Decomposition& reference, const Decomposition& at_n) {
  const double t1 = reference.job.step;
  const double tn = at_n.job.step;
  if (t1 <= 0 || tn <= 0) {
    return Status::Error(
        fmt::format("attribution: step times must be positive (1 replica: {} s, {} replicas: {} s)",
                    t1, at_n.replicas, tn));
  }
  if (reference.samples_per_s <= 0) {
    return Status::Error("attribution: the reference run has no throughput (0 samples?)");
  }
  const double n = at_n.replicas;
  Attribution a;
  a.replicas = at_n.replicas;
  a.ideal_devices = n;
  a.measured_speedup = at_n.samples_per_s / reference.samples_per_s;
  a.lost_devices = n - a.measured_speedup;
  const Components& c1 = reference.job;
  const Components& cn = at_n.job;
  double explained = 0;
  for (Component which : kStepComponents) {
    const double delta = Of(cn, which) - Of(c1, which);
    WaterfallLine line{which, delta, n * delta / tn};
    explained += line.devices;
    a.lines.push_back(line);
  }
  // The components sum to the step time, so `explained` is N (TN - T1) / TN; what is left is
  // N T1/TN - X(N)/X(1), non-zero only when samples per step are not N times the reference's.
  const double residual = a.lost_devices - explained;
  if (std::abs(residual) > 1e-9 * std::max(1.0, n)) {
    a.lines.push_back({Component::kResidual, 0, residual});
  }
  return a;
}

Decomposition EstimateSingleReplica(const Decomposition& at_n) {
  Decomposition d;
  d.replicas = 1;
  d.steps = at_n.steps;
  // The fastest rank's step without communication is the best guess at one device alone. Nor
  // does a lone process wait in the job's own collectives (a barrier, a loss all-reduced to log
  // it: script_comm); but it does the work that one rank does on its own while the others wait
  // there (rank 0 logging), so where some rank waited there its overhead is at least the most
  // any rank spent outside them.
  bool first = true;
  Seconds own_most = 0;
  bool waited = false;
  for (const RankDecomposition& r : at_n.ranks) {
    Components c = r.mean;
    c.step -= c.exposed_comm + c.script_comm;
    c.overhead -= c.script_comm;
    waited = waited || c.script_comm > 0;
    c.exposed_comm = c.sync_wait = c.transfer = c.script_comm = 0;
    own_most = std::max(own_most, c.overhead);
    if (first || c.step < d.job.step) d.job = c;
    first = false;
  }
  if (waited && own_most > d.job.overhead) {
    d.job.step += own_most - d.job.overhead;
    d.job.overhead = own_most;
  }
  d.step_p50 = d.step_p90 = d.job.step;
  const double n = std::max(1, at_n.replicas);
  d.samples_per_step = at_n.samples_per_step / n;
  d.samples_per_s = d.job.step > 0 ? d.samples_per_step / d.job.step : 0;
  d.warnings.push_back(
      "1-replica reference estimated from the fastest rank's step without exposed communication");
  return d;
}

}  // namespace stepscope::analysis
