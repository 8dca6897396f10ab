// The diagnose pipeline once its options are parsed: the plan's runs through the sweep, the
// diagnosis from their records, the free levers applied and re-measured, and the outputs
// (DIR/diagnosis.json, DIR/report.html, the terminal summary).
#pragma once

#include <optional>
#include <string>

#include "decide/decision_inputs.h"
#include "decide/verdict.h"
#include "plan/run_plan.h"
#include "sweep/launcher.h"

namespace stepscope::app {

struct DiagnoseRequest {
  plan::PlanRequest plan;
  bool default_workload = false;  // the built-in default (no --model given)
  bool apply_levers = false;      // re-measure the curve with the recommended free levers
  // With one baseline per point: a straggler named at the largest count is confirmed by one more
  // baseline there (it must be a straggler in both runs).
  bool confirm_stragglers = true;
  // Steps of the reduced-precision check (decide/wire_check.h); 0: not checked.
  int64_t wire_check_steps = 200;
  // Steps of the dedicated noise-scale run (plan::PlanNoiseScale); 0: the noise scale is pooled
  // from the sweep's own short runs.
  int64_t noise_scale_steps = 1000;
  bool fresh = false;        // discard the runs stored in `dir`
  double run_timeout_s = 0;  // a run still going after this long is ended as failed; 0: no limit
  // A run of a script under the helper whose ranks have not all reached stepscope_torch.wrap
  // this long after it started is ended as failed; 0: no limit (and never without the helper).
  double start_timeout_s = 0;
  // Memory per device (GiB) the model's predictions check a micro-batch against (levers, priced
  // options, predictions); none: not checked.
  std::optional<double> device_memory_gb;
  // The model's predictions (and the report's model curve) reach this replica count, doubling
  // from 1; 0: 16 times the largest count measured.
  int predict_to = 0;
  bool quiet = false;   // no per-run progress lines
  std::string dir;      // the sweep directory
  std::string program;  // the binary each run launches (as `program train ...`)
  sweep::Launcher launcher;
  decide::DecisionInputs decision;  // validated (decide/decision_inputs.h)
};

// Runs the whole pipeline. Returns the process exit code: 0, 1 when a run failed (the diagnosis
// is made without it), 2 on an error before any diagnosis, 128 + signal when interrupted.
int RunDiagnoseSession(const DiagnoseRequest& request);

}  // namespace stepscope::app
