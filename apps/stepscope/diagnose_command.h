// `stepscope diagnose`: the scaling sweep (every replica count, baseline and ablations), the
// diagnosis (decide/build_diagnosis.h), the summary, DIR/diagnosis.json, and optionally the
// curve re-measured with the recommended free levers applied. Without a workload (no --model) it
// runs the built-in default: a communication-bound gpt on an emulated 16-device cluster.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace stepscope::app {

// The built-in default workload's train arguments (docs/diagnose.md explains each choice).
std::vector<std::string> DefaultDiagnoseWorkload();
inline constexpr const char* kDefaultDiagnoseReplicas = "1,2,4,8,16";
inline constexpr const char* kDefaultDiagnoseDir = "stepscope-diagnose";

// Registers `diagnose` on `app`; when it is chosen, *run is set to run it.
void AddDiagnoseCommand(CLI::App& app, std::function<int()>* run);

}  // namespace stepscope::app
