#include "apps/stepscope/diagnose_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "analysis/build_diagnosis.h"
#include "analysis/diagnosis.h"
#include "analysis/summary.h"
#include "apps/stepscope/train_command.h"
#include "nn/model.h"
#include "report/html_report.h"
#include "sweep/child_process.h"
#include "sweep/launcher.h"
#include "sweep/run_records.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_store.h"

namespace stepscope::app {
namespace {
namespace fs = std::filesystem;
using Args = std::vector<std::string>;

// Arguments every sweep run gets before the workload's own (which may override them).
const Args kSweepBase = {"--steps", "30", "--warmup-steps", "5", "--no-eval"};

struct DiagnoseFlags {
  TrainFlags train;
  std::vector<CLI::Option*> train_options;  // the options AddTrainOptions declared
  std::string replicas;
  std::string launcher = sweep::kDefaultLauncher;
  std::string ablate_at;  // empty: all (largest for the built-in default)
  bool apply_levers = false;
  bool no_ablations = false;
  bool fresh = false;
  std::optional<double> device_cost;
  std::optional<double> deadline;
  std::optional<double> samples_to_target;
};

enum class Variant { kBaseline, kNoReduce, kSyntheticInput, kDoubleBatch, kLevers };

const char* VariantName(Variant v) {
  switch (v) {
    case Variant::kBaseline:
      return "baseline";
    case Variant::kNoReduce:
      return "no_reduce";
    case Variant::kSyntheticInput:
      return "synthetic_input";
    case Variant::kDoubleBatch:
      return "double_batch";
    case Variant::kLevers:
      return "levers";
  }
  return "?";
}

std::string JobName(Variant v, int n) { return fmt::format("{}-n{}", VariantName(v), n); }

Result<std::vector<int>> ParseReplicas(const std::string& text, const char* flag) {
  std::set<int> counts;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      const int n = std::stoi(item, &used);
      if (used != item.size() || n < 1) throw std::invalid_argument(item);
      counts.insert(n);
    } catch (const std::exception&) {
      return Status::Error(
          fmt::format("option {}: '{}' is not a replica count; write e.g. 1,2,4,8", flag, item));
    }
  }
  if (counts.empty())
    return Status::Error(fmt::format("option {}: needs at least one count", flag));
  return std::vector<int>(counts.begin(), counts.end());
}

// `--name value` pairs (or bare flags) as given on the command line, in declaration order.
Args GivenTrainArgs(const DiagnoseFlags& f) {
  Args args;
  for (const CLI::Option* opt : f.train_options) {
    if (opt->count() == 0) continue;
    const std::string name = opt->get_name();
    if (name == "--out" || name == "--quiet") continue;  // the sweep owns these
    if (opt->get_expected_min() == 0) {
      args.push_back(name);
    } else {
      args.push_back(name);
      args.push_back(opt->results().back());
    }
  }
  return args;
}

bool TakesValue(const std::string& name) {
  static const std::set<std::string> kFlags = {"--augment",    "--synthetic-input", "--no-eval",
                                               "--no-overlap", "--no-reduce",       "--quiet"};
  return kFlags.count(name) == 0;
}

// Removes every occurrence of option `name` (and its value) from args.
Args Without(const Args& args, const std::string& name) {
  Args out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name) {
      if (TakesValue(name)) ++i;
      continue;
    }
    out.push_back(args[i]);
  }
  return out;
}

Args Plus(Args args, const Args& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Parses train arguments the way `stepscope train` would, into typed options.
Result<train::TrainOptions> ParseTrainArgs(const Args& args) {
  CLI::App scratch;
  scratch.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  TrainFlags flags;
  AddTrainOptions(&scratch, &flags);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    scratch.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return Status::Error(std::string("workload options: ") + e.what());
  }
  STEPSCOPE_RETURN_IF_ERROR(FinishTrainOptions(&flags));
  return flags.options;
}

// Injections name a rank; a job too small to have that rank runs without it.
Args ForReplicas(const Args& args, const train::TrainOptions& o, int n,
                 std::vector<std::string>* notes) {
  Args out = args;
  const std::pair<int, const char*> ranked[] = {{o.injection.straggler_rank, "--inject-straggler"},
                                                {o.injection.crash_rank, "--inject-crash"},
                                                {o.injection.hang_rank, "--inject-hang"}};
  for (const auto& [rank, flag] : ranked) {
    if (rank >= n) {
      out = Without(out, flag);
      notes->push_back(
          fmt::format("{} names rank {}: left out of the {}-replica runs", flag, rank, n));
    }
  }
  return out;
}

Args VariantArgs(Variant v, const Args& workload, const train::TrainOptions& o) {
  switch (v) {
    case Variant::kNoReduce:
      return Plus(Without(workload, "--reduce-dtype"), {"--no-reduce"});
    case Variant::kSyntheticInput:
      return Plus(workload, {"--synthetic-input"});
    case Variant::kDoubleBatch:
      return Plus(Without(workload, "--batch"), {"--batch", std::to_string(2 * o.batch)});
    default:
      return workload;
  }
}

// The recommended free levers as train arguments. Levers that are not a flag (removing a
// straggler is a hardware action) are described in `skipped`.
struct LeverPlan {
  Args args;
  std::vector<Lever> applied;  // for the diagnosis
  std::vector<std::string> words;    // what was changed, for the terminal
  std::vector<std::string> skipped;
};

LeverPlan PlanLevers(const analysis::Verdict& verdict, const Args& workload,
                     const train::TrainOptions& o) {
  LeverPlan plan;
  plan.args = workload;
  for (const analysis::LeverAdvice& lever : verdict.levers) {
    if (lever.lever == Lever::kLoaderWorkersPrefetch) {
      const int workers = std::max(2, 2 * o.loader_workers);
      const int prefetch = std::max(8, 2 * o.prefetch);
      plan.args = Plus(
          Without(Without(plan.args, "--loader-workers"), "--prefetch"),
          {"--loader-workers", std::to_string(workers), "--prefetch", std::to_string(prefetch)});
      plan.words.push_back(fmt::format("--loader-workers {} --prefetch {}", workers, prefetch));
    } else if (lever.lever == Lever::kBiggerMicroBatch) {
      plan.args = Plus(Without(plan.args, "--batch"), {"--batch", std::to_string(2 * o.batch)});
      plan.words.push_back(
          fmt::format("--batch {} (was {}; use --accum 2 instead where "
                      "activation memory binds)",
                      2 * o.batch, o.batch));
    } else if (lever.lever == Lever::kOverlapBucketing) {
      double grad_mib = 0;
      if (auto model = nn::MakeModel(o.model); model.ok()) {
        grad_mib = model.value()->Stats().gradient_bytes / kMiB;
      }
      // Several buckets per step so the first ones travel while backward still runs.
      double bucket =
          grad_mib > 0 ? std::clamp(grad_mib / 4, 0.25, o.reducer.bucket_mb) : o.reducer.bucket_mb;
      bucket = std::round(bucket * 100) / 100;
      plan.args = Plus(Without(Without(plan.args, "--no-overlap"), "--bucket-mb"),
                       {"--bucket-mb", fmt::format("{}", bucket)});
      plan.words.push_back(fmt::format("overlap on, --bucket-mb {}", bucket));
    } else if (lever.lever == Lever::kLowPrecisionReduction) {
      plan.args = Plus(Without(plan.args, "--reduce-dtype"), {"--reduce-dtype", "bf16"});
      plan.words.push_back("--reduce-dtype bf16");
    } else {
      plan.skipped.push_back(
          fmt::format("{} ({}): a hardware action, not a flag; skipped", ToString(lever.lever),
                      lever.action));
      continue;
    }
    plan.applied.push_back(lever.lever);
  }
  return plan;
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

// Reads one finished run; nullopt (with a warning) when it is missing or unreadable.
std::optional<std::vector<StepRecord>> LoadRun(const sweep::SweepStore& store, Variant v, int n,
                                               const Args& args,
                                               std::vector<std::string>* warnings) {
  const std::string name = JobName(v, n);
  if (!store.Finished(name, args)) return std::nullopt;
  Result<std::vector<StepRecord>> records = sweep::ReadRunRecords(store.RunDir(name));
  if (!records.ok()) {
    warnings->push_back(fmt::format("run {} left out: {}", name, records.status().message()));
    return std::nullopt;
  }
  return std::move(records).value();
}

struct Plan {
  Args workload;  // effective train arguments (what sweep.json remembers)
  train::TrainOptions options;
  std::vector<int> replicas;
  std::set<int> ablate_at;
  bool default_workload = false;
};

// Every job of the main sweep: baselines first (the curve early), then the ablations from the
// largest replica count down (the verdict reads the largest).
std::vector<sweep::Job> MainJobs(const Plan& p, std::vector<std::string>* notes) {
  std::vector<sweep::Job> jobs;
  for (int n : p.replicas) {
    Args a = ForReplicas(p.workload, p.options, n, notes);
    jobs.push_back({JobName(Variant::kBaseline, n), n,
                    Plus({"train"}, VariantArgs(Variant::kBaseline, a, p.options))});
  }
  for (auto it = p.replicas.rbegin(); it != p.replicas.rend(); ++it) {
    const int n = *it;
    if (p.ablate_at.count(n) == 0) continue;
    Args a = ForReplicas(p.workload, p.options, n, notes);
    for (Variant v : {Variant::kNoReduce, Variant::kSyntheticInput, Variant::kDoubleBatch}) {
      if (v == Variant::kNoReduce && n == 1) continue;  // nothing to reduce on one replica
      jobs.push_back({JobName(v, n), n, Plus({"train"}, VariantArgs(v, a, p.options))});
    }
  }
  return jobs;
}

std::vector<analysis::RunSet> CollectRunSets(const sweep::SweepStore& store,
                                             const std::vector<sweep::Job>& jobs, bool levers,
                                             std::vector<std::string>* warnings) {
  std::map<int, analysis::RunSet> sets;
  std::map<int, bool> has_baseline;
  for (const sweep::Job& job : jobs) {
    const std::string prefix = job.name.substr(0, job.name.rfind("-n"));
    Variant v = Variant::kBaseline;
    for (Variant c : {Variant::kBaseline, Variant::kNoReduce, Variant::kSyntheticInput,
                      Variant::kDoubleBatch, Variant::kLevers}) {
      if (prefix == VariantName(c)) v = c;
    }
    auto records = LoadRun(store, v, job.replicas, job.args, warnings);
    if (!records) continue;
    analysis::RunSet& set = sets[job.replicas];
    switch (v) {
      case Variant::kBaseline:
      case Variant::kLevers:
        set.baseline = std::move(*records);
        has_baseline[job.replicas] = true;
        break;
      case Variant::kNoReduce:
        set.no_reduce = std::move(*records);
        break;
      case Variant::kSyntheticInput:
        set.synthetic_input = std::move(*records);
        break;
      case Variant::kDoubleBatch:
        set.double_batch = std::move(*records);
        break;
    }
  }
  std::vector<analysis::RunSet> out;
  for (auto& [n, set] : sets) {
    if (has_baseline[n]) {
      out.push_back(std::move(set));
    } else {
      warnings->push_back(fmt::format("{} replicas left out: no finished {}run", n,
                                      levers ? "after-levers " : "baseline "));
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
  fs::rename(tmp, path, ec);
  if (ec) return Status::Error("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return Status::Ok();
}

std::string FailedRunsText(const sweep::SweepResult& r) {
  std::string out;
  for (const sweep::JobOutcome& o : r.outcomes) {
    if (o.state == sweep::JobState::kFailed) {
      out += fmt::format("  {} (exit {}): log in {}/log.txt\n", o.job.name, o.exit_code, o.run_dir);
    }
  }
  return out;
}

int RunDiagnose(DiagnoseFlags& f) {
  const Args given = GivenTrainArgs(f);
  Plan p;
  p.default_workload =
      f.train_options.empty() || std::find(given.begin(), given.end(), "--model") == given.end();
  if (p.default_workload) p.workload = DefaultDiagnoseWorkload();
  p.workload = Plus(p.workload, given);
  // Sweep defaults for what the workload leaves out (a whole epoch per run would be too long).
  for (size_t i = 0; i < kSweepBase.size(); ++i) {
    const bool pair = i + 1 < kSweepBase.size() && kSweepBase[i + 1].rfind("--", 0) != 0;
    if (std::find(p.workload.begin(), p.workload.end(), kSweepBase[i]) == p.workload.end()) {
      p.workload.push_back(kSweepBase[i]);
      if (pair) p.workload.push_back(kSweepBase[i + 1]);
    }
    if (pair) ++i;
  }
  if (p.default_workload) f.apply_levers = true;
  const std::string dir =
      f.train.options.out.empty() ? std::string(kDefaultDiagnoseDir) : f.train.options.out;

  auto fail = [](const Status& st) {
    std::fprintf(stderr, "stepscope diagnose: %s\n", st.message().c_str());
    return 2;
  };
  Result<train::TrainOptions> options = ParseTrainArgs(p.workload);
  if (!options.ok()) return fail(options.status());
  p.options = options.value();
  auto replicas =
      ParseReplicas(f.replicas.empty() ? kDefaultDiagnoseReplicas : f.replicas, "--replicas");
  if (!replicas.ok()) return fail(replicas.status());
  p.replicas = replicas.value();
  if (Status st = train::Validate(p.options, p.replicas.back()); !st.ok()) return fail(st);
  if (f.ablate_at.empty()) f.ablate_at = p.default_workload ? "largest" : "all";
  if (!f.no_ablations) {
    if (f.ablate_at == "all") {
      p.ablate_at.insert(p.replicas.begin(), p.replicas.end());
    } else if (f.ablate_at == "largest") {
      p.ablate_at.insert(p.replicas.back());
    } else {
      auto at = ParseReplicas(f.ablate_at, "--ablate-at");
      if (!at.ok()) return fail(at.status());
      p.ablate_at.insert(at->begin(), at->end());
    }
  }
  auto launcher = sweep::Launcher::Parse(f.launcher);
  if (!launcher.ok()) return fail(launcher.status());
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fail(Status::Error("cannot find this program's path: " + ec.message()));

  const analysis::Emulation emulation = EmulationOf(p.options);
  const std::string emu_words =
      emulation.emulated ? " [EMULATED devices/links: real compute and communication, paced]" : "";
  std::fprintf(stderr,
               "stepscope diagnose: %s%s\n  workload: train %s\n  replicas: %s; runs in %s\n",
               p.default_workload ? "built-in default workload" : "your workload",
               emu_words.c_str(), sweep::QuoteCommand(p.workload).c_str(),
               fmt::format("{}", fmt::join(p.replicas, ",")).c_str(), dir.c_str());

  auto store = sweep::SweepStore::Open(dir, p.workload, f.fresh);
  if (!store.ok()) return fail(store.status());

  sweep::InterruptGuard guard;
  sweep::SweepRunOptions run_options;
  run_options.program = self.string();
  run_options.launcher = launcher.value();
  run_options.progress = f.train.quiet ? nullptr : stderr;

  std::vector<std::string> notes;
  const std::vector<sweep::Job> jobs = MainJobs(p, &notes);
  for (const std::string& n : std::set<std::string>(notes.begin(), notes.end())) {
    std::fprintf(stderr, "note: %s\n", n.c_str());
  }
  sweep::SweepResult result = RunSweep(jobs, run_options, &store.value(), &guard);

  analysis::DiagnoseOptions dopt;
  dopt.source = {"diagnose", "train " + sweep::QuoteCommand(p.workload), STEPSCOPE_VERSION};
  dopt.emulation = emulation;
  dopt.cost.device_cost_per_hour = f.device_cost;
  dopt.cost.deadline_hours = f.deadline;
  dopt.cost.samples_to_target = f.samples_to_target;

  std::vector<std::string> warnings;
  std::vector<analysis::RunSet> sets = CollectRunSets(store.value(), jobs, false, &warnings);
  const std::string json_path = dir + "/diagnosis.json";
  if (sets.empty()) {
    std::fprintf(stderr, "stepscope diagnose: no baseline run finished; nothing to diagnose%s\n%s",
                 result.interrupted ? " (interrupted)" : "", FailedRunsText(result).c_str());
    return result.interrupted ? 128 + (result.signal ? result.signal : SIGINT) : 1;
  }
  Result<analysis::Diagnosis> diagnosis = BuildDiagnosis(sets, dopt);
  if (!diagnosis.ok()) return fail(diagnosis.status());
  analysis::Diagnosis& d = diagnosis.value();
  d.warnings.insert(d.warnings.begin(), warnings.begin(), warnings.end());
  bool partial = result.interrupted;
  for (const sweep::JobOutcome& o : result.outcomes) {
    if (o.state == sweep::JobState::kFailed || o.state == sweep::JobState::kInterrupted ||
        o.state == sweep::JobState::kNotRun) {
      partial = true;
      d.warnings.push_back(
          fmt::format("partial diagnosis: run {} {}", o.job.name, sweep::ToString(o.state)));
    }
  }

  // The free levers, applied and re-measured.
  std::optional<sweep::SweepResult> lever_result;
  LeverPlan plan;
  if (f.apply_levers && !result.interrupted) {
    plan = PlanLevers(d.verdict, p.workload, p.options);
    for (const std::string& s : plan.skipped) std::fprintf(stderr, "lever %s\n", s.c_str());
    if (plan.applied.empty()) {
      std::fprintf(stderr, "no free lever to apply: the verdict recommends none\n");
    } else {
      std::fprintf(stderr, "applying the free levers: %s\n",
                   fmt::format("{}", fmt::join(plan.words, "; ")).c_str());
      auto lever_options = ParseTrainArgs(plan.args);
      if (!lever_options.ok()) return fail(lever_options.status());
      std::vector<sweep::Job> lever_jobs;
      std::vector<std::string> lever_notes;
      for (int n : p.replicas) {
        lever_jobs.push_back(
            {JobName(Variant::kLevers, n), n,
             Plus({"train"}, ForReplicas(plan.args, lever_options.value(), n, &lever_notes))});
      }
      lever_result = RunSweep(lever_jobs, run_options, &store.value(), &guard);
      std::vector<std::string> lever_warnings;
      std::vector<analysis::RunSet> after =
          CollectRunSets(store.value(), lever_jobs, true, &lever_warnings);
      d.warnings.insert(d.warnings.end(), lever_warnings.begin(), lever_warnings.end());
      std::vector<analysis::AppliedLever> applied;
      for (size_t i = 0; i < plan.applied.size(); ++i) {
        applied.push_back({plan.applied[i], plan.words[i]});
      }
      if (!after.empty()) {
        if (Status st = AddAfterLevers(after, applied, dopt, &d); !st.ok()) {
          d.warnings.push_back(st.message());
        }
      }
      if (lever_result->interrupted) partial = true;
    }
  }

  if (Status st = WriteFileAtomically(json_path, analysis::DiagnosisToString(d) + "\n"); !st.ok()) {
    return fail(st);
  }
  const std::string html_path = dir + "/report.html";
  report::HtmlReportOptions html;
  html.input_path = json_path;
  if (Status st = report::WriteHtmlReport(d, html_path, html); !st.ok()) {
    d.warnings.push_back(st.message());  // the diagnosis itself is safe on disk
  }
  std::fputs(analysis::SummaryText(d).c_str(), stdout);
  if (!d.warnings.empty()) {
    std::fputs("\nwarnings:\n", stdout);
    for (const std::string& w : d.warnings) std::printf("  %s\n", w.c_str());
  }
  if (d.after && !d.after->points.empty() && !d.points.empty()) {
    const auto& before = d.points.back().scaling;
    const auto& after = d.after->points.back().scaling;
    std::printf("\nfree levers at N=%d: efficiency %.2f -> %.2f, %.1f -> %.1f samples/s\n",
                after.replicas, before.efficiency, after.efficiency, before.samples_per_s,
                after.samples_per_s);
  }
  if (emulation.emulated) {
    std::printf(
        "\n(EMULATED devices/links: every number above is paced emulation, "
        "not real hardware of that speed)\n");
  }
  std::string failed = FailedRunsText(result);
  if (lever_result) failed += FailedRunsText(*lever_result);
  if (!failed.empty())
    std::printf("\nfailed runs (diagnosis made without them):\n%s", failed.c_str());
  std::printf("\n%sdiagnosis written to %s (report: %s)\n", partial ? "partial " : "",
              json_path.c_str(), html_path.c_str());
  const bool interrupted = result.interrupted || (lever_result && lever_result->interrupted);
  if (interrupted) {
    std::fprintf(stderr,
                 "stepscope diagnose: interrupted; finished runs are kept in %s/runs, "
                 "run the same command again to resume\n",
                 dir.c_str());
    const int sig = guard.signal() != 0 ? guard.signal() : SIGINT;
    return 128 + sig;
  }
  return failed.empty() ? 0 : 1;
}

}  // namespace

std::vector<std::string> DefaultDiagnoseWorkload() {
  return {"--model",
          "gpt",
          "--layers",
          "2",
          "--width",
          "128",
          "--heads",
          "4",
          "--context",
          "64",
          "--batch",
          "2",
          "--steps",
          "12",
          "--warmup-steps",
          "3",
          "--emulate-device-speed",
          "0.05",
          "--emulate-link",
          "0.012,50"};
}

void AddDiagnoseCommand(CLI::App& app, std::function<int()>* run) {
  auto flags = std::make_shared<DiagnoseFlags>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose",
      "The scaling sweep: every replica count with its ablations, where the missing throughput "
      "went, the free levers and whether to buy devices. Without --model it runs the built-in "
      "default: train " +
          sweep::QuoteCommand(DefaultDiagnoseWorkload()) + " at " + kDefaultDiagnoseReplicas +
          " replicas with --apply-levers (EMULATED 16-device cluster; docs/diagnose.md)");
  const size_t before = cmd->get_options().size();
  AddTrainOptions(cmd, &flags->train);
  for (CLI::Option* opt : cmd->get_options()) flags->train_options.push_back(opt);
  flags->train_options.erase(flags->train_options.begin(),
                             flags->train_options.begin() + static_cast<long>(before));
  // The sweep owns --out (one folder per run below it), and the default workload is a gpt.
  cmd->get_option("--out")->description(
      "Sweep directory: diagnosis.json, report.html and runs/<variant>-n<N>/ (resumable)");
  cmd->get_option("--model")->default_str("")->description(
      "Model: mlp, cnn or gpt; without it, the built-in default workload (a gpt) runs");
  cmd->add_option("--replicas", flags->replicas,
                  "Replica counts to measure, comma separated (default 1,2,4,8,16)");
  cmd->add_option("--launcher", flags->launcher,
                  "Launcher template; {n} becomes the replica count, the stepscope binary and "
                  "its train arguments are appended (e.g. 'srun -n {n}', or the line "
                  "scripts/emulated-hosts.sh prints)")
      ->capture_default_str();
  cmd->add_option("--ablate-at", flags->ablate_at,
                  "Replica counts that get the ablations: all, largest, or a list (default: all; "
                  "largest for the built-in default)");
  cmd->add_flag("--no-ablations", flags->no_ablations, "Baselines only (faster, less evidence)");
  cmd->add_flag("--apply-levers", flags->apply_levers,
                "Apply the recommended free levers, re-measure the curve, show before/after "
                "(always on for the built-in default)");
  cmd->add_flag("--fresh", flags->fresh,
                "Discard the runs stored in --out DIR instead of resuming");
  cmd->add_option("--device-cost", flags->device_cost,
                  "Price of one device per hour: cost per million samples at each N");
  cmd->add_option("--deadline", flags->deadline,
                  "Wall-clock budget in hours: the verdict optimises time, not cost");
  cmd->add_option("--samples-to-target", flags->samples_to_target,
                  "Samples the job needs to reach its target (with --deadline)");
  cmd->callback([flags, run] { *run = [flags] { return RunDiagnose(*flags); }; });
}

}  // namespace stepscope::app
