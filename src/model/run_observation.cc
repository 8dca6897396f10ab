#include "model/run_observation.h"

namespace stepscope::model {

Scenario ScenarioOf(const RunObservation& run) {
  Scenario s;
  s.replicas = run.config.replicas;
  s.dtype = run.config.dtype;
  s.bucket_mb = run.config.bucket_mb;
  s.overlap = run.config.overlap;
  s.batch = run.config.batch;
  s.accum = run.config.accum;
  s.loader_workers = run.config.loader_workers;
  if (run.ranks_per_host > 0) s.ranks_per_host = run.ranks_per_host;
  // A run with length-bucketed batches (a lever run, say) is the bucketed scenario.
  s.balance_lengths = run.length_buckets && run.length_buckets->applied;
  return s;
}

}  // namespace stepscope::model
