#include "apps/stepscope/trace_command.h"

#include <fmt/format.h>

#include <memory>

#include "report/trace_merge.h"

namespace stepscope::app {

int RunTraceMerge(const TraceMergeFlags& flags) {
  auto inputs = report::FindRunTraces(flags.run_dir);
  if (!inputs.ok()) {
    fmt::print(stderr, "stepscope trace merge: {}\n", inputs.status().message());
    return 1;
  }
  auto stats = report::MergeTraces(inputs.value(), flags.output);
  if (!stats.ok()) {
    const std::string m = stats.status().message();
    fmt::print(stderr, "stepscope trace merge: {}\n", m);
    return m.starts_with(flags.output) ? 3 : 1;
  }
  const report::MergeStats& s = stats.value();
  for (const std::string& w : s.warnings) fmt::print(stderr, "warning: {}\n", w);
  fmt::print(
      "wrote {}: {} ranks, {} events, {} collectives linked by {} flows ({}); open it in "
      "https://ui.perfetto.dev\n",
      flags.output, s.ranks, s.events, s.collectives, s.flows, s.alignment);
  return 0;
}

void AddTraceCommand(CLI::App& app, std::function<int()>* run) {
  CLI::App* trace = app.add_subcommand("trace", "Work with trace files.");
  trace->require_subcommand(1);
  auto flags = std::make_shared<TraceMergeFlags>();
  CLI::App* merge = trace->add_subcommand(
      "merge",
      "All ranks of a run on one timeline (one process per rank, aligned clocks, collectives "
      "linked from the first arrival to the last), loadable in the Perfetto UI.");
  merge
      ->add_option("run_dir", flags->run_dir,
                   "Run directory: rank-R.trace.json from `stepscope train`, or per-rank "
                   "PyTorch profiler traces")
      ->required();
  merge->add_option("-o,--output", flags->output, "Merged trace to write")->capture_default_str();
  merge->callback([flags, run] { *run = [flags] { return RunTraceMerge(*flags); }; });
}

}  // namespace stepscope::app
