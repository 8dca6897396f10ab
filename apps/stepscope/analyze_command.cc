#include "apps/stepscope/analyze_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "apps/stepscope/numeric_option.h"
#include "apps/stepscope/trace_run_json.h"
#include "core/step_record.h"
#include "decide/build_diagnosis.h"
#include "decide/diagnosis.h"
#include "report/html_report.h"
#include "report/terminal_report.h"

namespace stepscope::app {
namespace {

// Writes DIR/diagnosis.json, DIR/report.html and the imported records as a stepscope run
// (DIR/rank-R.steps.jsonl), so that `stepscope analyze DIR` reads the same steps back.
Status WriteAnalysis(const std::string& dir, const nlohmann::json& diagnosis_json,
                     const decide::Diagnosis& diagnosis, const trace::TraceSet& set,
                     const std::vector<std::pair<std::string, double>>& script_calls,
                     int64_t gradient_bytes) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::Error(dir + ": cannot create the directory (" + ec.message() + ")");
  const std::string json_path = dir + "/diagnosis.json";
  {
    std::ofstream f(json_path, std::ios::trunc);
    f << diagnosis_json.dump(2) << "\n";
    f.close();
    if (!f) return Status::Error(json_path + ": cannot write (is the directory writable?)");
  }
  // A step rate stays a step rate when read back: records whose batch size was not known
  // carry no sample count (0).
  const bool counts_known = diagnosis.source.throughput_unit == analysis::ThroughputUnit::kSamples;
  std::vector<StepRecord> written = set.records;
  bool sized = false;
  for (StepRecord& r : written) {
    if (!counts_known) r.samples = 0;
    sized = SizeUnsizedCollectives(gradient_bytes, &r) || sized;
  }
  std::map<int, std::vector<StepRecord>> by_rank;
  for (const StepRecord& r : written) by_rank[r.rank].push_back(r);
  for (const auto& [rank, records] : by_rank) {
    const std::string path = fmt::format("{}/rank-{}.steps.jsonl", dir, rank);
    if (Status s = WriteStepRecords(path, records); !s.ok()) return s;
  }
  // run.json beside them: `stepscope predict DIR` fits the step-time model to this one run.
  TraceRunFacts facts;
  facts.replicas = static_cast<int>(by_rank.size());
  facts.micro_batch = 1;
  if (counts_known && !set.records.empty()) {
    facts.micro_batch = std::max<int>(1, static_cast<int>(set.records.front().samples));
  }
  facts.source = "pytorch profiler traces (analyze --out)";
  facts.notes = set.warnings;
  facts.script_calls = script_calls;
  if (sized) {
    facts.notes.push_back(fmt::format(
        "the traces gave no collective sizes: --gradient-bytes {} spread evenly over each "
        "step's collectives",
        gradient_bytes));
  }
  if (!counts_known) {
    facts.notes.push_back("the traces gave no batch size: a sample is a step");
  }
  if (Status s = WriteRunJson(dir, TraceRunJson(written, facts)); !s.ok()) return s;
  report::HtmlReportOptions html;
  html.input_path = json_path;
  return report::WriteHtmlReport(diagnosis, dir + "/report.html", html);
}

}  // namespace

int RunAnalyze(const AnalyzeFlags& flags) {
  if (flags.inputs.empty()) {
    std::cerr << "stepscope analyze: no inputs; give trace files or directories\n";
    return kAnalyzeBadInput;
  }
  if (flags.rank && flags.set.rank_from_file_name) {
    std::cerr << "stepscope analyze: --rank and --rank-from-filename exclude each other\n";
    return kAnalyzeBadInput;
  }
  std::vector<std::string> notes;
  Result<std::vector<std::string>> files = trace::ExpandInputs(flags.inputs, &notes);
  if (!files.ok()) {
    std::cerr << "stepscope analyze: " << files.status().message() << "\n";
    return kAnalyzeBadInput;
  }
  trace::TraceSetOptions opt = flags.set;
  opt.rank = flags.rank;
  Result<trace::TraceSet> set = trace::LoadTraceSet(*files, opt);
  if (!set.ok()) {
    std::cerr << "stepscope analyze: " << set.status().message() << "\n";
    return kAnalyzeBadInput;
  }
  set->notes.insert(set->notes.begin(), notes.begin(), notes.end());

  // The same code path as `diagnose`: one run set at this replica count.
  decide::RunSet run;
  run.baseline = set->records;
  const std::vector<std::pair<std::string, double>> script_calls = trace::ScriptCallsPerStep(*set);
  for (const auto& [name, per_step] : script_calls) {
    run.script_collectives.push_back({name, per_step});
  }
  decide::DiagnoseOptions options;
  options.source.origin = "analyze";
  options.source.workload = fmt::format("{} trace file(s), {}", set->traces.size(),
                                        trace::TraceFormatName(set->traces.front().format));
  options.source.tool_version = STEPSCOPE_VERSION;
  // Without a batch size in the trace (and none given), a "sample" is a step: say steps/s.
  options.source.throughput_unit = set->samples_assumed && opt.samples_per_step == 1
                                       ? analysis::ThroughputUnit::kSteps
                                       : analysis::ThroughputUnit::kSamples;
  if (set->clock_method != trace::ClockMethod::kShared) {
    // Estimated clock offsets carry errors of about a millisecond on a busy host: a rank's
    // arrival (or compute) must exceed the others' by a wider margin to count as a straggler.
    options.skew.compute_margin = std::max(options.skew.compute_margin, flags.unaligned_margin);
  }
  Result<decide::Diagnosis> diagnosis = decide::BuildDiagnosis({run}, options);
  if (!diagnosis.ok()) {
    std::cerr << "stepscope analyze: " << diagnosis.status().message() << "\n";
    return kAnalyzeFailed;
  }
  for (const std::string& w : set->warnings) diagnosis->warnings.push_back(w);
  if (set->clock_method != trace::ClockMethod::kShared) {
    diagnosis->warnings.push_back(fmt::format(
        "the files' clocks are not aligned; arrival times were put on rank {}'s clock by the "
        "method '{}' (a collective ends together on every rank), so the rank whose collectives "
        "are shortest is the one that arrived last",
        set->traces.front().rank, trace::ClockMethodName(set->clock_method)));
  }
  nlohmann::json j = decide::ToJson(*diagnosis);
  j["trace"] = trace::TraceSectionJson(*set);

  if (!flags.out.empty()) {
    if (Status st =
            WriteAnalysis(flags.out, j, *diagnosis, *set, script_calls, flags.gradient_bytes);
        !st.ok()) {
      std::cerr << "stepscope analyze: " << st.message() << "\n";
      return kAnalyzeBadInput;
    }
  }
  if (flags.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << trace::TraceSummaryText(*set) << "\n" << report::TerminalReport(*diagnosis);
    if (!flags.out.empty()) {
      std::cout << "\nWrote " << flags.out << "/diagnosis.json, report.html and the step records ("
                << flags.out << "/rank-R.steps.jsonl, run.json): `stepscope predict " << flags.out
                << " --replicas ...` fits the step-time model to them\n";
    }
  }
  return kAnalyzeOk;
}

void AddAnalyzeCommand(CLI::App& app, std::function<int()>* run) {
  auto flags = std::make_shared<AnalyzeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Profiler traces (PyTorch Kineto or legacy, plain or gzip; stepscope run directories) "
      "into the step decomposition, stragglers and verdict. Exit codes: 0 ok, 1 analysis "
      "failed, 2 bad usage or input");
  cmd->add_option("inputs", flags->inputs, "Trace files and directories (one file per rank)");
  cmd->add_option("--out", flags->out,
                  "Write DIR/diagnosis.json, DIR/report.html and the imported steps as "
                  "DIR/rank-R.steps.jsonl (a run directory analyze reads back)");
  cmd->add_option("--rank", flags->rank, "The rank of a single input file")
      ->transform(WholeNumber("--rank 0"));
  cmd->add_flag("--rank-from-filename", flags->set.rank_from_file_name,
                "Take each file's rank from its name (rank-3, rank3, _rank_3)");
  cmd->add_flag("--json", flags->json, "Print diagnosis.json instead of the summary");
  cmd->add_option("--warmup-steps", flags->set.warmup_steps,
                  "Leading steps per rank left out when the trace marks none")
      ->capture_default_str()
      ->transform(WholeNumber("--warmup-steps 1"))
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--samples-per-step", flags->set.samples_per_step,
                  "Examples per step per rank when the trace does not say (1: steps/s)")
      ->capture_default_str()
      ->transform(WholeNumber("--samples-per-step 32"))
      ->check(CLI::PositiveNumber);
  cmd->add_option("--gradient-bytes", flags->gradient_bytes,
                  "With --out: the gradient's size in bytes (4 x parameters in fp32), for "
                  "traces that do not record their collectives' sizes (PyTorch 1.x), so that "
                  "`stepscope predict DIR` can fit the all-reduce")
      ->transform(WholeNumber("--gradient-bytes 4000000"))
      ->check(CLI::PositiveNumber);
  cmd->add_option("--unaligned-margin", flags->unaligned_margin,
                  "Straggler margin over the other ranks when clocks had to be estimated")
      ->capture_default_str()
      ->check(Number("--unaligned-margin 0.5"))
      ->check(CLI::NonNegativeNumber);
  cmd->callback([flags, run] { *run = [flags] { return RunAnalyze(*flags); }; });
}

}  // namespace stepscope::app
