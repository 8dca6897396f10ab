#include "model/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/statistics.h"
#include "model/host_crowding.h"
#include "model/simulate.h"

namespace stepscope::model {

Result<ModelCheck> CheckRun(const StepModel& model, const RunObservation& run) {
  Result<Prediction> p = Predict(model, ScenarioOf(run));
  if (!p.ok()) return p.status();
  ModelCheck c;
  c.run = run.name;
  c.replicas = run.config.replicas;
  c.predicted_samples_per_s = p->samples_per_s;
  c.measured_samples_per_s = run.samples_per_s;
  c.error = run.samples_per_s > 0 ? p->samples_per_s.value / run.samples_per_s - 1 : 0;
  c.within_band = p->samples_per_s.Contains(run.samples_per_s);
  if (model.drawn.count(run.name) != 0 && run.samples_per_s > 0) {
    Scenario drawn = ScenarioOf(run);
    drawn.as_drawn = run.name;
    if (Result<Prediction> d = Predict(model, drawn); d.ok()) {
      c.as_drawn =
          ModelCheck::AsDrawn{d->samples_per_s, d->samples_per_s.value / run.samples_per_s - 1};
    }
  }
  c.partly_fitted =
      std::find(model.cost_runs.begin(), model.cost_runs.end(), run.name) != model.cost_runs.end();
  return c;
}

std::vector<ModelCheck> CheckRuns(const StepModel& model, const std::vector<RunObservation>& runs) {
  std::vector<ModelCheck> out;
  for (const RunObservation& run : runs) {
    const bool fitted = std::find(model.fitted_replicas.begin(), model.fitted_replicas.end(),
                                  run.config.replicas) != model.fitted_replicas.end();
    if (run.role == RunRole::kDoubleBatch || (run.role == RunRole::kBaseline && fitted)) continue;
    if (!run.reduce && run.config.replicas > 1) continue;
    if (run.synthetic_input || run.samples_per_s <= 0) continue;
    Result<ModelCheck> c = CheckRun(model, run);
    if (c.ok()) out.push_back(*c);
  }
  return out;
}

std::optional<std::string> UnfittedCrowdingCaveat(const StepModel& model,
                                                  const std::vector<RunObservation>& runs) {
  if (model.crowding) return std::nullopt;
  std::set<int> counts;
  int cores = 0;
  for (const RunObservation& run : runs) {
    if (Crowding(run.ranks_per_host, run.cores_per_host) > 0) {
      counts.insert(run.config.replicas);
      cores = run.cores_per_host;
    }
  }
  if (counts.empty()) return std::nullopt;
  const bool reductions = model.host_cpu && model.host_cpu->reduction_per_byte;
  return fmt::format(
      "the runs at N={} had more ranks on a host than its {} cores, but the fitted baselines give "
      "no line of how sharing cores stretches a step, so those runs are predicted as if each "
      "rank had a core of its own{} (fit on baselines with and without shared cores to include "
      "it)",
      fmt::join(counts, ","), cores,
      reductions ? " but in its reductions' arithmetic, which the cores share" : "");
}

double MedianAbsoluteError(const std::vector<ModelCheck>& checks) {
  std::vector<double> e;
  for (const ModelCheck& c : checks) e.push_back(std::fabs(c.error));
  return Median(e);
}

double WorstAbsoluteError(const std::vector<ModelCheck>& checks) {
  double worst = 0;
  for (const ModelCheck& c : checks) worst = std::max(worst, std::fabs(c.error));
  return worst;
}

}  // namespace stepscope::model
