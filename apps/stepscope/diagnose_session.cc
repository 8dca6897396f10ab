#include "apps/stepscope/diagnose_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <vector>

#include "analysis/build_diagnosis.h"
#include "analysis/diagnosis.h"
#include "analysis/wire_check.h"
#include "apps/stepscope/decision_section.h"
#include "apps/stepscope/predict_command.h"
#include "comm/wire_dtype.h"
#include "plan/train_mapping.h"
#include "report/html_report.h"
#include "report/terminal_report.h"
#include "sweep/run_records.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_store.h"

namespace stepscope::app {
namespace {

int Fail(const Status& st) {
  std::fprintf(stderr, "stepscope diagnose: %s\n", st.message().c_str());
  return 2;
}

analysis::Emulation EmulationOf(const train::TrainOptions& o) {
  analysis::Emulation e;
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

// A planned run as the sweep launches it: `program train ARGS`.
sweep::Job JobOf(const plan::PlannedRun& run) {
  std::vector<std::string> args = {"train"};
  args.insert(args.end(), run.args.begin(), run.args.end());
  return {run.name, run.id.replicas, std::move(args)};
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
  if (!store.Finished(job.name, job.args)) return std::nullopt;
  Result<std::vector<StepRecord>> records = sweep::ReadRunRecords(store.RunDir(job.name));
  if (!records.ok()) {
    warnings->push_back(fmt::format("run {} left out: {}", job.name, records.status().message()));
    return std::nullopt;
  }
  return std::move(records).value();
}

// How well the emulation honoured a finished run (its run.json); nullopt when not emulated or
// unreadable (with a warning).
std::optional<analysis::EmulationHonesty> LoadHonesty(const sweep::SweepStore& store,
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
  analysis::EmulationHonesty h;
  h.paced_segments = p.paced_segments;
  h.unhonoured_segments = p.unhonoured_segments;
  h.unhonoured_links = p.unhonoured_links;
  h.link_reductions = p.link_reductions;
  return h;
}

// Where a run's records go in its replica count's set.
std::vector<StepRecord>& Slot(plan::VariantKind kind, analysis::RunSet* set) {
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
std::vector<analysis::RunSet> CollectRunSets(const sweep::SweepStore& store,
                                             const std::vector<plan::PlannedRun>& runs,
                                             plan::VariantKind curve,
                                             std::vector<std::string>* warnings) {
  std::map<int, analysis::RunSet> sets;
  for (const plan::PlannedRun& run : runs) {
    const plan::VariantKind kind = run.id.variant.kind;
    if (kind != curve && (run.id.repeat != 1 || !plan::IsAblation(kind))) continue;
    analysis::RunSet& set = sets[run.id.replicas];
    auto records = LoadRun(store, JobOf(run), warnings);
    if (!records) continue;
    if (run.id.repeat != 1) {
      set.repeats.push_back(std::move(*records));
      continue;
    }
    Slot(kind, &set) = std::move(*records);
    if (kind == curve) {
      set.replicas = run.id.replicas;  // marks the set as complete
      set.honesty = LoadHonesty(store, JobOf(run), warnings);
    }
  }
  std::vector<analysis::RunSet> out;
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
std::vector<analysis::FailedRun> FailedRuns(const std::vector<sweep::SweepResult>& results) {
  std::vector<analysis::FailedRun> out;
  for (const sweep::SweepResult& r : results) {
    for (const sweep::JobOutcome& o : r.outcomes) {
      std::erase_if(out, [&](const analysis::FailedRun& f) { return f.run == o.job.name; });
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
    options_.source = {"diagnose",
                       "train " + sweep::QuoteCommand(plan::Flatten(request.plan.workload)),
                       STEPSCOPE_VERSION};
    options_.emulation = EmulationOf(request.plan.options);
    // The curve's own decision (used when the options cannot be priced) sees the same prices.
    options_.cost = {request.decision.device_cost_per_hour, request.decision.deadline_hours,
                     request.decision.samples_to_target};
    run_options_.program = request.program;
    run_options_.launcher = request.launcher;
    run_options_.progress = request.quiet ? nullptr : stderr;
    run_options_.run_timeout_s = request.run_timeout_s;
    // Every run of the sweep emulates the same device: the first run of each compute shape
    // calibrates it, later runs pace to it (train/device_file.h).
    if (request.plan.options.emulation.device_speed > 0) {
      run_options_.extra_args = {
          "--emulate-device-file",
          std::filesystem::absolute(store_->dir() + "/device.json").string()};
    }
  }

  // The main sweep and the diagnosis made from it; nullopt (with the exit code in `exit_code`)
  // when there is nothing to diagnose.
  std::optional<analysis::Diagnosis> Diagnose(int* exit_code);
  // A recommended reduced-precision lever checked by three short runs (analysis/wire_check.h);
  // dropped from the levers when its numerical cost exceeds the seed-to-seed spread.
  void CheckWire(analysis::Diagnosis* d);
  // The free levers applied and re-measured: the curve after them joins the diagnosis.
  void ApplyLevers(analysis::Diagnosis* d);
  // diagnosis.json, report.html and the terminal summary; returns the exit code.
  int Finish(analysis::Diagnosis* d);
  // True when a sweep of this session was stopped by SIGINT or SIGTERM.
  bool interrupted() const {
    for (const sweep::SweepResult& r : results_) {
      if (r.interrupted) return true;
    }
    return false;
  }

 private:
  sweep::SweepResult Run(const plan::RunPlan& plan);
  void PrintSummary(const analysis::Diagnosis& d, const std::string& json_path,
                    const std::string& html_path) const;

  const DiagnoseRequest& request_;
  sweep::SweepStore* store_;
  analysis::DiagnoseOptions options_;
  sweep::SweepRunOptions run_options_;
  sweep::InterruptGuard guard_;
  std::vector<sweep::SweepResult> results_;
  bool partial_ = false;
};

sweep::SweepResult Session::Run(const plan::RunPlan& plan) {
  for (const std::string& note : plan.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  sweep::SweepResult result = RunSweep(Jobs(plan.runs), run_options_, store_, &guard_);
  if (result.interrupted) partial_ = true;
  results_.push_back(result);
  return result;
}

std::optional<analysis::Diagnosis> Session::Diagnose(int* exit_code) {
  const plan::RunPlan plan = plan::PlanMainRuns(request_.plan);
  const sweep::SweepResult result = Run(plan);
  std::vector<std::string> warnings;
  std::vector<analysis::RunSet> sets =
      CollectRunSets(*store_, plan.runs, plan::VariantKind::kBaseline, &warnings);
  if (sets.empty()) {
    std::fprintf(stderr, "stepscope diagnose: no baseline run finished; nothing to diagnose%s\n%s",
                 result.interrupted ? " (interrupted)" : "", FailedRunsText(result).c_str());
    *exit_code = result.interrupted ? 128 + (result.signal ? result.signal : SIGINT) : 1;
    return std::nullopt;
  }
  Result<analysis::Diagnosis> diagnosis = BuildDiagnosis(sets, options_);
  if (!diagnosis.ok()) {
    *exit_code = Fail(diagnosis.status());
    return std::nullopt;
  }
  analysis::Diagnosis& d = diagnosis.value();
  d.warnings.insert(d.warnings.begin(), warnings.begin(), warnings.end());
  for (const sweep::JobOutcome& o : result.outcomes) {
    if (o.state == sweep::JobState::kFailed || o.state == sweep::JobState::kInterrupted ||
        o.state == sweep::JobState::kNotRun) {
      partial_ = true;
      d.warnings.push_back(
          fmt::format("partial diagnosis: run {} {}", o.job.name, sweep::ToString(o.state)));
    }
  }
  return std::move(d);
}

void Session::CheckWire(analysis::Diagnosis* d) {
  analysis::Verdict& v = d->verdict;
  auto lever = std::find_if(v.levers.begin(), v.levers.end(), [](const analysis::LeverAdvice& l) {
    return l.lever == Lever::kLowPrecisionReduction;
  });
  if (request_.wire_check_steps <= 0 || lever == v.levers.end()) return;
  const plan::LeverPlan planned =
      plan::PlanLevers({Lever::kLowPrecisionReduction}, plan::TrainBasis(request_.plan.options));
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
  Result<analysis::WireCheck> check =
      analysis::CompareWire(records[0], records[1], records[2], comm::ToString(wire));
  if (!check.ok()) {
    d->warnings.push_back(fmt::format("the {} lever was not checked: {}", comm::ToString(wire),
                                      check.status().message()));
    return;
  }
  v.evidence.push_back(check->sentence);
  if (!check->kept) v.levers.erase(lever);
  v.wire_check = std::move(check).value();
  v.explanation = analysis::ExplainVerdict(v);
}

void Session::ApplyLevers(analysis::Diagnosis* d) {
  std::vector<Lever> recommended;
  std::map<Lever, std::string> actions;
  for (const analysis::LeverAdvice& advice : d->verdict.levers) {
    recommended.push_back(advice.lever);
    actions[advice.lever] = advice.action;
  }
  const plan::LeverRuns levers = plan::PlanLeverRuns(
      request_.plan, plan::PlanLevers(recommended, plan::TrainBasis(request_.plan.options)));
  for (const plan::SkippedLever& s : levers.skipped) {
    std::fprintf(stderr, "lever %s (%s): %s\n", std::string(ToString(s.lever)).c_str(),
                 actions[s.lever].c_str(), s.reason.c_str());
  }
  if (levers.applied.empty()) {
    std::fprintf(stderr, "no free lever to apply: the verdict recommends none train can make\n");
    return;
  }
  std::vector<analysis::AppliedLever> applied;
  for (const plan::TrainLever& lever : levers.applied) {
    applied.push_back(
        {lever.lever.lever, fmt::format("{}; {}", fmt::join(lever.flags, " "), lever.lever.words)});
  }
  std::fprintf(stderr, "applying the free levers: %s\n",
               analysis::AppliedLeversText(applied).c_str());
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
    for (analysis::AppliedLever& a : applied) {
      if (a.lever != run.id.variant.lever) continue;
      a.alone_replicas = run.id.replicas;
      a.alone_samples_per_s = alone->samples_per_s;
    }
  }
  std::vector<analysis::RunSet> after =
      CollectRunSets(*store_, levers.plan.runs, plan::VariantKind::kAllLevers, &d->warnings);
  if (after.empty()) return;
  if (Status st = AddAfterLevers(after, applied, options_, d); !st.ok()) {
    d->warnings.push_back(st.message());
  }
}

void Session::PrintSummary(const analysis::Diagnosis& d, const std::string& json_path,
                           const std::string& html_path) const {
  std::fputs(report::TerminalReport(d).c_str(), stdout);  // warnings included
  if (d.after && !d.after->points.empty() && !d.points.empty()) {
    const auto& before = d.points.back().scaling;
    const auto& after = d.after->points.back().scaling;
    std::printf("\nfree levers at N=%d: efficiency %.2f -> %.2f, %.1f -> %.1f samples/s\n",
                after.replicas, before.efficiency, after.efficiency, before.samples_per_s,
                after.samples_per_s);
  }
  if (options_.emulation.emulated) {
    std::printf(
        "\n(EMULATED devices/links: every number above is paced emulation, "
        "not real hardware of that speed)\n");
  }
  std::printf("\n%sdiagnosis written to %s (report: %s)\n", partial_ ? "partial " : "",
              json_path.c_str(), html_path.c_str());
}

int Session::Finish(analysis::Diagnosis* d) {
  const std::string json_path = request_.dir + "/diagnosis.json";
  // The step-time model of the sweep's runs, its predictions out to 16 times the largest N
  // measured and its checks (docs/model.md); a model that cannot be fitted says why. The same
  // model prices every option of the decision (docs/decide.md).
  int largest = 1;
  for (const analysis::DiagnosisPoint& p : d->points) {
    largest = std::max(largest, p.scaling.replicas);
  }
  std::vector<int> replicas;
  for (long long n = 1; n <= 16LL * largest; n *= 2) replicas.push_back(static_cast<int>(n));
  std::optional<model::StepModel> fitted;
  const nlohmann::json model_section = DiagnosisModelSection(request_.dir, replicas, &fitted);
  if (fitted) {
    decide::DecisionInputs inputs = request_.decision;
    AddMeasuredStartup(*store_, &inputs);
    ApplyPricedDecision(*fitted, inputs, plan::TrainBasis(request_.plan.options), d);
  } else {
    d->warnings.push_back(
        "the options were not priced (the step-time model could not be "
        "fitted: see model_error); the decision is the curve's");
  }
  d->failed_runs = FailedRuns(results_);
  nlohmann::json j = analysis::ToJson(*d);
  j.update(model_section);
  if (Status st = WriteFileAtomically(json_path, j.dump(2) + "\n\n"); !st.ok()) {
    return Fail(st);
  }
  const std::string html_path = request_.dir + "/report.html";
  report::HtmlReportOptions html;
  html.input_path = json_path;
  if (Status st = report::WriteHtmlReport(*d, html_path, html); !st.ok()) {
    d->warnings.push_back(st.message());  // the diagnosis itself is safe on disk
  }
  PrintSummary(*d, json_path, html_path);
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
  std::fprintf(
      stderr, "stepscope diagnose: %s%s\n  workload: train %s\n  replicas: %s; runs in %s\n",
      request.default_workload ? "built-in default workload" : "your workload",
      emulated ? " [EMULATED devices/links: real compute and communication, paced]" : "",
      sweep::QuoteCommand(plan::Flatten(request.plan.workload)).c_str(),
      fmt::format("{}", fmt::join(request.plan.replicas, ",")).c_str(), request.dir.c_str());
}

}  // namespace

int RunDiagnoseSession(const DiagnoseRequest& request) {
  PrintHeader(request);
  auto store =
      sweep::SweepStore::Open(request.dir, plan::Flatten(request.plan.workload), request.fresh);
  if (!store.ok()) return Fail(store.status());
  Session session(request, &store.value());
  int exit_code = 0;
  std::optional<analysis::Diagnosis> d = session.Diagnose(&exit_code);
  if (!d) return exit_code;
  if (!session.interrupted()) session.CheckWire(&*d);
  if (request.apply_levers && !session.interrupted()) session.ApplyLevers(&*d);
  return session.Finish(&*d);
}

}  // namespace stepscope::app
