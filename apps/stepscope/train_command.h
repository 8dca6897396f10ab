// `stepscope train`: options onto TrainOptions, then the replica loop.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

#include "train/options.h"

namespace stepscope::app {

// Raw values as typed on the command line, turned into TrainOptions by Finish().
struct TrainFlags {
  train::TrainOptions options;
  std::string model = "mlp";
  std::string hidden = "256,256";
  std::string optimizer = "auto";
  std::string reduce_dtype = "fp32";
  std::string allreduce = "auto";
  std::string emulate_link;
  std::string inject_straggler;
  std::string inject_noise;
  std::string inject_hang;
  std::string inject_crash;
  bool no_overlap = false;
  bool no_reduce = false;
  bool no_eval = false;
  bool quiet = false;
  bool print_model = false;
  double momentum = 0.9;
  double weight_decay = 0;
  double lr = -1;  // -1: the optimizer's default for the model
};

// Declares every train option on `cmd` (shared by `train` and `diagnose`).
void AddTrainOptions(CLI::App* cmd, TrainFlags* flags);
// Converts the raw flags into options; errors name the flag.
Status FinishTrainOptions(TrainFlags* flags);
// Runs `stepscope train` (initialises MPI). Returns the process exit code.
int RunTrain(TrainFlags& flags, int argc, char** argv);
// Registers `train` on `app`; when it is chosen, *run is set to run it.
void AddTrainCommand(CLI::App& app, int argc, char** argv, std::function<int()>* run);

}  // namespace stepscope::app
