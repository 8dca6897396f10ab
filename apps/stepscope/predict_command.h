// `stepscope predict`: the step-time model fitted from a diagnose directory's runs, asked what
// happens at other replica counts, links, precisions, bucket sizes, batches. Exit codes: 0
// predicted, 1 the model could not be fitted, 2 bad usage or unreadable input (docs/model.md).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/step_model.h"

namespace stepscope::app {

struct PredictFlags {
  std::string dir;   // a diagnose directory (DIR/runs/<name>/)
  std::string spec;  // or a spec file (docs/model.md, "A spec")
  std::string replicas = "1..1024";
  std::string fit_on;  // "" : every baseline
  std::string link;    // GBPS[,LATENCY_US]
  // The nominal bandwidth (GB/s) of the link DIR's runs were measured on: --link is then read
  // as that kind of link at another nominal rate (model/link_scaling.h).
  std::optional<double> measured_link;
  std::string intra_link, inter_link;  // GBPS[,LATENCY_US], with devices_per_host
  std::optional<int> devices_per_host;
  double compute_scale = 1;
  std::string reduce_dtype;  // "" : as measured
  std::optional<double> bucket_mb;
  bool overlap = false, no_overlap = false;
  std::optional<int> batch, accum, loader_workers;
  bool without_straggler = false;
  bool balance_lengths = false;
  std::optional<double> device_memory_gb;
  bool json = false;
};

inline constexpr int kPredictOk = 0;
inline constexpr int kPredictFailed = 1;
inline constexpr int kPredictBadInput = 2;

int RunPredict(const PredictFlags& flags);

// What diagnose adds to diagnosis.json: the model fitted to every run of DIR (`model`), its
// predictions at `replicas` for the measured configuration (`predictions`) and its checks
// against the runs it did not fit (`model_checks`); when the model cannot be fitted, only
// `model_error` saying why. The fitted model is handed back in *fitted when asked for. With
// `device_memory_gb` the model (and so every prediction made with it, the checks excepted)
// turns a micro-batch that does not fit that memory into accumulation.
nlohmann::json DiagnosisModelSection(const std::string& dir, const std::vector<int>& replicas,
                                     std::optional<double> device_memory_gb = std::nullopt,
                                     std::optional<model::StepModel>* fitted = nullptr);
void AddPredictCommand(CLI::App& app, std::function<int()>* run);

}  // namespace stepscope::app
