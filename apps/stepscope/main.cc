// stepscope: where did the missing throughput of data-parallel training go?
//
// Each command lives in its own *_command.{h,cc}: it declares its options on a CLI11
// subcommand and returns the function that runs it once the command line is parsed.
#include <CLI/CLI.hpp>
#include <functional>

#include "apps/stepscope/analyze_command.h"
#include "apps/stepscope/diagnose_command.h"
#include "apps/stepscope/predict_command.h"
#include "apps/stepscope/report_command.h"
#include "apps/stepscope/trace_command.h"
#include "apps/stepscope/train_command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "stepscope: measures data-parallel training, finds where the missing throughput went, "
      "and says what to fix before buying more devices."};
  app.require_subcommand(1);
  // A later occurrence of an option overrides an earlier one (handy for wrapper scripts).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.set_version_flag("--version", STEPSCOPE_VERSION);

  // The command that was chosen, set by the subcommand's parse callback.
  std::function<int()> run;
  stepscope::app::AddTrainCommand(app, argc, argv, &run);
  // (further commands register here, one line each)
  stepscope::app::AddReportCommand(app, &run);
  stepscope::app::AddTraceCommand(app, &run);
  stepscope::app::AddDiagnoseCommand(app, &run);
  stepscope::app::AddAnalyzeCommand(app, &run);
  stepscope::app::AddPredictCommand(app, &run);

  CLI11_PARSE(app, argc, argv);
  return run ? run() : 0;
}
