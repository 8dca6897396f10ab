#include "apps/stepscope/predict_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/stepscope/numeric_option.h"
#include "core/text_format.h"
#include "model/check.h"
#include "model/fit.h"
#include "model/link_scaling.h"
#include "model/model_json.h"
#include "model/simulate.h"
#include "model/spec.h"
#include "plan/variant.h"
#include "sweep/run_records.h"

namespace stepscope::app {
namespace {

namespace fs = std::filesystem;

model::RunRole RoleOf(const std::string& name) {
  if (name.rfind("baseline-n", 0) == 0) return model::RunRole::kBaseline;
  if (name.rfind("double_batch-n", 0) == 0) return model::RunRole::kDoubleBatch;
  return model::RunRole::kOther;
}

// Records imported from traces lack what stepscope's own carry: the phases of compute where the
// trace did not show backward's start (then assumed in the usual 1:2 of forward to backward),
// and the collectives' sizes where the profiler did not record them (then the
// all-reduce cannot be fitted: an error saying how to give the size).
Status CheckImportedRecords(const std::string& run_dir, const sweep::RunSummary& s,
                            std::vector<StepRecord>* records) {
  bool reduced = false, sized = false;
  for (StepRecord& r : *records) {
    if (r.forward + r.backward + r.optimizer <= 0 && r.compute > 0) {
      r.forward = r.compute / 3;
      r.backward = r.compute - r.forward;
    }
    for (const CollectiveRecord& c : r.collectives) {
      reduced = true;
      sized = sized || c.bytes > 0;
    }
  }
  if (s.replicas >= 2 && s.reduce && reduced && !sized) {
    return Status::Error(
        run_dir +
        ": the step records give no collective sizes (PyTorch 1.x profiler traces do not record "
        "them), so the all-reduce cannot be fitted; give the gradient's size: `stepscope analyze "
        "TRACES --out DIR --gradient-bytes B` (B = 4 x parameters for fp32 gradients)");
  }
  return Status::Ok();
}

// Every finished run (one with its run.json) of DIR/runs, by name; or DIR itself when it is one
// run (an `analyze --out` directory, a run of train): then its baseline at its replica count.
Result<std::vector<model::RunObservation>> ReadRuns(const std::string& dir) {
  const fs::path runs_dir = fs::path(dir) / "runs";
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> runs;  // name, folder
  if (fs::is_directory(runs_dir, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(runs_dir, ec)) {
      // The reduced-precision check's and the noise-scale runs measure numerics unpaced, not
      // the step time.
      const std::string name = e.path().filename().string();
      if (e.is_directory() && fs::exists(e.path() / "run.json") && !plan::IsNumericsRun(name)) {
        runs.emplace_back(name, e.path().string());
      }
    }
    if (ec) return Status::Error("cannot list " + runs_dir.string() + ": " + ec.message());
  } else if (fs::exists(fs::path(dir) / "run.json", ec)) {
    Result<sweep::RunSummary> s = sweep::ReadRunSummary(dir);
    if (!s.ok()) return s.status();
    runs.emplace_back("baseline-n" + std::to_string(s->replicas), dir);
  } else {
    return Status::Error(dir +
                         ": neither a diagnose directory (no runs/) nor one run (no run.json); "
                         "run `stepscope diagnose --out " +
                         dir + "` or `stepscope analyze TRACES --out " + dir + "` first");
  }
  std::sort(runs.begin(), runs.end());
  std::vector<model::RunObservation> out;
  for (const auto& [name, run_dir] : runs) {
    Result<sweep::RunSummary> s = sweep::ReadRunSummary(run_dir);
    if (!s.ok()) return s.status();
    Result<std::vector<StepRecord>> records = sweep::ReadRunRecords(run_dir);
    if (!records.ok()) return records.status();
    if (Status st = CheckImportedRecords(run_dir, *s, &*records); !st.ok()) return st;
    model::RunObservation o;
    o.name = name;
    o.role = RoleOf(name);
    o.config.replicas = s->replicas;
    o.config.batch = s->batch;
    o.config.accum = s->accum;
    o.config.dtype = s->reduce_dtype;
    o.config.algorithm = s->allreduce;
    o.config.comm_hook = s->comm_hook;
    o.config.comm_hook_bytes_are_bucket = s->comm_hook_bytes_are_bucket;
    o.config.bucket_mb = s->bucket_mb;
    o.config.first_bucket_mb = model::FirstBucketMb(s->allreduce);
    o.config.overlap = s->overlap;
    o.config.loader_workers = s->workers_beside_ranks();
    o.reduce = s->reduce;
    o.synthetic_input = s->synthetic_input;
    o.gradient_bytes = s->gradient_bytes;
    o.ready_slice_bytes = s->ready_slice_bytes;
    o.ready_slice_share = s->ready_slice_backward_share;
    o.parameters = s->parameters;
    o.activation_bytes_per_sample = s->activation_bytes_per_sample;
    o.optimizer_state_floats = s->optimizer == "adamw" ? 2 : 1;
    o.peak_memory_bytes = s->peak_memory_bytes;
    o.ranks_per_host = s->ranks_per_host;
    o.cores_per_host = s->cores_per_host;
    o.cpu_outside_reductions_per_step = s->cpu_outside_reductions_per_step;
    o.cpu_in_reductions_least_rank = s->cpu_in_reductions_least_rank;
    o.cpu_busiest_host_share = s->busiest_host_share;
    o.emulated_link = s->emulated_link;
    o.latency_probe_bytes = s->latency_probe_bytes;
    o.latency_probe_seconds = s->latency_probe_seconds;
    if (s->lengths) {
      o.length_buckets = model::LengthBuckets{s->lengths->balanced, s->lengths->bucketed_work_ratio,
                                              s->lengths->bucketed_spread};
    }
    o.samples_per_s = s->samples_per_s;
    o.records = std::move(*records);
    out.push_back(std::move(o));
  }
  return out;
}

// A link option's GBPS[,LATENCY_US] as given (the latency only when given); nothing when the
// option is not given.
struct LinkText {
  double gbps = 0;
  std::optional<Seconds> latency;
};

Result<std::optional<LinkText>> ParseLink(const std::string& text, const std::string& option) {
  if (text.empty()) return std::optional<LinkText>();
  double gbps = 0, latency_us = -1;
  const std::string example = option + " 25,5";
  STEPSCOPE_RETURN_IF_ERROR(
      ParsePair(text, ',', {"option " + option, example}, &gbps, &latency_us, false));
  const bool latency_given = text.find(',') != std::string::npos;
  if (!(gbps > 0) || (latency_given && latency_us < 0)) {
    return Status::Error("option " + option +
                         ": bandwidth must be positive GB/s and latency >= 0 us (e.g. " + example +
                         ")");
  }
  LinkText link{gbps, std::nullopt};
  if (latency_given) link.latency = latency_us * 1e-6;
  return std::optional<LinkText>(link);
}

// The same option as exact constants (a latency not given is 0).
Result<std::optional<model::AlphaBeta>> LinkOption(const std::string& text,
                                                   const std::string& option) {
  Result<std::optional<LinkText>> link = ParseLink(text, option);
  if (!link.ok()) return link.status();
  if (!*link) return std::optional<model::AlphaBeta>();
  return std::optional<model::AlphaBeta>(
      model::LinkAlphaBeta((*link)->gbps, (*link)->latency.value_or(0)));
}

Result<model::Scenario> ScenarioFrom(const PredictFlags& f) {
  model::Scenario s;
  Result<std::optional<model::AlphaBeta>> link = LinkOption(f.link, "--link");
  if (!link.ok()) return link.status();
  s.link = *link;
  Result<std::optional<model::AlphaBeta>> intra = LinkOption(f.intra_link, "--intra-link");
  if (!intra.ok()) return intra.status();
  Result<std::optional<model::AlphaBeta>> inter = LinkOption(f.inter_link, "--inter-link");
  if (!inter.ok()) return inter.status();
  s.intra_link = *intra, s.inter_link = *inter;
  s.devices_per_host = f.devices_per_host;
  if ((s.intra_link || s.inter_link) && !s.devices_per_host && f.spec.empty()) {
    return Status::Error(
        "options --intra-link and --inter-link need --devices-per-host (e.g. "
        "--devices-per-host 8 --inter-link 25,10)");
  }
  if (!(f.compute_scale > 0)) return Status::Error("option --compute-scale must be > 0 (e.g. 2)");
  s.compute_scale = f.compute_scale;
  if (!f.reduce_dtype.empty()) {
    if (model::WireWidth(f.reduce_dtype) == 0) {
      return Status::Error("option --reduce-dtype: '" + f.reduce_dtype +
                           "' is not fp32, bf16 or fp16");
    }
    s.dtype = f.reduce_dtype;
  }
  if (f.bucket_mb) {
    if (!(*f.bucket_mb > 0)) return Status::Error("option --bucket-mb must be > 0 (e.g. 4)");
    s.bucket_mb = f.bucket_mb;
  }
  if (f.overlap && f.no_overlap) return Status::Error("--overlap and --no-overlap: choose one");
  if (f.overlap) s.overlap = true;
  if (f.no_overlap) s.overlap = false;
  s.batch = f.batch, s.accum = f.accum, s.loader_workers = f.loader_workers;
  s.without_stragglers = f.without_straggler;
  s.balance_lengths = f.balance_lengths;
  if (f.device_memory_gb) {
    if (!(*f.device_memory_gb > 0)) return Status::Error("option --device-memory-gb must be > 0");
    s.device_memory_gb = f.device_memory_gb;
  }
  return s;
}

void PrintText(const model::StepModel& m, const std::vector<model::Prediction>& predictions,
               const std::vector<model::ModelCheck>& checks, const std::string& dir) {
  std::string fitted;
  for (int n : m.fitted_replicas) fitted += (fitted.empty() ? "" : ",") + std::to_string(n);
  if (fitted.empty()) {
    std::printf("stepscope predict: model described by %s\n", dir.c_str());
  } else {
    std::printf("stepscope predict: model fitted on the baselines at N = %s of %s\n",
                fitted.c_str(), dir.c_str());
  }
  std::printf(
      "  compute per micro-batch of %d: forward %s, backward %s; optimizer %s\n", m.reference.batch,
      Ms(m.forward_c0.estimate.value + m.forward_c1.estimate.value * m.reference.batch).c_str(),
      Ms(m.backward_c0.estimate.value + m.backward_c1.estimate.value * m.reference.batch).c_str(),
      Ms(m.optimizer.estimate.value).c_str());
  // A time in microseconds with its band; a bandwidth in GB/s from seconds per byte, its band
  // the other way round (an end at 0 s/B: no bound).
  const auto us = [](const Estimate& e) {
    return Fixed(e.value * 1e6, 1) + " us [" + Fixed(e.low * 1e6, 1) + " to " +
           Fixed(e.high * 1e6, 1) + "]";
  };
  const auto rate = [](double spb) { return spb > 0 ? Fixed(1e-9 / spb, 3) : std::string("-"); };
  const auto gbps = [&rate](const Estimate& e) {
    return rate(e.value) + " GB/s [" + rate(e.high) + " to " + rate(e.low) + "]";
  };
  for (const auto& [dtype, ab] : m.collectives) {
    if (ab.samples == 0) {  // given (a spec, a link), not fitted
      std::printf("  all-reduce %s: latency %s us per step, %s GB/s\n", dtype.c_str(),
                  Fixed(ab.alpha_s.value * 1e6, 1).c_str(),
                  rate(ab.seconds_per_byte.value).c_str());
      continue;
    }
    const std::string fixed = ab.fixed_s.value > 0 ? "fixed " + us(ab.fixed_s) + " per reduction"
                                                   : "no fixed cost per reduction (not "
                                                     "identified, or fitted below 0)";
    std::printf("  all-reduce %s: latency %s per step%s, %s, %s%s; from %d reductions\n",
                dtype.c_str(), us(ab.alpha_s).c_str(), ab.alpha_assumed ? " (assumed)" : "",
                fixed.c_str(), gbps(ab.seconds_per_byte).c_str(),
                ab.beta_assumed ? " (assumed)" : "", ab.samples);
  }
  if (m.hosts) {
    const auto link = [](const std::optional<model::AlphaBeta>& ab) {
      return ab ? Fixed(1e-9 / ab->seconds_per_byte.value, 3) + " GB/s, " +
                      Fixed(ab->alpha_s.value * 1e6, 1) + " us"
                : std::string("none");
    };
    std::printf("  %d devices per host, %s all-reduce: within a host %s; between hosts %s\n",
                m.hosts->devices_per_host, model::Name(m.hosts->algorithm).c_str(),
                m.hosts->devices_per_host > 1 ? link(m.hosts->intra).c_str() : "-",
                link(m.hosts->inter).c_str());
  }
  for (const auto& [rank, factor] : m.stragglers) {
    std::printf("  straggler: rank %d computes %sx the typical rank\n", rank,
                Fixed(factor, 2).c_str());
  }
  for (const std::string& note : m.notes) std::printf("  note: %s\n", note.c_str());
  std::printf("\n  %8s  %-28s  %-22s  %9s  %7s %8s %9s %8s %8s\n", "replicas",
              "samples/s [90% band]", "efficiency", "step ms", "input", "compute", "straggler",
              "exposed", "overhead");
  for (const model::Prediction& p : predictions) {
    std::printf("  %8d  %-28s  %-22s  %9s  %7s %8s %9s %8s %8s%s\n", p.replicas,
                EstimateText(p.samples_per_s, 1).c_str(), EstimateText(p.efficiency, 3).c_str(),
                Ms(p.step_s.value).c_str(), Ms(p.parts.input_wait).c_str(),
                Ms(p.parts.compute).c_str(), Ms(p.parts.straggler_wait).c_str(),
                Ms(p.parts.exposed_comm).c_str(), Ms(p.parts.overhead).c_str(),
                p.memory_note.empty() ? "" : ("  (" + p.memory_note + ")").c_str());
  }
  // One precision per scenario: the first prediction's note stands for all of them.
  if (!predictions.empty() && !predictions.front().wire_note.empty()) {
    std::printf("  assumed: %s\n", predictions.front().wire_note.c_str());
  }
  if (!predictions.empty() && !predictions.front().bucket_note.empty()) {
    std::printf("  assumed: %s\n", predictions.front().bucket_note.c_str());
  }
  if (checks.empty()) {
    std::printf("\n  no run outside the fit to check the model against\n");
    return;
  }
  std::printf("\n  checks (runs the fit did not use; their own configuration):\n");
  for (const model::ModelCheck& c : checks) {
    std::printf("  %-34s predicted %-26s measured %10s  error %+6.1f %%%s\n", c.run.c_str(),
                EstimateText(c.predicted_samples_per_s, 1).c_str(),
                Fixed(c.measured_samples_per_s, 1).c_str(), 100 * c.error,
                c.within_band ? "" : "  (outside the band)");
    if (c.partly_fitted) std::printf("  %-34s (partly fitted: its reductions or overlap)\n", "");
    if (c.as_drawn) {
      std::printf("  %-34s as drawn  %-26s error %+6.1f %% (the lengths this run drew)\n", "",
                  EstimateText(c.as_drawn->predicted, 1).c_str(), 100 * c.as_drawn->error);
    }
  }
  std::printf("  median |error| %.1f %%, worst %.1f %%\n", 100 * model::MedianAbsoluteError(checks),
              100 * model::WorstAbsoluteError(checks));
}

nlohmann::json PredictionsJson(const model::StepModel& m,
                               const std::vector<model::Prediction>& predictions,
                               const std::vector<model::ModelCheck>& checks) {
  nlohmann::json out = {{"model", model::ToJson(m)}};
  out["predictions"] = nlohmann::json::array();
  for (const model::Prediction& p : predictions) out["predictions"].push_back(model::ToJson(p));
  out["model_checks"] = nlohmann::json::array();
  for (const model::ModelCheck& c : checks) out["model_checks"].push_back(model::ToJson(c));
  out["checks_median_abs_error"] = model::MedianAbsoluteError(checks);
  out["checks_worst_abs_error"] = model::WorstAbsoluteError(checks);
  return out;
}

// The model a spec file describes; errors name the file.
Result<model::StepModel> ReadSpec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::Error(path + ": cannot read the spec (a JSON file: docs/model.md, \"A spec\")");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": cannot read the spec");
  return model::ModelFromSpec(text.str(), path);
}

// The predictions at each replica count of the scenario, printed as text or JSON.
int PrintPredictions(const PredictFlags& f, const model::StepModel& m,
                     const std::vector<int>& replicas, const model::Scenario& scenario,
                     const std::vector<model::ModelCheck>& checks, const std::string& source) {
  std::vector<model::Prediction> predictions;
  for (int n : replicas) {
    model::Scenario s = scenario;
    s.replicas = n;
    Result<model::Prediction> p = model::Predict(m, s);
    if (!p.ok()) {
      std::fprintf(stderr, "stepscope predict: %s (at %d replicas)\n", p.status().message().c_str(),
                   n);
      return kPredictBadInput;
    }
    predictions.push_back(*p);
  }
  if (f.json) {
    nlohmann::json out = {{"schema", "stepscope.predict/1"}};
    out[f.spec.empty() ? "dir" : "spec"] = source;
    out.update(PredictionsJson(m, predictions, checks));
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    PrintText(m, predictions, checks, source);
  }
  return kPredictOk;
}

}  // namespace

nlohmann::json DiagnosisModelSection(const std::string& dir, const std::vector<int>& replicas,
                                     std::optional<double> device_memory_gb,
                                     std::optional<model::StepModel>* out) {
  Result<std::vector<model::RunObservation>> runs = ReadRuns(dir);
  if (!runs.ok()) return {{"model_error", runs.status().message()}};
  Result<model::StepModel> fitted = model::FitStepModel(*runs);
  if (!fitted.ok()) return {{"model_error", fitted.status().message()}};
  // The checks predict each run as it ran on this host; the device memory applies to the
  // predictions, the levers and the priced options.
  const std::vector<model::ModelCheck> checks = model::CheckRuns(*fitted, *runs);
  fitted->device_memory_gb = device_memory_gb;
  std::vector<model::Prediction> predictions;
  for (int n : replicas) {
    model::Scenario s;
    s.replicas = n;
    Result<model::Prediction> p = model::Predict(*fitted, s);
    if (!p.ok()) return {{"model_error", p.status().message()}};
    predictions.push_back(*p);
  }
  if (out != nullptr) *out = *fitted;
  return PredictionsJson(*fitted, predictions, checks);
}

int RunPredict(const PredictFlags& f) {
  auto bad = [](const Status& s) {
    std::fprintf(stderr, "stepscope predict: %s\n", s.message().c_str());
    return kPredictBadInput;
  };
  Result<std::vector<int>> replicas = model::ParseReplicaList(f.replicas);
  if (!replicas.ok()) return bad(replicas.status());
  Result<model::Scenario> scenario = ScenarioFrom(f);
  if (!scenario.ok()) return bad(scenario.status());
  if (f.dir.empty() == f.spec.empty()) {
    return bad(Status::Error(
        "give a diagnose directory or --spec FILE.json, one of them (e.g. stepscope predict "
        "runs/default --replicas 16..4096)"));
  }
  if (f.measured_link && !(*f.measured_link > 0)) {
    return bad(Status::Error("option --measured-link must be a positive GB/s (e.g. 12.5)"));
  }
  if (f.measured_link && f.link.empty()) {
    return bad(Status::Error(
        "--measured-link scales the link the runs were measured on to --link's bandwidth: give "
        "--link too (e.g. --measured-link 12.5 --link 25)"));
  }
  if (!f.spec.empty()) {
    if (f.measured_link)
      return bad(Status::Error("--measured-link needs a diagnose directory, not --spec"));
    if (!f.fit_on.empty())
      return bad(Status::Error("--fit-on needs a diagnose directory, not --spec"));
    Result<model::StepModel> described = ReadSpec(f.spec);
    if (!described.ok()) return bad(described.status());
    return PrintPredictions(f, *described, *replicas, *scenario, {}, f.spec);
  }
  Result<std::vector<model::RunObservation>> runs = ReadRuns(f.dir);
  if (!runs.ok()) return bad(runs.status());
  std::vector<model::RunObservation> fit_set;
  if (!f.fit_on.empty()) {
    Result<std::vector<int>> on = model::ParseReplicaList(f.fit_on);
    if (!on.ok()) return bad(on.status());
    fit_set = model::RunsAt(*runs, *on);
  } else {
    fit_set = *runs;
  }
  Result<model::StepModel> fitted = model::FitStepModel(fit_set);
  if (!fitted.ok()) {
    std::fprintf(stderr, "stepscope predict: %s: %s\n", f.dir.c_str(),
                 fitted.status().message().c_str());
    return kPredictFailed;
  }
  if (f.measured_link) {
    // --link was checked by ScenarioFrom; read as given, its latency only if it has one.
    Result<std::optional<LinkText>> parsed = ParseLink(f.link, "--link");
    const LinkText& target = **parsed;
    Result<model::AlphaBeta> scaled =
        model::ScaleMeasuredLink(*fitted, *f.measured_link, target.gbps, target.latency);
    if (!scaled.ok()) {
      std::fprintf(stderr, "stepscope predict: %s: %s\n", f.dir.c_str(),
                   scaled.status().message().c_str());
      return kPredictFailed;
    }
    scenario->link = *scaled;
    fitted->measured_link = model::JudgeMeasuredLink(*fitted, *f.measured_link);
    if (std::optional<std::string> scaled_residual =
            model::ScaleCrowdedResidual(*f.measured_link, target.gbps, &*fitted)) {
      fitted->notes.push_back(*scaled_residual);
    }
    if (std::optional<std::string> caveat = model::MeasuredLinkCaveat(*fitted, *f.measured_link)) {
      fitted->notes.push_back(*caveat);
    }
    if (std::optional<std::string> caveat =
            model::FasterLinkCaveat(fitted->measured_link, target.gbps)) {
      fitted->notes.push_back(*caveat);
    }
  }
  // A held-out variable-length run is also checked as drawn: its lengths, not its timing.
  model::KeepDrawnPositions(*runs, &*fitted);
  if (std::optional<std::string> caveat = model::UnfittedCrowdingCaveat(*fitted, *runs)) {
    fitted->notes.push_back(*caveat);
  }
  return PrintPredictions(f, *fitted, *replicas, *scenario, model::CheckRuns(*fitted, *runs),
                          f.dir);
}

void AddPredictCommand(CLI::App& app, std::function<int()>* run) {
  auto f = std::make_shared<PredictFlags>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Fit the step-time model to a diagnose directory and predict other replica counts and "
      "what-ifs. Exit codes: 0 ok, 1 the model could not be fitted, 2 bad usage or input");
  cmd->add_option("dir", f->dir, "A diagnose directory (its runs/)");
  cmd->add_option("--spec", f->spec,
                  "Instead of a directory: a JSON description of the job and the hardware "
                  "(docs/model.md, \"A spec\")");
  cmd->add_option("--replicas", f->replicas, "Replica counts: 1,2,4 or a doubling range 16..4096")
      ->capture_default_str();
  cmd->add_option("--fit-on", f->fit_on,
                  "Fit only on the baselines at these replica counts (the others are checks)");
  cmd->add_option("--link", f->link, "What-if: a link of GBPS[,LATENCY_US] for every all-reduce");
  cmd->add_option("--measured-link", f->measured_link,
                  "The nominal GB/s of the link DIR was measured on: --link is then that kind of "
                  "link at another rate (the fitted cost scaled; latency as fitted unless given)")
      ->check(Number("--measured-link 12.5"));
  cmd->add_option(
      "--intra-link", f->intra_link,
      "What-if: GBPS[,LATENCY_US] between the devices of a host (default: as measured)");
  cmd->add_option("--inter-link", f->inter_link,
                  "What-if: GBPS[,LATENCY_US] between hosts (hierarchical all-reduce)");
  cmd->add_option("--devices-per-host", f->devices_per_host,
                  "What-if: devices per host, for --intra-link and --inter-link")
      ->transform(WholeNumber("--devices-per-host 8", 1));
  cmd->add_option("--compute-scale", f->compute_scale, "What-if: devices this many times faster")
      ->capture_default_str()
      ->check(Number("--compute-scale 2"));
  cmd->add_option("--reduce-dtype", f->reduce_dtype, "What-if: wire precision fp32, bf16, fp16");
  cmd->add_option("--bucket-mb", f->bucket_mb, "What-if: gradient bucket size (MiB)")
      ->check(Number("--bucket-mb 4"));
  cmd->add_flag("--overlap", f->overlap, "What-if: reduce buckets during backward");
  cmd->add_flag("--no-overlap", f->no_overlap, "What-if: reduce only after backward");
  cmd->add_option("--batch", f->batch, "What-if: micro-batch per replica")
      ->transform(WholeNumber("--batch 32", 1));
  cmd->add_option("--accum", f->accum, "What-if: micro-batches accumulated per step")
      ->transform(WholeNumber("--accum 4", 1));
  cmd->add_option("--loader-workers", f->loader_workers,
                  "What-if: loader workers per replica (0: loading in the training process)")
      ->transform(WholeNumber("--loader-workers 4", 0));
  cmd->add_flag("--without-straggler", f->without_straggler,
                "What-if: the persistent stragglers fixed");
  cmd->add_flag("--balance-lengths", f->balance_lengths,
                "What-if: length-bucketed batches (variable-length text)");
  cmd->add_option("--device-memory-gb", f->device_memory_gb,
                  "Device memory (GiB): a micro-batch that does not fit becomes accumulation")
      ->check(Number("--device-memory-gb 80"));
  cmd->add_flag("--json", f->json, "Print JSON (model, predictions, model_checks)");
  cmd->callback([f, run] { *run = [f] { return RunPredict(*f); }; });
}

}  // namespace stepscope::app
