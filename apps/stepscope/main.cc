// stepscope: where did the missing throughput of data-parallel training go?
#include <CLI/CLI.hpp>

#include "apps/stepscope/train_command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "stepscope: measures data-parallel training, finds where the missing throughput went, "
      "and says what to fix before buying more devices."};
  app.require_subcommand(1);
  app.set_version_flag("--version", STEPSCOPE_VERSION);

  stepscope::app::TrainFlags train_flags;
  CLI::App* train = app.add_subcommand(
      "train", "Data-parallel training that records where every step's time goes "
               "(run under mpirun -np N for N replicas)");
  stepscope::app::AddTrainOptions(train, &train_flags);
  train->add_flag("--print-model", train_flags.print_model,
                  "Print parameters, gradient bytes, FLOPs and activation bytes, then exit");

  CLI11_PARSE(app, argc, argv);
  if (train->parsed()) return stepscope::app::RunTrain(train_flags, argc, argv);
  return 0;
}
