// `stepscope trace merge RUN_DIR -o merged.json`: every rank of a run on one timeline (one
// process per rank, aligned clocks, collectives linked across ranks), for the Perfetto UI.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace stepscope::app {

struct TraceMergeFlags {
  std::string run_dir;
  std::string output = "merged.json";
};

// Exit codes: 0 written, 1 input missing or unreadable, 3 output could not be written.
int RunTraceMerge(const TraceMergeFlags& flags);
// Registers `trace` (with subcommand `merge`) on `app`.
void AddTraceCommand(CLI::App& app, std::function<int()>* run);

}  // namespace stepscope::app
