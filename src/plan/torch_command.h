// A user's PyTorch script as diagnose runs it (`diagnose --torch "python3 train.py --batch
// {batch}"`): the interpreter, the script and its arguments with placeholders, and a planned
// run's changes mapped onto them. Beside train_mapping.h (the same changes onto `stepscope
// train`), this file is the one place that knows which placeholder or STEPSCOPE_* variable of
// the helper (python/stepscope_torch, docs/torch.md) carries which change.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "plan/train_mapping.h"
#include "train/options.h"

namespace stepscope::plan {

// The placeholders a command may hold ({batch}, ...), filled from the workload's options
// (--batch, --accum, --bucket-mb, --loader-workers, the seed) with the run's change applied, and
// {n}, the run's replica count (for a script that starts its own processes). Another {name} in
// the command is refused; {{ and }} pass a brace through (core/placeholders.h).
inline constexpr std::string_view kTorchPlaceholders[] = {"batch",   "accum", "bucket_mb",
                                                          "workers", "seed",  "n"};

// The train options that mean something to a torch workload; others are refused.
inline constexpr std::string_view kTorchWorkloadFlags[] = {
    "--batch", "--accum",        "--bucket-mb",       "--loader-workers", "--prefetch",
    "--steps", "--warmup-steps", "--grad-norm-every", "--no-eval",        "--stall-timeout"};

struct TorchCommand {
  std::string interpreter;        // the first word: the Python that runs the script
  std::string script;             // the second word
  std::vector<std::string> args;  // the rest, placeholders unfilled
  // false (diagnose --torch-traces): the script does not import the helper but writes PyTorch
  // profiler traces into $STEPSCOPE_RUN_DIR; only placeholders reach it, and the ablations that
  // need the helper (no reduction, synthetic input) are not run.
  bool helper = true;

  // From the command's words (split like a shell would). Errors say what the command must
  // look like, and name a placeholder that is not one of kTorchPlaceholders.
  static Result<TorchCommand> FromWords(std::vector<std::string> words);
  // True when some word holds `placeholder` ("{batch}"; not "{{batch}}", which is text).
  bool Has(std::string_view placeholder) const;
  // The words as given, for the sweep's identity and the reports.
  std::vector<std::string> Words() const;
};

// PyTorch's launcher run by the command's interpreter, one host (python/stepscope_torch/run.py:
// torch.distributed.run, with a fix for Debian's PyTorch 1.13 under Python 3.11).
std::string DefaultTorchLauncher(const TorchCommand& command);

struct TorchMapping {
  std::vector<std::string> args;   // the script's arguments, placeholders filled
  std::vector<std::string> env;    // NAME=VALUE for the helper
  std::vector<std::string> flags;  // the change in words ("{batch} 8", "STEPSCOPE_BUCKET_MB=1")
  // Parts of the change neither a placeholder nor the helper can make, in words.
  std::vector<std::string> not_applicable;
};

// Applies `change` to the command of a run at `replicas`: placeholders where the command has
// them, the helper's environment variables otherwise (docs/torch.md lists both).
TorchMapping MapOntoTorch(const TorchCommand& command, const train::TrainOptions& options,
                          const RunChange& change, int replicas);

}  // namespace stepscope::plan
