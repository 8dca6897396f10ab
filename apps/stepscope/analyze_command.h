// `stepscope analyze`: profiler traces (PyTorch Kineto or legacy, stepscope's own) into the same
// decomposition, straggler finding and verdict that `diagnose` gives. Exit codes: 0 analysed,
// 1 the analysis failed, 2 bad usage or unreadable input (docs/analyze.md).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace_set.h"

namespace stepscope::app {

struct AnalyzeFlags {
  std::vector<std::string> inputs;  // files and directories
  std::string out;                  // "" : write no diagnosis.json
  std::optional<int> rank;          // the rank of a single input file
  bool json = false;                // print diagnosis.json to stdout instead of the summary
  // With unaligned clocks (offsets estimated), a straggler's mean compute or time to its last
  // arrival must exceed the other ranks' median by this fraction (aligned: the skew default).
  double unaligned_margin = 0.5;
  // The gradient's size in bytes, for traces that do not record their collectives' sizes
  // (PyTorch 1.x): written into the --out records, spread evenly over each step's collectives
  // that have no size, so that `stepscope predict DIR` can fit the all-reduce. 0: not given.
  int64_t gradient_bytes = 0;
  trace::TraceSetOptions set;
};

// Exit codes.
inline constexpr int kAnalyzeOk = 0;
inline constexpr int kAnalyzeFailed = 1;
inline constexpr int kAnalyzeBadInput = 2;

int RunAnalyze(const AnalyzeFlags& flags);
// Registers `analyze` on `app`; when it is chosen, *run is set to run it.
void AddAnalyzeCommand(CLI::App& app, std::function<int()>* run);

}  // namespace stepscope::app
