#include "apps/stepscope/diagnose_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include "apps/stepscope/diagnose_session.h"
#include "apps/stepscope/numeric_option.h"
#include "apps/stepscope/train_command.h"
#include "plan/replica_counts.h"
#include "plan/run_plan.h"
#include "plan/torch_command.h"
#include "sweep/launcher.h"
#include "sweep/run_records.h"

namespace stepscope::app {
namespace {

// --start-timeout's default, 15 minutes: a script's start (imports, data, model) takes seconds to
// minutes; a rank that never comes holds the others in init_process_group for its own timeout,
// 30 minutes, and a rank stuck before that (a dataset that never loads) for ever.
constexpr double kDefaultStartTimeoutS = 900;

// Raw values as typed on the command line, turned into a DiagnoseRequest by BuildRequest.
struct DiagnoseFlags {
  TrainFlags train;
  std::vector<CLI::Option*> train_options;  // the options AddTrainOptions declared
  std::string replicas = kDefaultDiagnoseReplicas;
  std::string launcher = sweep::kDefaultLauncher;
  CLI::Option* launcher_option = nullptr;  // given or not
  std::string torch;                       // --torch: the user's script, with placeholders
  bool torch_traces = false;               // --torch-traces: it writes profiler traces instead
  int nproc_per_node = 0;                  // --nproc-per-node for {nproc_per_node}, {nnodes}
  std::string ablate_at;                   // empty: all (largest for the built-in default)
  int repeats = 1;
  bool apply_levers = false;
  bool no_confirm_stragglers = false;
  int64_t wire_check_steps = 200;
  int64_t noise_scale_steps = 1000;
  bool no_ablations = false;
  bool fresh = false;
  double run_timeout_s = 0;
  // --start-timeout: a helper run's ranks must reach wrap by then (unset: kDefaultStartTimeoutS)
  std::optional<double> start_timeout_s;
  std::optional<double> device_memory_gb;  // memory per device the model checks levers against
  int predict_to = 0;                      // the model's predictions reach this replica count
  std::optional<double> device_cost;
  std::optional<double> deadline;
  std::optional<double> samples_to_target;
  std::string currency = "cost";
  std::optional<double> budget;
  std::string candidates;  // "" : doublings up to 8x the largest measured N
  std::vector<std::string> link_upgrades, device_upgrades;
  std::string
      target_run;  // a train --out DIR whose run reached its --target-loss or --target-accuracy
};

// The samples a finished train run needed to reach its target, and its global batch, from
// DIR/run.json (train --target-loss or --target-accuracy).
Status ReadTargetRun(const std::string& dir, decide::DecisionInputs* in) {
  Result<sweep::RunSummary> run = sweep::ReadRunSummary(dir);
  if (!run.ok()) return Status::Error("option --target-run: " + run.status().message());
  if (!run->samples_to_target) {
    return Status::Error("option --target-run: " + dir +
                         "/run.json: field 'target.reached' is not true; run train with "
                         "--target-loss L (or --target-accuracy A) and enough --steps to "
                         "reach it");
  }
  in->samples_to_target = *run->samples_to_target;
  in->samples_to_target_batch = static_cast<double>(run->replicas) * run->batch * run->accum;
  // A multi-replica target run measured the noise scale over the whole way to the target: it
  // prices the options instead of the sweep's short runs, which see only the start of training.
  if (run->b_noise_over_training) {
    in->b_noise_to_target = *run->b_noise_over_training;
    in->b_noise_to_target_how = fmt::format(
        "B_noise {:.3g} averaged over the training of the target run {} ({} replicas, to its "
        "target)",
        *run->b_noise_over_training, dir, run->replicas);
  }
  // Its held-out evaluations are part of every job to that target (a fixed cost).
  if (run->evaluation_s > 0) {
    in->fixed_hours += run->evaluation_s / 3600;
    in->fixed_parts.push_back(
        fmt::format("held-out evaluation {:.1f} s (as the target run {} "
                    "measured it at {} replica{})",
                    run->evaluation_s, dir, run->replicas, run->replicas == 1 ? "" : "s"));
  }
  return Status::Ok();
}

// The decision's inputs, checked before anything runs.
Result<decide::DecisionInputs> BuildDecisionInputs(const DiagnoseFlags& f) {
  decide::DecisionInputs in;
  std::optional<Currency> currency = Parse<Currency>(f.currency);
  if (!currency) {
    return Status::Error("option --currency: '" + f.currency + "' is not cost or time");
  }
  in.currency = *currency;
  in.device_cost_per_hour = f.device_cost;
  in.deadline_hours = f.deadline;
  in.budget = f.budget;
  in.samples_to_target = f.samples_to_target;
  if (!f.target_run.empty()) {
    if (f.samples_to_target) {
      return Status::Error("options --samples-to-target and --target-run: give one target");
    }
    STEPSCOPE_RETURN_IF_ERROR(ReadTargetRun(f.target_run, &in));
  }
  if (!f.candidates.empty()) {
    Result<std::vector<int>> c = plan::ParseReplicaCounts(f.candidates, "--candidates");
    if (!c.ok()) return c.status();
    in.candidates = std::move(c).value();
  }
  for (const std::string& text : f.link_upgrades) {
    const size_t colon = text.rfind(':');
    decide::LinkUpgrade l;
    if (colon == std::string::npos) {
      return Status::Error("option --link-upgrade: '" + text +
                           "' has no price; write GBPS[,LATENCY_US]:PRICE (e.g. 25,5:0.4)");
    }
    STEPSCOPE_RETURN_IF_ERROR(ParsePair(text.substr(0, colon), ',',
                                        {"option --link-upgrade", "--link-upgrade 25,5:0.4"},
                                        &l.gbps, &l.latency_us, false));
    Result<double> price =
        ParseDouble(text.substr(colon + 1), {"option --link-upgrade", "--link-upgrade 25,5:0.4"});
    if (!price.ok()) return price.status();
    l.price_per_device_hour = *price;
    in.link_upgrades.push_back(l);
  }
  for (const std::string& text : f.device_upgrades) {
    decide::DeviceUpgrade u;
    STEPSCOPE_RETURN_IF_ERROR(ParsePair(text, ':',
                                        {"option --device-upgrade", "--device-upgrade 2:3.0"},
                                        &u.speed, &u.price_per_device_hour, true));
    in.device_upgrades.push_back(u);
  }
  STEPSCOPE_RETURN_IF_ERROR(decide::Validate(in));
  return in;
}

// The train options given on the command line, in declaration order.
plan::TrainArgs GivenTrainArgs(const DiagnoseFlags& f) {
  plan::TrainArgs args;
  for (const CLI::Option* opt : f.train_options) {
    if (opt->count() == 0) continue;
    const std::string name = opt->get_name();
    if (name == "--out" || name == "--quiet") continue;  // the sweep owns these
    if (opt->get_expected_min() == 0) {
      args.push_back({name, std::nullopt});
    } else {
      args.push_back({name, opt->results().back()});
    }
  }
  return args;
}

// Parses train arguments the way `stepscope train` would, into typed options.
Result<train::TrainOptions> ParseTrainArgs(const std::vector<std::string>& args) {
  CLI::App scratch;
  scratch.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  TrainFlags flags;
  AddTrainOptions(&scratch, &flags);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 reads from the back
  try {
    scratch.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return Status::Error(std::string("workload options: ") + e.what());
  }
  STEPSCOPE_RETURN_IF_ERROR(FinishTrainOptions(&flags));
  return flags.options;
}

// --torch: the command, split, and the train options a script's runs can use (the rest refused).
Result<plan::TorchCommand> TorchCommandOf(const DiagnoseFlags& f, const plan::TrainArgs& given) {
  for (const plan::TrainArg& arg : given) {
    if (std::find(std::begin(plan::kTorchWorkloadFlags), std::end(plan::kTorchWorkloadFlags),
                  arg.flag) == std::end(plan::kTorchWorkloadFlags)) {
      return Status::Error("option " + arg.flag +
                           ": not used with --torch (the script defines the job); diagnose "
                           "--torch takes --batch, --accum, --bucket-mb, --loader-workers (the "
                           "values of {batch}, {accum}, {bucket_mb}, {workers}), --prefetch, "
                           "--steps, --warmup-steps, --grad-norm-every, --stall-timeout");
    }
  }
  Result<std::vector<std::string>> words = sweep::SplitWords(f.torch);
  if (!words.ok()) return Status::Error("option --torch: " + words.status().message());
  return plan::TorchCommand::FromWords(std::move(words).value());
}

// The plan's request: the workload (the built-in default without --model, the sweep's
// defaults for what it leaves out), its options, the replica counts, ablations and repeats.
Result<plan::PlanRequest> BuildPlanRequest(const DiagnoseFlags& f, bool default_workload) {
  plan::PlanRequest p;
  if (default_workload) p.workload = plan::DefaultWorkload();
  const plan::TrainArgs given = GivenTrainArgs(f);
  if (!f.torch.empty()) {
    Result<plan::TorchCommand> torch = TorchCommandOf(f, given);
    if (!torch.ok()) return torch.status();
    p.torch = std::move(torch).value();
    p.torch->helper = !f.torch_traces;
  } else if (f.torch_traces) {
    return Status::Error("option --torch-traces: needs --torch \"python3 train.py ...\"");
  }
  p.workload.insert(p.workload.end(), given.begin(), given.end());
  plan::AddMissing(&p.workload, plan::SweepDefaults());
  Result<train::TrainOptions> options = ParseTrainArgs(plan::Flatten(p.workload));
  if (!options.ok()) return options.status();
  p.options = std::move(options).value();
  if (p.options.target_loss || p.options.target_accuracy) {
    return Status::Error(fmt::format(
        "option {}: the sweep's runs measure speed and never stop at a target; give diagnose the "
        "target as --samples-to-target S or --target-run DIR (a train run that reached it)",
        p.options.target_loss ? "--target-loss" : "--target-accuracy"));
  }
  Result<std::vector<int>> replicas = plan::ParseReplicaCounts(f.replicas, "--replicas");
  if (!replicas.ok()) return replicas.status();
  p.replicas = std::move(replicas).value();
  if (!p.torch) {
    STEPSCOPE_RETURN_IF_ERROR(train::Validate(p.options, p.replicas.back()));
  } else if (p.options.batch < 1 || p.options.accum < 1 || p.options.loader_workers < 0) {
    // A script's DataLoader may have no workers (0): train's own checks do not apply.
    return Status::Error(
        "options --batch and --accum must be at least 1, --loader-workers at least 0");
  } else if (p.options.accum != 1 && !p.torch->helper && !p.torch->Has("{accum}")) {
    return Status::Error(fmt::format(
        "option --accum {}: with --torch-traces the helper is not there to accumulate, and the "
        "command has no {{accum}} placeholder; put one where the script takes its accumulation",
        p.options.accum));
  }
  if (!f.no_ablations) {
    const std::string at = !f.ablate_at.empty() ? f.ablate_at
                           : default_workload   ? "largest"
                                                : "all";
    Result<std::set<int>> ablate_at = plan::ParseAblateAt(at, p.replicas);
    if (!ablate_at.ok()) return ablate_at.status();
    p.ablate_at = std::move(ablate_at).value();
  }
  if (p.torch && !p.ablate_at.empty() && !p.torch->Has("{batch}")) {
    return Status::Error(
        "option --torch: the command has no {batch} placeholder, and the double-batch ablation "
        "runs the script at twice its micro-batch; put it where the script takes its batch size "
        "(--torch \"python3 train.py --batch {batch}\", with diagnose --batch B for the "
        "baseline's), or pass --no-ablations");
  }
  p.repeats = f.repeats;
  return p;
}

Result<DiagnoseRequest> BuildRequest(const DiagnoseFlags& f) {
  DiagnoseRequest r;
  r.default_workload = f.torch.empty() && !plan::Has(GivenTrainArgs(f), "--model");
  Result<plan::PlanRequest> p = BuildPlanRequest(f, r.default_workload);
  if (!p.ok()) return p.status();
  r.plan = std::move(p).value();
  r.apply_levers = f.apply_levers || r.default_workload;
  r.confirm_stragglers = !f.no_confirm_stragglers;
  // The wire check trains the job to compare losses (decide/wire_check.h) and the noise-scale
  // run is a train run of its own: neither is made for a user's script, whose noise scale is
  // pooled from the sweep's runs.
  // A script's check needs its loss and its noise scale its gradient norms: the helper's (a
  // profiler trace has neither).
  const bool traces = r.plan.torch && !r.plan.torch->helper;
  r.wire_check_steps = traces ? 0 : f.wire_check_steps;
  r.noise_scale_steps = traces ? 0 : f.noise_scale_steps;
  r.fresh = f.fresh;
  if (!(f.run_timeout_s >= 0)) {
    return Status::Error("--run-timeout must be 0 (no limit) or a number of seconds, e.g. 600");
  }
  r.run_timeout_s = f.run_timeout_s;
  const bool helper = r.plan.torch && r.plan.torch->helper;
  if (f.start_timeout_s && !helper) {
    return Status::Error(
        "option --start-timeout: only with --torch and the helper (it ends a run whose ranks "
        "never reach stepscope_torch.wrap); use --run-timeout to limit any run");
  }
  if (!(f.start_timeout_s.value_or(0) >= 0)) {
    return Status::Error("--start-timeout must be 0 (no limit) or a number of seconds, e.g. 1800");
  }
  r.start_timeout_s = helper ? f.start_timeout_s.value_or(kDefaultStartTimeoutS) : 0;
  if (f.device_memory_gb && !(*f.device_memory_gb > 0)) {
    return Status::Error("option --device-memory-gb must be > 0 GiB (e.g. --device-memory-gb 80)");
  }
  r.device_memory_gb = f.device_memory_gb;
  if (f.predict_to < 0 || f.predict_to > (1 << 24)) {
    return Status::Error(
        "option --predict-to must be a replica count from 1 to 16777216 (e.g. "
        "--predict-to 4096), or 0 for 16 times the largest measured");
  }
  r.predict_to = f.predict_to;
  r.quiet = f.train.quiet;
  r.dir = f.train.options.out.empty() ? std::string(kDefaultDiagnoseDir) : f.train.options.out;
  const bool launcher_given = f.launcher_option != nullptr && f.launcher_option->count() > 0;
  Result<sweep::Launcher> launcher = sweep::Launcher::Parse(
      r.plan.torch && !launcher_given ? plan::DefaultTorchLauncher(*r.plan.torch) : f.launcher);
  if (!launcher.ok()) return launcher.status();
  r.launcher = std::move(launcher).value();
  r.launcher.per_node = f.nproc_per_node;
  if (r.plan.torch) {
    r.program = r.plan.torch->script;
  } else {
    std::error_code ec;
    r.program = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec) return Status::Error("cannot find this program's path: " + ec.message());
  }
  Result<decide::DecisionInputs> decision = BuildDecisionInputs(f);
  if (!decision.ok()) return decision.status();
  r.decision = std::move(decision).value();
  return r;
}

int RunDiagnose(const DiagnoseFlags& f) {
  Result<DiagnoseRequest> request = BuildRequest(f);
  if (!request.ok()) {
    std::fprintf(stderr, "stepscope diagnose: %s\n", request.status().message().c_str());
    return 2;
  }
  return RunDiagnoseSession(request.value());
}

}  // namespace

std::vector<std::string> DefaultDiagnoseWorkload() {
  return plan::Flatten(plan::DefaultWorkload());
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
      "Sweep directory: diagnosis.json, report.html and runs/<variant>-n<N>[-r<k>]/ "
      "(resumable)");
  cmd->get_option("--model")->default_str("")->description(
      "Model: mlp, cnn or gpt; without it, the built-in default workload (a gpt) runs");
  cmd->add_option("--replicas", flags->replicas, "Replica counts to measure, comma separated")
      ->capture_default_str();
  flags->launcher_option =
      cmd->add_option("--launcher", flags->launcher,
                      "Launcher template; {n} becomes the replica count, {nnodes} and "
                      "{nproc_per_node} the hosts and processes per host (--nproc-per-node), "
                      "the stepscope binary and its train arguments (with --torch: the script "
                      "and its arguments) are appended (e.g. 'srun -n {n}', or the line "
                      "scripts/emulated-hosts.sh prints)")
          ->capture_default_str();
  cmd->add_option("--torch", flags->torch,
                  "Diagnose your own PyTorch DDP script instead of stepscope train: "
                  "\"python3 train.py --batch {batch}\" ({batch}, {accum}, {bucket_mb}, "
                  "{workers}, {seed}, {n} are filled per run); the script imports "
                  "stepscope_torch (docs/torch.md)");
  cmd->add_flag("--torch-traces", flags->torch_traces,
                "With --torch: the script does not import stepscope_torch but writes a PyTorch "
                "profiler trace per rank into $STEPSCOPE_RUN_DIR, read through analyze's "
                "importers; only the ablations and levers that need no helper run");
  cmd->add_option("--nproc-per-node", flags->nproc_per_node,
                  "Processes per host for a launcher's {nproc_per_node} and {nnodes} (default: "
                  "every process on one host)")
      ->transform(WholeNumber("--nproc-per-node 4", 1, 1 << 20));
  cmd->add_option("--ablate-at", flags->ablate_at,
                  "Replica counts that get the ablations: all, largest, or a list (default: all; "
                  "largest for the built-in default)");
  cmd->add_flag("--no-ablations", flags->no_ablations, "Baselines only (faster, less evidence)");
  cmd->add_option("--repeats", flags->repeats,
                  "Baseline runs at every replica count (repeats 2..K run after the ablations, "
                  "into runs/baseline-n<N>-r<k>/; the diagnosis reads the first)")
      ->transform(WholeNumber("--repeats 3"))
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_flag("--no-confirm-stragglers", flags->no_confirm_stragglers,
                "With one baseline per replica count, a straggler named at the largest count is "
                "confirmed by one more baseline there (runs/baseline-n<N>-r2/) and stays named "
                "only if it is a straggler in both runs; this flag names it from the one run");
  cmd->add_flag("--apply-levers", flags->apply_levers,
                "Apply the recommended free levers, re-measure the curve, show before/after "
                "(always on for the built-in default)");
  cmd->add_option("--wire-check-steps", flags->wire_check_steps,
                  "When a reduced-precision (bf16/fp16) reduction is recommended: steps of the "
                  "three unpaced 2-replica runs that check its numerical cost (fp32 and the "
                  "reduced wire from one seed, fp32 from another); 0: do not check")
      ->transform(WholeNumber("--wire-check-steps 200", 0, 1000000))
      ->capture_default_str();
  cmd->add_option("--noise-scale-steps", flags->noise_scale_steps,
                  "Steps of the unpaced 2-replica run that measures the gradient noise scale over "
                  "training (norms every step, fp32 wire); 0: pool it from the sweep's own short "
                  "runs instead")
      ->transform(WholeNumber("--noise-scale-steps 1000", 0, 10000000))
      ->capture_default_str();
  cmd->add_flag("--fresh", flags->fresh,
                "Discard the runs stored in --out DIR instead of resuming");
  cmd->add_option("--run-timeout", flags->run_timeout_s,
                  "Seconds a run may take before it is ended (its launcher's process group "
                  "killed) and counted as failed; the sweep goes on. 0: no limit")
      ->check(Number("--run-timeout 600"))
      ->capture_default_str();
  cmd->add_option("--start-timeout", flags->start_timeout_s,
                  "With --torch (the helper): a run in which some rank has not reached "
                  "stepscope_torch.wrap this many seconds after it started is ended and counted "
                  "as failed, with where each rank was; the sweep goes on. 0: no limit "
                  "(default 900)")
      ->check(Number("--start-timeout 1800"));
  cmd->add_option("--device-memory-gb", flags->device_memory_gb,
                  "Memory per device (GiB) the step-time model checks each lever and priced "
                  "option against: a micro-batch that does not fit becomes the largest that "
                  "does, accumulated to the same samples per step (docs/model.md)")
      ->check(Number("--device-memory-gb 80"));
  cmd->add_option("--predict-to", flags->predict_to,
                  "The step-time model's predictions (diagnosis.json `predictions`, the report's "
                  "model curve) reach this replica count, doubling from 1; 0: 16 times the "
                  "largest measured")
      ->capture_default_str()
      ->transform(WholeNumber("--predict-to 4096"));
  cmd->add_option("--currency", flags->currency,
                  "What the decision minimises: cost (to the target, within the deadline) or time "
                  "(to the target, within the budget)")
      ->capture_default_str();
  cmd->add_option("--device-cost", flags->device_cost,
                  "Price of one device per hour (without it, costs are device-hours)")
      ->check(Number("--device-cost 2.5"));
  cmd->add_option("--deadline", flags->deadline,
                  "Hours the job may take to its target: options that miss it are not chosen "
                  "(needs --samples-to-target)")
      ->check(Number("--deadline 48"));
  cmd->add_option("--budget", flags->budget,
                  "Most the job may cost to its target, with --currency time (needs "
                  "--samples-to-target)")
      ->check(Number("--budget 5000"));
  cmd->add_option("--samples-to-target", flags->samples_to_target,
                  "Samples the job needs to reach its target at the one-replica global batch")
      ->check(Number("--samples-to-target 1e9"));
  cmd->add_option("--target-run", flags->target_run,
                  "A train --target-loss run (its --out DIR): the samples it needed to reach its "
                  "target, at its global batch, are the decision's target");
  cmd->add_option("--candidates", flags->candidates,
                  "Replica counts to price (default: doublings up to 8x the largest measured)");
  cmd->add_option("--link-upgrade", flags->link_upgrades,
                  "A faster interconnect on offer: GBPS[,LATENCY_US]:PRICE per device-hour "
                  "(repeatable)");
  cmd->add_option("--device-upgrade", flags->device_upgrades,
                  "Faster devices on offer: SPEED:PRICE per device-hour on top of --device-cost "
                  "(repeatable)");
  cmd->callback([flags, run] { *run = [flags] { return RunDiagnose(*flags); }; });
}

}  // namespace stepscope::app
