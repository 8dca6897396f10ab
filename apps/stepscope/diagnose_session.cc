#include "apps/stepscope/diagnose_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <vector>

#include "apps/stepscope/decision_section.h"
#include "apps/stepscope/earlier_predictions.h"
#include "apps/stepscope/lever_predictions.h"
#include "apps/stepscope/predict_command.h"
#include "apps/stepscope/torch_run_watch.h"
#include "apps/stepscope/torch_traces.h"
#include "apps/stepscope/whatif_curves.h"
#include "comm/wire_dtype.h"
#include "core/units.h"
#include "decide/build_diagnosis.h"
#include "decide/diagnosis.h"
#include "decide/wire_check.h"
#include "model/model_json.h"
#include "plan/train_mapping.h"
#include "report/html_report.h"
#include "report/terminal_report.h"
#include "sweep/busy_host.h"
#include "sweep/run_records.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_store.h"

namespace stepscope::app {
namespace {

int Fail(const Status& st) {
  std::fprintf(stderr, "stepscope diagnose: %s\n", st.message().c_str());
  return 2;
}

decide::Emulation EmulationOf(const train::TrainOptions& o) {
  decide::Emulation e;
  e.emulated = o.emulation.active();
  if (o.emulation.device_speed > 0) {
    e.parameters["device_speed"] = fmt::format("{}", o.emulation.device_speed);
  }
  if (o.emulation.link_gbps > 0) {
    e.parameters["link_gbps"] = fmt::format("{}", o.emulation.link_gbps);
    e.parameters["link_latency_us"] = fmt::format("{}", o.emulation.link_latency_us);
  }
  return e;
}

// A planned run as the sweep launches it: `program train ARGS`, or with --torch (runs with the
// helper's environment) `script ARGS` under that environment.
sweep::Job JobOf(const plan::PlannedRun& run) {
  if (!run.env.empty()) return {run.name, run.id.replicas, run.args, run.env, run.steps};
  std::vector<std::string> args = {"train"};
  args.insert(args.end(), run.args.begin(), run.args.end());
  return {run.name, run.id.replicas, std::move(args), {}, run.steps};
}

// What the runs measure, in words: "train ARGS" or "torch COMMAND".
std::string WorkloadText(const DiagnoseRequest& request) {
  if (request.plan.torch) return "torch " + sweep::QuoteCommand(request.plan.torch->Words());
  return "train " + sweep::QuoteCommand(plan::Flatten(request.plan.workload));
}

// What identifies the sweep's workload in DIR/sweep.json.
std::vector<std::string> WorkloadIdentity(const DiagnoseRequest& request) {
  std::vector<std::string> words;
  if (request.plan.torch) {
    words = request.plan.torch->Words();
    words.insert(words.begin(), "--torch");
  }
  const std::vector<std::string> args = plan::Flatten(request.plan.workload);
  words.insert(words.end(), args.begin(), args.end());
  return words;
}

// The helper's folder (python/stepscope_torch's parent), first on the runs' PYTHONPATH.
std::string TorchPythonPath() {
  std::string path = STEPSCOPE_PYTHON_DIR;
  if (const char* own = std::getenv("PYTHONPATH"); own != nullptr && *own != '\0') {
    path += std::string(":") + own;
  }
  return "PYTHONPATH=" + path;
}

std::vector<sweep::Job> Jobs(const std::vector<plan::PlannedRun>& runs) {
  std::vector<sweep::Job> jobs;
  for (const plan::PlannedRun& run : runs) jobs.push_back(JobOf(run));
  return jobs;
}

// Reads one finished run; nullopt (with a warning) when it is missing or unreadable.
std::optional<std::vector<StepRecord>> LoadRun(const sweep::SweepStore& store,
                                               const sweep::Job& job,
                                               std::vector<std::string>* warnings) {
  if (!store.Finished(job.name, job.Identity())) return std::nullopt;
  Result<std::vector<StepRecord>> records = sweep::ReadRunRecords(store.RunDir(job.name));
  if (!records.ok()) {
    warnings->push_back(fmt::format("run {} left out: {}", job.name, records.status().message()));
    return std::nullopt;
  }
  return std::move(records).value();
}

// How well the emulation honoured a finished run (its run.json); nullopt when not emulated or
// unreadable (with a warning).
std::optional<decide::EmulationHonesty> LoadHonesty(const sweep::SweepStore& store,
                                                    const sweep::Job& job,
                                                    std::vector<std::string>* warnings) {
  Result<std::optional<sweep::RunPacing>> pacing = sweep::ReadRunPacing(store.RunDir(job.name));
  if (!pacing.ok()) {
    warnings->push_back(
        fmt::format("run {}: emulation pacing unknown: {}", job.name, pacing.status().message()));
    return std::nullopt;
  }
  if (!pacing->has_value()) return std::nullopt;
  const sweep::RunPacing& p = **pacing;
  decide::EmulationHonesty h;
  h.paced_segments = p.paced_segments;
  h.unhonoured_segments = p.unhonoured_segments;
  h.unhonoured_links = p.unhonoured_links;
  h.link_reductions = p.link_reductions;
  return h;
}

// Why a run of a user's script under the helper left no run.json, from what is in its folder.
std::string TorchNoRunHint(const std::string& run_dir) {
  Result<std::vector<std::pair<int, std::string>>> files = sweep::RankRecordFiles(run_dir);
  if (files.ok() && !files->empty()) {
    return "the helper was called (" +
           std::filesystem::path(files->front().second).filename().string() +
           ") but rank 0 never completed a step with the optimizer stepscope_torch.wrap "
           "returned (is that the optimizer the script steps? the log says more)";
  }
  return "no rank-R.steps.jsonl in the run's folder: the script does not call "
         "stepscope_torch.wrap (docs/torch.md); a script that writes PyTorch profiler traces "
         "instead can be diagnosed with --torch-traces";
}

// Warns when a curve run's host was busy enough for its cores to set the step.
void WarnBusyHost(const sweep::SweepStore& store, const plan::PlannedRun& run,
                  std::vector<std::string>* warnings) {
  Result<sweep::RunSummary> s = sweep::ReadRunSummary(store.RunDir(JobOf(run).name));
  if (!s.ok()) return;  // an unreadable run.json is reported by LoadHonesty
  if (auto w = sweep::BusyHostWarning(run.id.replicas, *s)) warnings->push_back(std::move(*w));
}

// Where a run's records go in its replica count's set.
std::vector<StepRecord>& Slot(plan::VariantKind kind, decide::RunSet* set) {
  switch (kind) {
    case plan::VariantKind::kNoReduce:
      return set->no_reduce.emplace();
    case plan::VariantKind::kSyntheticInput:
      return set->synthetic_input.emplace();
    case plan::VariantKind::kDoubleBatch:
      return set->double_batch.emplace();
    default:
      return set->baseline;
  }
}

// The finished runs as the analysis reads them, one set per replica count: the first run of
// `curve` (the baseline, or every lever together), its repeats and the ablations; single-lever
// runs are read by ApplyLevers. A count without its `curve` run is
// left out with a warning.
std::vector<decide::RunSet> CollectRunSets(const sweep::SweepStore& store,
                                           const std::vector<plan::PlannedRun>& runs,
                                           plan::VariantKind curve,
                                           std::vector<std::string>* warnings) {
  std::map<int, decide::RunSet> sets;
  for (const plan::PlannedRun& run : runs) {
    const plan::VariantKind kind = run.id.variant.kind;
    if (kind != curve && (run.id.repeat != 1 || !plan::IsAblation(kind))) continue;
    decide::RunSet& set = sets[run.id.replicas];
    auto records = LoadRun(store, JobOf(run), warnings);
    if (!records) continue;
    if (run.id.repeat != 1) {
      set.repeats.push_back(std::move(*records));
      continue;
    }
    Slot(kind, &set) = std::move(*records);
    if (kind != curve) {
      if (auto h = LoadHonesty(store, JobOf(run), warnings)) {
        set.ablation_honesty[plan::VariantName(run.id.variant)] = *h;
      }
    } else {
      set.replicas = run.id.replicas;  // marks the set as complete
      set.honesty = LoadHonesty(store, JobOf(run), warnings);
      for (auto& [name, per_step] : sweep::ReadScriptCollectives(store.RunDir(JobOf(run).name))) {
        set.script_collectives.push_back({name, per_step});
      }
      WarnBusyHost(store, run, warnings);
    }
  }
  std::vector<decide::RunSet> out;
  for (auto& [n, set] : sets) {
    if (set.replicas == n) {
      out.push_back(std::move(set));
    } else {
      warnings->push_back(
          fmt::format("{} replicas left out: no finished {} run", n,
                      curve == plan::VariantKind::kBaseline ? "baseline" : "after-levers"));
    }
  }
  return out;
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out) return Status::Error("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::Error("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return Status::Ok();
}

std::string FailedRunsText(const sweep::SweepResult& r) {
  std::string out;
  for (const sweep::JobOutcome& o : r.outcomes) {
    if (o.state == sweep::JobState::kFailed) {
      out += fmt::format("  {} (exit {}): {}; log in {}/log.txt\n", o.job.name, o.exit_code,
                         o.cause, o.run_dir);
    }
  }
  return out;
}

// The failed runs of every sweep of the session, for diagnosis.json (the last outcome of a run
// that ran more than once).
std::vector<decide::FailedRun> FailedRuns(const std::vector<sweep::SweepResult>& results) {
  std::vector<decide::FailedRun> out;
  for (const sweep::SweepResult& r : results) {
    for (const sweep::JobOutcome& o : r.outcomes) {
      std::erase_if(out, [&](const decide::FailedRun& f) { return f.run == o.job.name; });
      if (o.state == sweep::JobState::kFailed) {
        out.push_back({o.job.name, o.job.replicas, o.cause, o.exit_code, o.run_dir + "/log.txt"});
      }
    }
  }
  return out;
}

// One diagnose invocation: its sweep store, the sweeps it ran and the diagnosis it is making.
class Session {
 public:
  Session(const DiagnoseRequest& request, sweep::SweepStore* store)
      : request_(request), store_(store) {
    options_.source = {"diagnose", WorkloadText(request), STEPSCOPE_VERSION};
    options_.emulation = EmulationOf(request.plan.options);
    // The curve's own decision (used when the options cannot be priced) sees the same prices.
    options_.cost = {request.decision.device_cost_per_hour, request.decision.deadline_hours,
                     request.decision.samples_to_target};
    run_options_.program = request.program;
    run_options_.launcher = request.launcher;
    run_options_.progress = request.quiet ? nullptr : stderr;
    run_options_.run_timeout_s = request.run_timeout_s;
    if (request.plan.torch) {
      run_options_.out_env = "STEPSCOPE_RUN_DIR";
      run_options_.extra_env.push_back(TorchPythonPath());
      run_options_.no_marker_hint = TorchNoRunHint;
      run_options_.before_ending = [](const std::string& run_dir, const sweep::Job& job) {
        return TorchWhereProcessesAre(run_dir, job.replicas);
      };
      if (request.start_timeout_s > 0) {
        run_options_.end_reason = [timeout = request.start_timeout_s](const std::string& run_dir,
                                                                      const sweep::Job& job,
                                                                      double elapsed_s) {
          return TorchStartEndReason(run_dir, job.replicas, elapsed_s, timeout);
        };
      }
      if (!request.plan.torch->helper) {
        // --torch-traces: the run is completed from the profiler traces the script wrote.
        run_options_.complete_run = [this](const std::string& run_dir, const sweep::Job& job) {
          TraceRunInfo info;
          info.replicas = job.replicas;
          info.micro_batch = micro_batch_[job.name];
          info.warmup_steps = request_.plan.options.warmup_steps;
          return CompleteRunFromTraces(run_dir, info);
        };
      }
    }
    // The numerics runs leave the emulation and the injected faults out: their time a step is
    // not the paced runs' (the progress line's estimate).
    const train::TrainOptions& o = request.plan.options;
    if (!request.plan.torch && (o.emulation.active() || !o.injection.stragglers.empty() ||
                                o.injection.noise_rank >= 0 || o.injection.input_delay_ms > 0)) {
      run_options_.timing_class = [](const std::string& name) {
        return plan::IsNumericsRun(name) ? std::string("unpaced") : std::string();
      };
    }
    // Every run of the sweep emulates the same device: the first run of each compute shape
    // calibrates it, later runs pace to it (train/device_file.h).
    if (request.plan.options.emulation.device_speed > 0) {
      run_options_.extra_args = {
          "--emulate-device-file",
          std::filesystem::absolute(store_->dir() + "/device.json").string()};
    }
  }

  // The gradient noise scale from the dedicated run (plan::PlanNoiseScale), for the diagnosis
  // to use instead of the one pooled from the sweep's short runs; nothing when it was not asked
  // for or did not finish (with a warning).
  void MeasureNoiseScale(std::vector<std::string>* warnings);
  // The main sweep and the diagnosis made from it; nullopt (with the exit code in `exit_code`)
  // when there is nothing to diagnose. With one baseline per point, a straggler named at the
  // largest count is confirmed by one more run of that point (plan::PlanConfirmingRepeat) unless
  // request.confirm_stragglers is off.
  std::optional<decide::Diagnosis> Diagnose(int* exit_code);
  // The diagnosis of the baselines (and ablations, repeats) among `runs`, with the outcomes of
  // the sweeps that ran them; nullopt (with the exit code) when there is nothing to diagnose.
  std::optional<decide::Diagnosis> BuildFrom(const std::vector<plan::PlannedRun>& runs,
                                             const std::vector<const sweep::SweepResult*>& results,
                                             const std::vector<std::string>& noise_warnings,
                                             int* exit_code);
  // A recommended reduced-precision lever checked by three short runs (decide/wire_check.h);
  // dropped from the levers when its numerical cost exceeds the seed-to-seed spread.
  void CheckWire(decide::Diagnosis* d);
  // The free levers applied and re-measured: the curve after them joins the diagnosis.
  void ApplyLevers(decide::Diagnosis* d);
  // diagnosis.json, report.html and the terminal summary; returns the exit code.
  int Finish(decide::Diagnosis* d);
  // The values the levers start from: the workload's options; with --torch, the gradient size
  // and (without a {workers} placeholder) the loader workers as the helper measured them in the
  // first finished baseline.
  plan::LeverBasis Basis() const;
  // True when a sweep of this session was stopped by SIGINT or SIGTERM.
  bool interrupted() const {
    for (const sweep::SweepResult& r : results_) {
      if (r.interrupted) return true;
    }
    return false;
  }

 private:
  sweep::SweepResult Run(const plan::RunPlan& plan);
  // The step-time model's gain for each recommended lever, written into the verdict's levers
  // (and into those of the verdict after the levers, from the levered configuration).
  std::vector<LeverPrediction> ModelLeverGains(const model::StepModel& model,
                                               decide::Diagnosis* d) const;
  void PrintSummary(const decide::Diagnosis& d, const std::string& json_path,
                    const std::string& html_path, const std::string& levers_text) const;

  const DiagnoseRequest& request_;
  sweep::SweepStore* store_;
  decide::DiagnoseOptions options_;
  sweep::SweepRunOptions run_options_;
  sweep::InterruptGuard guard_;
  std::vector<sweep::SweepResult> results_;
  std::map<std::string, int> micro_batch_;  // each planned run's, by name
  bool partial_ = false;
};

sweep::SweepResult Session::Run(const plan::RunPlan& plan) {
  for (const plan::PlannedRun& run : plan.runs) micro_batch_[run.name] = run.micro_batch;
  for (const std::string& note : plan.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  sweep::SweepResult result = RunSweep(Jobs(plan.runs), run_options_, store_, &guard_);
  if (result.interrupted) partial_ = true;
  results_.push_back(result);
  return result;
}

std::optional<decide::Diagnosis> Session::Diagnose(int* exit_code) {
  const plan::RunPlan plan = plan::PlanMainRuns(request_.plan);
  const sweep::SweepResult result = Run(plan);
  std::vector<std::string> noise_warnings;
  if (!result.interrupted) MeasureNoiseScale(&noise_warnings);
  std::optional<decide::Diagnosis> d = BuildFrom(plan.runs, {&result}, noise_warnings, exit_code);
  if (!d || result.interrupted || !request_.confirm_stragglers || request_.plan.repeats != 1 ||
      d->verdict.straggler_ranks.empty()) {
    return d;
  }
  // A straggler named from one run: one more run of that point, and the rank stays named only
  // if it is a straggler in both (docs/metrics.md "Persistent across repeats").
  const int n = d->points.back().scaling.replicas;
  std::fprintf(stderr, "confirming straggler rank%s %s with a second baseline at %d replicas\n",
               d->verdict.straggler_ranks.size() > 1 ? "s" : "",
               fmt::format("{}", fmt::join(d->verdict.straggler_ranks, ",")).c_str(), n);
  const plan::RunPlan confirm = plan::PlanConfirmingRepeat(request_.plan, n);
  const sweep::SweepResult again = Run(confirm);
  std::vector<plan::PlannedRun> runs = plan.runs;
  runs.insert(runs.end(), confirm.runs.begin(), confirm.runs.end());
  return BuildFrom(runs, {&result, &again}, noise_warnings, exit_code);
}

std::optional<decide::Diagnosis> Session::BuildFrom(
    const std::vector<plan::PlannedRun>& runs,
    const std::vector<const sweep::SweepResult*>& results,
    const std::vector<std::string>& noise_warnings, int* exit_code) {
  std::vector<std::string> warnings = noise_warnings;
  std::vector<decide::RunSet> sets =
      CollectRunSets(*store_, runs, plan::VariantKind::kBaseline, &warnings);
  const sweep::SweepResult& main = *results.front();
  if (sets.empty()) {
    std::fprintf(stderr, "stepscope diagnose: no baseline run finished; nothing to diagnose%s\n%s",
                 main.interrupted ? " (interrupted)" : "", FailedRunsText(main).c_str());
    *exit_code = main.interrupted ? 128 + (main.signal ? main.signal : SIGINT) : 1;
    return std::nullopt;
  }
  // A script's own communication hook decides its wire precision: not a lever to recommend,
  // here or after the levers (AddAfterLevers takes the same options).
  if (request_.plan.torch) options_.verdict.script_comm_hook = Basis().comm_hook;
  Result<decide::Diagnosis> diagnosis = BuildDiagnosis(sets, options_);
  if (!diagnosis.ok()) {
    *exit_code = Fail(diagnosis.status());
    return std::nullopt;
  }
  decide::Diagnosis& d = diagnosis.value();
  d.warnings.insert(d.warnings.begin(), warnings.begin(), warnings.end());
  for (const sweep::SweepResult* result : results) {
    for (const sweep::JobOutcome& o : result->outcomes) {
      if (o.state == sweep::JobState::kFailed || o.state == sweep::JobState::kInterrupted ||
          o.state == sweep::JobState::kNotRun) {
        partial_ = true;
        d.warnings.push_back(
            fmt::format("partial diagnosis: run {} {}", o.job.name, sweep::ToString(o.state)));
      }
    }
  }
  return std::move(d);
}

void Session::MeasureNoiseScale(std::vector<std::string>* warnings) {
  if (request_.noise_scale_steps <= 0) return;
  std::fprintf(stderr, "measuring the gradient noise scale over %lld steps of training\n",
               static_cast<long long>(request_.noise_scale_steps));
  const plan::RunPlan plan = plan::PlanNoiseScale(request_.plan, request_.noise_scale_steps);
  Run(plan);
  const plan::PlannedRun& run = plan.runs.front();
  auto records = LoadRun(*store_, JobOf(run), warnings);
  if (!records) {
    warnings->push_back(fmt::format(
        "the noise scale is pooled from the sweep's short runs: run {} did not finish", run.name));
    return;
  }
  decide::NoiseScale noise = decide::NoiseScaleOfRun(*records);
  if (!noise.known) {
    warnings->push_back(
        fmt::format("the noise scale is pooled from the sweep's short runs: run {} gave none ({})",
                    run.name, noise.reason));
    return;
  }
  noise.reason = fmt::format("run {}: {}", run.name, noise.reason);
  options_.measured_noise = std::move(noise);
}

plan::LeverBasis Session::Basis() const {
  plan::LeverBasis basis = plan::TrainBasis(request_.plan.options);
  if (!request_.plan.torch) return basis;
  basis.gradient_mib = 0;
  for (int n : request_.plan.replicas) {
    const std::string name = plan::RunName({plan::Variant::Of(plan::VariantKind::kBaseline), n});
    Result<sweep::RunSummary> run = sweep::ReadRunSummary(store_->RunDir(name));
    if (!run.ok()) continue;
    basis.gradient_mib = static_cast<double>(run->gradient_bytes) / kMiB;
    basis.comm_hook = run->comm_hook;
    // gloo has no bf16 all-reduce: the helper's reduced precision there is fp16.
    if (run->allreduce == "gloo") basis.reduced_wire = comm::WireDtype::kFp16;
    if (!request_.plan.torch->Has("{workers}")) basis.loader_workers = run->workers_beside_ranks();
    // The micro-batches a step of the script makes: --accum's (the helper's, STEPSCOPE_ACCUM)
    // or the script's own.
    if (!request_.plan.torch->Has("{accum}")) basis.accumulation = run->accum;
    break;
  }
  return basis;
}

void Session::CheckWire(decide::Diagnosis* d) {
  decide::Verdict& v = d->verdict;
  auto lever = std::find_if(v.levers.begin(), v.levers.end(), [](const decide::LeverAdvice& l) {
    return l.lever == Lever::kLowPrecisionReduction;
  });
  if (request_.wire_check_steps <= 0 || lever == v.levers.end()) return;
  const plan::LeverPlan planned = plan::PlanLevers({Lever::kLowPrecisionReduction}, Basis());
  if (planned.planned.empty() || !planned.planned.front().change.wire) return;
  const comm::WireDtype wire = *planned.planned.front().change.wire;
  std::fprintf(stderr, "checking the %s reduction's numerical cost (%lld steps, 3 runs)\n",
               comm::ToString(wire).c_str(), static_cast<long long>(request_.wire_check_steps));
  const plan::RunPlan plan = plan::PlanWireCheck(request_.plan, wire, request_.wire_check_steps);
  Run(plan);
  std::vector<std::vector<StepRecord>> records;
  for (const plan::PlannedRun& run : plan.runs) {
    auto r = LoadRun(*store_, JobOf(run), &d->warnings);
    if (!r) {
      d->warnings.push_back(fmt::format("the {} lever was not checked: run {} did not finish",
                                        comm::ToString(wire), run.name));
      return;
    }
    records.push_back(std::move(*r));
  }
  std::optional<decide::WireError> error;
  const Result<sweep::RunSummary> reduced =
      sweep::ReadRunSummary(store_->RunDir(plan.runs[1].name));
  if (reduced.ok() && reduced->wire_relative_error) {
    error = decide::WireError{*reduced->wire_relative_error, reduced->wire_relative_error_max,
                              reduced->wire_error_steps};
  }
  // The precision the reduced run recorded: what it reduced in (a helper that cannot reduce in
  // the asked precision says which it used).
  const std::string checked = reduced.ok() ? reduced->reduce_dtype : comm::ToString(wire);
  Result<decide::WireCheck> check =
      decide::CompareWire(records[0], records[1], records[2], checked, error);
  if (!check.ok()) {
    d->warnings.push_back(
        fmt::format("the {} lever was not checked: {}", checked, check.status().message()));
    return;
  }
  v.evidence.push_back(check->sentence);
  if (!check->kept) v.levers.erase(lever);
  v.wire_check = std::move(check).value();
  v.explanation = decide::ExplainVerdict(v);
}

void Session::ApplyLevers(decide::Diagnosis* d) {
  std::vector<Lever> recommended;
  std::map<Lever, std::string> actions;
  for (const decide::LeverAdvice& advice : d->verdict.levers) {
    recommended.push_back(advice.lever);
    actions[advice.lever] = advice.action;
  }
  const plan::LeverRuns levers =
      plan::PlanLeverRuns(request_.plan, plan::PlanLevers(recommended, Basis()));
  for (const plan::SkippedLever& s : levers.skipped) {
    std::fprintf(stderr, "lever %s (%s): %s\n", std::string(ToString(s.lever)).c_str(),
                 actions[s.lever].c_str(), s.reason.c_str());
  }
  if (levers.applied.empty()) {
    std::fprintf(stderr, "no free lever to apply: the verdict recommends none %s can make\n",
                 request_.plan.torch ? "the script" : "train");
    return;
  }
  std::vector<decide::AppliedLever> applied;
  for (const plan::TrainLever& lever : levers.applied) {
    applied.push_back(
        {lever.lever.lever, fmt::format("{}; {}", fmt::join(lever.flags, " "), lever.lever.words)});
  }
  std::fprintf(stderr, "applying the free levers: %s\n",
               decide::AppliedLeversText(applied).c_str());
  Run(levers.plan);
  // With several levers, each was also run on its own at the largest count: its own gain.
  for (const plan::PlannedRun& run : levers.plan.runs) {
    if (run.id.variant.kind != plan::VariantKind::kOneLever) continue;
    auto records = LoadRun(*store_, JobOf(run), &d->warnings);
    if (!records) continue;
    Result<analysis::Decomposition> alone = analysis::Decompose(*records);
    if (!alone.ok()) {
      d->warnings.push_back(fmt::format("run {} left out: {}", run.name, alone.status().message()));
      continue;
    }
    for (decide::AppliedLever& a : applied) {
      if (a.lever != run.id.variant.lever) continue;
      a.alone_replicas = run.id.replicas;
      a.alone_samples_per_s = alone->samples_per_s;
    }
  }
  std::vector<decide::RunSet> after =
      CollectRunSets(*store_, levers.plan.runs, plan::VariantKind::kAllLevers, &d->warnings);
  if (after.empty()) return;
  if (Status st = AddAfterLevers(after, applied, options_, d); !st.ok()) {
    d->warnings.push_back(st.message());
  }
}

std::vector<LeverPrediction> Session::ModelLeverGains(const model::StepModel& model,
                                                      decide::Diagnosis* d) const {
  std::vector<Lever> recommended;
  for (const decide::LeverAdvice& l : d->verdict.levers) recommended.push_back(l.lever);
  const plan::LeverBasis basis = Basis();
  std::vector<LeverPrediction> out =
      PredictLevers(model, LeverOptions(recommended, basis), *d, &d->warnings);
  // One replica's samples/s, as a curve has it.
  const auto x1 = [](const std::vector<decide::DiagnosisPoint>& points) {
    const analysis::ScalingPoint& first = points.front().scaling;
    return first.speedup > 0 ? first.samples_per_s / first.speedup : 0.0;
  };
  if (!d->points.empty()) UseModelGains(out, &d->verdict, x1(d->points));
  // The verdict after the levers: the same model (the levered runs are its checks), from the
  // levered configuration at the largest N re-measured, its levers planned from the values the
  // applied levers left.
  if (d->after && d->after->verdict && !d->after->points.empty()) {
    std::vector<Lever> applied, next;
    for (const decide::AppliedLever& a : d->after->levers_applied) applied.push_back(a.lever);
    for (const decide::LeverAdvice& l : d->after->verdict->levers) next.push_back(l.lever);
    const model::Scenario levered = decide::WithLevers({}, LeverOptions(applied, basis));
    const int n = d->after->points.back().scaling.replicas;
    std::vector<LeverPrediction> after = PredictLeversFrom(
        model, levered, n, LeverOptions(next, LeveredBasis(applied, basis)), &d->warnings);
    // A lever whose change the applied levers already made (bf16 already on the wire, say)
    // changes nothing more: the model's gain is 0.
    const std::vector<decide::LeverOption> made = LeverOptions(applied, basis);
    for (Lever l : next) {
      const auto is = [l](const auto& x) { return x.lever == l; };
      if (std::none_of(after.begin(), after.end(), is) &&
          std::any_of(made.begin(), made.end(), is)) {
        LeverPrediction p;
        p.lever = l;
        p.change = "no further change (the applied levers made it)";
        p.replicas = n;
        after.push_back(std::move(p));
      }
    }
    UseModelGains(after, &*d->after->verdict, x1(d->after->points));
  }
  return out;
}

void Session::PrintSummary(const decide::Diagnosis& d, const std::string& json_path,
                           const std::string& html_path, const std::string& levers_text) const {
  std::fputs(report::TerminalReport(d).c_str(), stdout);  // warnings included
  if (d.after && !d.after->points.empty() && !d.points.empty()) {
    const auto& before = d.points.back().scaling;
    const auto& after = d.after->points.back().scaling;
    std::printf("\nfree levers at N=%d: efficiency %.2f -> %.2f, %.1f -> %.1f samples/s\n",
                after.replicas, before.efficiency, after.efficiency, before.samples_per_s,
                after.samples_per_s);
  }
  std::fputs(levers_text.c_str(), stdout);
  if (options_.emulation.emulated) {
    std::printf(
        "\n(EMULATED devices/links: every number above is paced emulation, "
        "not real hardware of that speed)\n");
  }
  std::printf("\n%sdiagnosis written to %s (report: %s)\n", partial_ ? "partial " : "",
              json_path.c_str(), html_path.c_str());
}

int Session::Finish(decide::Diagnosis* d) {
  const std::string json_path = request_.dir + "/diagnosis.json";
  // The step-time model of the sweep's runs, its predictions out to --predict-to (16 times the
  // largest N measured by default) and its checks (docs/model.md); a model that cannot be
  // fitted says why. The same model prices every option of the decision (docs/decide.md).
  int largest = 1;
  for (const decide::DiagnosisPoint& p : d->points) {
    largest = std::max(largest, p.scaling.replicas);
  }
  const long long reach = request_.predict_to > 0 ? request_.predict_to : 16LL * largest;
  std::vector<int> replicas;
  for (long long n = 1; n <= reach; n *= 2) replicas.push_back(static_cast<int>(n));
  if (replicas.back() != reach) replicas.push_back(static_cast<int>(reach));
  std::optional<model::StepModel> fitted;
  const nlohmann::json model_section =
      DiagnosisModelSection(request_.dir, replicas, request_.device_memory_gb, &fitted);
  std::vector<LeverPrediction> lever_predictions;
  if (fitted) {
    decide::DecisionInputs inputs = request_.decision;
    AddMeasuredStartup(*store_, &inputs);
    // The model's gains first: the levers it rules out are not priced.
    lever_predictions = ModelLeverGains(*fitted, d);
    ApplyPricedDecision(*fitted, inputs, Basis(), d);
  } else {
    d->warnings.push_back(
        "the options were not priced (the step-time model could not be "
        "fitted: see model_error); the decision is the curve's");
  }
  d->failed_runs = FailedRuns(results_);
  // What this directory's previous diagnosis predicted for the counts measured since.
  nlohmann::json earlier_checks = nlohmann::json::array();
  if (fitted) {
    std::ifstream previous_file(json_path, std::ios::binary);
    if (previous_file) {
      const nlohmann::json previous = nlohmann::json::parse(previous_file, nullptr, false);
      if (previous.is_discarded()) {
        d->warnings.push_back(json_path +
                              ": the previous diagnosis is not valid JSON; the model is not "
                              "checked against its earlier predictions");
      } else {
        earlier_checks = EarlierPredictionChecks(previous, *d, &d->warnings);
      }
    }
  }
  // The curves the verdict talks about: the free levers, and each upgrade priced with them.
  std::vector<decide::LeverOption> recommended_levers;
  std::vector<WhatIfCurve> upgrade_curves;
  if (fitted) {
    std::vector<Lever> recommended;
    for (const decide::LeverAdvice& l : d->verdict.levers) recommended.push_back(l.lever);
    // The basis the priced decision used: a --torch job's from its runs (gradient bytes,
    // loader, accumulation, the script's own hook), not the trainer options' defaults.
    recommended_levers = LeverOptions(recommended, Basis());
    upgrade_curves =
        UpgradeCurves(*fitted, request_.decision, recommended_levers, replicas, &d->warnings);
  }
  nlohmann::json j = decide::ToJson(*d);
  j.update(model_section);
  for (nlohmann::json& c : earlier_checks) j["model_checks"].push_back(std::move(c));
  if (fitted) {
    j["lever_predictions"] = ToJson(lever_predictions);
    nlohmann::json curve = nlohmann::json::array();
    for (const model::Prediction& p : LeverCurve(*fitted, recommended_levers, replicas)) {
      curve.push_back(model::ToJson(p));
    }
    j["lever_curve"] = std::move(curve);
    j["whatif_curves"] = ToJson(upgrade_curves);
  }
  if (Status st = WriteFileAtomically(json_path, j.dump(2) + "\n\n"); !st.ok()) {
    return Fail(st);
  }
  const std::string html_path = request_.dir + "/report.html";
  report::HtmlReportOptions html;
  html.input_path = json_path;
  if (Result<std::optional<report::ModelCurve>> curve = report::ModelCurveFromJson(j); curve.ok()) {
    html.model = *curve;
  }
  if (Status st = report::WriteHtmlReport(*d, html_path, html); !st.ok()) {
    d->warnings.push_back(st.message());  // the diagnosis itself is safe on disk
  }
  PrintSummary(*d, json_path, html_path, LeverPredictionsText(lever_predictions));
  if (interrupted()) {
    std::fprintf(stderr,
                 "stepscope diagnose: interrupted; finished runs are kept in %s/runs, "
                 "run the same command again to resume\n",
                 request_.dir.c_str());
    return 128 + (guard_.signal() != 0 ? guard_.signal() : SIGINT);
  }
  for (const sweep::SweepResult& r : results_) {
    if (!FailedRunsText(r).empty()) return 1;
  }
  return 0;
}

void PrintHeader(const DiagnoseRequest& request) {
  const bool emulated = request.plan.options.emulation.active();
  std::fprintf(stderr, "stepscope diagnose: %s%s\n  workload: %s\n  replicas: %s; runs in %s\n",
               request.default_workload ? "built-in default workload" : "your workload",
               emulated ? " [EMULATED devices/links: real compute and communication, paced]" : "",
               WorkloadText(request).c_str(),
               fmt::format("{}", fmt::join(request.plan.replicas, ",")).c_str(),
               request.dir.c_str());
}

}  // namespace

int RunDiagnoseSession(const DiagnoseRequest& request) {
  PrintHeader(request);
  auto store = sweep::SweepStore::Open(request.dir, WorkloadIdentity(request), request.fresh);
  if (!store.ok()) return Fail(store.status());
  Session session(request, &store.value());
  int exit_code = 0;
  std::optional<decide::Diagnosis> d = session.Diagnose(&exit_code);
  if (!d) return exit_code;
  if (!session.interrupted()) session.CheckWire(&*d);
  if (request.apply_levers && !session.interrupted()) session.ApplyLevers(&*d);
  return session.Finish(&*d);
}

}  // namespace stepscope::app
